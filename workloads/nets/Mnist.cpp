// SPDX-License-Identifier: MIT
#include "workloads/nets/Mnist.hpp"

#include "workloads/nets/GraphModel.hpp"

namespace ipusim {
namespace {

LayerSpec layer(std::string name, LayerKind kind, std::string input, std::string block = "")
{
    LayerSpec l;
    l.name = std::move(name);
    l.kind = kind;
    l.inputs = {std::move(input)};
    l.block = std::move(block);
    return l;
}

LayerSpec conv(std::string name, std::string input, uint64_t outChannels, std::string block)
{
    LayerSpec l = layer(std::move(name), LayerKind::Conv2d, std::move(input), std::move(block));
    l.features = outChannels;
    l.kernel = {5, 5};
    return l;
}

LayerSpec mnistLinear(std::string name, std::string input, uint64_t outFeatures, std::string block = "")
{
    LayerSpec l = layer(std::move(name), LayerKind::Linear, std::move(input), std::move(block));
    l.features = outFeatures;
    return l;
}

LayerSpec pool(std::string name, std::string input)
{
    LayerSpec l = layer(std::move(name), LayerKind::MaxPool2d, std::move(input));
    l.kernel = l.stride = {2, 2};
    return l;
}

} // namespace

ModelSpec mnistModel()
{
    ModelSpec m;
    m.inputs = {{"images", {1, 28, 28}, false, false, "", std::nullopt}, {"labels", {}, true, false, "", std::nullopt}};
    m.layers = {conv("layer1.conv", "images", 10, "B1"),
                pool("layer1.pool", "layer1.conv"),
                layer("layer1.relu", LayerKind::Relu, "layer1.pool"),
                conv("layer2.conv", "layer1.relu", 20, "B2"),
                pool("layer2.pool", "layer2.conv"),
                layer("layer2.relu", LayerKind::Relu, "layer2.pool"),
                layer("layer3.flatten", LayerKind::Flatten, "layer2.relu", "B3"), // view(-1, 320): free
                mnistLinear("layer3", "layer3.flatten", 256),
                layer("layer3.relu", LayerKind::Relu, "layer3"),
                mnistLinear("layer4", "layer3.relu", 10, "B4")};
    LayerSpec loss = layer("loss", LayerKind::CrossEntropy, "layer4");
    loss.inputs.push_back("labels");
    m.layers.push_back(loss);
    m.outputs = {"loss", "layer4"};
    return m;
}

CompiledSchedule compileMnist(const MnistSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    GraphSpec graph; // AdamW, no loss scaling
    graph.options = spec.options;
    graph.availableMemoryProportion = spec.availableMemoryProportion;
    graph.model = mnistModel();
    return compileGraphModel(graph, system, diag);
}

} // namespace ipusim
