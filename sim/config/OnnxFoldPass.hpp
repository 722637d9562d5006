// SPDX-License-Identifier: MIT
#pragma once
#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace ipusim::config {

/** ONNX shape inference over a model, then constant folding as PopART does before lowering:
 *  every node whose values follow from constants and known shapes (OnnxConstantFold.hpp) becomes
 *  a Constant node of the same name and output. Shape inference runs again after each round
 *  that folded something, as a folded value (F.pad's computed pads) can make later shapes known
 *  that further folds need (Swin's windows and mask). Returns the integer values ONNX's data
 *  propagation computed for nodes left in place (Shape, Gather, Concat, ... of shapes). Throws
 *  what shape inference throws. */
std::map<std::string, std::vector<int64_t>> foldModelConstants(onnx::ModelProto& model);

} // namespace ipusim::config
