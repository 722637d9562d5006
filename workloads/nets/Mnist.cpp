// SPDX-License-Identifier: MIT
#include "workloads/nets/Mnist.hpp"

#include "workloads/strategies/CompileGraph.hpp"

namespace ipusim {

Graph mnistForward(uint64_t B, Precision type, Precision partials, bool withLoss, MnistTensors& t)
{
    Graph g;
    g.blocks = {"B1", "B2", "B3", "B4"};
    g.currentBlock = "B1";
    t.images = g.addTensor("images", {B, 1, 28, 28}, type, TensorRole::Input);
    g.addOp("host.load.images", OpKind::HostLoad, {}, {t.images});

    auto conv = [&](const std::string& name, int x, ConvGeometry geom) {
        const int w = g.addTensor(name + ".weight", {geom.outChans, geom.inChans, geom.kernelHeight, geom.kernelWidth}, type,
                                  TensorRole::Weight);
        const int b = g.addTensor(name + ".bias", {geom.outChans}, type, TensorRole::Weight);
        const bool spatial = geom.kernelHeight > 1;
        const int y = g.addTensor(name + ".out",
                                  spatial ? std::vector<uint64_t>{B, geom.outChans, geom.outHeight(), geom.outWidth()}
                                          : std::vector<uint64_t>{B, geom.outChans},
                                  type, TensorRole::Activation);
        Op& op = g.addOp(name, OpKind::Conv, {x, w}, {y});
        op.geometry = geom;
        op.conv = forwardProblem(geom, type, partials);
        const int yb = g.addTensor(name + ".biased", g.tensor(y).shape, type, TensorRole::Activation);
        g.addOp(name + ".bias_add", OpKind::BiasAdd, {y, b}, {yb}).channels = geom.outChans;
        return yb;
    };
    auto pool = [&](const std::string& name, int x) {
        auto s = g.tensor(x).shape;
        const int y = g.addTensor(name + ".out", {s[0], s[1], s[2] / 2, s[3] / 2}, type, TensorRole::Activation);
        g.addOp(name, OpKind::MaxPool, {x}, {y}).window = 4;
        return y;
    };
    auto relu = [&](const std::string& name, int x) {
        const int y = g.addTensor(name + ".out", g.tensor(x).shape, type, TensorRole::Activation);
        g.addOp(name, OpKind::Relu, {x}, {y});
        return y;
    };
    int x = conv("layer1.conv", t.images, {B, 1, 28, 28, 10, 5, 5});
    x = relu("layer1.relu", pool("layer1.pool", x));
    g.currentBlock = "B2";
    x = conv("layer2.conv", x, {B, 10, 12, 12, 20, 5, 5});
    x = relu("layer2.relu", pool("layer2.pool", x));
    g.currentBlock = "B3"; // view(-1, 320) is free; Linear as a 1x1 convolution over the batch
    x = relu("layer3.relu", conv("layer3", x, {B, 320, 1, 1, 256, 1, 1}));
    g.currentBlock = "B4";
    t.logits = conv("layer4", x, {B, 256, 1, 1, 10, 1, 1});
    if (withLoss) {
        // The labels go straight to the IPU that computes the loss.
        t.labels = g.addTensor("labels", {B}, Precision::FP32, TensorRole::Label); // int32, 4 bytes
        g.addOp("host.load.labels", OpKind::HostLoad, {}, {t.labels});
        t.loss = g.addTensor("loss", {1}, Precision::FP32, TensorRole::Output);
        g.addOp("loss", OpKind::SoftmaxCrossEntropy, {t.logits, t.labels}, {t.loss}).channels = 10;
    }
    return g;
}

Schedule compileMnist(const MnistSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    const WorkloadOptions& w = spec.options;
    CompileOptions opt = compileOptionsOf(w);
    const uint64_t G = w.gradientAccumulation;

    MnistTensors t;
    ModelGraph m;
    m.graph = mnistForward(w.microBatch, opt.activations, opt.partials, opt.train, t);
    m.forwardOps = m.graph.ops.size();
    opt.out.tensors = opt.train ? std::vector<int>{t.loss, t.logits} : std::vector<int>{t.logits};
    opt.out.block = "B4";
    const Placement placement = resolvePlacement(w.strategy, m.graph.blocks, system, diag);
    if (opt.train)
        m.training = addTraining(m.graph, t.loss, G > 1 || placement.stages.size() > 1, opt.partials);
    return compileGraph(m, system, placement, opt, w.microBatch, diag);
}

} // namespace ipusim
