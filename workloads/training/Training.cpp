// SPDX-License-Identifier: MIT
#include "workloads/training/Training.hpp"

#include "workloads/graph/Activation.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace ipusim {

ConvProblem forwardProblem(const ConvGeometry& g, Precision input, Precision partials)
{
    // Channel groups are independent convolutions of inChans / groups into outChans / groups.
    ConvProblem p;
    p.groups = g.groups;
    p.positions = g.batch * g.outHeight() * g.outWidth();
    p.reduction = g.inChans / g.groups;
    p.kernelHeight = g.kernelHeight;
    p.kernelWidth = g.kernelWidth;
    p.outChans = g.outChans / g.groups;
    p.outWidth = g.outWidth();
    p.inWidth = g.inWidth + 2 * g.padWidth;
    p.strideHeight = g.strideHeight;
    p.strideWidth = g.strideWidth;
    p.dilationHeight = g.dilationHeight;
    p.dilationWidth = g.dilationWidth;
    p.input = input;
    p.partials = input == Precision::FP32 ? Precision::FP32 : partials;
    p.output = input;
    return p;
}

ConvProblem dataGradProblem(const ConvGeometry& g, Precision input, Precision partials)
{
    // dX = convolution of dY, padded by span - 1 - padding, with the flipped kernel: outputs
    // are the (unpadded) input positions, one step apart.
    ConvProblem p = forwardProblem(g, input, partials);
    p.positions = g.batch * g.inHeight * g.inWidth;
    p.reduction = g.outChans / g.groups;
    p.outChans = g.inChans / g.groups;
    p.outWidth = g.inWidth;
    p.inWidth = g.outWidth() + 2 * (g.spanWidth() - 1 - g.padWidth);
    p.strideHeight = p.strideWidth = 1;
    if (g.strideHeight * g.strideWidth > 1) {
        // A strided layer's gradient is a transposed convolution: dY dilated by the stride, so
        // each input position meets only the taps that land on a dY element, at most
        // ceil(k / stride) per dimension, and positions no tap reaches are zeros. PopLibs skips
        // the taps that land on the dilation's zeros; we price ceil(k / stride) taps on as many
        // positions as give the forward's multiply-adds, and fill the whole input gradient.
        p.kernelHeight = uint32_t((g.kernelHeight + g.strideHeight - 1) / g.strideHeight);
        p.kernelWidth = uint32_t((g.kernelWidth + g.strideWidth - 1) / g.strideWidth);
        const uint64_t pairs = g.batch * g.outHeight() * g.outWidth() * g.kernelHeight * g.kernelWidth;
        const uint64_t taps = uint64_t(p.kernelHeight) * p.kernelWidth;
        p.outputPositions = p.positions;
        p.positions = std::min(p.positions, (pairs + taps - 1) / taps);
    }
    return p;
}

ConvProblem weightGradProblem(const ConvGeometry& g, Precision input, Precision partials)
{
    // dW[o, i, kh, kw] = sum over batch and output positions of dY x X: the reduction runs
    // over every output position, the outputs are the weights.
    ConvProblem p = forwardProblem(g, input, partials);
    p.positions = g.inChans / g.groups * g.kernelHeight * g.kernelWidth;
    p.reduction = g.batch * g.outHeight() * g.outWidth();
    p.kernelHeight = p.kernelWidth = 1;
    p.outChans = g.outChans / g.groups;
    p.outWidth = p.inWidth = 1;
    p.strideHeight = p.strideWidth = p.dilationHeight = p.dilationWidth = 1;
    return p;
}

ConvProblem batchMatMulProblem(uint64_t groups, uint64_t M, uint64_t K, uint64_t N, Precision input, Precision partials)
{
    ConvProblem p;
    p.groups = groups;
    p.positions = M;
    p.reduction = K;
    p.outChans = N;
    p.input = input;
    p.partials = input == Precision::FP32 ? Precision::FP32 : partials;
    p.output = input;
    return p;
}

namespace {

/** Reverse-mode differentiation of a forward graph, then gradient accumulation and the
 *  optimizer: the passes addTraining runs. */
class Autodiff
{
public:
    Autodiff(Graph& g, const TrainingOptions& opt) : m_g(g), m_opt(opt)
    {
        for (const Op& op : g.ops) // a comparison's mask takes no gradient (PopART's Equal has no grad op)
            if (op.kind == OpKind::Compare || op.kind == OpKind::LogicalNot)
                m_masks.insert(op.outputs.begin(), op.outputs.end());
    }

    TrainingOps run()
    {
        for (std::size_t i = m_g.ops.size(); i-- > 0;)
            backward(Op(m_g.ops[i])); // a copy: emitting ops grows m_g.ops
        accumulate();
        optimizers();
        return m_out;
    }

private:
    int newGrad(int t, TensorRole role)
    {
        const TensorDesc d = m_g.tensor(t);
        return m_g.addTensor("d" + d.name, d.shape, d.type, role);
    }

    Op* emit(const std::string& name, OpKind kind, std::vector<int> in, std::vector<int> outs, const Op& from)
    {
        Op op{name, kind, std::move(in), std::move(outs), {}, {}, 1, from.channels, false, from.block};
        op.rows = from.rows;
        op.window = from.window;
        op.geometry = from.geometry;
        op.broadcastRun = from.broadcastRun;
        op.paramChannels = from.paramChannels;
        op.training = from.training;
        op.attentionScaleMask = from.attentionScaleMask;
        op.cell = from.cell;
        op.inner = from.inner;
        op.mean = from.mean;
        op.padMode = from.padMode;
        m_g.ops.push_back(std::move(op));
        m_out.backward.push_back(m_g.ops.size() - 1);
        return &m_g.ops.back();
    }

    /** A gradient contribution to `t`: the first is its gradient, later ones are added to it;
     *  a weight's contributions are gathered for its accumulator. */
    void contribute(int t, int dt, const Op& from)
    {
        const TensorRole role = m_g.tensor(t).role;
        if (role == TensorRole::Weight) {
            m_weightGrads.push_back({t, dt});
            return;
        }
        if (!wants(t))
            return;
        auto it = m_grad.find(t);
        if (it == m_grad.end()) {
            m_grad[t] = dt;
            return;
        }
        const int sum = m_g.addTensor(m_g.tensor(it->second).name + "+", m_g.tensor(t).shape, m_g.tensor(t).type, TensorRole::Gradient);
        emit(m_g.tensor(t).name + ".grad_sum", OpKind::Add, {it->second, dt}, {sum}, from);
        it->second = sum;
    }

    bool wants(int t) const
    {
        const TensorRole r = m_g.tensor(t).role;
        // A buffer is not learned; a mask takes no gradient.
        return r != TensorRole::Input && r != TensorRole::Label && r != TensorRole::Buffer && !m_masks.count(t);
    }

    /** The gradient ops of one forward op, once the gradient of its output is known. */
    void backward(const Op& op)
    {
        if (op.kind == OpKind::HostLoad || op.kind == OpKind::HostStore)
            return;
        const int y = op.outputs.empty() ? -1 : op.outputs[0];
        m_g.currentBlock = op.block; // gradients live with the op that makes them
        if (isLoss(op.kind)) {
            if (std::find(m_opt.losses.begin(), m_opt.losses.end(), y) != m_opt.losses.end())
                lossGradient(op);
            return;
        }
        auto it = m_grad.find(y);
        if (it != m_grad.end())
            gradientRule(op, y, it->second);
    }

    void lossGradient(const Op& op)
    {
        // Every input but the labels (the last) is a part of the logits.
        std::vector<int> parts(op.inputs.begin(), op.inputs.end() - 1), dparts;
        for (int part : parts)
            dparts.push_back(newGrad(part, TensorRole::Gradient));
        emit(op.name + ".grad", op.kind == OpKind::NllLoss ? OpKind::NllLossGrad : OpKind::SoftmaxCrossEntropyGrad, op.inputs, dparts, op);
        for (std::size_t k = 0; k < parts.size(); ++k)
            contribute(parts[k], dparts[k], op);
    }

    void gradientRule(const Op& op, int y, int dy)
    {
        switch (op.kind) {
        case OpKind::BiasAdd: {
            const int db = newGrad(op.inputs[1], TensorRole::WeightGradient);
            emit(op.name + ".grad", OpKind::BiasGrad, {dy}, {db}, op);
            contribute(op.inputs[1], db, op);
            contribute(op.inputs[0], dy, op); // the gradient passes through unchanged
            break;
        }
        case OpKind::Add:
        case OpKind::Sub:
        case OpKind::Mul:
        case OpKind::Div:
            if (op.broadcast >= 0)
                broadcastBinary(op, dy);
            else
                binary(op, dy);
            break;
        case OpKind::Scale: unary(op, OpKind::Scale, dy, -1); break;
        case OpKind::Slice: unary(op, OpKind::SliceGrad, dy, -1); break;
        case OpKind::Concat: // each input's part of the gradient
            for (std::size_t k = 0; k < op.inputs.size(); ++k)
                if (m_g.tensor(op.inputs[k]).role == TensorRole::Weight)
                    concatParameter(op, k, dy);
                else
                    unaryOn(op, op.inputs[k], OpKind::Slice, {dy}, ".grad_" + std::to_string(k));
            break;
#define IPUSIM_ACTIVATION_CASE(kind, ...) case OpKind::kind:
        IPUSIM_ACTIVATIONS(IPUSIM_ACTIVATION_CASE) activation(op, y, dy); break;
#undef IPUSIM_ACTIVATION_CASE
        case OpKind::Softmax: unary(op, OpKind::SoftmaxGrad, dy, y); break;
        case OpKind::LogSoftmax: unary(op, OpKind::LogSoftmaxGrad, dy, y); break;
        case OpKind::MaxPool: {
            const int dx = newGrad(op.inputs[0], TensorRole::Gradient);
            emit(op.name + ".grad", OpKind::MaxPoolGrad, {dy, op.inputs[0], y}, {dx}, op);
            contribute(op.inputs[0], dx, op);
            break;
        }
        case OpKind::AvgPool: unary(op, OpKind::AvgPoolGrad, dy, -1); break;
        case OpKind::Reduce: unary(op, OpKind::ReduceGrad, dy, -1); break;
        case OpKind::Expand: unary(op, OpKind::Reduce, dy, -1); break; // the repeats' sum (PopART's ExpandGrad: a ReduceSum)
        case OpKind::Pad: unary(op, OpKind::PadGrad, dy, -1); break;
        case OpKind::MaskedFill: maskedFill(op, dy); break;
        case OpKind::Dropout: unary(op, OpKind::DropoutGrad, dy, -1); break; // the mask again, from its seed
        case OpKind::BatchNorm: batchNorm(op, dy); break;
        case OpKind::LayerNorm: layerNorm(op, dy); break;
        case OpKind::Gather: gather(op, dy); break;
        case OpKind::AttentionMask: // made from integer ids: nothing to differentiate
        case OpKind::Compare:       // masks: no gradient through them
        case OpKind::LogicalNot: break;
        case OpKind::Select: select(op, dy); break;
        case OpKind::Conv: conv(op, dy); break;
        case OpKind::BatchMatMul: batchMatMul(op, dy); break;
        case OpKind::Recurrent: recurrent(op, dy); break;
        default: throw std::logic_error("no gradient rule for " + op.name);
        }
    }

    void binary(const Op& op, int dy)
    {
        switch (op.kind) {
        case OpKind::Add:
            contribute(op.inputs[0], dy, op);
            contribute(op.inputs[1], dy, op);
            break;
        case OpKind::Sub:
            contribute(op.inputs[0], dy, op);
            unaryOn(op, op.inputs[1], OpKind::Scale, {dy}, ".grad_rhs"); // -dy
            break;
        case OpKind::Mul: // dy b, dy a
            unaryOn(op, op.inputs[0], OpKind::Mul, {dy, op.inputs[1]}, ".grad_lhs");
            unaryOn(op, op.inputs[1], OpKind::Mul, {dy, op.inputs[0]}, ".grad_rhs");
            break;
        case OpKind::Div: // dy / b, -dy a / b^2
            unaryOn(op, op.inputs[0], OpKind::Div, {dy, op.inputs[1]}, ".grad_lhs");
            unaryOn(op, op.inputs[1], OpKind::DivGradRhs, {dy, op.inputs[0], op.inputs[1]}, ".grad_rhs");
            break;
        default: throw std::logic_error("not a binary op: " + op.name);
        }
    }

    /** A binary op whose operand `op.broadcast` repeats over the other's trailing dimensions:
     *  each operand's gradient is made output-sized (the repeated operand broadcast where it is
     *  read), then the repeated operand's is summed over its repeats. */
    void broadcastBinary(const Op& op, int dy)
    {
        const int s = op.broadcast, a = op.inputs[0], b = op.inputs[1];
        const TensorDesc out = m_g.tensor(op.outputs[0]);
        for (int k : {0, 1}) {
            const int x = op.inputs[std::size_t(k)];
            if (!wants(x))
                continue;
            const std::string suffix = k == 0 ? ".grad_lhs" : ".grad_rhs";
            OpKind kind = op.kind;
            std::vector<int> in{dy};
            int repeated = -1; // the position in `in` of the repeated operand
            switch (op.kind) {
            case OpKind::Add: in.clear(); break;
            case OpKind::Sub: kind = OpKind::Scale; if (k == 0) in.clear(); break; // -dy for the subtrahend
            case OpKind::Mul: in.push_back(op.inputs[std::size_t(1 - k)]); repeated = 1 - k == s ? 1 : -1; break;
            case OpKind::Div:
                if (k == 0) {
                    in.push_back(b);
                    repeated = s == 1 ? 1 : -1;
                } else {
                    kind = OpKind::DivGradRhs;
                    in.insert(in.end(), {a, b});
                    repeated = s + 1;
                }
                break;
            default: throw std::logic_error("not a binary op: " + op.name);
            }
            int full = dy;
            if (!in.empty()) {
                full = k == s ? m_g.addTensor("d" + m_g.tensor(x).name + ".full", out.shape, out.type, TensorRole::Gradient)
                              : newGrad(x, TensorRole::Gradient);
                Op* e = emit(op.name + suffix, kind, in, {full}, op);
                e->broadcast = repeated;
            }
            if (k != s) {
                contribute(x, full, op);
                continue;
            }
            sumRepeats(op, x, full, suffix);
        }
    }

    /** The gradient of operand x, repeated over `full`'s elements: their sum (ReduceRepeats of
     *  runs of `run` elements sharing one of x's, op's own by default), a weight's gradient where
     *  x is a learned parameter. */
    void sumRepeats(const Op& op, int x, int full, const std::string& suffix, std::optional<uint64_t> run = std::nullopt)
    {
        const bool weight = m_g.tensor(x).role == TensorRole::Weight;
        const int dx = newGrad(x, weight ? TensorRole::WeightGradient : TensorRole::Gradient);
        Op* sum = emit(op.name + suffix + ".sum", OpKind::ReduceRepeats, {full}, {dx}, op);
        sum->broadcastRun = run.value_or(op.broadcastRun);
        contribute(x, dx, op); // after the last use of `sum`: contributing may add ops
    }

    /** A parameter concatenated to every sample (a class token): its part of each sample's
     *  gradient, then the sum over the samples (ReduceRepeats, each element its own run). */
    void concatParameter(const Op& op, std::size_t k, int dy)
    {
        const int x = op.inputs[k];
        std::vector<uint64_t> shape = m_g.tensor(x).shape;
        shape.insert(shape.begin(), m_g.tensor(dy).shape.at(0)); // the batch
        const std::string suffix = ".grad_" + std::to_string(k);
        const int full = m_g.addTensor("d" + m_g.tensor(x).name + ".full", shape, m_g.tensor(dy).type, TensorRole::Gradient);
        emit(op.name + suffix, OpKind::Slice, {dy}, {full}, op);
        sumRepeats(op, x, full, suffix, 1); // each element its own run
    }

    /** The gradient of input `x` of `op`, made by one op of `kind` from `in`. */
    void unaryOn(const Op& op, int x, OpKind kind, std::vector<int> in, const std::string& suffix)
    {
        if (!wants(x))
            return;
        const int dx = newGrad(x, TensorRole::Gradient);
        emit(op.name + suffix, kind, std::move(in), {dx}, op);
        contribute(x, dx, op);
    }

    /** An activation's gradient reads the incoming gradient and its input or output. */
    void activation(const Op& op, int y, int dy)
    {
        const ActivationRow& a = *activationOf(op.kind);
        unary(op, a.grad, dy, a.reads == GradientReads::Output ? y : op.inputs[0]);
    }

    /** A gradient from the output's gradient and, unless `saved` is -1, one saved tensor. */
    void unary(const Op& op, OpKind kind, int dy, int saved)
    {
        if (!wants(op.inputs[0]))
            return;
        const int dx = newGrad(op.inputs[0], TensorRole::Gradient);
        emit(op.name + ".grad", kind, saved < 0 ? std::vector<int>{dy} : std::vector<int>{dy, saved}, {dx}, op);
        contribute(op.inputs[0], dx, op);
    }

    void batchNorm(const Op& op, int dy)
    {
        // One op gives all three, as PopLibs computes dgamma and dbeta on the way to dx.
        // On a model input there is no dx: only the parameters' gradients.
        const int x = op.inputs[0], gamma = op.inputs[1], beta = op.inputs[2];
        const int dgamma = newGrad(gamma, TensorRole::WeightGradient), dbeta = newGrad(beta, TensorRole::WeightGradient);
        if (!wants(x)) {
            emit(op.name + ".grad", OpKind::BatchNormGrad, {dy, x, gamma}, {dgamma, dbeta}, op);
        } else {
            const int dx = newGrad(x, TensorRole::Gradient);
            emit(op.name + ".grad", OpKind::BatchNormGrad, {dy, x, gamma}, {dx, dgamma, dbeta}, op);
            contribute(x, dx, op);
        }
        contribute(gamma, dgamma, op);
        contribute(beta, dbeta, op);
    }

    /** d x = dy where x was kept, zero where filled: the same select of dy by the mask. */
    void maskedFill(const Op& op, int dy)
    {
        const int x = op.inputs[0];
        if (!wants(x))
            return;
        const int dx = newGrad(x, TensorRole::Gradient);
        Op* e = emit(op.name + ".grad", OpKind::MaskedFill, {dy, op.inputs[1]}, {dx}, op);
        e->broadcast = op.broadcast;
        contribute(x, dx, op);
    }

    /** torch.where's gradient: dy where the mask holds to x, dy elsewhere to y (each the select
     *  of dy and zero by the mask, as the forward's masked_fill gradient is). */
    void select(const Op& op, int dy)
    {
        for (int k : {1, 2}) {
            const int in = op.inputs[std::size_t(k)];
            if (!wants(in))
                continue;
            const int d = newGrad(in, TensorRole::Gradient);
            Op* e = emit(op.name + (k == 1 ? ".grad_x" : ".grad_y"), OpKind::MaskedFill, {dy, op.inputs[0]}, {d}, op);
            e->broadcast = op.broadcast == 0 ? 1 : -1;
            e->window = op.window;
            e->broadcastRun = op.broadcastRun;
            contribute(in, d, op);
        }
    }

    void layerNorm(const Op& op, int dy)
    {
        const int x = op.inputs[0];
        const int dx = newGrad(x, TensorRole::Gradient);
        const bool affine = op.inputs.size() == 3;
        emit(op.name + ".grad", OpKind::LayerNormGrad, affine ? std::vector<int>{dy, x, op.inputs[1]} : std::vector<int>{dy, x}, {dx}, op);
        contribute(x, dx, op);
        if (!affine)
            return;
        // Per-parameter sums over every position: per channel for group norm.
        const int gamma = op.inputs[1], beta = op.inputs[2];
        const uint64_t params = op.paramChannels ? op.paramChannels : op.channels;
        const int dgamma = newGrad(gamma, TensorRole::WeightGradient);
        emit(op.name + ".gamma_grad", OpKind::BiasGrad, {dy}, {dgamma}, op)->channels = params;
        const int dbeta = newGrad(beta, TensorRole::WeightGradient);
        emit(op.name + ".beta_grad", OpKind::BiasGrad, {dy}, {dbeta}, op)->channels = params;
        contribute(gamma, dgamma, op);
        contribute(beta, dbeta, op);
    }

    void gather(const Op& op, int dy)
    {
        const int table = op.inputs[0];
        if (!wants(table))
            return;
        const bool weight = m_g.tensor(table).role == TensorRole::Weight;
        const int dt = newGrad(table, weight ? TensorRole::WeightGradient : TensorRole::Gradient);
        std::vector<int> in{dy};
        if (op.inputs.size() > 1)
            in.push_back(op.inputs[1]);
        emit(op.name + ".grad", OpKind::GatherGrad, in, {dt}, op);
        contribute(table, dt, op);
    }

    /** popnn's lstmBwdWithWU / gruBwdWithWU: backward through time from the saved
     *  intermediates gives each step's gate gradients (and dx unless x is a model input); the
     *  weights' gradient is then one matmul over every step, [x, h_t-1]^T x dgates, and the
     *  biases' the gate gradients summed per unit, duplicated for the input and recurrent
     *  biases as PopART's LSTMGradOp gives ONNX's B. */
    void recurrent(const Op& op, int dy)
    {
        const int x = op.inputs[0], w = op.inputs[1], b = op.inputs[2];
        if (op.outputs.size() < 2)
            throw std::logic_error("recurrent op " + op.name + " has no saved intermediates to train from");
        const std::vector<uint64_t> xs = m_g.tensor(x).shape;
        const uint64_t B = xs.at(0), S = xs.at(1), I = xs.at(2), H = op.channels, G = gatesOf(op.cell);
        const Precision type = m_g.tensor(x).type;
        const int dgates = m_g.addTensor("d" + op.name + ".gates", {B, S, G * H}, type, TensorRole::Gradient);
        std::vector<int> outs{dgates};
        const bool dataGrad = wants(x);
        if (dataGrad)
            outs.push_back(newGrad(x, TensorRole::Gradient));
        emit(op.name + ".grad", OpKind::RecurrentGrad, {dy, x, w, op.outputs[0], op.outputs[1]}, outs, op)->conv = op.conv;
        if (dataGrad)
            contribute(x, outs[1], op);
        const int dw = newGrad(w, TensorRole::WeightGradient);
        emit(op.name + ".wgrad", OpKind::Conv, {x, op.outputs[0], dgates}, {dw}, op)->conv =
            batchMatMulProblem(1, I + H, B * S, G * H, type, m_opt.partials);
        contribute(w, dw, op);
        const int half = m_g.addTensor("d" + op.name + ".gate_bias", {G * H}, type, TensorRole::WeightGradient);
        emit(op.name + ".bias_grad", OpKind::BiasGrad, {dgates}, {half}, op)->channels = G * H;
        const int db = newGrad(b, TensorRole::WeightGradient);
        emit(op.name + ".bias_grad_both", OpKind::Concat, {half, half}, {db}, op);
        contribute(b, db, op);
    }

    void conv(const Op& op, int dy)
    {
        const int x = op.inputs[0], w = op.inputs[1];
        const Precision type = m_g.tensor(x).type;
        const int dw = newGrad(w, TensorRole::WeightGradient);
        Op* wg = emit(op.name + ".wgrad", OpKind::Conv, {x, dy}, {dw}, op);
        wg->conv = weightGradProblem(op.geometry, type, m_opt.partials);
        wg->geometry = op.geometry;
        contribute(w, dw, op);
        if (!wants(x)) // no gradient for the model's inputs
            return;
        const int dx = newGrad(x, TensorRole::Gradient);
        Op* dg = emit(op.name + ".dgrad", OpKind::Conv, {dy, w}, {dx}, op);
        dg->conv = dataGradProblem(op.geometry, type, m_opt.partials);
        dg->geometry = op.geometry;
        contribute(x, dx, op);
    }

    void batchMatMul(const Op& op, int dy)
    {
        // Z = X Y: dX = dZ Y^T (M x N times N x K), dY = X^T dZ (K x M times M x N). A repeated
        // operand's gradient is made for every group, then summed over its repeats (each of
        // its elements read by `window` groups: runs of one).
        const ConvProblem& p = op.conv;
        const int x = op.inputs[0], yIn = op.inputs[1];
        const std::vector<uint64_t> z = m_g.tensor(op.outputs[0]).shape; // a copy: adding tensors moves them
        auto gradient = [&](int k, uint64_t rows, uint64_t cols) {
            const int t = op.inputs[std::size_t(k)];
            if (op.broadcast != k)
                return newGrad(t, TensorRole::Gradient);
            std::vector<uint64_t> full(z.begin(), z.end() - 2);
            full.insert(full.end(), {rows, cols});
            return m_g.addTensor("d" + m_g.tensor(t).name + ".full", full, m_g.tensor(t).type, TensorRole::Gradient);
        };
        const int dx = gradient(0, p.positions, p.reduction), dyIn = gradient(1, p.reduction, p.outChans);
        Op* a = emit(op.name + ".grad_lhs", OpKind::BatchMatMul, {dy, yIn}, {dx}, op);
        a->conv = batchMatMulProblem(p.groups, p.positions, p.outChans, p.reduction, p.input, p.partials);
        Op* b = emit(op.name + ".grad_rhs", OpKind::BatchMatMul, {x, dy}, {dyIn}, op);
        b->conv = batchMatMulProblem(p.groups, p.reduction, p.positions, p.outChans, p.input, p.partials);
        for (auto [k, t, d] : {std::tuple<int, int, int>{0, x, dx}, {1, yIn, dyIn}}) {
            if (op.broadcast == k)
                sumRepeats(op, t, d, k == 0 ? ".grad_lhs" : ".grad_rhs", 1);
            else
                contribute(t, d, op);
        }
    }

    /** Weights: one accumulator each, added to once per contribution in the block that makes
     *  it (a tied weight gets two); without accumulation the contributions are summed. */
    void accumulate()
    {
        for (const auto& [w, dw] : m_weightGrads) {
            const TensorDesc wd = m_g.tensor(w);
            const TensorDesc gd = m_g.tensor(dw);
            m_g.currentBlock = gd.block;
            const bool first = !m_source.count(w);
            if (first)
                m_order.push_back(w);
            if (m_opt.accumulate) {
                if (first) {
                    m_g.currentBlock = wd.block;
                    m_source[w] = m_g.addTensor(wd.name + ".accum", wd.shape, wd.type, TensorRole::Accumulator);
                    m_g.currentBlock = gd.block;
                }
                m_g.ops.push_back({wd.name + ".accumulate", OpKind::GradAccumulate, {dw, m_source[w]}, {m_source[w]}, {}, {}, 1, 1, false, gd.block});
                m_out.accumulate.push_back(m_g.ops.size() - 1);
            } else if (first) {
                m_source[w] = dw;
            } else {
                const int sum = m_g.addTensor(wd.name + ".grad_sum", wd.shape, wd.type, TensorRole::WeightGradient);
                m_g.ops.push_back({wd.name + ".grad_sum", OpKind::Add, {m_source[w], dw}, {sum}, {}, {}, 1, 1, false, gd.block});
                m_out.backward.push_back(m_g.ops.size() - 1);
                m_source[w] = sum;
            }
        }
    }

    /** The optimizer state tensors of weight `wd`: AdamW's and LAMB's two moments, SGD's and
     *  LARS's velocity (none without momentum), all fp32. */
    std::vector<int> optimizerState(const TensorDesc& wd)
    {
        std::vector<const char*> names;
        switch (m_opt.optimizer.kind) {
        case Optimizer::AdamW: names = {".adam_m", ".adam_v"}; break;
        case Optimizer::Lamb: names = {".lamb_m", ".lamb_v"}; break;
        case Optimizer::Sgd:
        case Optimizer::Lars:
            if (m_opt.optimizer.momentum > 0)
                names = {".momentum"};
            break;
        }
        std::vector<int> state;
        for (const char* n : names)
            state.push_back(m_g.addTensor(wd.name + n, wd.shape, Precision::FP32, TensorRole::OptimizerState));
        return state;
    }

    /** One optimizer update per weight, with fp32 state and optional fp32 master weights. */
    void optimizers()
    {
        static const std::map<Optimizer, std::pair<const char*, OpKind>> kinds = {
            {Optimizer::AdamW, {".adamw", OpKind::AdamW}},
            {Optimizer::Lamb, {".lamb", OpKind::Lamb}},
            {Optimizer::Sgd, {".sgd", OpKind::Sgd}},
            {Optimizer::Lars, {".lars", OpKind::Lars}}};
        const auto& [suffix, kind] = kinds.at(m_opt.optimizer.kind);
        for (int w : m_order) {
            const TensorDesc wd = m_g.tensor(w);
            m_g.currentBlock = wd.block;
            std::vector<int> in{w, m_source[w]};
            for (int state : optimizerState(wd))
                in.push_back(state);
            const bool master = m_opt.optimizer.masterWeights && wd.type == Precision::FP16;
            if (master)
                in.push_back(m_g.addTensor(wd.name + ".master", wd.shape, Precision::FP32, TensorRole::OptimizerState));
            Op op{wd.name + suffix, kind, in, {w}, {}, {}, 1, 1, false, wd.block};
            op.unscale = m_opt.optimizer.lossScaling != 1.0;
            op.masterWeights = master;
            m_g.ops.push_back(std::move(op));
            m_out.update.push_back(m_g.ops.size() - 1);
        }
    }

    std::set<int> m_masks; // outputs of comparisons
    Graph& m_g;
    const TrainingOptions& m_opt;
    TrainingOps m_out;
    std::map<int, int> m_grad;                      // tensor -> its gradient (the sum of every contribution so far)
    std::vector<std::pair<int, int>> m_weightGrads; // (weight, one gradient contribution)
    std::map<int, int> m_source;                    // weight -> what its optimizer reads
    std::vector<int> m_order;                       // weights in the order their gradients appeared
};

} // namespace

TrainingOps addTraining(Graph& g, const TrainingOptions& opt)
{
    return Autodiff(g, opt).run();
}

} // namespace ipusim
