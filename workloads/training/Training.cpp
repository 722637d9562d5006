// SPDX-License-Identifier: MIT
#include "workloads/training/Training.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ipusim {

ConvProblem forwardProblem(const ConvGeometry& g, Precision input, Precision partials)
{
    ConvProblem p;
    p.positions = g.batch * g.outHeight() * g.outWidth();
    p.reduction = g.inChans;
    p.kernelHeight = g.kernelHeight;
    p.kernelWidth = g.kernelWidth;
    p.outChans = g.outChans;
    p.outWidth = g.outWidth();
    p.inWidth = g.inWidth;
    p.input = input;
    p.partials = input == Precision::FP32 ? Precision::FP32 : partials;
    p.output = input;
    return p;
}

ConvProblem dataGradProblem(const ConvGeometry& g, Precision input, Precision partials)
{
    // dX = full convolution of dY with the flipped kernel: outputs are input positions.
    ConvProblem p = forwardProblem(g, input, partials);
    p.positions = g.batch * g.inHeight * g.inWidth;
    p.reduction = g.outChans;
    p.outChans = g.inChans;
    p.outWidth = g.inWidth;
    p.inWidth = g.outWidth() + 2 * (g.kernelWidth - 1);
    return p;
}

ConvProblem weightGradProblem(const ConvGeometry& g, Precision input, Precision partials)
{
    // dW[o, i, kh, kw] = sum over batch and output positions of dY x X: the reduction runs
    // over every output position, the outputs are the weights.
    ConvProblem p = forwardProblem(g, input, partials);
    p.positions = g.inChans * g.kernelHeight * g.kernelWidth;
    p.reduction = g.batch * g.outHeight() * g.outWidth();
    p.kernelHeight = p.kernelWidth = 1;
    p.outChans = g.outChans;
    p.outWidth = p.inWidth = 1;
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

TrainingOps addTraining(Graph& g, int loss, bool accumulate, Precision partials)
{
    TrainingOptions o;
    o.losses = {loss};
    o.accumulate = accumulate;
    o.partials = partials;
    return addTraining(g, o);
}

TrainingOps addTraining(Graph& g, const TrainingOptions& opt)
{
    TrainingOps out;
    std::map<int, int> grad; // tensor -> its gradient (the sum of every contribution so far)
    std::vector<std::pair<int, int>> weightGrads; // (weight, one gradient contribution)
    const std::size_t forwardCount = g.ops.size();
    auto newGrad = [&](int t, TensorRole role) {
        const TensorDesc d = g.tensor(t);
        return g.addTensor("d" + d.name, d.shape, d.type, role);
    };
    auto emit = [&](const std::string& name, OpKind kind, std::vector<int> in, std::vector<int> outs, const Op& from) {
        Op op{name, kind, std::move(in), std::move(outs), {}, {}, 1, from.channels, false, from.block};
        op.rows = from.rows;
        g.ops.push_back(std::move(op));
        out.backward.push_back(g.ops.size() - 1);
        return &g.ops.back();
    };
    // A gradient contribution to `t`: the first is its gradient, later ones are added to it.
    auto contribute = [&](int t, int dt, const Op& from) {
        const TensorRole role = g.tensor(t).role;
        if (role == TensorRole::Weight) {
            weightGrads.push_back({t, dt});
            return;
        }
        if (role == TensorRole::Input || role == TensorRole::Label)
            return;
        auto it = grad.find(t);
        if (it == grad.end()) {
            grad[t] = dt;
            return;
        }
        const int sum = g.addTensor(g.tensor(it->second).name + "+", g.tensor(t).shape, g.tensor(t).type, TensorRole::Gradient);
        emit(g.tensor(t).name + ".grad_sum", OpKind::Add, {it->second, dt}, {sum}, from);
        it->second = sum;
    };
    auto wants = [&](int t) {
        const TensorRole r = g.tensor(t).role;
        return r != TensorRole::Input && r != TensorRole::Label;
    };
    for (std::size_t i = forwardCount; i-- > 0;) {
        const Op op = g.ops[i];
        if (op.kind == OpKind::HostLoad || op.kind == OpKind::HostStore)
            continue;
        const int y = op.outputs.empty() ? -1 : op.outputs[0];
        g.currentBlock = op.block; // gradients live with the op that makes them
        if (op.kind == OpKind::SoftmaxCrossEntropy) {
            if (std::find(opt.losses.begin(), opt.losses.end(), y) == opt.losses.end())
                continue;
            // Every input but the labels (the last) is a part of the logits.
            std::vector<int> parts(op.inputs.begin(), op.inputs.end() - 1), dparts;
            for (int part : parts)
                dparts.push_back(newGrad(part, TensorRole::Gradient));
            std::vector<int> in(op.inputs);
            emit(op.name + ".grad", OpKind::SoftmaxCrossEntropyGrad, in, dparts, op);
            for (std::size_t k = 0; k < parts.size(); ++k)
                contribute(parts[k], dparts[k], op);
            continue;
        }
        auto it = grad.find(y);
        if (it == grad.end())
            continue;
        const int dy = it->second;
        auto unary = [&](OpKind kind, int saved) {
            const int dx = newGrad(op.inputs[0], TensorRole::Gradient);
            emit(op.name + ".grad", kind, {dy, saved}, {dx}, op);
            contribute(op.inputs[0], dx, op);
        };
        switch (op.kind) {
        case OpKind::BiasAdd: {
            const int db = newGrad(op.inputs[1], TensorRole::WeightGradient);
            emit(op.name + ".grad", OpKind::BiasGrad, {dy}, {db}, op);
            contribute(op.inputs[1], db, op);
            contribute(op.inputs[0], dy, op); // the gradient passes through unchanged
            break;
        }
        case OpKind::Add:
            contribute(op.inputs[0], dy, op);
            contribute(op.inputs[1], dy, op);
            break;
        case OpKind::Relu: unary(OpKind::ReluGrad, y); break;
        case OpKind::Gelu: unary(OpKind::GeluGrad, op.inputs[0]); break;
        case OpKind::Tanh: unary(OpKind::TanhGrad, y); break;
        case OpKind::Softmax: unary(OpKind::SoftmaxGrad, y); break;
        case OpKind::MaxPool: {
            const int dx = newGrad(op.inputs[0], TensorRole::Gradient);
            Op* b = emit(op.name + ".grad", OpKind::MaxPoolGrad, {dy, op.inputs[0], y}, {dx}, op);
            b->window = op.window;
            contribute(op.inputs[0], dx, op);
            break;
        }
        case OpKind::LayerNorm: {
            const int x = op.inputs[0], gamma = op.inputs[1], beta = op.inputs[2];
            const int dx = newGrad(x, TensorRole::Gradient);
            emit(op.name + ".grad", OpKind::LayerNormGrad, {dy, x, gamma}, {dx}, op);
            const int dgamma = newGrad(gamma, TensorRole::WeightGradient);
            emit(op.name + ".gamma_grad", OpKind::BiasGrad, {dy}, {dgamma}, op);
            const int dbeta = newGrad(beta, TensorRole::WeightGradient);
            emit(op.name + ".beta_grad", OpKind::BiasGrad, {dy}, {dbeta}, op);
            contribute(gamma, dgamma, op);
            contribute(beta, dbeta, op);
            contribute(x, dx, op);
            break;
        }
        case OpKind::Gather: {
            const int table = op.inputs[0];
            if (!wants(table))
                break;
            const bool weight = g.tensor(table).role == TensorRole::Weight;
            const int dt = newGrad(table, weight ? TensorRole::WeightGradient : TensorRole::Gradient);
            std::vector<int> in{dy};
            if (op.inputs.size() > 1)
                in.push_back(op.inputs[1]);
            emit(op.name + ".grad", OpKind::GatherGrad, in, {dt}, op);
            contribute(table, dt, op);
            break;
        }
        case OpKind::Conv: {
            const int x = op.inputs[0], w = op.inputs[1];
            const Precision type = g.tensor(x).type;
            const int dw = newGrad(w, TensorRole::WeightGradient);
            Op* wg = emit(op.name + ".wgrad", OpKind::Conv, {x, dy}, {dw}, op);
            wg->conv = weightGradProblem(op.geometry, type, opt.partials);
            wg->geometry = op.geometry;
            contribute(w, dw, op);
            if (wants(x)) { // no gradient for the model's inputs
                const int dx = newGrad(x, TensorRole::Gradient);
                Op* dg = emit(op.name + ".dgrad", OpKind::Conv, {dy, w}, {dx}, op);
                dg->conv = dataGradProblem(op.geometry, type, opt.partials);
                dg->geometry = op.geometry;
                contribute(x, dx, op);
            }
            break;
        }
        case OpKind::BatchMatMul: {
            // Z = X Y: dX = dZ Y^T (M x N times N x K), dY = X^T dZ (K x M times M x N).
            const ConvProblem& p = op.conv;
            const int x = op.inputs[0], yIn = op.inputs[1];
            const int dx = newGrad(x, TensorRole::Gradient), dyIn = newGrad(yIn, TensorRole::Gradient);
            Op* a = emit(op.name + ".grad_lhs", OpKind::BatchMatMul, {dy, yIn}, {dx}, op);
            a->conv = batchMatMulProblem(p.groups, p.positions, p.outChans, p.reduction, p.input, p.partials);
            Op* b = emit(op.name + ".grad_rhs", OpKind::BatchMatMul, {x, dy}, {dyIn}, op);
            b->conv = batchMatMulProblem(p.groups, p.reduction, p.positions, p.outChans, p.input, p.partials);
            contribute(x, dx, op);
            contribute(yIn, dyIn, op);
            break;
        }
        default: throw std::logic_error("no gradient rule for " + op.name);
        }
    }
    // Weights: one accumulator each, added to once per contribution in the block that makes
    // it (a tied weight gets two); without accumulation the contributions are summed.
    std::map<int, int> source; // weight -> what its optimizer reads
    std::vector<int> order;
    for (const auto& [w, dw] : weightGrads) {
        const TensorDesc wd = g.tensor(w);
        const TensorDesc gd = g.tensor(dw);
        g.currentBlock = gd.block;
        const bool first = !source.count(w);
        if (first)
            order.push_back(w);
        if (opt.accumulate) {
            if (first) {
                g.currentBlock = wd.block;
                source[w] = g.addTensor(wd.name + ".accum", wd.shape, wd.type, TensorRole::Accumulator);
                g.currentBlock = gd.block;
            }
            g.ops.push_back({wd.name + ".accumulate", OpKind::GradAccumulate, {dw, source[w]}, {source[w]}, {}, {}, 1, 1, false, gd.block});
            out.accumulate.push_back(g.ops.size() - 1);
        } else if (first) {
            source[w] = dw;
        } else {
            const int sum = g.addTensor(wd.name + ".grad_sum", wd.shape, wd.type, TensorRole::WeightGradient);
            Op op{wd.name + ".grad_sum", OpKind::Add, {source[w], dw}, {sum}, {}, {}, 1, 1, false, gd.block};
            g.ops.push_back(op);
            out.backward.push_back(g.ops.size() - 1);
            source[w] = sum;
        }
    }
    for (int w : order) {
        const TensorDesc wd = g.tensor(w);
        g.currentBlock = wd.block;
        const int m = g.addTensor(wd.name + (opt.optimizer == Optimizer::Lamb ? ".lamb_m" : ".adam_m"), wd.shape, Precision::FP32,
                                  TensorRole::OptimizerState);
        const int v = g.addTensor(wd.name + (opt.optimizer == Optimizer::Lamb ? ".lamb_v" : ".adam_v"), wd.shape, Precision::FP32,
                                  TensorRole::OptimizerState);
        std::vector<int> in{w, source[w], m, v};
        const bool master = opt.masterWeights && wd.type == Precision::FP16;
        if (master)
            in.push_back(g.addTensor(wd.name + ".master", wd.shape, Precision::FP32, TensorRole::OptimizerState));
        Op op{wd.name + (opt.optimizer == Optimizer::Lamb ? ".lamb" : ".adamw"),
              opt.optimizer == Optimizer::Lamb ? OpKind::Lamb : OpKind::AdamW, in, {w}, {}, {}, 1, 1, false, wd.block};
        op.unscale = opt.lossScaling != 1.0;
        op.masterWeights = master;
        g.ops.push_back(op);
        out.update.push_back(g.ops.size() - 1);
    }
    return out;
}

} // namespace ipusim
