// SPDX-License-Identifier: MIT
// The compiler's Schedule as a document: every shipped config compiles, writes, reads back to
// the same Schedule and simulates to the same summary, so `ipusim compile` output can stand in
// for the model it came from.
#include "Simulate.hpp"

#include "models/json/ScheduleJson.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "sim/engine/CompiledConfig.hpp"
#include "workloads/nets/CompileWorkload.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;

namespace {

using test::kRoot;

// What tells the two runs apart by design: the file, the workload kind and the wall clock.
json comparable(json summary)
{
    for (const char* key : {"config", "workload", "simulator", "name"}) // (a compiled config has a name of its own)
        summary.erase(key);
    return summary;
}

void checkRoundTrip(const std::string& config)
{
    const Experiment compiled = buildExperiment(config::loadConfig(kRoot + "/" + config));
    const json doc = compiledConfig(compiled);
    const Experiment reread = buildExperiment(config::loadConfig(doc, kRoot + "/configs/compiled.json"));
    INFO(config);
    // Read back, the Schedule writes the very same document: nothing was lost or added.
    CHECK(scheduleToJson(reread.schedule) == doc.at("workload"));
    const json want = comparable(test::simulate(compiled));
    const json got = comparable(test::simulate(reread));
    INFO("differences: " << json::diff(want, got).dump());
    CHECK(got == want);
}

/** The compiler lowers each identical op once and emits it again for the others; the Schedule
 *  must be the one lowering every op afresh gives, names and liveness included. */
void checkReuse(const std::string& config)
{
    const auto cfg = config::loadConfig(kRoot + "/" + config);
    const SystemParams system = decodeSystem(cfg);
    const RunSpec run = decodeRun(cfg, system);
    auto compile = [&](bool reuse) {
        WorkloadSpec spec = decodeWorkload(cfg, system, run);
        if (WorkloadOptions* options = optionsOf(spec))
            options->reuseIdenticalOps = reuse;
        return scheduleToJson(compileWorkload(std::move(spec), system, cfg).schedule);
    };
    const json afresh = compile(false), reused = compile(true);
    INFO(config);
    INFO("first difference: " << test::firstDifference(afresh, reused));
    CHECK(reused == afresh);
}

} // namespace

TEST_CASE("Identical ops lowered once give the Schedule of lowering each afresh", "[compiled][reuse][slow]")
{
    for (const std::string& config : test::shippedExperiments(test::Shipped::WithoutBundledModel))
        checkReuse(config);
}

TEST_CASE("Identical ops lowered once give the Schedule of lowering each afresh: configs on a bundled model", "[compiled][reuse][resnet][slow]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    for (const std::string& config : test::shippedExperiments(test::Shipped::OnBundledModel))
        checkReuse(config);
}

TEST_CASE("Compiled schedule: default", "[compiled]") { checkRoundTrip("configs/default.json"); }
TEST_CASE("Compiled schedule: mnist/train", "[compiled]") { checkRoundTrip("configs/mnist/train.json"); }
TEST_CASE("Compiled schedule: mnist/train_fp16", "[compiled]") { checkRoundTrip("configs/mnist/train_fp16.json"); }
TEST_CASE("Compiled schedule: mnist/infer", "[compiled]") { checkRoundTrip("configs/mnist/infer.json"); }
TEST_CASE("Compiled schedule: mnist/pipelined", "[compiled]") { checkRoundTrip("configs/mnist/pipelined.json"); }
TEST_CASE("Compiled schedule: mnist/pipelined_2stage", "[compiled]") { checkRoundTrip("configs/mnist/pipelined_2stage.json"); }
TEST_CASE("Compiled schedule: mnist/pipelined_infer", "[compiled]") { checkRoundTrip("configs/mnist/pipelined_infer.json"); }
TEST_CASE("Compiled schedule: mnist/pipelined_pod16", "[compiled]") { checkRoundTrip("configs/mnist/pipelined_pod16.json"); }
TEST_CASE("Compiled schedule: mnist/sharded", "[compiled]") { checkRoundTrip("configs/mnist/sharded.json"); }
TEST_CASE("Compiled schedule: mnist/offload_optimiser", "[compiled]") { checkRoundTrip("configs/mnist/offload_optimiser.json"); }
TEST_CASE("Compiled schedule: mnist/phased_serial", "[compiled]") { checkRoundTrip("configs/mnist/phased_serial.json"); }
TEST_CASE("Compiled schedule: mnist/phased_parallel", "[compiled]") { checkRoundTrip("configs/mnist/phased_parallel.json"); }
TEST_CASE("Compiled schedule: schedules/amp_matmul", "[compiled]") { checkRoundTrip("configs/schedules/amp_matmul.json"); }
TEST_CASE("Compiled schedule: schedules/all_to_all", "[compiled]") { checkRoundTrip("configs/schedules/all_to_all.json"); }
TEST_CASE("Compiled schedule: schedules/superstep_loop", "[compiled]") { checkRoundTrip("configs/schedules/superstep_loop.json"); }
TEST_CASE("Compiled schedule: schedules/two_ipu_copy", "[compiled]") { checkRoundTrip("configs/schedules/two_ipu_copy.json"); }
TEST_CASE("Compiled schedule: graph/mnist", "[compiled]") { checkRoundTrip("configs/graph/mnist.json"); }
TEST_CASE("Compiled schedule: graph/mlp", "[compiled]") { checkRoundTrip("configs/graph/mlp.json"); }
TEST_CASE("Compiled schedule: graph/mlp_pipelined", "[compiled]") { checkRoundTrip("configs/graph/mlp_pipelined.json"); }
TEST_CASE("Compiled schedule: resnet/resnet50_pod16", "[compiled][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    checkRoundTrip("configs/resnet/resnet50_pod16.json");
}
TEST_CASE("Compiled schedule: bert/large_phase1_pod16", "[compiled][bert][slow]") { checkRoundTrip("configs/bert/large_phase1_pod16.json"); }
TEST_CASE("Compiled schedule: bert/large_phase1_pod64", "[compiled][bert][slow]") { checkRoundTrip("configs/bert/large_phase1_pod64.json"); }
TEST_CASE("Compiled schedule: bert/large_phase2_pod16", "[compiled][bert][slow]") { checkRoundTrip("configs/bert/large_phase2_pod16.json"); }
TEST_CASE("Compiled schedule: bert/base_phase1_pod16", "[compiled][bert][slow]") { checkRoundTrip("configs/bert/base_phase1_pod16.json"); }
TEST_CASE("Compiled schedule: bert/large_squad_infer_m2000", "[compiled][bert][slow]") { checkRoundTrip("configs/bert/large_squad_infer_m2000.json"); }
