// SPDX-License-Identifier: MIT
#include "workloads/training/Training.hpp"

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

TrainingOps addTraining(Graph& g, int loss, bool accumulate, Precision partials)
{
    TrainingOps out;
    std::map<int, int> grad; // tensor -> its gradient
    std::vector<std::pair<int, int>> weightGrads;
    const std::size_t forwardCount = g.ops.size();
    auto newGrad = [&](int t, TensorRole role) {
        const TensorDesc d = g.tensor(t);
        return g.addTensor("d" + d.name, d.shape, d.type, role);
    };
    auto emit = [&](Op op) {
        op.forward = false;
        g.ops.push_back(std::move(op));
        out.backward.push_back(g.ops.size() - 1);
    };
    for (std::size_t i = forwardCount; i-- > 0;) {
        const Op op = g.ops[i];
        if (op.kind == OpKind::HostLoad || op.kind == OpKind::HostStore)
            continue;
        const int y = op.outputs.empty() ? -1 : op.outputs[0];
        g.currentBlock = op.block; // gradients live with the op that makes them
        if (op.kind == OpKind::SoftmaxCrossEntropy) {
            if (y != loss)
                continue;
            const int dlogits = newGrad(op.inputs[0], TensorRole::Gradient);
            Op b{op.name + ".grad", OpKind::SoftmaxCrossEntropyGrad, {op.inputs[0], op.inputs[1]}, {dlogits}, {}, {}, 1, op.channels, false, op.block};
            emit(b);
            grad[op.inputs[0]] = dlogits;
            continue;
        }
        auto it = grad.find(y);
        if (it == grad.end())
            continue;
        const int dy = it->second;
        switch (op.kind) {
        case OpKind::BiasAdd: {
            const int db = newGrad(op.inputs[1], TensorRole::WeightGradient);
            emit({op.name + ".grad", OpKind::BiasGrad, {dy}, {db}, {}, {}, 1, op.channels, false, op.block});
            weightGrads.push_back({op.inputs[1], db});
            grad[op.inputs[0]] = dy; // the gradient passes through unchanged
            break;
        }
        case OpKind::Relu: {
            const int dx = newGrad(op.inputs[0], TensorRole::Gradient);
            emit({op.name + ".grad", OpKind::ReluGrad, {dy, y}, {dx}, {}, {}, 1, 1, false, op.block});
            grad[op.inputs[0]] = dx;
            break;
        }
        case OpKind::MaxPool: {
            const int dx = newGrad(op.inputs[0], TensorRole::Gradient);
            emit({op.name + ".grad", OpKind::MaxPoolGrad, {dy, op.inputs[0], y}, {dx}, {}, {}, op.window, 1, false, op.block});
            grad[op.inputs[0]] = dx;
            break;
        }
        case OpKind::Conv: {
            const int x = op.inputs[0], w = op.inputs[1];
            const Precision type = g.tensor(x).type;
            const int dw = newGrad(w, TensorRole::WeightGradient);
            Op wg{op.name + ".wgrad", OpKind::Conv, {x, dy}, {dw}, weightGradProblem(op.geometry, type, partials), op.geometry, 1, 1, false, op.block};
            emit(wg);
            weightGrads.push_back({w, dw});
            if (g.tensor(x).role != TensorRole::Input) { // no gradient for the images
                const int dx = newGrad(x, TensorRole::Gradient);
                Op dg{op.name + ".dgrad", OpKind::Conv, {dy, w}, {dx}, dataGradProblem(op.geometry, type, partials), op.geometry, 1, 1, false, op.block};
                emit(dg);
                grad[x] = dx;
            }
            break;
        }
        default: throw std::logic_error("no gradient rule for " + op.name);
        }
    }
    for (const auto& [w, dw] : weightGrads) {
        const TensorDesc wd = g.tensor(w);
        g.currentBlock = wd.block;
        int source = dw;
        if (accumulate) {
            const int acc = g.addTensor(wd.name + ".accum", wd.shape, wd.type, TensorRole::Accumulator);
            g.ops.push_back({wd.name + ".accumulate", OpKind::GradAccumulate, {dw, acc}, {acc}, {}, {}, 1, 1, false, wd.block});
            out.accumulate.push_back(g.ops.size() - 1);
            source = acc;
        }
        const int m = g.addTensor(wd.name + ".adam_m", wd.shape, Precision::FP32, TensorRole::OptimizerState);
        const int v = g.addTensor(wd.name + ".adam_v", wd.shape, Precision::FP32, TensorRole::OptimizerState);
        g.ops.push_back({wd.name + ".adamw", OpKind::AdamW, {w, source, m, v}, {w}, {}, {}, 1, 1, false, wd.block});
        out.update.push_back(g.ops.size() - 1);
    }
    return out;
}

} // namespace ipusim
