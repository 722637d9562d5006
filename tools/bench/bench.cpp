// SPDX-License-Identifier: MIT
// Simulator speed benchmark (not a test): runs each case in a child process (SystemC elaborates
// once per process), several times, and prints median wall time and rates.
#include "sim/config/BundledModels.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/run/ChildProcess.hpp"
#include "sim/run/ProcessHeap.hpp"
#include "sim/run/Run.hpp"

#include <systemc>

#ifdef IPUSIM_BENCH_POPLAR // a build with the Poplar API (libclang-dev)
#include "Jacobi.hpp"       // tools/examples/poplar/jacobi

#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#endif

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <string>
#include <vector>

namespace {

enum class Engine { Fast, EveryIteration, Reference };

struct Case
{
    std::string name, config;
    std::vector<std::string> sets;
    bool inferencePhase = false; // simulate the config's inference phase instead
    Engine engine = Engine::Fast;
    bool warm = false; // time a second run in the process (its code and the kernel's touched once before)
};

struct Figures
{
    double buildSeconds = 0, simSeconds = 0, simulatedSeconds = 0;
    uint64_t cycles = 0, tileSupersteps = 0;
    long maxRssKb = 0;
    bool outOfMemory = false; // timed to its out-of-memory report: built, not simulated
};

/** One case in a child process (SystemC elaborates once per process) through the run path;
 *  each case measures one phase, so a config's inference phase runs only as its own case. */
Figures runOnce(const Case& c)
{
    ipusim::ChildProcess child([&c] {
        auto request = [&c] {
            ipusim::RunRequest request{ipusim::config::loadConfig(c.config, c.sets), {}};
            if (c.inferencePhase)
                request.config = *ipusim::inferencePhase(request.config);
            request.options.inferencePhase = false;
            request.options.engine = c.engine == Engine::Reference ? ipusim::EngineKind::Reference : ipusim::EngineKind::Fast;
            request.options.everyIteration = c.engine == Engine::EveryIteration;
            return request;
        };
        if (c.warm)
            ipusim::run(request());
        const auto t0 = std::chrono::steady_clock::now();
        ipusim::RunRequest timed = request();
        const double load = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const ipusim::RunOutcome r = ipusim::run(std::move(timed));
        if (r.status == ipusim::RunOutcome::Status::OutOfMemory) // elaborating ends with its report
            return nlohmann::json{{"build", load + r.buildSeconds + r.elaborateSeconds}, {"out_of_memory", true}};
        const auto& sim = r.summary.at("simulator");
        // The reference case times the per-cycle engine alone, not the fast engine checked after it.
        const double simSeconds = c.engine == Engine::Reference ? sim.at("reference_wall_seconds").get<double>()
                                                                : sim.at("wall_seconds").get<double>();
        // "build": loading, validating, compiling and elaborating, as the README's table says.
        return nlohmann::json{{"build", load + r.buildSeconds + r.elaborateSeconds},
                              {"sim", simSeconds},
                              {"cycles", r.summary.at("total_cycles")},
                              {"simulated", r.summary.at("seconds")},
                              {"tile_supersteps", sim.at("tile_supersteps")}};
    });
    const nlohmann::json result = child.wait();
    if (result.contains("status"))
        throw std::runtime_error("case " + c.name + " failed: " + result.value("error", std::string("?")));
    Figures f;
    f.buildSeconds = result.at("build");
    f.maxRssKb = child.maxRssKb();
    if ((f.outOfMemory = result.value("out_of_memory", false)))
        return f;
    f.simSeconds = result.at("sim");
    f.cycles = result.at("cycles");
    f.simulatedSeconds = result.at("simulated");
    f.tileSupersteps = result.at("tile_supersteps");
    f.maxRssKb = child.maxRssKb();
    return f;
}

/** The model set at full size (tools/onnx/model_set.py and torchvision's, exported by the
 *  build's model_set target): each trained data-parallel on an IPU-POD16 with AdamW, then each
 *  ONNX import alone (read, shape inference, mapping), in this process. */
template <class Wanted, class Table>
void modelSet(int repeats, const Wanted& wanted, const Table& table)
{
    const std::string title = "Model set, full size: a training step data-parallel on an IPU-POD16 (16 x GA 8, AdamW, fp16), from ONNX";
    if (!wanted(title))
        return;
    struct Model
    {
        const char* name;
        const char* label;
        int microBatch;
    };
    // Micro-batches the out-of-memory report finds to fit (ViT-B/16's with the optimizer state
    // sharded over the replicas); GPT-2 small and ViT-L/16 fit no single IPU: their rows are timed
    // to the out-of-memory report (the command line's search for a split comes after it).
    const std::vector<Model> models = {{"gpt2_small", "GPT-2 small (1,024 tokens)", 1},  {"vit_b_16", "ViT-B/16 (224 x 224), RTS", 2},
                                       {"vit_l_16", "ViT-L/16 (224 x 224)", 1},
                                       {"lstm_lm", "LSTM LM, 2 x 650 (35 steps)", 20}, {"gru_lm", "GRU LM, 2 x 650 (35 steps)", 20},
                                       {"mobilenet_v2", "MobileNetV2 (224 x 224)", 8},  {"efficientnet_b0", "EfficientNet-B0 (224 x 224)", 7},
                                       {"densenet121", "DenseNet-121 (224 x 224)", 1}};
    std::vector<Case> cases;
    std::vector<std::string> paths;
    for (const Model& m : models) {
        const std::string bundled = std::string("bundled:") + m.name + ".onnx";
        std::string path;
        for (const std::string& folder : ipusim::config::bundledModelFolders())
            if (path.empty() && std::filesystem::exists(folder + "/" + m.name + ".onnx"))
                path = folder + "/" + m.name + ".onnx";
        if (path.empty()) {
            fmt::print("\n{}\nskipped: {}.onnx is not exported (cmake --build build --target model_set)\n", title, m.name);
            return;
        }
        paths.push_back(path);
        std::vector<std::string> sets = {"/workload/file=\"" + bundled + "\"", R"(/workload/loss="none")",
                                         "/workload/micro_batch=" + std::to_string(m.microBatch)};
        if (std::string(m.name) == "gpt2_small")
            sets.push_back(R"(/workload/buffers=["mask"])");
        if (std::string(m.name) == "vit_b_16")
            sets.push_back("/workload/strategy/replicated_tensor_sharding=true");
        cases.push_back({fmt::format("{} ({} a replica)", m.label, m.microBatch), "configs/model_set/pod16_adamw.json", sets});
    }
    table(title, cases, repeats);
    fmt::print("\nONNX import alone (read, shape inference, mapping onto layers; median of {})\n", repeats);
    for (std::size_t i = 0; i < models.size(); ++i) {
        const ipusim::config::LoadedConfig cfg = ipusim::config::loadConfig(cases[i].config, cases[i].sets); // reports bad input
        std::vector<double> v;
        for (int r = 0; r < repeats; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            ipusim::config::OnnxSource source;
            source.path = paths[i];
            if (std::string(models[i].name) == "gpt2_small")
                source.buffers = {"mask"};
            (void)ipusim::config::importOnnx(source, cfg);
            v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(v.begin(), v.end());
        fmt::print("{:<40} {:>6} nodes {:>9.4f} s\n", models[i].label, ipusim::config::onnxNodeNames(paths[i]).size(), v[v.size() / 2]);
    }
}

#ifdef IPUSIM_BENCH_POPLAR
/** A Poplar program: the 1,000-iteration Jacobi stencil of tools/examples/poplar/jacobi on 1,472
 *  tiles (8 x 8 points a tile). Timed apart, in a child process each: building the graph, compiling
 *  it (checks, pricing, lowering to a Schedule), and simulating one run without executing its
 *  codelets (IPUSIM_FUNCTIONAL=0); then 20 iterations with codelets executed, for comparison. */
template <class Wanted>
void poplarStencil(int repeats, const Wanted& wanted)
{
    const std::string title = "Poplar program: Jacobi stencil on 1,472 tiles (tools/examples/poplar/jacobi)";
    if (!wanted(title))
        return;
    setenv("IPUSIM_CODELET_CACHE", "/tmp/ipusim-bench-codelets", 0);
    auto once = [](unsigned iterations, bool functional) {
        ipusim::ChildProcess child([=] {
            setenv("IPUSIM_FUNCTIONAL", functional ? "1" : "0", 1);
            auto seconds = [](auto t0) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
            poplar::Device device = poplar::DeviceManager::createDeviceManager().getDevices(poplar::TargetType::IPU, 1).at(0);
            poplar::Graph graph(device.getTarget());
            graph.addCodelets("tools/examples/poplar/jacobi/codelets.cpp"); // compiled once, then cached
            const auto t0 = std::chrono::steady_clock::now();
            const jacobi::Stencil s = jacobi::build(graph, 16, 92, 8, 8, iterations);
            const double build = seconds(t0);
            const auto t1 = std::chrono::steady_clock::now();
            poplar::Engine engine(graph, s.program);
            engine.load(device);
            const double compile = seconds(t1);
            const auto t2 = std::chrono::steady_clock::now();
            engine.run();
            return nlohmann::json{{"build", build}, {"compile", compile}, {"run", seconds(t2)}, {"cycles", engine.ipusimCycles()}};
        });
        return child.wait();
    };
    fmt::print("\n{}\n{:<52} {:>9} {:>10} {:>9} {:>12}\n", title, "case (median of " + std::to_string(repeats) + ")", "graph s",
               "compile s", "run s", "cycles");
    for (const auto& [name, iterations, functional] :
         {std::tuple{"1,000 iterations, timed only (IPUSIM_FUNCTIONAL=0)", 1000u, false},
          std::tuple{"20 iterations, codelets executed on the host", 20u, true}}) {
        std::vector<nlohmann::json> runs;
        for (int i = 0; i < repeats; ++i)
            runs.push_back(once(iterations, functional));
        auto median = [&](const char* key) {
            std::vector<double> v;
            for (const auto& r : runs)
                v.push_back(r.at(key).get<double>());
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        fmt::print("{:<52} {:>9.4f} {:>10.4f} {:>9.4f} {:>12}\n", name, median("build"), median("compile"), median("run"),
                   runs[0].at("cycles").get<uint64_t>());
    }
}
#else
template <class Wanted>
void poplarStencil(int, const Wanted&)
{
}
#endif

} // namespace

int main(int argc, char* argv[])
{
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    ipusim::prepareHeapForRun(); // as the command line does: each case's child inherits it
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[])
{
    // ipusim_bench [runs] [part]: runs per case (5), and only the tables and sweeps whose title
    // holds `part` (all of them).
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const std::string part = argc > 2 ? argv[2] : "";
    auto wanted = [&](const std::string& title) { return title.find(part) != std::string::npos; };
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    auto mnistPod64 = [&](int replicas) {
        std::vector<std::string> sets(oneCall);
        for (const char* s : {"/system/num_ipus=64", "/system/topology/wrap=true"})
            sets.push_back(s);
        sets.push_back("/workload/strategy/replicas=" + std::to_string(replicas));
        return sets;
    };
    const std::string pod16 = "configs/bert/large_phase1_pod16.json", pod64 = "configs/bert/large_phase1_pod64.json";
    std::vector<Case> cases = {
        {"superstep_loop (10,000 supersteps x 1,472 tiles)", "configs/schedules/superstep_loop.json", {}},
        {"mnist training step (batch 40, fp32)", "configs/default.json", {}},
        {"mnist training host call (40 x GA 10 x DI 10)", "configs/mnist/train.json", {}},
        {"mnist inference host call (8 x DI 100)", "configs/mnist/infer.json", {}},
        {"tutorial: pipelined training, 3 epochs, 4 IPUs", "configs/mnist/pipelined.json", {}},
        {"tutorial: pipelined inference, 10,000 images", "configs/mnist/pipelined.json", {}, true},
        {"BERT-Large phase 1 step, POD16 (GA 2048)", pod16, {}},
        {"BERT-Large phase 1 step, POD64 (GA 512)", pod64, {}},
        {"BERT-Large phase 1 step, POD256 (64 x GA 128)", "configs/bert/large_phase1_pod256.json", {}},
        {"BERT-Large phase 2 step, POD16 (GA 2048)", "configs/bert/large_phase2_pod16.json", {}},
        {"BERT-Large SQuAD inference, M2000 (DI 64)", "configs/bert/large_squad_infer_m2000.json", {}},
        {"ResNet-50 LARS step, POD16 (16 x GA 10, from ONNX)", "configs/resnet/resnet50_pod16.json", {}},
        {"ResNet-50 LARS step, POD64 (64 x GA 3, from ONNX)", "configs/resnet/resnet50_pod64.json", {}},
        {"ResNet-50 LARS step, POD256 (256 x GA 3, from ONNX)", "configs/resnet/resnet50_pod256.json", {}},
    };
    for (int r : {1, 4, 16})
        cases.push_back({"pipelined host call, POD64, " + std::to_string(r) + " replica(s)", "configs/mnist/pipelined_pod16.json", mnistPod64(r)});
    auto table = [&](const std::string& title, const std::vector<Case>& list, int times) {
        std::vector<Figures> out;
        if (!wanted(title))
            return std::vector<Figures>(list.size());
        fmt::print("\n{}\n{:<52} {:>8} {:>9} {:>9} {:>15} {:>10} {:>10} {:>12} {:>8}\n", title,
                   "case (median of " + std::to_string(times) + ")", "build s", "sim s", "total s", "cycles", "sim'd s", "RT factor",
                   "tile-steps/s", "RSS MB");
        for (const auto& c : list) {
            std::vector<Figures> runs;
            for (int i = 0; i < times; ++i)
                runs.push_back(runOnce(c));
            auto median = [&](auto key) {
                std::vector<double> v;
                for (const auto& f : runs)
                    v.push_back(key(f));
                std::sort(v.begin(), v.end());
                return v[v.size() / 2];
            };
            Figures m = runs[0];
            m.buildSeconds = median([](const Figures& f) { return f.buildSeconds; });
            m.simSeconds = median([](const Figures& f) { return f.simSeconds; });
            m.maxRssKb = long(median([](const Figures& f) { return double(f.maxRssKb); }));
            const double total = m.buildSeconds + m.simSeconds;
            if (m.outOfMemory) {
                fmt::print("{:<52} {:>8.4f} {:>9} {:>9.3f} {:>15} {:>10} {:>10} {:>12} {:>8.1f}\n", c.name, m.buildSeconds, "-", total,
                           "out of memory", "-", "-", "-", m.maxRssKb / 1024.0);
                out.push_back(m);
                continue;
            }
            fmt::print("{:<52} {:>8.4f} {:>9.3g} {:>9.3f} {:>15} {:>10.4f} {:>10.3g} {:>12.3e} {:>8.1f}\n", c.name, m.buildSeconds,
                       m.simSeconds, total, m.cycles, m.simulatedSeconds, m.simulatedSeconds / total,
                       m.simSeconds > 0 ? m.tileSupersteps / m.simSeconds : 0.0, m.maxRssKb / 1024.0);
            out.push_back(m);
        }
        return out;
    };
    table("Speed (total = build + sim; RT factor = simulated seconds / total wall seconds)", cases, repeats);

    modelSet(repeats, wanted, table);
    poplarStencil(repeats, wanted);

    // The same schedule on both engines: MNIST training on 64-tile IPUs.
    const std::vector<std::string> small{"/system/ipu/tiles=64"};
    const std::vector<std::string> smallCall{"/system/ipu/tiles=64", "/run/gradient_accumulation=4", "/run/device_iterations=2"};
    const std::string enginesTitle = "Engines on one schedule (64 tiles per IPU)";
    auto engines = table(enginesTitle,
                         {{"mnist step: fast engine", "configs/default.json", small},
                          {"mnist step: reference engine (every cycle)", "configs/default.json", small, false, Engine::Reference},
                          {"mnist host call (GA 4 x DI 2): fast engine", "configs/mnist/train.json", smallCall},
                          {"mnist host call: fast, every iteration", "configs/mnist/train.json", smallCall, false, Engine::EveryIteration},
                          {"mnist host call: reference engine", "configs/mnist/train.json", smallCall, false, Engine::Reference},
                          {"mnist step: fast engine, warm (second run)", "configs/default.json", small, false, Engine::Fast, true},
                          {"mnist host call: fast engine, warm (second run)", "configs/mnist/train.json", smallCall, false, Engine::Fast,
                           true}},
                         repeats);
    if (wanted(enginesTitle))
        fmt::print("fast / reference speed: one step {:.0f}x; a host call {:.0f}x ({:.0f}x simulating every iteration); "
                   "the fast engine warm (a second run in its process, as a Python session runs its calls): one step {:.0f}x, "
                   "a host call {:.0f}x\n",
                   engines[1].simSeconds / engines[0].simSeconds, engines[4].simSeconds / engines[2].simSeconds,
                   engines[4].simSeconds / engines[3].simSeconds, engines[1].simSeconds / engines[5].simSeconds,
                   engines[4].simSeconds / engines[6].simSeconds);

    // How wall time grows: replicas and gradient accumulation, any schedule (flat), layers.
    // Medians of as many runs as the speed table: the ratios printed below come from these.
    auto total = [](const Figures& f) { return f.buildSeconds + f.simSeconds; };
    table("BERT-Large phase 1, POD64, by replicas", {{"2 replicas", pod64, {"/workload/strategy/replicas=2"}},
                                                     {"4 replicas", pod64, {"/workload/strategy/replicas=4"}},
                                                     {"16 replicas", pod64, {"/workload/strategy/replicas=16"}}}, repeats);
    table("BERT-Large phase 1, POD16, by gradient accumulation", {{"GA 128", pod16, {"/run/gradient_accumulation=128"}},
                                                                  {"GA 512", pod16, {"/run/gradient_accumulation=512"}},
                                                                  {"GA 2048", pod16, {"/run/gradient_accumulation=2048"}}}, repeats);
    const std::string interleaved = R"(/workload/strategy/schedule="interleaved")";
    const std::string interleavedTitle = "BERT-Large phase 1, POD64, interleaved (1F1B) schedule, by gradient accumulation";
    const auto oneF1B = table(interleavedTitle, {{"GA 512", pod64, {interleaved}},
                                                 {"GA 32768", pod64, {interleaved, "/run/gradient_accumulation=32768"}}}, repeats);
    if (wanted(interleavedTitle))
        fmt::print("interleaved GA 32768 / GA 512: {:.2f}x\n", total(oneF1B[1]) / total(oneF1B[0]));
    // 96 BERT-Large layers do not fit four IPUs: that row is timed to its out-of-memory report.
    // A narrower encoder fits at 96 layers, so its pair times whole runs.
    const std::string largeTitle = "BERT-Large-sized encoder, POD16, by layers";
    const auto large = table(largeTitle,
                             {{"6 layers", pod16, {R"(/workload/model={"layers":6})", "/workload/strategy/layers_per_ipu=[0,2,2,2]"}},
                              {"12 layers", pod16, {R"(/workload/model={"layers":12})", "/workload/strategy/layers_per_ipu=[0,4,4,4]"}},
                              {"24 layers", pod16, {"/workload/strategy/layers_per_ipu=[0,8,8,8]"}},
                              {"96 layers (does not fit)", pod16, {R"(/workload/model={"layers":96})", "/workload/strategy/layers_per_ipu=[0,32,32,32]"}}},
                             repeats);
    const std::string narrow = R"("hidden":256,"heads":4,"ffn":1024})";
    const std::string narrowTitle = "Encoder of hidden size 256 (4 heads, FFN 1,024), POD16, by layers";
    const auto narrowRows = table(narrowTitle,
                                  {{"24 layers", pod16, {R"(/workload/model={"layers":24,)" + narrow, "/workload/strategy/layers_per_ipu=[0,8,8,8]"}},
                                   {"96 layers", pod16, {R"(/workload/model={"layers":96,)" + narrow, "/workload/strategy/layers_per_ipu=[0,32,32,32]"}}},
                                  repeats);
    if (wanted(largeTitle) && wanted(narrowTitle))
        fmt::print("96 / 24 layers: BERT-Large-sized {:.2f}x (to the out-of-memory report), hidden 256 {:.2f}x (whole runs)\n",
                   total(large[3]) / total(large[2]), total(narrowRows[1]) / total(narrowRows[0]));

    // Sweeps run points in parallel processes: 16 points of the tutorial at -j 1 and -j 2.
    const std::string cli = (std::filesystem::path(argv[0]).parent_path() / "ipusim").string();
    auto sweepSeconds = [&](int jobs) {
        std::vector<double> v;
        for (int i = 0; i < std::max(1, repeats / 2); ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            const std::string cmd = fmt::format("{} sweep configs/sweeps/tutorial16.json -j {} --out /tmp/ipusim-bench-sweep > /dev/null", cli, jobs);
            if (std::system(cmd.c_str()) != 0)
                throw std::runtime_error("sweep failed: " + cmd);
            v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    if (wanted("sweep of 16 tutorial points")) {
        const double one = sweepSeconds(1), two = sweepSeconds(2);
        fmt::print("\nsweep of 16 tutorial points: -j 1 {:.2f} s, -j 2 {:.2f} s wall: -j 2 takes {:.0f} % of -j 1\n", one, two,
                   100 * two / one);
        std::filesystem::remove_all("/tmp/ipusim-bench-sweep");
    }
    if (!wanted("sweep of 1,000 BERT-Large POD64 hardware points"))
        return 0;

    // A thousand hardware points of BERT-Large on a POD64, once: each worker compiles the model
    // once and simulates every point in a process of its own.
    const auto t0 = std::chrono::steady_clock::now();
    const std::string cmd = fmt::format("{} sweep configs/sweeps/bert_pod64_hardware.json -j 2 --out /tmp/ipusim-bench-sweep 2> /dev/null", cli);
    FILE* out = popen(cmd.c_str(), "r");
    std::string line;
    for (int c; out && (c = std::fgetc(out)) != EOF;)
        line += char(c);
    if (!out || pclose(out) != 0)
        throw std::runtime_error("sweep failed: " + cmd);
    const double thousand = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("sweep of 1,000 BERT-Large POD64 hardware points at -j 2: {:.0f} s wall, {:.2f} s a point ({})\n", thousand,
               thousand / 1000, line.substr(0, line.find(';')));
    std::filesystem::remove_all("/tmp/ipusim-bench-sweep");
    return 0;
}
