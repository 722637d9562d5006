// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "workloads/graph/ModelSpec.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::config {

/** A block of an imported model: the nodes whose names start with `prefix` (the module path
 *  torch.onnx.export writes into node names, e.g. "/layer1/"). */
struct OnnxBlock
{
    std::string name;
    std::string prefix;
    std::optional<uint32_t> ipu;
};

/** `"workload": {"kind": "onnx"}`'s model: the file and what the config adds to it. */
struct OnnxSource
{
    std::string path; // as resolved against the config's folder
    /** Per-sample shapes of the model's data inputs; empty: every graph input that feeds data
     *  (not a weight position), shaped as the file gives it. */
    std::map<std::string, std::vector<uint64_t>> inputs;
    std::vector<OnnxBlock> blocks;
    /** Adds softmax cross-entropy of the first output against int32 "labels" (a classifier
     *  exported without its loss). */
    bool crossEntropy = false;
    /** Float data inputs cross from the host as 8-bit values, cast on the IPU. */
    bool eightBitInputs = false;
    /** Graph inputs that are state kept but not learned (torch's registered buffers): element-
     *  wise and concatenated operands without gradient or optimizer state. */
    std::vector<std::string> buffers{};
};

/** Reads an ONNX model (opset 13 to 17, as torch.onnx.export writes it), runs ONNX shape
 *  inference and maps each node onto a layer of the graph workload; the file's first input
 *  dimension is the batch. Errors (an unreadable file, an unsupported op, a shape the file
 *  leaves dynamic, a block prefix no node has) name the node or the config pointer. */
ModelSpec importOnnx(const OnnxSource& source, const Diagnostics& diag);

/** The graph input names of an ONNX model file, in order (what a front end checks its buffer
 *  names against: torch leaves out the buffers a model never reads). Throws ConfigError naming
 *  the file when it cannot be read as a ModelProto. */
std::vector<std::string> onnxGraphInputs(const std::string& path);

/** The names of an ONNX model file's nodes, in graph order (the module paths torch writes into
 *  them; the benchmark counts them). Throws ConfigError as onnxGraphInputs. */
std::vector<std::string> onnxNodeNames(const std::string& path);

/** An ONNX op importOnnx maps: the graph ops (JSON graph names) it may become, none when it is
 *  folded away, and how. */
struct OnnxOpRow
{
    std::string op;
    std::vector<std::string> graphOps;
    std::string how;
};

/** The importer's registry, by ONNX op: what `ipusim ops` prints and docs/reference/ops.md is. */
const std::vector<OnnxOpRow>& onnxOpTable();

/** The ONNX op types importOnnx maps, sorted, for messages. */
const std::vector<std::string>& supportedOnnxOps();

} // namespace ipusim::config
