// SPDX-License-Identifier: MIT
// BERT through the SystemC model: how cycles scale with the model and the system.
#include "Simulate.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;

namespace {

json simulate(const json& d) { return test::simulateDoc(d); }

/** One encoder layer, inference on one IPU, with the sizes given. */
json oneLayer(uint64_t hidden, uint64_t sequence)
{
    return json{{"system", {{"base", "hardware/mk2.json"}}},
                {"workload",
                 {{"kind", "bert"}, {"mode", "infer"}, {"task", "squad"}, {"recompute", "none"}, {"offload_optimizer", false},
                  {"model", {{"layers", 1}, {"hidden", hidden}, {"heads", hidden / 64}, {"ffn", 4 * hidden}}},
                  {"sequence_length", sequence}, {"micro_batch", 4}}},
                {"run", {{"gradient_accumulation", 1}}}};
}

/** Cycles of the encoder layer's compute sets (their busiest tiles), one micro-batch. */
uint64_t layerComputeCycles(const json& summary)
{
    uint64_t n = 0;
    for (const auto& b : summary.at("tile_balance"))
        if (b.at("compute_set").get<std::string>().rfind("layer0.", 0) == 0)
            n += b.at("phase_cycles").get<uint64_t>();
    return n;
}

} // namespace

TEST_CASE("BERT: a layer's cycles grow with the hidden size and the sequence length", "[bert][sim]")
{
    // Each doubling costs more; the last one (matmul work ~H^2 at fixed tokens, or twice the
    // tokens with attention ~S^2) more than 1.5x and at most 4x.
    auto grows = [](uint64_t a, uint64_t b, uint64_t c) {
        CHECK(a < b);
        CHECK(b < c);
        CHECK(double(c) > 1.5 * double(b));
        CHECK(double(c) < 4.0 * double(b));
    };
    const uint64_t base = layerComputeCycles(simulate(oneLayer(1024, 128)));
    grows(layerComputeCycles(simulate(oneLayer(256, 128))), layerComputeCycles(simulate(oneLayer(512, 128))), base);
    grows(base, layerComputeCycles(simulate(oneLayer(1024, 256))), layerComputeCycles(simulate(oneLayer(1024, 512))));
}

TEST_CASE("BERT: replicas change the all-reduce, not the per-replica work", "[bert][sim]")
{
    auto run = [](uint32_t replicas) {
        json d{{"system", {{"base", "hardware/pod16.json"}}},
               {"workload",
                {{"kind", "bert"}, {"model", {{"layers", 2}, {"hidden", 256}, {"heads", 4}, {"ffn", 1024}}}, {"micro_batch", 4},
                 {"strategy", {{"kind", "pipelined"}, {"layers_per_ipu", {1, 1}}, {"replicas", replicas}}}}},
               {"run", {{"gradient_accumulation", 6}}}};
        return simulate(d);
    };
    const json one = run(1), two = run(2), eight = run(8);
    for (const json* s : {&two, &eight})
        for (std::size_t i = 0; i < 2; ++i) {
            const auto& a = one.at("ipus").at(i).at("breakdown");
            const auto& b = s->at("ipus").at(i).at("breakdown");
            for (const char* k : {"compute", "exchange", "ipu_copy", "streaming_memory"})
                CHECK(a.at(k) == b.at(k));
            // Replicas in one IPU-M2000 share its gateway's link to the host.
            CHECK(b.at("host").get<uint64_t>() >= a.at("host").get<uint64_t>());
        }
    CHECK(one.at("breakdown").at("collective") == 0);
    CHECK(two.at("breakdown").at("collective").get<uint64_t>() > 0);
    // A ring all-reduce moves 2(R-1)/R of the gradients through every member.
    CHECK(eight.at("breakdown").at("collective").get<uint64_t>() > two.at("breakdown").at("collective").get<uint64_t>());
    CHECK(eight.at("samples").get<uint64_t>() == 8 * one.at("samples").get<uint64_t>());
}

TEST_CASE("BERT: a lower available memory proportion means smaller matmul passes and more cycles", "[bert][sim]")
{
    auto cycles = [](double proportion) {
        json d = oneLayer(1024, 512);
        d["workload"]["available_memory_proportion"] = proportion;
        return layerComputeCycles(simulate(d));
    };
    const uint64_t roomy = cycles(0.6), tight = cycles(0.1), tighter = cycles(0.03);
    CHECK(roomy <= tight);
    CHECK(tight <= tighter);
    CHECK(roomy < tighter);
}

TEST_CASE("BERT: packed rows count sequences as rows times the packing factor", "[bert][sim][packing]")
{
    // Four layers over an M2000's 4 IPUs: the mask, built on IPU 0, is relayed to IPUs 1-3.
    auto run = [](bool packed) {
        json d{{"system", {{"base", "hardware/m2000.json"}}},
               {"workload",
                {{"kind", "bert"}, {"model", {{"layers", 4}, {"hidden", 256}, {"heads", 4}, {"ffn", 1024}}}, {"micro_batch", 4},
                 {"sequence_length", 256}, {"max_predictions", 38},
                 {"strategy", {{"kind", "pipelined"}, {"layers_per_ipu", {1, 1, 1, 1}}}}}},
               {"run", {{"gradient_accumulation", 10}}}};
        if (packed)
            d["workload"]["packing"] = {{"average_sequences_per_row", 1.7}, {"max_sequences_per_row", 3}};
        return simulate(d);
    };
    const json plain = run(false), packed = run(true);
    CHECK(plain.at("packing").is_null());
    CHECK(plain.at("sample_kind") == "sequences");
    CHECK(packed.at("sample_kind") == "rows");
    CHECK(packed.at("samples") == plain.at("samples"));
    const double rows = packed.at("samples_per_second").get<double>();
    CHECK(packed.at("packing").at("sequences_per_second").get<double>() == Approx(1.7 * rows));
    CHECK(packed.at("packing").at("sequences").get<double>() == Approx(1.7 * packed.at("samples").get<double>()));
    // Rows cost a little more than unpacked sequences (the mask: built once, relayed, read by
    // each layer), and the pipeline copies carry the mask on from IPU 0 to 3.
    const auto total = [](const json& s) { return s.at("total_cycles").get<double>(); };
    CHECK(total(packed) > total(plain));
    CHECK(total(packed) < 1.1 * total(plain));
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(packed.at("ipus").at(i).at("breakdown").at("ipu_copy").get<uint64_t>() >
              plain.at("ipus").at(i).at("breakdown").at("ipu_copy").get<uint64_t>());
    // Built once a micro-batch: recomputing the Embedding block (BERT's default checkpoints)
    // does not build the mask again.
    int builds = 0;
    for (const auto& b : packed.at("tile_balance"))
        if (b.at("compute_set") == "attention_mask") {
            ++builds;
            CHECK(b.at("executions") == 10);
        }
    CHECK(builds == 1);
}
