// SPDX-License-Identifier: MIT
// Regression goldens: the key figures of every shipped config, checked in and reviewed like
// code. After a deliberate model change, regenerate them with IPUSIM_UPDATE_GOLDENS=1 and
// review the diff.
#include "Simulate.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

using namespace ipusim;
using json = nlohmann::json;

namespace {

using test::kRoot;

json keyFigures(const json& s)
{
    json k = {{"total_cycles", s.at("total_cycles")}, {"samples", s.at("samples")}, {"breakdown", s.at("breakdown")}};
    for (const auto& m : s.at("memory"))
        k["peak_tile_bytes"].push_back(m.at("peak").at("max"));
    for (const auto& ipu : s.at("ipus"))
        k["ipu_cycles"].push_back(ipu.at("cycles"));
    if (!s.at("pipeline").is_null() && !s.at("pipeline").at("bubble_fraction").is_null())
        k["bubble_fraction_ppm"] = int64_t(s.at("pipeline").at("bubble_fraction").get<double>() * 1e6 + 0.5);
    for (const auto& ep : s.at("epochs"))
        k["epoch_cycles"].push_back(ep.at("cycles"));
    return k;
}

void checkGolden(const std::string& config)
{
    const json got = keyFigures(test::simulateFile(config));
    std::string name = config.substr(std::string("configs/").size());
    for (auto& c : name)
        if (c == '/')
            c = '_';
    const std::string path = kRoot + "/tests/regression/goldens/" + name;
    if (std::getenv("IPUSIM_UPDATE_GOLDENS")) {
        std::ofstream(path) << got.dump(1) << "\n";
        WARN("wrote " << path);
        return;
    }
    std::ifstream in(path);
    REQUIRE(in.good());
    const json want = json::parse(in);
    INFO(config << "\nwant " << want.dump() << "\ngot  " << got.dump());
    CHECK(got == want);
}

} // namespace

TEST_CASE("Golden: default", "[golden]") { checkGolden("configs/default.json"); }
TEST_CASE("Golden: mnist/train", "[golden]") { checkGolden("configs/mnist/train.json"); }
TEST_CASE("Golden: mnist/train_fp16", "[golden]") { checkGolden("configs/mnist/train_fp16.json"); }
TEST_CASE("Golden: mnist/infer", "[golden]") { checkGolden("configs/mnist/infer.json"); }
TEST_CASE("Golden: mnist/pipelined", "[golden]") { checkGolden("configs/mnist/pipelined.json"); }
TEST_CASE("Golden: mnist/pipelined_2stage", "[golden]") { checkGolden("configs/mnist/pipelined_2stage.json"); }
TEST_CASE("Golden: mnist/pipelined_infer", "[golden]") { checkGolden("configs/mnist/pipelined_infer.json"); }
TEST_CASE("Golden: mnist/pipelined_pod16", "[golden]") { checkGolden("configs/mnist/pipelined_pod16.json"); }
TEST_CASE("Golden: mnist/sharded", "[golden]") { checkGolden("configs/mnist/sharded.json"); }
TEST_CASE("Golden: mnist/offload_optimiser", "[golden]") { checkGolden("configs/mnist/offload_optimiser.json"); }
TEST_CASE("Golden: mnist/phased_serial", "[golden]") { checkGolden("configs/mnist/phased_serial.json"); }
TEST_CASE("Golden: mnist/phased_parallel", "[golden]") { checkGolden("configs/mnist/phased_parallel.json"); }
TEST_CASE("Golden: schedules/amp_matmul", "[golden]") { checkGolden("configs/schedules/amp_matmul.json"); }
TEST_CASE("Golden: schedules/all_to_all", "[golden]") { checkGolden("configs/schedules/all_to_all.json"); }
TEST_CASE("Golden: schedules/superstep_loop", "[golden]") { checkGolden("configs/schedules/superstep_loop.json"); }
TEST_CASE("Golden: schedules/two_ipu_copy", "[golden]") { checkGolden("configs/schedules/two_ipu_copy.json"); }
TEST_CASE("Golden: graph/mnist", "[golden]") { checkGolden("configs/graph/mnist.json"); }
TEST_CASE("Golden: graph/mlp", "[golden]") { checkGolden("configs/graph/mlp.json"); }
TEST_CASE("Golden: graph/mlp_pipelined", "[golden]") { checkGolden("configs/graph/mlp_pipelined.json"); }
TEST_CASE("Golden: resnet/resnet50_pod16", "[golden][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    checkGolden("configs/resnet/resnet50_pod16.json");
}
TEST_CASE("Golden: resnet/resnet50_pod64", "[golden][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    checkGolden("configs/resnet/resnet50_pod64.json");
}
TEST_CASE("Golden: resnet/resnet50_pod128", "[golden][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    checkGolden("configs/resnet/resnet50_pod128.json");
}
TEST_CASE("Golden: resnet/resnet50_pod256", "[golden][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    checkGolden("configs/resnet/resnet50_pod256.json");
}
TEST_CASE("Golden: resnet/resnet50_sgd_pod16", "[golden][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    checkGolden("configs/resnet/resnet50_sgd_pod16.json");
}
TEST_CASE("Golden: bert/large_phase1_pod16", "[golden][bert]") { checkGolden("configs/bert/large_phase1_pod16.json"); }
TEST_CASE("Golden: bert/large_phase1_pod64", "[golden][bert]") { checkGolden("configs/bert/large_phase1_pod64.json"); }
TEST_CASE("Golden: bert/large_phase1_pod128", "[golden][bert]") { checkGolden("configs/bert/large_phase1_pod128.json"); }
TEST_CASE("Golden: bert/large_phase1_pod256", "[golden][bert]") { checkGolden("configs/bert/large_phase1_pod256.json"); }
TEST_CASE("Golden: bert/large_phase2_pod16", "[golden][bert]") { checkGolden("configs/bert/large_phase2_pod16.json"); }
TEST_CASE("Golden: bert/large_phase2_packed_pod16", "[golden][bert]") { checkGolden("configs/bert/large_phase2_packed_pod16.json"); }
TEST_CASE("Golden: bert/base_phase1_pod16", "[golden][bert]") { checkGolden("configs/bert/base_phase1_pod16.json"); }
TEST_CASE("Golden: bert/large_squad_infer_m2000", "[golden][bert]") { checkGolden("configs/bert/large_squad_infer_m2000.json"); }
