// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"
#include "workloads/graph/Comparison.hpp"
#include "workloads/graph/PadMode.hpp"
#include "workloads/graph/RecurrentCell.hpp"
#include "workloads/graph/SchemaActivations.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim {

/** Buffer: state a layer keeps but does not learn (batch norm running statistics, a causal mask). */
enum class TensorRole { Input, Label, Weight, Activation, Gradient, WeightGradient, Accumulator, OptimizerState, Output, Buffer };

/** A tensor of the model, not of a sample (no batch dimension): learned or a buffer. */
inline bool isModelTensor(TensorRole r) { return r == TensorRole::Weight || r == TensorRole::Buffer; }

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
    uint32_t strideHeight = 1, strideWidth = 1, dilationHeight = 1, dilationWidth = 1;
    /** Outputs the problem writes, when not `positions` (0): a strided convolution's data
     *  gradient computes fewer positions than the input it fills (see dataGradProblem). */
    uint64_t outputPositions = 0;
    Precision input = Precision::FP32, partials = Precision::FP32, output = Precision::FP32;
    [[nodiscard]] uint64_t macs() const { return groups * positions * reduction * kernelHeight * kernelWidth * outChans; }
};

/** Geometry of a 2-D convolution with zero padding on each side, stride, kernel dilation and
 *  channel groups, as torch.nn.Conv2d (a matmul is the 1x1, 1x1-image case). */
struct ConvGeometry
{
    uint64_t batch = 1, inChans = 1, inHeight = 1, inWidth = 1, outChans = 1;
    uint32_t kernelHeight = 1, kernelWidth = 1;
    uint32_t padHeight = 0, padWidth = 0;
    uint32_t strideHeight = 1, strideWidth = 1;
    uint32_t dilationHeight = 1, dilationWidth = 1;
    uint32_t groups = 1;
    bool ceilMode = false; // pooling: a last, partial window where the stride leaves one (torch's ceil_mode)
    /** The span of the dilated kernel. */
    [[nodiscard]] uint64_t spanHeight() const { return uint64_t(dilationHeight) * (kernelHeight - 1) + 1; }
    [[nodiscard]] uint64_t spanWidth() const { return uint64_t(dilationWidth) * (kernelWidth - 1) + 1; }
    [[nodiscard]] uint64_t outHeight() const { return outputs(inHeight, padHeight, spanHeight(), strideHeight, ceilMode); }
    [[nodiscard]] uint64_t outWidth() const { return outputs(inWidth, padWidth, spanWidth(), strideWidth, ceilMode); }

    /** Windows of `span` every `stride` over `in` padded by `pad` each side; in ceil mode a last
     *  partial window too, unless it would start in the right padding (torch's pooling rule). */
    static uint64_t outputs(uint64_t in, uint64_t pad, uint64_t span, uint64_t stride, bool ceilMode)
    {
        const uint64_t covered = in + 2 * pad - span;
        uint64_t out = (ceilMode ? covered + stride - 1 : covered) / stride + 1;
        if (ceilMode && (out - 1) * stride >= in + pad)
            --out;
        return out;
    }
};

#define IPUSIM_ACTIVATION_OPS(kind, ...) kind, kind##Grad,
enum class OpKind {
    IPUSIM_ACTIVATIONS(IPUSIM_ACTIVATION_OPS) // each activation and its gradient (workloads/graph/Activation.hpp)
    HostLoad,      // stream inputs from the host
    HostStore,     // stream outputs to the host
    Conv,          // any ConvProblem (forward, data or weight gradient)
    BiasAdd,       // add a per-channel bias
    BiasGrad,      // reduce a gradient over positions per channel
    MaxPool,       // over `geometry`'s windows; outputs over inputs as the tensors' sizes
    MaxPoolGrad,
    AvgPool,       // as MaxPool, a sum scaled by 1 / the window's size
    AvgPoolGrad,
    Reduce,         // the mean (or sum) of `window` elements each output, `inner` apart (1: in runs;
                    // global average pooling: each channel's image)
    ReduceGrad,     // the output's gradient broadcast back over the reduced elements (scaled, for a mean)
    MaskedFill,     // input 0 with the elements input 1 (a mask, `broadcast` 1 when it repeats) selects set to a constant
    Compare,        // `comparison` of inputs 0 and 1 element by element: a mask (no gradient)
    LogicalNot,     // a mask's complement (no gradient)
    Select,         // input 1 where input 0 (a mask, `broadcast` 0 when it repeats) holds, else input 2
    Expand,         // each input element repeated `window` times, `inner` apart, copied into a new tensor
    Pad,            // a copy into a larger tensor, the border filled (`padMode` constant) or copied from the input
    PadGrad,        // the interior of the gradient, with (reflect, edge) the border's gradients added into it
    SoftmaxCrossEntropy,
    SoftmaxCrossEntropyGrad,
    NllLoss,        // the mean of minus the labels' log-probabilities (after a LogSoftmax)
    NllLossGrad,
    LogSoftmax,     // over rows of `channels` elements
    LogSoftmaxGrad,
    GradAccumulate, // accumulator += gradient
    AdamW,          // optimizer update of one weight
    Lamb,           // AdamW's moments scaled per tensor by the trust ratio |w| / |update|
    BatchMatMul,    // `conv.groups` matmuls of two activations (attention scores, context)
    Add,            // element-wise sum of two tensors of one shape (residuals, gradient sums)
    Sub,            // element-wise, two tensors of one shape
    Mul,
    Div,
    DivGradRhs,     // d(a / b) / db = -dy a / b^2: inputs dy, a, b
    ReduceRepeats,  // a broadcast operand's gradient: the sum of its `window` repeats
    Scale,          // times a constant
    Softmax,        // over rows of `channels` elements (attention: with the scale and mask)
    SoftmaxGrad,
    LayerNorm,      // over rows of `channels` elements, then gamma and beta
    LayerNormGrad,
    Cast,           // 8-bit host data to the model's precision
    Concat,         // inputs copied side by side into a new tensor
    Slice,          // a part of its input copied into a new tensor (`rows`: its share, in millionths)
    SliceGrad,      // a zeroed input-sized gradient with the part's gradient copied in
    Gather,         // rows of a table by index (embedding lookup); no index input: a fixed slice
    GatherGrad,     // the gathered rows' gradients added into a zeroed table-shaped gradient
    BatchNorm,      // per channel of NCHW: statistics over batch and image when `training`, else
                    // the running ones; inputs x, gamma, beta, running mean, running variance
    BatchNormGrad,  // outputs dx (unless x is a model input), dgamma, dbeta
    Dropout,        // training: a random mask, regenerated from its seed for the gradient
    DropoutGrad,
    Sgd,            // SGD with momentum (PopTorch's SGD): velocity = m v + g + wd w; w -= lr v
    Lars,           // SGD's momentum with the per-tensor LARS trust ratio |w| / (|g| + wd |w|)
    AttentionMask,  // packed rows' additive mask [S, S] from sequence ids [S] (`channels`: S)
    Recurrent,      // an LSTM or GRU layer over `window` steps of `channels` hidden units
                    // (workloads/graph/RecurrentCell.hpp): inputs x [B, S, I], weights, biases;
                    // outputs the hidden states [B, S, H] and (training) the saved intermediates
    RecurrentGrad,  // backward through time, then the weight update: inputs dy, x, weights,
                    // hidden states, saved; outputs dweights, dbiases and (unless x is a model input) dx
};
#undef IPUSIM_ACTIVATION_OPS

struct Op
{
    std::string name;
    OpKind kind;
    std::vector<int> inputs;
    std::vector<int> outputs;
    ConvProblem conv;          // Conv
    ConvGeometry geometry;     // Conv (forward ops); pooling and its gradient (window, padding, stride)
    uint64_t window = 1;       // global average pooling: positions per image; a binary op's repeats
    uint64_t channels = 1;     // BiasAdd / BiasGrad / SoftmaxCrossEntropy classes
    bool forward = true;
    std::string block; // the model block (poptorch.Block) the op belongs to
    uint64_t rows = 1;       // Gather / GatherGrad: rows looked up
    bool unscale = false;    // optimizers: undo loss scaling on the gradient first
    bool masterWeights = false; // optimizers: update an fp32 master copy (last input), cast back
    bool attentionScaleMask = false; // Softmax / SoftmaxGrad: with the attention scale (and mask)
    bool training = false;   // BatchNorm / BatchNormGrad: batch statistics (and running updates)
    /** Binary ops: the input that repeats (`window` times) over the other's shape, or -1 when
     *  the operands have one shape. */
    int broadcast = -1;
    /** Binary ops (and their gradients): consecutive elements of the other operand that read one
     *  element of the repeated one (H x W for a per-channel [N, C, 1, 1] operand of NCHW; 1 when
     *  it repeats over leading dimensions). */
    uint64_t broadcastRun = 1;
    /** LayerNorm (and its gradient): the channels of gamma and beta when they are not the row's
     *  (group norm: rows of C / G x H x W elements, C parameters); 0: the row's. */
    uint64_t paramChannels = 0;
    RecurrentCell cell = RecurrentCell::Lstm; // Recurrent / RecurrentGrad
    /** Reduce (and its gradient): elements between consecutive reduced ones, the product of the
     *  dimensions after the reduced ones (1: the reduced dimensions are the last); and whether it
     *  is a mean (else a sum). */
    uint64_t inner = 1;
    bool mean = true;
    PadMode padMode = PadMode::Constant; // Pad / PadGrad
    Comparison comparison = Comparison::Equal; // Compare
};

/** Whether an op is a loss, where training's backward pass starts. */
inline bool isLoss(OpKind k) { return k == OpKind::SoftmaxCrossEntropy || k == OpKind::NllLoss; }

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
