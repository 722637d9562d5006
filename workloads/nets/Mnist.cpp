// SPDX-License-Identifier: MIT
#include "workloads/nets/Mnist.hpp"

#include "workloads/lowering/GraphLowering.hpp"
#include "workloads/training/Training.hpp"

namespace ipusim {

Graph mnistForward(uint64_t B, Precision type, Precision partials, bool withLoss, MnistTensors& t)
{
    Graph g;
    t.images = g.addTensor("images", {B, 1, 28, 28}, type, TensorRole::Input);
    if (withLoss)
        t.labels = g.addTensor("labels", {B}, Precision::FP32, TensorRole::Label); // int32, 4 bytes
    std::vector<int> loaded{t.images};
    if (withLoss)
        loaded.push_back(t.labels);
    g.addOp("host.load", OpKind::HostLoad, {}, loaded);

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
    // B1
    int x = conv("layer1.conv", t.images, {B, 1, 28, 28, 10, 5, 5});
    x = relu("layer1.relu", pool("layer1.pool", x));
    // B2
    x = conv("layer2.conv", x, {B, 10, 12, 12, 20, 5, 5});
    x = relu("layer2.relu", pool("layer2.pool", x));
    // B3: view(-1, 320) is free; Linear as a 1x1 convolution over the batch
    x = relu("layer3.relu", conv("layer3", x, {B, 320, 1, 1, 256, 1, 1}));
    // B4
    t.logits = conv("layer4", x, {B, 256, 1, 1, 10, 1, 1});
    if (withLoss) {
        t.loss = g.addTensor("loss", {1}, Precision::FP32, TensorRole::Output);
        g.addOp("loss", OpKind::SoftmaxCrossEntropy, {t.logits, t.labels}, {t.loss}).channels = 10;
    }
    return g;
}

Schedule buildMnistSchedule(const config::LoadedConfig& cfg, const IpuParams& hw, uint64_t G, uint64_t D)
{
    const auto& w = cfg.doc.at("workload");
    const bool train = w.at("mode") == "train";
    const uint64_t B = w.at("micro_batch");
    const Precision type = w.at("precision") == "fp16" ? Precision::FP16 : Precision::FP32;
    const Precision partials = w.at("partials") == "fp16" ? Precision::FP16 : Precision::FP32;
    if (type == Precision::FP32 && partials == Precision::FP16)
        cfg.fail("/workload/partials", "expected \"fp32\": fp32 activations accumulate in fp32 partials");
    if (!train && G != 1)
        cfg.fail("/run/gradient_accumulation", "expected 1: inference has no gradient accumulation");

    MnistTensors t;
    Graph g = mnistForward(B, type, partials, train, t);
    const std::size_t forwardOps = g.ops.size();
    TrainingOps training;
    if (train)
        training = addTraining(g, t.loss, G > 1, partials);

    ProgramBuilder pb(hw);
    GraphLowering lowering(g, pb);
    lowering.placePersistent();
    pb.beginRepeat("device_iterations", D);
    if (train && G > 1)
        pb.beginRepeat("gradient_accumulation", G);
    for (std::size_t i = 0; i < forwardOps; ++i)
        lowering.lower(g.ops[i]);
    for (std::size_t i : training.backward)
        lowering.lower(g.ops[i]);
    for (std::size_t i : training.accumulate)
        lowering.lower(g.ops[i]);
    if (train && G > 1)
        pb.endRepeat();
    for (std::size_t i : training.update)
        lowering.lower(g.ops[i]);
    if (!train) // output mode All: every micro-batch's predictions go back
        lowering.lower(Op{"host.store", OpKind::HostStore, {t.logits}, {}, {}, {}, 1, 1, true});
    pb.endRepeat();
    if (train) // output mode Final: the last micro-batch's loss and predictions
        lowering.lower(Op{"host.store", OpKind::HostStore, {t.loss, t.logits}, {}, {}, {}, 1, 1, true});

    Schedule s;
    s.name = cfg.name;
    s.samplesPerHostCall = B * (train ? G : 1) * D;
    s.programs.push_back(pb.finish(0));
    return s;
}

} // namespace ipusim
