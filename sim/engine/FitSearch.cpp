// SPDX-License-Identifier: MIT
#include "sim/engine/FitSearch.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/engine/MemoryAccount.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ipusim {

using nlohmann::json;

bool compilesToFit(const config::LoadedConfig& variant)
{
    const Experiment e = buildExperiment(variant);
    return !accountMemory(e).firstOver;
}

namespace {

/** Values a variant sets, by JSON pointer below /workload. */
using Setting = std::vector<std::pair<std::string, json>>;

/** Variants of one experiment at any micro-batch and setting, each checked once and recorded. */
class FitProbe
{
public:
    FitProbe(const Experiment& e, const FitsCheck& fits, json& checked) : m_e(e), m_fits(fits), m_checked(checked) {}

    /** The largest micro-batch from 1 to `upTo` that fits with `setting`, or none. */
    std::optional<uint64_t> largest(uint64_t upTo, const Setting& setting)
    {
        if (upTo < 1 || !fits(1, setting))
            return std::nullopt;
        uint64_t lo = 1, hi = upTo + 1; // the largest known to fit, the smallest known not to (or past the range)
        while (hi - lo > 1) {
            const uint64_t mid = lo + (hi - lo) / 2;
            (fits(mid, setting) ? lo : hi) = mid;
        }
        return lo;
    }

private:
    bool fits(uint64_t microBatch, const Setting& setting)
    {
        config::LoadedConfig variant = m_e.config;
        json& w = variant.doc["workload"];
        w["micro_batch"] = microBatch;
        json record = {{"micro_batch", microBatch}};
        for (const auto& [pointer, value] : setting) {
            w[json::json_pointer(pointer)] = value;
            record[pointer] = value;
        }
        bool ok = false;
        try {
            ok = m_fits(variant);
        } catch (const config::ConfigError&) {
            ok = false; // a micro-batch the rest of the config does not allow (a data set it must divide)
        }
        record["fits"] = ok;
        m_checked.push_back(std::move(record));
        return ok;
    }

    const Experiment& m_e;
    const FitsCheck& m_fits;
    json& m_checked;
};

/** The settings to try, in order: the config as it is, then (training) the optimizer state
 *  sharded over the replicas, then also offloaded to Streaming Memory, where the config does
 *  not already. */
std::vector<Setting> settingsToTry(const json& w)
{
    std::vector<Setting> out{{}};
    if (w.value("mode", std::string("train")) != "train")
        return out;
    const json::json_pointer rts{"/strategy/replicated_tensor_sharding"}, replicas{"/strategy/replicas"};
    if (w.contains(rts) && !w.at(rts).get<bool>() && w.contains(replicas) && w.at(replicas).is_number_unsigned() &&
        w.at(replicas).get<uint64_t>() > 1)
        out.push_back({{"/strategy/replicated_tensor_sharding", true}});
    if (w.contains("offload_optimizer") && !w.at("offload_optimizer").get<bool>()) {
        Setting both = out.back();
        both.push_back({"/offload_optimizer", true});
        out.push_back(both);
    }
    return out;
}

} // namespace

json searchFit(const Experiment& e, const FitsCheck& fits)
{
    const json& w = e.config.doc.at("workload");
    json checked = json::array();
    if (!w.contains("micro_batch") || !w.at("micro_batch").is_number_unsigned())
        return {{"found", false}, {"checked", checked}, {"next", "a workload without a micro-batch: a smaller model or more IPUs"}};
    const uint64_t microBatch = w.at("micro_batch");
    FitProbe probe(e, fits, checked);
    const std::vector<Setting> settings = settingsToTry(w);
    for (std::size_t i = 0; i < settings.size(); ++i) {
        // The config as it is does not fit at its own micro-batch: only smaller ones are tried.
        const auto k = probe.largest(i == 0 ? microBatch - 1 : microBatch, settings[i]);
        if (!k)
            continue;
        json sets = {fmt::format("/workload/micro_batch={}", *k)};
        for (const auto& [pointer, value] : settings[i])
            sets.push_back(fmt::format("/workload{}={}", pointer, value.dump()));
        return {{"found", true}, {"micro_batch", *k}, {"sets", sets}, {"checked", std::move(checked)}};
    }
    return {{"found", false}, {"checked", std::move(checked)},
            {"next", "nothing tried fits at micro-batch 1: split the model over more IPUs (blocks and a pipelined or phased "
                     "strategy), or use IPUs with more memory"}};
}

} // namespace ipusim
