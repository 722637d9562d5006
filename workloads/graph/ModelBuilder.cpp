// SPDX-License-Identifier: MIT
#include "workloads/graph/ModelBuilder.hpp"

#include "workloads/graph/Activation.hpp"
#include "workloads/training/Training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace ipusim {
namespace {

bool isLossLayer(LayerKind k) { return k == LayerKind::CrossEntropy || k == LayerKind::NllLoss; }

std::string shapeText(const std::vector<uint64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

/** The product of the dimensions of `s` from `first` on, leaving out the last `dropLast`. */
uint64_t product(const std::vector<uint64_t>& s, std::size_t first = 0, std::size_t dropLast = 0)
{
    if (first + dropLast >= s.size())
        return 1;
    return std::accumulate(s.begin() + std::ptrdiff_t(first), s.end() - std::ptrdiff_t(dropLast), uint64_t(1), std::multiplies<>());
}

/** A named value of the model: a tensor of the graph (or a view of one) and its shape. */
struct Value
{
    int tensor = -1;
    std::vector<uint64_t> shape; // with the micro-batch first
    bool integer = false;
    Precision streamed = Precision::FP32; // as it crosses from the host (float data: cast on the IPU if not the model's)
    bool parameter = false; // a tensor of the model (learned or a buffer), without the batch: `shape` has none
};

class ModelBuilder
{
public:
    ModelBuilder(const ModelSpec& m, uint64_t batch, Precision type, Precision partials, bool withLoss, const Diagnostics& diag)
        : m_model(m), m_batch(batch), m_type(type), m_partials(partials), m_withLoss(withLoss), m_diag(diag)
    {
    }

    Graph build(ModelGraphInfo& info)
    {
        declareInputs();
        for (std::size_t i = 0; i < m_model.layers.size(); ++i)
            layer(i);
        checkBlockIpus();
        outputs(info);
        info.blockIpus = m_blockIpus;
        info.blockIpuPointers = m_ipuPointers;
        return std::move(m_g);
    }

private:
    [[nodiscard]] std::string at(std::size_t layer, const std::string& key = "") const
    {
        return fmt::format("{}/ops/{}{}", m_model.pointer, layer, key.empty() ? "" : "/" + key);
    }

    /** Fails at layer i's attribute `key`: its pointer, or for a layer imported from a model
     *  file, the file's pointer and the layer's origin (its ONNX node). */
    [[noreturn]] void fail(std::size_t layer, const std::string& key, const std::string& message) const
    {
        const std::string& origin = m_model.layers[layer].origin;
        if (origin.empty())
            m_diag.fail(at(layer, key), message);
        m_diag.fail(m_model.pointer, fmt::format("{}{}: {}", origin, key.empty() ? "" : " " + key, message));
    }

    void declareInputs()
    {
        for (std::size_t i = 0; i < m_model.inputs.size(); ++i) {
            const ModelInput& in = m_model.inputs[i];
            if (m_values.count(in.name))
                m_diag.fail(fmt::format("{}/inputs/{}/name", m_model.pointer, i), fmt::format("\"{}\" is already an input", in.name));
            Value v;
            v.shape = in.shape;
            v.shape.insert(v.shape.begin(), m_batch);
            if (!withinTensorLimit(v.shape))
                m_diag.fail(fmt::format("{}/inputs/{}/shape", m_model.pointer, i),
                            fmt::format("a micro-batch of {} samples of shape {} has more than 2^40 elements", m_batch, shapeText(in.shape)));
            v.integer = in.integer;
            // int32 labels and ids take 4 bytes, like fp32
            v.streamed = in.integer ? Precision::FP32 : in.eightBit ? Precision::U8 : in.hostType.value_or(m_type);
            m_values[in.name] = v;
            m_streamOf[in.name] = in.stream.empty() ? in.name : in.stream;
        }
    }

    /** Whether `name` is read, and only by loss layers (labels). */
    [[nodiscard]] bool onlyLossesRead(const std::string& name) const
    {
        bool read = false;
        for (const auto& l : m_model.layers)
            if (std::count(l.inputs.begin(), l.inputs.end(), name)) {
                if (!isLossLayer(l.kind))
                    return false;
                read = true;
            }
        return read;
    }

    /** The value of a layer's k-th input; a model input is streamed in on its first read. */
    Value input(std::size_t layer, std::size_t k)
    {
        const std::string& name = m_model.layers[layer].inputs.at(k);
        auto it = m_values.find(name);
        if (it == m_values.end())
            fail(layer, fmt::format("inputs/{}", k),
                        fmt::format("expected the name of a model input or of an earlier op, found \"{}\"", name));
        if (it->second.tensor < 0)
            loadStream(m_streamOf.at(name));
        const LayerKind reader = m_model.layers[layer].kind;
        const bool operand = reader == LayerKind::Add || reader == LayerKind::Sub || reader == LayerKind::Mul || reader == LayerKind::Div ||
                             reader == LayerKind::Concat || reader == LayerKind::Compare || reader == LayerKind::Where ||
                             (reader == LayerKind::MaskedFill && k == 1);
        if (it->second.parameter && !operand)
            fail(layer, fmt::format("inputs/{}", k), fmt::format("expected an activation, found parameter \"{}\" (an operand of add, sub, "
                                                                 "mul, div, concat, a comparison or where, or a masked_fill's mask, only)",
                                                                 name));
        return it->second;
    }

    /** Copies the inputs of `stream` from the host in one op (then casts data streamed in
     *  another type than the model's). */
    void loadStream(const std::string& stream)
    {
        std::vector<Value*> inputs;
        std::vector<int> tensors;
        for (const ModelInput& in : m_model.inputs) {
            Value& v = m_values.at(in.name);
            if (m_streamOf.at(in.name) != stream)
                continue;
            const TensorRole role = v.integer && onlyLossesRead(in.name) ? TensorRole::Label : TensorRole::Input;
            v.tensor = m_g.addTensor(in.name, v.shape, v.streamed, role);
            inputs.push_back(&v);
            tensors.push_back(v.tensor);
        }
        m_g.addOp("host.load." + stream, OpKind::HostLoad, {}, tensors);
        for (Value* v : inputs)
            if (!v->integer && v->streamed != m_type) { // still the model's input: no gradient flows into it
                const std::string name = m_g.tensor(v->tensor).name + ".cast";
                const int cast = m_g.addTensor(name, v->shape, m_type, TensorRole::Input);
                m_g.addOp(name, OpKind::Cast, {v->tensor}, {cast});
                v->tensor = cast;
            }
    }

    void expectInputs(std::size_t layer, std::size_t n) const
    {
        const auto& l = m_model.layers[layer];
        if (l.inputs.size() != n)
            fail(layer, "inputs", fmt::format("expected {} input{}, found {}", n, n == 1 ? "" : "s", l.inputs.size()));
    }

    void expectRank(std::size_t layer, const Value& v, std::size_t rank, const char* what) const
    {
        if (v.shape.size() != rank)
            fail(layer, "inputs/0", fmt::format("expected {}, found {}", what, shapeText(v.shape)));
    }

    void define(const LayerSpec& l, std::size_t layer, Value v)
    {
        if (m_values.count(l.name))
            fail(layer, "name", fmt::format("\"{}\" already names an input or an op", l.name));
        m_values[l.name] = std::move(v);
        m_producer[l.name] = m_g.currentBlock;
    }

    int tensor(const std::string& name, std::vector<uint64_t> shape, TensorRole role = TensorRole::Activation)
    {
        if (!withinTensorLimit(shape))
            fail(m_layer, "", fmt::format("tensor \"{}\" of shape {} has more than 2^40 elements", name, shapeText(shape)));
        return m_g.addTensor(name, std::move(shape), m_type, role);
    }

    // A tensor of at most 2^40 elements (2 TiB in fp16: more than an IPU-POD256 holds) keeps
    // every size and MAC count inside 64 bits: a matmul's MACs are at most the square root of
    // the product of its input, weight and output sizes, 2^60.
    static bool withinTensorLimit(const std::vector<uint64_t>& shape)
    {
        uint64_t n = 1;
        for (uint64_t d : shape)
            if (__builtin_mul_overflow(n, d, &n) || n > (uint64_t(1) << 40))
                return false;
        return true;
    }

    /** The ops of a block are consecutive, as PopTorch's BeginBlock makes them: blocks are
     *  compiled (and pipelined) in the order they begin, so a block entered again after another
     *  would read what a later block computes. */
    void enterBlock(const std::string& block, std::size_t i)
    {
        if (block != m_g.currentBlock && m_firstLayer.count(block))
            fail(i, "block", fmt::format("expected the ops of block \"{}\" to be consecutive: it was left for block \"{}\" "
                                         "before this op",
                                         block, m_g.currentBlock));
        m_g.currentBlock = block;
        if (m_firstLayer.emplace(block, i).second)
            m_g.blocks.push_back(block);
    }

    void layer(std::size_t i)
    {
        m_layer = i;
        const LayerSpec& l = m_model.layers[i];
        if (isLossLayer(l.kind) && !m_withLoss)
            return;
        enterBlock(l.block.empty() ? (m_g.currentBlock.empty() ? "model" : m_g.currentBlock) : l.block, i);
        if (l.ipu)
            nameIpu(*l.ipu, i);
        define(l, i, value(l, i));
    }

    /** The IPU of the current block, as the i-th op names it. */
    void nameIpu(uint32_t ipu, std::size_t i)
    {
        const std::string& block = m_g.currentBlock;
        const LayerSpec& l = m_model.layers[i];
        const std::string pointer = l.origin.empty() ? at(i, "ipu") : l.ipuPointer;
        auto [it, added] = m_blockIpus.emplace(block, ipu);
        if (!added && it->second != ipu)
            m_diag.fail(pointer, fmt::format("block \"{}\" is already on IPU {}", block, it->second));
        m_ipuPointers.emplace(block, pointer);
    }

    /** Once one block names its IPU, every block must. */
    void checkBlockIpus() const
    {
        if (m_blockIpus.empty())
            return;
        for (const auto& [block, layer] : m_firstLayer)
            if (!m_blockIpus.count(block))
                fail(layer, "", fmt::format("expected an \"ipu\" for block \"{}\"{}: other blocks name theirs", block,
                                            block == "model" ? " (the ops before the first named block)" : ""));
    }

    Value value(const LayerSpec& l, std::size_t i)
    {
        switch (l.kind) {
        case LayerKind::Conv2d: return conv2d(l, i);
        case LayerKind::Linear: return linear(l, i);
        case LayerKind::MatMul: return matmul(l, i);
#define IPUSIM_ACTIVATION_CASE(kind, ...) case LayerKind::kind:
        IPUSIM_ACTIVATIONS(IPUSIM_ACTIVATION_CASE) return unary(l, i, activationOf(l.kind)->op);
#undef IPUSIM_ACTIVATION_CASE
        case LayerKind::Softmax: return l.inputs.size() == 2 ? maskedSoftmax(l, i) : unary(l, i, OpKind::Softmax);
        case LayerKind::Add: return binary(l, i, OpKind::Add);
        case LayerKind::Sub: return binary(l, i, OpKind::Sub);
        case LayerKind::Mul: return binary(l, i, OpKind::Mul);
        case LayerKind::Div: return binary(l, i, OpKind::Div);
        case LayerKind::Scale: return unary(l, i, OpKind::Scale);
        case LayerKind::Transpose: return transpose(l, i);
        case LayerKind::Concat: return concat(l, i);
        case LayerKind::Slice: return slice(l, i);
        case LayerKind::LayerNorm: return layerNorm(l, i);
        case LayerKind::GroupNorm: return groupNorm(l, i);
        case LayerKind::MaxPool2d: return pool(l, i, OpKind::MaxPool);
        case LayerKind::AvgPool2d: return pool(l, i, OpKind::AvgPool);
        case LayerKind::GlobalAvgPool: return globalAvgPool(l, i);
        case LayerKind::Reduce: return reduce(l, i);
        case LayerKind::Pad: return pad(l, i);
        case LayerKind::MaskedFill: return maskedFill(l, i);
        case LayerKind::Compare: return compare(l, i);
        case LayerKind::LogicalNot: return unary(l, i, OpKind::LogicalNot);
        case LayerKind::Where: return where(l, i);
        case LayerKind::Expand: return expand(l, i);
        case LayerKind::BatchNorm2d: return batchNorm(l, i);
        case LayerKind::Dropout: return dropout(l, i);
        case LayerKind::Flatten: return flatten(l, i);
        case LayerKind::Reshape: return reshape(l, i);
        case LayerKind::Embedding: return embedding(l, i);
        case LayerKind::Gather: return gather(l, i);
        case LayerKind::Parameter: return parameter(l, i);
        case LayerKind::CrossEntropy: return loss(l, i, OpKind::SoftmaxCrossEntropy);
        case LayerKind::NllLoss: return loss(l, i, OpKind::NllLoss);
        case LayerKind::LogSoftmax: return unary(l, i, OpKind::LogSoftmax);
        case LayerKind::AttentionMask: return attentionMask(l, i);
        case LayerKind::Lstm: return recurrent(l, i, RecurrentCell::Lstm);
        case LayerKind::Gru: return recurrent(l, i, RecurrentCell::Gru);
        }
        return {};
    }

    /** Adds the per-channel bias of a conv or linear layer after its output `y`. */
    Value withBias(const LayerSpec& l, Value y, uint64_t channels, int bias)
    {
        if (bias < 0)
            return y;
        const int biased = tensor(l.name + ".biased", y.shape);
        m_g.addOp(l.name + ".bias_add", OpKind::BiasAdd, {y.tensor, bias}, {biased}).channels = channels;
        y.tensor = biased;
        return y;
    }

    Value convolution(const LayerSpec& l, std::size_t i, const Value& x, const ConvGeometry& geom,
                      std::vector<uint64_t> weightShape, std::vector<uint64_t> outShape)
    {
        const int w = l.tiedWeight.empty() ? tensor(l.name + ".weight", weightShape, TensorRole::Weight) : tiedWeight(l, i, weightShape);
        m_weights[l.name] = w;
        Value y{tensor(l.name + ".out", outShape), outShape};
        Op& op = m_g.addOp(l.name, OpKind::Conv, {x.tensor, w}, {y.tensor});
        op.geometry = geom;
        op.conv = forwardProblem(geom, m_type, m_partials);
        return withBias(l, y, geom.outChans, l.bias ? tensor(l.name + ".bias", {geom.outChans}, TensorRole::Weight) : -1);
    }

    /** The weight of the layer `l` ties to, which must have `shape`. */
    int tiedWeight(const LayerSpec& l, std::size_t i, const std::vector<uint64_t>& shape) const
    {
        auto it = m_weights.find(l.tiedWeight);
        if (it == m_weights.end())
            fail(i, "weight", fmt::format("expected the name of an earlier linear, conv2d or embedding op, found \"{}\"", l.tiedWeight));
        const TensorDesc& w = m_g.tensor(it->second);
        if (w.shape != shape)
            fail(i, "weight", fmt::format("expected a weight of shape {}, found {} of \"{}\"", shapeText(shape), shapeText(w.shape), l.tiedWeight));
        return it->second;
    }

    Value conv2d(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        expectRank(i, x, 4, "an input [batch, channels, height, width]");
        ConvGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], l.features, l.kernel[0], l.kernel[1], l.padding[0],
                       l.padding[1], l.stride[0], l.stride[1], l.dilation[0], l.dilation[1], l.groups};
        if (g.inChans % g.groups != 0 || g.outChans % g.groups != 0)
            fail(i, "groups", fmt::format("expected a divisor of the input's {} channels and of out_channels {}, found {}",
                                                     g.inChans, g.outChans, g.groups));
        if (g.inHeight + 2 * g.padHeight < g.spanHeight() || g.inWidth + 2 * g.padWidth < g.spanWidth())
            fail(i, "kernel_size", fmt::format("expected a kernel within the padded input {} x {}, found {} x {}{}",
                                                          g.inHeight + 2 * g.padHeight, g.inWidth + 2 * g.padWidth, g.spanHeight(),
                                                          g.spanWidth(), g.dilationHeight * g.dilationWidth > 1 ? " (dilated)" : ""));
        return convolution(l, i, x, g, {g.outChans, g.inChans / g.groups, g.kernelHeight, g.kernelWidth},
                           {g.batch, g.outChans, g.outHeight(), g.outWidth()});
    }

    // A linear layer is a 1x1 convolution over every position but the last dimension.
    Value linear(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        if (x.shape.size() < 2)
            fail(i, "inputs/0", fmt::format("expected at least one dimension after the batch, found {}", shapeText(x.shape)));
        const uint64_t K = x.shape.back();
        ConvGeometry g{product(x.shape, 0, 1), K, 1, 1, l.features, 1, 1};
        std::vector<uint64_t> out = x.shape;
        out.back() = l.features;
        return convolution(l, i, x, g, {l.features, K}, out);
    }

    /** A batched matmul of two activations, [..., M, K] x [..., K, N]; one operand's leading
     *  dimensions after the batch may be 1 where the other's are not (numpy broadcasting, as
     *  multi-query attention's keys and values shared by the heads): it repeats over them. */
    Value matmul(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 2);
        const Value a = input(i, 0), b = input(i, 1);
        const std::size_t r = a.shape.size();
        bool fits = r >= 3 && b.shape.size() == r && a.shape[0] == b.shape[0] && a.shape[r - 1] == b.shape[r - 2];
        bool aRepeats = false, bRepeats = false;
        for (std::size_t d = 1; fits && d + 2 < r; ++d) {
            aRepeats |= a.shape[d] == 1 && b.shape[d] > 1;
            bRepeats |= b.shape[d] == 1 && a.shape[d] > 1;
            fits = a.shape[d] == b.shape[d] || a.shape[d] == 1 || b.shape[d] == 1;
        }
        if (!fits || (aRepeats && bRepeats))
            fail(i, "inputs", fmt::format("expected [..., M, K] and [..., K, N] with the same leading dimensions, or one operand's 1 "
                                          "where the other's are not, found {} and {}", shapeText(a.shape), shapeText(b.shape)));
        std::vector<uint64_t> out = a.shape;
        for (std::size_t d = 1; d + 2 < r; ++d)
            out[d] = std::max(a.shape[d], b.shape[d]);
        out.back() = b.shape[r - 1];
        const uint64_t groups = product(out, 0, 2), M = a.shape[r - 2], K = a.shape[r - 1], N = b.shape[r - 1];
        Value z{tensor(l.name + ".out", out), out};
        Op& op = m_g.addOp(l.name, OpKind::BatchMatMul, {a.tensor, b.tensor}, {z.tensor});
        op.conv = batchMatMulProblem(groups, M, K, N, m_type, m_partials);
        if (aRepeats || bRepeats) { // each of its matrices read by `window` groups, in a row per sample
            op.broadcast = aRepeats ? 0 : 1;
            op.window = groups / product(aRepeats ? a.shape : b.shape, 0, 2);
        }
        return z;
    }

    Value unary(const LayerSpec& l, std::size_t i, OpKind kind)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        Value y{tensor(l.name + ".out", x.shape), x.shape};
        Op& op = m_g.addOp(l.name, kind, {x.tensor}, {y.tensor});
        if (kind == OpKind::Softmax || kind == OpKind::LogSoftmax)
            op.channels = x.shape.back(); // the rows it normalises
        op.attentionScaleMask = l.attention && kind == OpKind::Softmax;
        return y;
    }

    /** Packed rows' attention mask (graphcore/examples' packed BERT): per sample, query i may
     *  attend to key j when tokens i and j carry the same sequence id; the mask adds 0 there
     *  and -10000 elsewhere. [batch, S] integer ids to [batch, S, S]. */
    Value attentionMask(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value ids = input(i, 0);
        if (!ids.integer || ids.shape.size() != 2)
            fail(i, "inputs/0", fmt::format("expected integer sequence ids [batch, tokens], found {}{}", ids.integer ? "" : "non-integer ",
                                            shapeText(ids.shape)));
        const std::vector<uint64_t> out{ids.shape[0], ids.shape[1], ids.shape[1]};
        Value y{tensor(l.name + ".out", out), out};
        m_g.addOp(l.name, OpKind::AttentionMask, {ids.tensor}, {y.tensor}).channels = ids.shape[1];
        m_masks.insert(l.name);
        return y;
    }

    /** Attention scores [batch, heads, S, S] with an attention_mask's [batch, S, S] added: the
     *  mask repeats over the heads. Only an attention_mask op's output: the softmax's gradient
     *  leaves the mask out, right only for a mask made from integer ids. */
    Value maskedSoftmax(const LayerSpec& l, std::size_t i)
    {
        if (!l.attention)
            fail(i, "inputs", "expected one input: a mask (the second) comes with \"attention\": true");
        const Value x = input(i, 0), mask = input(i, 1);
        expectRank(i, x, 4, "attention scores [batch, heads, queries, keys]");
        if (!m_masks.count(l.inputs[1]))
            fail(i, "inputs/1", fmt::format("expected the output of an attention_mask op, found \"{}\"", l.inputs[1]));
        const std::vector<uint64_t> expected{x.shape[0], x.shape[2], x.shape[3]};
        if (mask.shape != expected)
            fail(i, "inputs/1", fmt::format("expected a mask {} for scores {}, found {}", shapeText(expected), shapeText(x.shape),
                                            shapeText(mask.shape)));
        Value y{tensor(l.name + ".out", x.shape), x.shape};
        Op& op = m_g.addOp(l.name, OpKind::Softmax, {x.tensor, mask.tensor}, {y.tensor});
        op.channels = x.shape.back();
        op.attentionScaleMask = true;
        op.broadcast = 1; // each score reads its own mask element: a run of 1
        return y;
    }

    /** add, sub, mul, div: operands of one shape, or one that numpy broadcasts to the other's
     *  (each dimension, aligned from the last, equal or 1; the batch equal): a per-sample
     *  suffix repeated over leading dimensions ([N, C] into [N, H, C]) or a per-channel operand
     *  repeated over trailing ones ([N, C, 1, 1] into [N, C, H, W], squeeze-and-excitation). */
    Value binary(const LayerSpec& l, std::size_t i, OpKind kind)
    {
        expectInputs(i, 2);
        const Value a = input(i, 0), b = input(i, 1);
        if (a.parameter && b.parameter)
            fail(i, "inputs", "expected an activation operand, found two parameters");
        int broadcast = -1;
        Repeats repeats;
        if (a.shape != b.shape || a.parameter || b.parameter) {
            // The smaller operand repeats; a parameter always does, over the batch too.
            const bool aBig = b.parameter || (!a.parameter && product(a.shape) >= product(b.shape));
            const auto r = repeatsOver(aBig ? b : a, aBig ? a.shape : b.shape);
            if (!r)
                fail(i, "inputs", fmt::format("expected operands of one shape, or one that broadcasts to the other's (each "
                                              "dimension equal or 1, the batch equal), found {} and {}",
                                              shapeText(a.shape), shapeText(b.shape)));
            broadcast = aBig ? 1 : 0;
            repeats = *r;
        }
        const std::vector<uint64_t>& shape = broadcast == 0 ? b.shape : a.shape;
        Value y{tensor(l.name + ".out", shape), shape};
        Op& op = m_g.addOp(l.name, kind, {a.tensor, b.tensor}, {y.tensor});
        op.broadcast = broadcast;
        op.window = repeats.window;
        op.broadcastRun = repeats.run;
        return y;
    }

    /** How often each element of a broadcast operand repeats over `big` (`window`), and the runs
     *  of big's elements that share one (`run`: the trailing dimensions it has as 1). */
    struct Repeats
    {
        uint64_t window = 1, run = 1;
    };

    /** `small` repeated over `big` by numpy's rule: a parameter aligned from the last dimension,
     *  the batch included; an activation's per-sample shape of lower rank with ones in front,
     *  after the batch. Each dimension equal or 1, the batch equal (a parameter's 1); nothing
     *  when it does not broadcast. */
    static std::optional<Repeats> repeatsOver(const Value& smaller, const std::vector<uint64_t>& big)
    {
        std::vector<uint64_t> small = smaller.shape;
        if (smaller.parameter) {
            while (small.size() > big.size() && small.front() == 1)
                small.erase(small.begin());
            if (small.size() < big.size())
                small.insert(small.begin(), big.size() - small.size(), 1);
        } else if (small.size() < big.size()) {
            small.insert(small.begin() + 1, big.size() - small.size(), 1);
        }
        bool fits = small.size() == big.size() && (smaller.parameter ? small[0] == 1 : small[0] == big[0]);
        for (std::size_t d = 1; fits && d < big.size(); ++d)
            fits = small[d] == big[d] || small[d] == 1;
        if (!fits)
            return std::nullopt;
        Repeats r{product(big) / product(small), 1};
        for (std::size_t d = big.size(); d-- > 1 && small[d] == 1;)
            r.run *= big[d];
        return r;
    }

    /** x with the elements a mask selects set to a constant: a binary op whose mask may repeat
     *  over x's shape, never x over the mask's. */
    Value maskedFill(const LayerSpec& l, std::size_t i)
    {
        const Value y = binary(l, i, OpKind::MaskedFill);
        const Op& op = m_g.ops.back();
        if (op.broadcast == 0)
            fail(i, "inputs", fmt::format("expected a mask of the tensor's shape or one that broadcasts to it, found the tensor {} "
                                          "smaller than the mask {}", shapeText(m_g.tensor(op.inputs[0]).shape), shapeText(m_g.tensor(op.inputs[1]).shape)));
        return y;
    }

    Value compare(const LayerSpec& l, std::size_t i)
    {
        const Value y = binary(l, i, OpKind::Compare);
        m_g.ops.back().comparison = l.comparison;
        return y;
    }

    /** torch.where(mask, x, y): activations x and y of one shape, the mask (an activation or a
     *  parameter) of that shape or one that broadcasts to it. */
    Value where(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 3);
        const Value mask = input(i, 0), x = input(i, 1), y = input(i, 2);
        for (std::size_t k : {1, 2})
            if ((k == 1 ? x : y).parameter)
                fail(i, fmt::format("inputs/{}", k), "expected an activation, found a parameter (a mask only may be one)");
        if (x.shape != y.shape)
            fail(i, "inputs", fmt::format("expected x and y of one shape, found {} and {}", shapeText(x.shape), shapeText(y.shape)));
        // The mask repeats over the data as a binary op's smaller operand does (numpy's rule).
        const auto repeats = repeatsOver(mask, x.shape);
        if (!repeats)
            fail(i, "inputs/0", fmt::format("expected a mask of the data's shape {} or one that broadcasts to it, found {}",
                                            shapeText(x.shape), shapeText(mask.shape)));
        Value out{tensor(l.name + ".out", x.shape), x.shape};
        Op& op = m_g.addOp(l.name, OpKind::Select, {mask.tensor, x.tensor, y.tensor}, {out.tensor});
        if (mask.shape != x.shape || mask.parameter) {
            op.broadcast = 0;
            op.window = repeats->window;
            op.broadcastRun = repeats->run;
        }
        return out;
    }

    /** A tensor of the model, not of a sample: learned (a per-channel scale, a class token),
     *  placed as a weight, or kept but not learned (a causal mask buffer), placed as a buffer. */
    Value parameter(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 0);
        std::vector<uint64_t> shape;
        for (std::size_t k = 0; k < l.shape.size(); ++k) {
            if (l.shape[k] < 1)
                fail(i, fmt::format("shape/{}", k), fmt::format("expected a positive size, found {}", l.shape[k]));
            shape.push_back(uint64_t(l.shape[k]));
        }
        if (shape.empty())
            fail(i, "shape", "expected at least one dimension (a scalar factor is a scale op)");
        Value v{tensor(l.name, shape, l.learned ? TensorRole::Weight : TensorRole::Buffer), shape};
        v.parameter = true;
        return v;
    }

    Value transpose(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        Value v = input(i, 0);
        std::vector<uint32_t> sorted = l.perm;
        std::sort(sorted.begin(), sorted.end());
        bool permutation = sorted.size() == v.shape.size();
        for (std::size_t k = 0; permutation && k < sorted.size(); ++k)
            permutation = sorted[k] == k;
        if (!permutation || l.perm.at(0) != 0)
            fail(i, "dims", fmt::format("expected a permutation of the {} dimensions of {} that keeps the batch (0) first",
                                        v.shape.size(), shapeText(v.shape)));
        std::vector<uint64_t> out;
        for (uint32_t d : l.perm)
            out.push_back(v.shape[d]);
        v.shape = out;
        return v;
    }

    Value layerNorm(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        const uint64_t C = x.shape.back();
        const std::vector<int> in = normInputs(l, x, C);
        Value y{tensor(l.name + ".out", x.shape), x.shape};
        m_g.addOp(l.name, OpKind::LayerNorm, in, {y.tensor}).channels = C;
        return y;
    }

    /** A norm's operands: x, then (affine) its per-channel weight and bias. */
    std::vector<int> normInputs(const LayerSpec& l, const Value& x, uint64_t channels)
    {
        if (!l.affine)
            return {x.tensor};
        return {x.tensor, tensor(l.name + ".weight", {channels}, TensorRole::Weight), tensor(l.name + ".bias", {channels}, TensorRole::Weight)};
    }

    /** Group norm of [N, C, ...]: statistics over each sample's C / G channels and their image,
     *  priced as LayerNorm's chain over rows of that many elements (PopLibs reshapes groups into
     *  rows, poplibs-costs §3.10); gamma and beta (affine) per channel. */
    Value groupNorm(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        if (x.shape.size() < 3)
            fail(i, "inputs/0", fmt::format("expected an input [batch, channels, ...], found {}", shapeText(x.shape)));
        const uint64_t C = x.shape[1];
        if (l.groups < 1 || C % l.groups != 0)
            fail(i, "num_groups", fmt::format("expected a divisor of the {} channels, found {}", C, l.groups));
        const std::vector<int> in = normInputs(l, x, C);
        Value y{tensor(l.name + ".out", x.shape), x.shape};
        Op& op = m_g.addOp(l.name, OpKind::LayerNorm, in, {y.tensor});
        op.channels = product(x.shape, 1) / l.groups;
        op.paramChannels = C;
        return y;
    }

    /** Max or average pooling over windows of kernel_size every stride, as torch.nn.MaxPool2d
     *  and AvgPool2d (floor or ceil mode). */
    Value pool(const LayerSpec& l, std::size_t i, OpKind kind)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        expectRank(i, x, 4, "an input [batch, channels, height, width]");
        for (int d : {0, 1})
            if (2 * l.padding[d] > l.kernel[d])
                fail(i, "padding", fmt::format("expected at most half the kernel size, found {}", l.padding[d]));
        if (x.shape[2] + 2 * l.padding[0] < l.kernel[0] || x.shape[3] + 2 * l.padding[1] < l.kernel[1])
            fail(i, "kernel_size", fmt::format("expected a window within the padded input {} x {}",
                                                          x.shape[2] + 2 * l.padding[0], x.shape[3] + 2 * l.padding[1]));
        ConvGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[1], l.kernel[0], l.kernel[1], l.padding[0],
                       l.padding[1], l.stride[0], l.stride[1]};
        g.ceilMode = l.ceilMode;
        std::vector<uint64_t> out{x.shape[0], x.shape[1], g.outHeight(), g.outWidth()};
        Value y{tensor(l.name + ".out", out), out};
        m_g.addOp(l.name, kind, {x.tensor}, {y.tensor}).geometry = g;
        return y;
    }

    Value globalAvgPool(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        expectRank(i, x, 4, "an input [batch, channels, height, width]");
        std::vector<uint64_t> out{x.shape[0], x.shape[1], 1, 1};
        Value y{tensor(l.name + ".out", out), out};
        m_g.addOp(l.name, OpKind::Reduce, {x.tensor}, {y.tensor}).window = x.shape[2] * x.shape[3]; // each image's mean, in a run
        return y;
    }

    /** The mean or sum over consecutive dimensions after the batch: popops::reduce, each output
     *  of `window` elements `inner` apart (in runs when the dimensions are the last). */
    Value reduce(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        std::vector<uint32_t> dims = l.perm;
        std::sort(dims.begin(), dims.end());
        const bool inRange = !dims.empty() && dims.front() >= 1 && dims.back() < x.shape.size();
        const bool consecutive = inRange && dims.back() - dims.front() + 1 == dims.size() &&
                                 std::adjacent_find(dims.begin(), dims.end()) == dims.end();
        if (!consecutive)
            fail(i, "dims", fmt::format("expected consecutive dimensions from 1 to {} of {} (0 is the batch), found [{}]", x.shape.size() - 1,
                                        shapeText(x.shape), fmt::join(l.perm, ", ")));
        std::vector<uint64_t> out;
        for (std::size_t d = 0; d < x.shape.size(); ++d)
            if (d < dims.front() || d > dims.back())
                out.push_back(x.shape[d]);
            else if (l.keepDim)
                out.push_back(1);
        Value y{tensor(l.name + ".out", out), out};
        Op& op = m_g.addOp(l.name, OpKind::Reduce, {x.tensor}, {y.tensor});
        op.window = product(x.shape, dims.front(), x.shape.size() - 1 - dims.back());
        op.inner = product(x.shape, dims.back() + 1);
        op.mean = l.mean;
        return y;
    }

    /** x.expand: dimensions of 1 after the batch repeated to the target's size (-1 keeps one),
     *  those repeated consecutive, as a reduce's are. */
    Value expand(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        if (l.shape.size() + 1 != x.shape.size())
            fail(i, "shape", fmt::format("expected a size for each of the {} dimensions after the batch of {}, found [{}]", x.shape.size() - 1,
                                         shapeText(x.shape), fmt::join(l.shape, ", ")));
        std::vector<uint64_t> out = x.shape;
        std::vector<std::size_t> repeated;
        for (std::size_t d = 1; d < x.shape.size(); ++d) {
            const int64_t want = l.shape[d - 1];
            if (want == -1 || uint64_t(want) == x.shape[d])
                continue;
            if (x.shape[d] != 1 || want < 1)
                fail(i, fmt::format("shape/{}", d - 1), fmt::format("expected -1, {} or (dimension {} of {} being 1) any size, found {}",
                                                                    x.shape[d], d, shapeText(x.shape), want));
            out[d] = uint64_t(want);
            repeated.push_back(d);
        }
        if (repeated.empty())
            fail(i, "shape", fmt::format("expected a dimension of 1 of {} repeated, found [{}]", shapeText(x.shape), fmt::join(l.shape, ", ")));
        if (repeated.back() - repeated.front() + 1 != repeated.size())
            fail(i, "shape", fmt::format("expected the repeated dimensions consecutive, found dimensions {} of {}", fmt::join(repeated, ", "),
                                         shapeText(x.shape)));
        Value y{tensor(l.name + ".out", out), out};
        Op& op = m_g.addOp(l.name, OpKind::Expand, {x.tensor}, {y.tensor});
        op.window = product(out, repeated.front(), out.size() - 1 - repeated.back());
        op.inner = product(out, repeated.back() + 1);
        return y;
    }

    /** Each dimension after the batch padded before and after; a reflection needs fewer
     *  border elements than the dimension has (torch's rule), an edge a dimension to repeat. */
    Value pad(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        if (l.pads.size() != 2 * (x.shape.size() - 1))
            fail(i, "pads", fmt::format("expected [before, after] for each of the {} dimensions after the batch of {}, found {} pairs",
                                        x.shape.size() - 1, shapeText(x.shape), l.pads.size() / 2));
        std::vector<uint64_t> out = x.shape;
        for (std::size_t d = 1; d < x.shape.size(); ++d) {
            const uint64_t before = l.pads[2 * (d - 1)], after = l.pads[2 * (d - 1) + 1];
            if (l.padMode == PadMode::Reflect && (before >= x.shape[d] || after >= x.shape[d]))
                fail(i, "pads", fmt::format("expected a reflection of fewer than {} elements in dimension {} of {}, found [{}, {}]", x.shape[d], d,
                                            shapeText(x.shape), before, after));
            if (__builtin_add_overflow(out[d], before + after, &out[d]))
                fail(i, "pads", "expected pads that keep each dimension under 2^64");
        }
        Value y{tensor(l.name + ".out", out), out};
        m_g.addOp(l.name, OpKind::Pad, {x.tensor}, {y.tensor}).padMode = l.padMode;
        return y;
    }

    /** Batch norm of [N, C, H, W]: gamma and beta are learned; the running mean and variance
     *  are buffers, updated in training and used in inference. */
    Value batchNorm(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        expectRank(i, x, 4, "an input [batch, channels, height, width]");
        const uint64_t C = x.shape[1];
        const int gamma = tensor(l.name + ".weight", {C}, TensorRole::Weight);
        const int beta = tensor(l.name + ".bias", {C}, TensorRole::Weight);
        const int mean = tensor(l.name + ".running_mean", {C}, TensorRole::Buffer);
        const int var = tensor(l.name + ".running_var", {C}, TensorRole::Buffer);
        Value y{tensor(l.name + ".out", x.shape), x.shape};
        Op& op = m_g.addOp(l.name, OpKind::BatchNorm, {x.tensor, gamma, beta, mean, var}, {y.tensor});
        op.channels = C;
        op.training = m_withLoss;
        return y;
    }

    /** Dropout draws a mask in training and is the identity (a view) in inference. */
    /** An LSTM or GRU layer over [B, S, I]: one op running every step (popnn's lstmFwd and
     *  gruFwd loop over the sequence on the IPU), its weights [gates x H, I + H] (the input and
     *  recurrent weights side by side, as popnn's matmul of [x_t, h_t-1] reads them), its
     *  biases [2 x gates x H]; in training, also the intermediates each step saves. */
    Value recurrent(const LayerSpec& l, std::size_t i, RecurrentCell cell)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        if (x.shape.size() != 3)
            fail(i, "inputs/0", fmt::format("expected a sequence [batch, steps, features], found {}", shapeText(x.shape)));
        const uint64_t B = x.shape[0], S = x.shape[1], I = x.shape[2], H = l.features, gates = gatesOf(cell);
        const int w = tensor(l.name + ".weight", {gates * H, I + H}, TensorRole::Weight);
        const int b = tensor(l.name + ".bias", {2 * gates * H}, TensorRole::Weight);
        m_weights[l.name] = w;
        Value y{tensor(l.name + ".out", {B, S, H}), {B, S, H}};
        std::vector<int> outs{y.tensor};
        if (m_withLoss)
            outs.push_back(tensor(l.name + ".saved", {B, S, savedOf(cell) * H}));
        Op& op = m_g.addOp(l.name, OpKind::Recurrent, {x.tensor, w, b}, outs);
        op.cell = cell;
        op.channels = H;
        op.window = S;
        op.conv = batchMatMulProblem(1, B, I + H, gates * H, m_type, m_partials); // a step's matmul, for its precisions
        return y;
    }

    Value dropout(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        if (!m_withLoss)
            return x;
        Value y{tensor(l.name + ".out", x.shape), x.shape};
        m_g.addOp(l.name, OpKind::Dropout, {x.tensor}, {y.tensor});
        return y;
    }

    Value flatten(const LayerSpec&, std::size_t i)
    {
        expectInputs(i, 1);
        Value v = input(i, 0);
        v.shape = {v.shape[0], product(v.shape, 1)};
        return v;
    }

    /** The axis of a concat or slice over `shape`: after the batch, within the rank. */
    uint32_t axisOf(const LayerSpec& l, std::size_t i, const std::vector<uint64_t>& shape) const
    {
        if (l.axis < 1 || l.axis >= shape.size())
            fail(i, "dim", fmt::format("expected a dimension from 1 to {} of {} (0 is the batch)", shape.size() - 1, shapeText(shape)));
        return l.axis;
    }

    Value concat(const LayerSpec& l, std::size_t i)
    {
        if (l.inputs.size() < 2)
            fail(i, "inputs", fmt::format("expected at least 2 inputs, found {}", l.inputs.size()));
        std::vector<Value> in;
        for (std::size_t k = 0; k < l.inputs.size(); ++k)
            in.push_back(input(i, k));
        // A parameter operand (a class token) has no batch: it repeats over it, and its shape is
        // compared with the activations' after the batch.
        const auto batched = std::find_if(in.begin(), in.end(), [](const Value& v) { return !v.parameter; });
        if (batched == in.end())
            fail(i, "inputs", "expected an activation among the inputs (parameters alone have no batch)");
        const uint32_t axis = axisOf(l, i, batched->shape);
        std::vector<uint64_t> out = batched->shape;
        out[axis] = 0;
        std::vector<int> tensors;
        for (std::size_t k = 0; k < in.size(); ++k) {
            std::vector<uint64_t> a = in[k].shape, b = batched->shape;
            if (in[k].parameter)
                a.insert(a.begin(), b[0]);
            if (a.size() == b.size())
                a[axis] = b[axis] = 0;
            if (a != b)
                fail(i, fmt::format("inputs/{}", k), fmt::format("expected {} with any size in dimension {}{}, found {}", shapeText(batched->shape),
                                                                 axis, in[k].parameter ? " (a parameter: without the batch)" : "",
                                                                 shapeText(in[k].shape)));
            out[axis] += in[k].shape[in[k].parameter ? axis - 1 : axis];
            tensors.push_back(in[k].tensor);
        }
        Value y{tensor(l.name + ".out", out), out};
        m_g.addOp(l.name, OpKind::Concat, tensors, {y.tensor});
        return y;
    }

    Value slice(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value x = input(i, 0);
        const uint32_t axis = axisOf(l, i, x.shape);
        const uint64_t size = x.shape[axis], end = std::min(l.end, size);
        if (l.start >= end)
            fail(i, "start", fmt::format("expected start < end within dimension {} of {}, found [{}, {})", axis, shapeText(x.shape), l.start, l.end));
        if (l.step < 1)
            fail(i, "step", fmt::format("expected a step of at least 1, found {}", l.step));
        std::vector<uint64_t> out = x.shape;
        out[axis] = (end - l.start + l.step - 1) / l.step;
        Value y{tensor(l.name + ".out", out), out};
        m_g.addOp(l.name, OpKind::Slice, {x.tensor}, {y.tensor});
        return y;
    }

    Value reshape(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        Value v = input(i, 0);
        const uint64_t elements = product(v.shape, 1);
        uint64_t known = 1;
        int inferred = -1;
        for (std::size_t k = 0; k < l.shape.size(); ++k) {
            if (l.shape[k] == -1 && inferred < 0)
                inferred = int(k);
            else if (l.shape[k] <= 0)
                fail(i, fmt::format("shape/{}", k), fmt::format("expected a positive size or one -1, found {}", l.shape[k]));
            else
                known *= uint64_t(l.shape[k]);
        }
        if (inferred >= 0 ? elements % known != 0 : known != elements)
            fail(i, "shape", fmt::format("expected a shape of {} elements per sample (the input is {})", elements, shapeText(v.shape)));
        v.shape = {v.shape[0]};
        for (std::size_t k = 0; k < l.shape.size(); ++k)
            v.shape.push_back(int(k) == inferred ? elements / known : uint64_t(l.shape[k]));
        return v;
    }

    Value embedding(const LayerSpec& l, std::size_t i)
    {
        expectInputs(i, 1);
        const Value ids = input(i, 0);
        if (!ids.integer)
            fail(i, "inputs/0", "expected an integer input (indices into the table)");
        const int table = tensor(l.name + ".weight", {l.rows, l.features}, TensorRole::Weight);
        m_weights[l.name] = table;
        std::vector<uint64_t> out = ids.shape;
        out.push_back(l.features);
        Value y{tensor(l.name + ".out", out), out};
        Op& op = m_g.addOp(l.name, OpKind::Gather, {table, ids.tensor}, {y.tensor});
        op.rows = product(ids.shape);
        op.channels = l.features;
        return y;
    }

    /** Per sample, the entries of dimension 1 of the first input picked by the integer indices
     *  of the second ([batch, ...] -> [batch, ..., rest]), or without one by the constant
     *  `index` ([batch, n, rest...] -> [batch, rest...], e.g. `x[:, 0]`) or list of them
     *  ([batch, n, rest...] -> [batch, k, rest...], e.g. `x[:, [0, 2]]`). */
    Value gather(const LayerSpec& l, std::size_t i)
    {
        if (l.inputs.empty() || l.inputs.size() > 2)
            fail(i, "inputs", fmt::format("expected a tensor and optionally its indices, found {} inputs", l.inputs.size()));
        const Value x = input(i, 0);
        if (x.shape.size() < 2)
            fail(i, "inputs/0", fmt::format("expected at least one dimension after the batch, found {}", shapeText(x.shape)));
        std::vector<uint64_t> out{x.shape[0]};
        std::vector<int> in{x.tensor};
        if (l.inputs.size() == 2) {
            const Value idx = input(i, 1);
            if (!idx.integer || idx.shape[0] != x.shape[0])
                fail(i, "inputs/1", fmt::format("expected integer indices [{}, ...], found {}{}", x.shape[0],
                                                idx.integer ? "" : "non-integer ", shapeText(idx.shape)));
            out.insert(out.end(), idx.shape.begin() + 1, idx.shape.end());
            in.push_back(idx.tensor);
        } else if (!l.indexList.empty()) {
            for (std::size_t k = 0; k < l.indexList.size(); ++k)
                if (l.indexList[k] >= x.shape[1])
                    fail(i, fmt::format("index/{}", k),
                         fmt::format("expected an index below dimension 1 of {}, found {}", shapeText(x.shape), l.indexList[k]));
            out.push_back(l.indexList.size());
        } else if (l.index >= x.shape[1]) {
            fail(i, "index", fmt::format("expected an index below dimension 1 of {}, found {}", shapeText(x.shape), l.index));
        }
        out.insert(out.end(), x.shape.begin() + 2, x.shape.end());
        Value y{tensor(l.name + ".out", out), out};
        Op& op = m_g.addOp(l.name, OpKind::Gather, in, {y.tensor});
        op.channels = product(x.shape, 2);
        op.rows = product(out) / op.channels;
        return y;
    }

    /** Softmax cross-entropy of logits, or NLL of log-probabilities, [..., classes] against
     *  integer labels [...]; the logits may come in parts of the classes (a serialized
     *  vocabulary), the labels last. */
    Value loss(const LayerSpec& l, std::size_t i, OpKind kind)
    {
        if (l.inputs.size() < 2)
            fail(i, "inputs", fmt::format("expected {} and labels, found {} input{}", kind == OpKind::NllLoss ? "log-probabilities" : "logits",
                                          l.inputs.size(), l.inputs.size() == 1 ? "" : "s"));
        const std::size_t parts = l.inputs.size() - 1;
        std::vector<int> in;
        const Value logits = input(i, 0);
        if (logits.shape.size() < 2)
            fail(i, "inputs/0", fmt::format("expected {} [batch, ..., classes], found {}",
                                            kind == OpKind::NllLoss ? "log-probabilities" : "logits", shapeText(logits.shape)));
        for (std::size_t k = 0; k < parts; ++k) {
            const Value part = input(i, k);
            if (part.shape != logits.shape)
                fail(i, fmt::format("inputs/{}", k), fmt::format("expected a part of the classes of shape {}, found {}",
                                                                 shapeText(logits.shape), shapeText(part.shape)));
            in.push_back(part.tensor);
        }
        const Value labels = input(i, parts);
        const std::vector<uint64_t> expected(logits.shape.begin(), logits.shape.end() - 1);
        if (!labels.integer || labels.shape != expected)
            fail(i, fmt::format("inputs/{}", parts), fmt::format("expected integer labels {}, found {}{}", shapeText(expected),
                                                                  labels.integer ? "" : "non-integer ", shapeText(labels.shape)));
        in.push_back(labels.tensor);
        Value value{m_g.addTensor(l.name, {1}, Precision::FP32, TensorRole::Output), {1}};
        m_g.addOp(l.name, kind, in, {value.tensor}).channels = logits.shape.back();
        return value;
    }

    void outputs(ModelGraphInfo& info)
    {
        std::set<std::string> lossLayers;
        for (const auto& l : m_model.layers)
            if (isLossLayer(l.kind))
                lossLayers.insert(l.name);
        for (std::size_t k = 0; k < m_model.outputs.size(); ++k) {
            const std::string& name = m_model.outputs[k];
            if (!m_withLoss && lossLayers.count(name))
                continue; // inference computes no loss
            auto it = m_values.find(name);
            if (it == m_values.end() || !m_producer.count(name) || it->second.parameter) // a model input is no op
                m_diag.fail(fmt::format("{}/outputs/{}", m_model.pointer, k), fmt::format("expected the name of an op, found \"{}\"", name));
            info.outputs.push_back(it->second.tensor);
            // They go to the host from the block that runs last among theirs (earlier ones,
            // such as a GoogLeNet's auxiliary logits, are carried to it).
            const std::string& block = m_producer.at(name);
            if (info.outputBlock.empty() || m_firstLayer.at(block) > m_firstLayer.at(info.outputBlock))
                info.outputBlock = block;
            if (lossLayers.count(name))
                info.losses.push_back(it->second.tensor);
        }
        if (!m_withLoss)
            return;
        for (const auto& name : lossLayers)
            if (std::find(m_model.outputs.begin(), m_model.outputs.end(), name) == m_model.outputs.end())
                info.losses.push_back(m_values.at(name).tensor);
    }

    const ModelSpec& m_model;
    uint64_t m_batch;
    Precision m_type, m_partials;
    bool m_withLoss;
    const Diagnostics& m_diag;
    std::size_t m_layer = 0; // the layer being built, for errors
    Graph m_g;
    std::map<std::string, Value> m_values;
    std::map<std::string, std::string> m_producer; // op name -> its block
    std::map<std::string, int> m_weights;          // op name -> its weight tensor (for tied weights)
    std::set<std::string> m_masks;                 // names of attention_mask ops' outputs
    std::map<std::string, std::string> m_streamOf; // model input -> its stream
    std::map<std::string, std::size_t> m_firstLayer; // block -> its first layer
    std::map<std::string, uint32_t> m_blockIpus;
    std::map<std::string, std::string> m_ipuPointers; // block -> the op that names its IPU
};

} // namespace

Graph buildModelGraph(const ModelSpec& model, uint64_t microBatch, Precision type, Precision partials, bool withLoss,
                      const Diagnostics& diag, ModelGraphInfo& info)
{
    return ModelBuilder(model, microBatch, type, partials, withLoss, diag).build(info);
}

} // namespace ipusim
