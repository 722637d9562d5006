// SPDX-License-Identifier: MIT
// ONNX models exported by PyTorch (tools/onnx/export_models.py, at build time) simulate to the
// same figures as the same models written as JSON graphs; ResNet-50's multiply-adds and
// parameters are torchvision's.
#include "Simulate.hpp"

#include "models/program/Schedule.hpp"
#include "sim/engine/FitSearch.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace ipusim;
using json = nlohmann::json;

namespace {

/** A summary without what names tensors, steps and files: the figures alone. Op types are
 *  made of the names (ONNX names its nodes its own way), and liveness lists the steps' names. */
json figures(json s)
{
    if (s.is_object()) {
        for (const char* key : {"name", "config", "workload", "simulator", "tensor", "peak_at", "compute_set", "live", "largest_tensors",
                                "op_types"})
            s.erase(key);
        if (s.contains("steps") && s.at("steps").is_array())
            s.erase("steps");
        for (auto& [key, value] : s.items())
            value = figures(value);
    } else if (s.is_array()) {
        for (auto& value : s)
            value = figures(value);
    }
    return s;
}

json workload(const std::string& mode)
{
    return {{"mode", mode}, {"micro_batch", 4}, {"precision", "fp16"}, {"partials", "fp16"}};
}

/** tests/onnx/<model>.json as a graph workload, with a cross-entropy loss for training. */
json graphDoc(const std::string& model, const std::string& mode)
{
    json graph = config::readJsonFile(test::kRoot + "/tests/onnx/" + model + ".json");
    if (mode == "train") {
        graph["inputs"].push_back({{"name", "labels"}, {"shape", json::array()}, {"dtype", "int32"}});
        graph["ops"].push_back({{"name", "loss"}, {"op", "cross_entropy"}, {"inputs", {graph["outputs"][0], "labels"}}});
        graph["outputs"].push_back("loss");
    }
    json w = workload(mode);
    w["kind"] = "graph";
    w["graph"] = graph;
    return {{"system", {{"base", "hardware/mk2.json"}}}, {"workload", w}};
}

json onnxDoc(const std::string& model, const std::string& mode)
{
    json w = workload(mode);
    w["kind"] = "onnx";
    w["file"] = test::bundledModel(model);
    w["loss"] = mode == "train" ? "cross_entropy" : "none";
    return {{"system", {{"base", "hardware/mk2.json"}}}, {"workload", w}};
}

} // namespace

TEST_CASE("ONNX import: PyTorch's MLP, residual CNN, transformer block, joins, learned scales and norms simulate as their JSON graphs",
          "[onnx]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    for (const auto& [model, mode] : std::vector<std::pair<std::string, std::string>>{
             {"mlp", "train"}, {"cnn", "train"}, {"cnn", "infer"}, {"block", "infer"}, {"joins", "infer"}, {"scaled", "train"},
             {"norms", "train"}, {"norms_folded", "train"}}) {
        const std::string twin = model == "norms_folded" ? "norms" : model;
        const json fromOnnx = figures(test::simulateDoc(onnxDoc(model, mode)));
        const json fromGraph = figures(test::simulateDoc(graphDoc(twin, mode)));
        INFO(model << " " << mode << "\ndifferences: " << json::diff(fromGraph, fromOnnx).dump());
        CHECK(fromOnnx == fromGraph);
        CHECK(fromOnnx.at("total_cycles").get<uint64_t>() > 0);
    }
}

TEST_CASE("ONNX import: a model with its own loss trains as the graph with cross_entropy", "[onnx]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    json onnx = onnxDoc("mlp_loss", "train");
    onnx["workload"]["loss"] = "none"; // SoftmaxCrossEntropyLoss is in the file
    json graph = graphDoc("mlp", "train");
    graph["workload"]["graph"]["outputs"] = {"loss"}; // the model returns only its loss
    const json fromOnnx = figures(test::simulateDoc(onnx));
    const json fromGraph = figures(test::simulateDoc(graph));
    INFO("differences: " << json::diff(fromGraph, fromOnnx).dump());
    CHECK(fromOnnx == fromGraph);
}

TEST_CASE("ONNX import: blocks by node-name prefix pipeline a model as block annotations do", "[onnx]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    auto onM2000 = [](json doc) {
        doc["system"]["base"] = "hardware/m2000.json";
        doc["workload"]["strategy"] = {{"kind", "pipelined"}};
        doc["workload"]["micro_batch"] = 4;
        doc["run"] = {{"gradient_accumulation", 8}};
        return doc;
    };
    json onnx = onM2000(onnxDoc("cnn", "train"));
    onnx["workload"]["blocks"] = json::array({{{"name", "front"}, {"prefix", "/stem/"}, {"ipu", 0}},
                                              {{"name", "back"}, {"prefix", "/conv/"}, {"ipu", 1}}});
    json graph = onM2000(graphDoc("cnn", "train"));
    graph["workload"]["graph"]["ops"][0]["block"] = "front";
    graph["workload"]["graph"]["ops"][0]["ipu"] = 0;
    graph["workload"]["graph"]["ops"][4]["block"] = "back"; // conv: the first node under /conv/
    graph["workload"]["graph"]["ops"][4]["ipu"] = 1;
    const json fromOnnx = figures(test::simulateDoc(onnx));
    const json fromGraph = figures(test::simulateDoc(graph));
    INFO("differences: " << json::diff(fromGraph, fromOnnx).dump());
    CHECK(fromOnnx == fromGraph);
    CHECK(fromOnnx.at("num_ipus") == 4);
}

TEST_CASE("ONNX import: ResNet-50 has torchvision's multiply-adds and parameters", "[onnx][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    json doc = onnxDoc("resnet50", "infer");
    doc["workload"]["precision"] = "fp32";
    doc["workload"]["partials"] = "fp32";
    doc["workload"]["micro_batch"] = 1;
    const Experiment e = buildExperiment(config::loadConfig(doc, test::kRoot + "/configs/r.json"));
    // Forward multiply-adds per 224 x 224 image, every convolution tap counted (torchvision
    // quotes 4.09 GFLOPS counting multiply-adds): 2 FLOPs each here.
    CHECK(e.schedule.modelFlopsPerSample == Approx(2 * 4.0892e9).epsilon(0.001));
    uint64_t weights = 0, buffers = 0;
    for (const auto& t : e.schedule.programs.at(0).tensors)
        for (const auto& r : t.bytes.runs()) {
            if (t.kind == "weight")
                weights += uint64_t(r.count) * r.value;
            if (t.kind == "buffer")
                buffers += uint64_t(r.count) * r.value;
        }
    CHECK(weights / 4 == 25557032); // sum(p.numel() for p in resnet50().parameters())
    CHECK(buffers / 4 == 2 * 26560); // the running mean and variance of 53 batch norms
}

TEST_CASE("ResNet-50 on IPU-POD16 and POD64: replicas change the all-reduce, never a replica's work", "[onnx][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    // The POD64 config at the POD16 config's gradient accumulation: the same work per replica.
    const json pod16 = test::simulateFile("configs/resnet/resnet50_pod16.json");
    const json pod64 = test::simulateFile("configs/resnet/resnet50_pod64.json", {"/run/gradient_accumulation=10"});
    CHECK(pod64.at("ipus").at(0).at("breakdown").at("compute") == pod16.at("ipus").at(0).at("breakdown").at("compute"));
    CHECK(pod64.at("ipus").at(0).at("breakdown").at("exchange") == pod16.at("ipus").at(0).at("breakdown").at("exchange"));
    CHECK(pod64.at("samples") == 4 * pod16.at("samples").get<uint64_t>());
    // A longer ring all-reduces the same gradients in more steps: at most perfect scaling.
    const double efficiency = pod64.at("samples_per_second").get<double>() / (4 * pod16.at("samples_per_second").get<double>());
    CHECK(efficiency > 0.5);
    CHECK(efficiency <= 1.0);
}

TEST_CASE("Eight-bit I/O: images cross the host link as bytes and are cast on the IPU", "[onnx][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    json doc = onnxDoc("cnn", "train");
    const json wide = test::simulateDoc(doc);
    doc["workload"]["eight_bit_io"] = true;
    const json narrow = test::simulateDoc(doc);
    // 4 images of 3 x 32 x 32: fp16 is 2 bytes each, 8-bit 1; labels (int32) and the loss the same.
    const uint64_t images = 4 * 3 * 32 * 32;
    CHECK(wide.at("ipus").at(0).at("host_bytes_to_ipu").get<uint64_t>() - narrow.at("ipus").at(0).at("host_bytes_to_ipu").get<uint64_t>() ==
          images);
    CHECK(narrow.at("breakdown").at("compute").get<uint64_t>() > wide.at("breakdown").at("compute").get<uint64_t>()); // the cast
}

TEST_CASE("Input dtype of an ONNX model: uint8 is eight-bit I/O, and eight_bit_io refuses another type", "[onnx][bad-input]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    json doc = onnxDoc("cnn", "train");
    doc["workload"]["input_dtype"] = "uint8";
    const json u8 = test::simulateDoc(doc);
    doc["workload"]["input_dtype"] = "model";
    doc["workload"]["eight_bit_io"] = true;
    CHECK(u8.at("ipus").at(0).at("host_bytes_to_ipu") == test::simulateDoc(doc).at("ipus").at(0).at("host_bytes_to_ipu"));
    doc["workload"]["input_dtype"] = "fp16";
    CHECK(test::configErrorOf(doc, test::kRoot + "/configs/bad.json")
              .find("/workload/input_dtype: expected \"model\" or \"uint8\" with eight_bit_io, found \"fp16\"") != std::string::npos);
}

TEST_CASE("Out of memory: stage prefixes are each node's first two module levels, in the order the model runs them", "[onnx]")
{
    CHECK(stagePrefixes({"/conv1/Conv", "/features/features.0/Conv", "/features/features.0/Relu", "/Flatten", "/features/features.10/conv/Conv",
                         "Constant_7", "/features/features.1/", "/fc/Gemm"}) ==
          std::vector<std::string>{"/conv1/", "/features/features.0/", "/features/features.10/", "/fc/"});
    // A module of many layers is cut between them: ViT's encoder.
    std::vector<std::string> vit{"/conv_proj/Conv", "/encoder/Add"}; // "/encoder/" holds the layers: no stage starts at it
    for (int i = 0; i < 4; ++i)
        for (const char* op : {"ln_1/LayerNormalization", "self_attention/MatMul", "Add", "mlp/mlp.0/MatMul", "mlp/mlp.1/Gelu"})
            vit.push_back("/encoder/layers/encoder_layer_" + std::to_string(i) + "/" + op);
    vit.push_back("/heads/head/Gemm");
    CHECK(stagePrefixes(vit) == std::vector<std::string>{"/conv_proj/", "/encoder/layers/encoder_layer_0/", "/encoder/layers/encoder_layer_1/",
                                                         "/encoder/layers/encoder_layer_2/", "/encoder/layers/encoder_layer_3/", "/heads/head/"});
    // Wrapped in a module of its own (the model set's ViT: "/model/..."), a level deeper.
    std::vector<std::string> wrapped;
    for (const std::string& n : vit)
        wrapped.push_back("/model" + n);
    CHECK(stagePrefixes(wrapped) == std::vector<std::string>{"/model/conv_proj/", "/model/encoder/layers/encoder_layer_0/",
                                                             "/model/encoder/layers/encoder_layer_1/", "/model/encoder/layers/encoder_layer_2/",
                                                             "/model/encoder/layers/encoder_layer_3/", "/model/heads/"});
}

TEST_CASE("Out of memory: an ONNX model no IPU holds is split into pipeline stages by module prefix, greedily", "[onnx][sim]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    json doc = onnxDoc("mlp", "train");
    doc["system"]["base"] = "hardware/pod16.json";
    doc["workload"]["strategy"] = {{"kind", "single"}, {"replicas", 16}};
    doc["run"] = {{"gradient_accumulation", 2}};
    const Experiment e = buildExperiment(config::loadConfig(doc, test::kRoot + "/configs/o.json"));
    // Ten modules "/m0/x/" to "/m9/x/"; by the check given, nothing fits one IPU a replica and a
    // stage fits when it holds at most three modules.
    std::vector<std::string> names;
    for (int i = 0; i < 10; ++i)
        for (const char* op : {"Conv", "Relu"})
            names.push_back("/m" + std::to_string(i) + "/x/" + op);
    const FitsCheck check = [](const config::LoadedConfig& v) -> std::optional<std::size_t> {
        const json& blocks = v.doc.at("workload").at("blocks");
        if (blocks.empty())
            return 0;
        std::vector<int> starts;
        for (const auto& b : blocks)
            starts.push_back(b.at("prefix").get<std::string>().at(2) - '0');
        starts.push_back(10);
        for (std::size_t s = 0; s + 1 < starts.size(); ++s)
            if (starts[s + 1] - starts[s] > 3)
                return s;
        return std::nullopt;
    };
    const json fit = searchFit(e, check, [&](const Experiment&) { return names; });
    REQUIRE(fit["found"] == true);
    // Two stages cannot hold ten modules; four can, each taking as many as fit: 3, 3, 3, 1.
    std::vector<std::string> prefixes;
    for (const auto& b : fit["stages"])
        prefixes.push_back(b["prefix"]);
    CHECK(prefixes == std::vector<std::string>{"/m0/x/", "/m3/x/", "/m6/x/", "/m9/x/"});
    const json sets = fit["sets"];
    CHECK(sets[0] == "/workload/micro_batch=4"); // the config's own
    CHECK(std::find(sets.begin(), sets.end(), "/run/gradient_accumulation=7") != sets.end()); // 2 x 4 stages - 1
    CHECK(std::find(sets.begin(), sets.end(), "/workload/offload_optimizer=true") != sets.end());
    const auto strategy = std::find_if(sets.begin(), sets.end(), [](const json& s) { return s.get<std::string>().rfind("/workload/strategy=", 0) == 0; });
    REQUIRE(strategy != sets.end());
    CHECK_THAT(strategy->get<std::string>(), Catch::Contains("\"kind\":\"pipelined\"") && Catch::Contains("\"replicas\":4") &&
                                                 Catch::Contains("\"replicated_tensor_sharding\":true"));
    // Bisected: each stage's cut in about log2(modules) checks, then the whole split once.
    CHECK(fit["checked"].size() <= 3 + 2 * (1 + 4 + 1) + 3 * (1 + 3) + 1);

    // Four replicas split four ways leave one: nothing to shard the optimizer state over. And
    // inference fills its pipeline with a device iteration a stage.
    auto strategyOf = [](const json& found) {
        for (const auto& s : found.at("sets"))
            if (s.get<std::string>().rfind("/workload/strategy=", 0) == 0)
                return json::parse(s.get<std::string>().substr(std::string("/workload/strategy=").size()));
        return json();
    };
    doc["workload"]["strategy"]["replicas"] = 4;
    const json one = searchFit(buildExperiment(config::loadConfig(doc, test::kRoot + "/configs/o.json")), check,
                               [&](const Experiment&) { return names; });
    REQUIRE(one["found"] == true);
    CHECK(strategyOf(one)["replicas"] == 1);
    CHECK(strategyOf(one)["replicated_tensor_sharding"] == false);
    json infer = onnxDoc("mlp", "infer");
    infer["system"]["base"] = "hardware/m2000.json";
    const json inferred = searchFit(buildExperiment(config::loadConfig(infer, test::kRoot + "/configs/o.json")), check,
                                    [&](const Experiment&) { return names; });
    REQUIRE(inferred["found"] == true);
    const json inferSets = inferred["sets"];
    CHECK(std::find(inferSets.begin(), inferSets.end(), "/run/device_iterations=4") != inferSets.end());
    CHECK(std::find(inferSets.begin(), inferSets.end(), "/workload/offload_optimizer=true") == inferSets.end());

    // A stage whose stash holds only its inputs (each stage recomputed) fits three modules, one
    // that stashes every activation none: the search tries recomputation after the splits fail.
    const FitsCheck stashed = [&](const config::LoadedConfig& v) -> std::optional<std::size_t> {
        if (v.doc.at("workload").value("recompute", std::string("none")) != "checkpoints")
            return 0;
        return check(v);
    };
    doc["workload"]["strategy"]["replicas"] = 16;
    const json recomputed = searchFit(e, stashed, [&](const Experiment&) { return names; });
    REQUIRE(recomputed["found"] == true);
    const json recomputedSets = recomputed["sets"];
    CHECK(std::find(recomputedSets.begin(), recomputedSets.end(), "/workload/recompute=\"checkpoints\"") != recomputedSets.end());
    CHECK(recomputed["stages"].size() == 4);
    const json none = searchFit(e, [](const config::LoadedConfig&) -> std::optional<std::size_t> { return 0; },
                                [&](const Experiment&) { return names; });
    CHECK_THAT(none["next"].get<std::string>(), Catch::Contains("also with each stage recomputed, also cut inside modules"));

    // A unit no stage holds whole (RegNetY-128GF's last, four wide convolutions): only cuts
    // inside it fit. Stages here fit at most two module paths each, recomputed.
    const std::vector<std::string> unit{"/stem/s/Conv", "/trunk/block4/u/a/Conv", "/trunk/block4/u/b/Conv", "/trunk/block4/u/c/Conv",
                                        "/trunk/block4/u/d/Conv", "/Flatten", "/fc/Gemm"};
    CHECK(stagePrefixes(unit) == std::vector<std::string>{"/stem/s/", "/trunk/block4/", "/fc/"});
    const std::vector<std::string> finest = finestPrefixes(unit);
    CHECK(finest == std::vector<std::string>{"/stem/s/", "/trunk/block4/u/a/", "/trunk/block4/u/b/", "/trunk/block4/u/c/",
                                             "/trunk/block4/u/d/", "/fc/"});
    const FitsCheck twoPaths = [&](const config::LoadedConfig& v) -> std::optional<std::size_t> {
        const json& blocks = v.doc.at("workload").at("blocks");
        if (blocks.empty() || v.doc.at("workload").value("recompute", std::string("none")) != "checkpoints")
            return 0;
        std::vector<std::ptrdiff_t> starts;
        for (const auto& b : blocks) {
            const auto at = std::find(finest.begin(), finest.end(), b.at("prefix").get<std::string>());
            if (at == finest.end())
                return 0; // a coarse prefix: its stage holds the whole unit
            starts.push_back(at - finest.begin());
        }
        starts.push_back(std::ptrdiff_t(finest.size()));
        for (std::size_t s = 0; s + 1 < starts.size(); ++s)
            if (starts[s + 1] - starts[s] > 2)
                return s;
        return std::nullopt;
    };
    const json inside = searchFit(e, twoPaths, [&](const Experiment&) { return unit; });
    REQUIRE(inside["found"] == true);
    bool cut = false;
    for (const auto& b : inside["stages"])
        cut = cut || b["prefix"].get<std::string>().rfind("/trunk/block4/u/", 0) == 0;
    CHECK(cut);
    const json insideSets = inside["sets"];
    CHECK(std::find(insideSets.begin(), insideSets.end(), "/workload/recompute=\"checkpoints\"") != insideSets.end());
}
