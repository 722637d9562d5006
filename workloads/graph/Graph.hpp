// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim {

enum class TensorRole { Input, Label, Weight, Activation, Gradient, WeightGradient, Accumulator, OptimizerState, Output };

struct TensorDesc
{
    std::string name;
    std::vector<uint64_t> shape;
    Precision type = Precision::FP32;
    TensorRole role = TensorRole::Activation;
    std::string block; // the model block (poptorch.Block) that owns it, for weights
    [[nodiscard]] uint64_t elements() const
    {
        uint64_t n = 1;
        for (auto d : shape)
            n *= d;
        return n;
    }
    [[nodiscard]] uint64_t bytes() const { return elements() * bytesOf(type); }
};

/** A convolution-shaped problem (convolutions, matmuls and their gradients all lower to it):
 *  `positions` outputs, each reducing `reduction` channels x kernel positions into `outChans`. */
struct ConvProblem
{
    uint64_t groups = 1; // independent problems of this size (a batched matmul's batch x heads)
    uint64_t positions = 1;
    uint64_t reduction = 1;
    uint32_t kernelHeight = 1, kernelWidth = 1;
    uint64_t outChans = 1;
    // Spatial layout, for the input halo a tile needs (1 for matmuls).
    uint64_t outWidth = 1, inWidth = 1;
    Precision input = Precision::FP32, partials = Precision::FP32, output = Precision::FP32;
    [[nodiscard]] uint64_t macs() const { return groups * positions * reduction * kernelHeight * kernelWidth * outChans; }
};

/** Geometry of a stride-1 2-D convolution with zero padding on each side (a matmul is the
 *  1x1, 1x1-image case). */
struct ConvGeometry
{
    uint64_t batch = 1, inChans = 1, inHeight = 1, inWidth = 1, outChans = 1;
    uint32_t kernelHeight = 1, kernelWidth = 1;
    uint32_t padHeight = 0, padWidth = 0;
    [[nodiscard]] uint64_t outHeight() const { return inHeight + 2 * padHeight - kernelHeight + 1; }
    [[nodiscard]] uint64_t outWidth() const { return inWidth + 2 * padWidth - kernelWidth + 1; }
};

enum class OpKind {
    HostLoad,      // stream inputs from the host
    HostStore,     // stream outputs to the host
    Conv,          // any ConvProblem (forward, data or weight gradient)
    BiasAdd,       // add a per-channel bias
    BiasGrad,      // reduce a gradient over positions per channel
    MaxPool,
    MaxPoolGrad,
    Relu,
    ReluGrad,
    SoftmaxCrossEntropy,
    SoftmaxCrossEntropyGrad,
    GradAccumulate, // accumulator += gradient
    AdamW,          // optimizer update of one weight
    Lamb,           // AdamW's moments scaled per tensor by the trust ratio |w| / |update|
    BatchMatMul,    // `conv.groups` matmuls of two activations (attention scores, context)
    Add,            // element-wise sum of two tensors of one shape (residuals, gradient sums)
    Gelu,
    GeluGrad,
    Tanh,
    TanhGrad,
    Softmax,        // over rows of `channels` elements (attention: with the scale and mask)
    SoftmaxGrad,
    LayerNorm,      // over rows of `channels` elements, then gamma and beta
    LayerNormGrad,
    Gather,         // rows of a table by index (embedding lookup); no index input: a fixed slice
    GatherGrad,     // the gathered rows' gradients added into a zeroed table-shaped gradient
};

struct Op
{
    std::string name;
    OpKind kind;
    std::vector<int> inputs;
    std::vector<int> outputs;
    ConvProblem conv;          // Conv
    ConvGeometry geometry;     // Conv (forward ops)
    uint64_t window = 1;       // MaxPool / MaxPoolGrad
    uint64_t channels = 1;     // BiasAdd / BiasGrad / SoftmaxCrossEntropy classes
    bool forward = true;
    std::string block; // the model block (poptorch.Block) the op belongs to
    uint64_t rows = 1;       // Gather / GatherGrad: rows looked up
    bool unscale = false;    // optimizers: undo loss scaling on the gradient first
    bool masterWeights = false; // optimizers: update an fp32 master copy (last input), cast back
    bool attentionScaleMask = false; // Softmax / SoftmaxGrad: with the attention scale (and mask)
};

/** A model graph: tensors and ops in execution order. */
struct Graph
{
    std::vector<TensorDesc> tensors;
    std::vector<Op> ops;
    std::string currentBlock; // ops and tensors added now belong to it
    std::vector<std::string> blocks; // in model order

    int addTensor(std::string name, std::vector<uint64_t> shape, Precision type, TensorRole role)
    {
        tensors.push_back({std::move(name), std::move(shape), type, role, currentBlock});
        return int(tensors.size()) - 1;
    }
    Op& addOp(std::string name, OpKind kind, std::vector<int> inputs, std::vector<int> outputs)
    {
        ops.push_back({std::move(name), kind, std::move(inputs), std::move(outputs), {}, {}, 1, 1, true, currentBlock});
        return ops.back();
    }
    [[nodiscard]] const TensorDesc& tensor(int id) const { return tensors.at(std::size_t(id)); }
};

} // namespace ipusim
