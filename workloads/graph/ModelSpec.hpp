// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"
#include "workloads/graph/Comparison.hpp"
#include "workloads/graph/PadMode.hpp"
#include "workloads/graph/SchemaActivations.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// A model as its user describes it (`"workload": {"kind": "graph"}`, an ONNX file) and as the
// built-in nets (MNIST, BERT) are written: layers with their attributes, each naming its inputs,
// per sample. buildModelGraph (ModelBuilder.hpp) infers shapes, adds weights and lowers the
// layers to the compiler's Graph ops.
namespace ipusim {

#define IPUSIM_ACTIVATION_LAYER(kind, ...) kind,
enum class LayerKind {
    IPUSIM_ACTIVATIONS(IPUSIM_ACTIVATION_LAYER) // element-wise, one input (workloads/graph/Activation.hpp)
    Conv2d,       // NCHW convolution with a [out, in, kh, kw] weight, optional bias
    Linear,       // x W^T (+ b) over the last dimension
    MatMul,       // batched matmul of two activations: [..., M, K] x [..., K, N]
    Add,          // element-wise, operands of one shape
    Sub,
    Mul,
    Div,
    Scale,        // times a constant (x * c, x / c)
    Transpose,    // a view: dimensions permuted, the batch first
    Concat,       // inputs joined along `axis` (a dimension after the batch)
    Slice,        // elements [start, end) of `axis`, every `step`-th
    Softmax,      // over the last dimension
    LayerNorm,    // over the last dimension, with gamma and beta
    GroupNorm,    // over groups of channels of NCHW (and the image), per-channel gamma and beta
    MaxPool2d,    // windows of kernel_size every stride (padding never wins)
    AvgPool2d,    // as MaxPool2d, the mean of each window (padding counted as zeros)
    GlobalAvgPool,// the mean of each channel's image: [N, C, H, W] -> [N, C, 1, 1]
    Reduce,       // the mean or sum over consecutive dimensions after the batch (`perm`: those dimensions)
    Pad,          // a copy into a larger tensor, each dimension after the batch padded (`pads`, `padMode`)
    MaskedFill,   // the first input with the elements the second (a mask, broadcast) selects replaced by a constant
    Compare,      // `comparison` of two inputs element by element (broadcast as add's): a mask, no gradient
    LogicalNot,   // a mask's complement
    Where,        // inputs: a mask (broadcast), x, y: x where the mask holds, else y (torch.where)
    Expand,       // dimensions of 1 repeated to `shape` (the per-sample target; x.expand), copied into a new tensor
    BatchNorm2d,  // per channel of [N, C, H, W]; batch statistics when training, else running ones
    Dropout,      // training: a random mask; inference: the identity
    Flatten,      // a view: every dimension after the batch in one
    Reshape,      // a view: the per-sample shape given
    Embedding,    // rows of a [count, dim] table by integer index
    Gather,       // per sample, entries of dimension 1 of an activation by integer indices (or a constant index)
    CrossEntropy, // softmax cross-entropy of [..., classes] logits against integer labels
    LogSoftmax,   // over the last dimension
    NllLoss,      // minus the mean log-probability of integer labels in [batch, classes]
    Parameter,    // a tensor of `shape` (no batch), learned or a buffer, an operand of add, sub, mul, div or concat
    AttentionMask,// packed rows: integer sequence ids [S] to the additive mask [S, S] (0 within a sequence)
    Lstm,         // [B, S, I] to every step's hidden state [B, S, features]: torch.nn.LSTM (batch_first, zero initial state)
    Gru,          // as Lstm, torch.nn.GRU
};
#undef IPUSIM_ACTIVATION_LAYER

/** One layer; the attributes its kind does not use keep their defaults. */
struct LayerSpec
{
    std::string name; // names its output too
    LayerKind kind = LayerKind::Relu;
    std::vector<std::string> inputs;
    std::string block;           // "": the block of the layer before (the first: "model")
    std::optional<uint32_t> ipu; // the block's IPU (poptorch.BeginBlock ipu_id)
    uint64_t features = 0;       // conv2d out_channels, linear out_features, embedding embedding_dim, lstm / gru hidden_size
    uint64_t rows = 0;           // embedding num_embeddings
    std::array<uint32_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1};
    uint32_t groups = 1;
    bool ceilMode = false; // max_pool2d, avg_pool2d: a last, partial window (torch's ceil_mode)
    bool bias = true;
    bool affine = true; // layer_norm, group_norm: a learned per-channel weight and bias (torch's elementwise_affine, affine)
    std::vector<int64_t> shape; // reshape: per sample, one -1 inferred; parameter: its shape
    bool learned = true;        // parameter: false for state kept but not learned (a registered buffer)
    std::vector<uint32_t> perm; // transpose: every dimension, the batch (0) first; reduce: the dimensions reduced
    bool mean = true;           // reduce: the mean, else the sum
    bool keepDim = false;       // reduce: each reduced dimension kept as a dimension of 1
    std::vector<uint64_t> pads; // pad: before and after each dimension after the batch, in order
    PadMode padMode = PadMode::Constant;
    Comparison comparison = Comparison::Equal; // compare
    uint32_t axis = 1;          // concat, slice: a dimension counted with the batch (0)
    uint64_t start = 0, end = 0; // slice
    uint64_t step = 1;           // slice: every step-th element from start
    uint64_t index = 0;          // gather without an index input: the entry it takes (x[:, i])
    std::vector<uint64_t> indexList; // gather without an index input: the entries it takes (x[:, [i, j]]), keeping the dimension
    /** linear: the layer whose weight it uses instead of its own (tied weights, e.g. a decoder
     *  projecting onto an embedding table of [out_features, in_features]). */
    std::string tiedWeight;
    /** softmax: attention scores, with the 1/sqrt(head size) scale and the additive mask fused
     *  in (as Graphcore's BERT); a second input is the mask ([S, S] per sample, an attention_mask
     *  op's), repeated over the heads. */
    bool attention = false;
    /** Where an imported layer came from (`ONNX node "/fc/Gemm"`), for messages; empty for a
     *  layer of a JSON graph, whose pointer names it. */
    std::string origin;
    /** Where an imported layer's `ipu` is given (`/workload/blocks/2/ipu`). */
    std::string ipuPointer;
};

/** A model input, per sample (the micro-batch is the leading dimension); `integer` inputs
 *  (labels, token ids) are 32-bit; `eightBit` data crosses from the host as 8-bit values and is
 *  cast on the IPU (Graphcore's eight-bit I/O for images). */
struct ModelInput
{
    std::string name;
    std::vector<uint64_t> shape;
    bool integer = false;
    bool eightBit = false;
    /** Inputs of one stream cross from the host together, in one copy ("host.load.<stream>"),
     *  before the first read of any of them (BERT's token ids, positions, types and mask); "":
     *  a stream of its own, before its first read. */
    std::string stream;
    /** The element type a float input crosses from the host in when it is not the model's (the
     *  loader's dtype, `input_dtype`); cast on the IPU. `eightBit` is 8-bit whatever this says. */
    std::optional<Precision> hostType;
};

struct ModelSpec
{
    std::vector<ModelInput> inputs;
    std::vector<LayerSpec> layers;
    std::vector<std::string> outputs; // what goes back to the host
    /** Where the model is described, for messages: layer i is `pointer`/ops/i, input i
     *  `pointer`/inputs/i; an imported layer is `pointer` and its origin. */
    std::string pointer = "/workload/graph";
    /** Where training without a loss is reported, and what it expects. */
    std::string lossPointer = "/workload/graph/ops";
    std::string lossExpected = "a loss op (cross_entropy or nll_loss)";
};

} // namespace ipusim
