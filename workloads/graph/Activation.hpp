// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/graph/Graph.hpp"
#include "workloads/graph/ModelSpec.hpp"

#include <string>
#include <vector>

// The activations: element-wise ops of one input (relu, gelu, tanh, ...). Each is one entry of
// the schema's graph_ops (its x-activation), from which tools/cmake/SchemaActivations.cmake
// generates IPUSIM_ACTIVATIONS; this table is that list as data for the front ends (graph and
// ONNX names), training (what the gradient reads) and lowering (in place or not). An
// activation's vertex calls are its case of activationCalls (workloads/lowering). Adding one is
// that schema entry and that recipe.
namespace ipusim {

/** What an activation's gradient reads besides the incoming gradient. */
enum class GradientReads { Input, Output };

struct ActivationRow
{
    LayerKind layer;
    OpKind op, grad;
    const char* graphName; // in a JSON graph: "relu"
    const char* onnxName;  // the ONNX op imported as it: "Relu"; "": none
    GradientReads reads;
    bool inPlace; // the output takes the input's memory, as PopART's inplace variant
};

/** Every activation, in the generated order. */
const std::vector<ActivationRow>& activationTable();
/** The row of an activation's layer, or of its op or gradient op; nullptr for another kind. */
const ActivationRow* activationOf(LayerKind kind);
const ActivationRow* activationOf(OpKind kind);

} // namespace ipusim
