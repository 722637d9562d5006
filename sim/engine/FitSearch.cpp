// SPDX-License-Identifier: MIT
#include "sim/engine/FitSearch.hpp"

#include "sim/config/BundledModels.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/engine/MemoryAccount.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace ipusim {

using nlohmann::json;

std::optional<std::size_t> firstProgramOver(const config::LoadedConfig& variant)
{
    return accountMemory(buildExperiment(variant)).firstOver;
}

namespace {

/** `name`'s module path cut to `levels` levels ("/a/b/" of "/a/b/c/Op" at 2), or "" when the
 *  node has fewer module levels than that (or names no module). */
std::string modulePrefix(const std::string& name, std::size_t levels)
{
    if (name.empty() || name[0] != '/')
        return "";
    std::size_t slashes = 0;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (name[i] == '/' && ++slashes == levels + 1)
            return i + 1 < name.size() ? name.substr(0, i + 1) : ""; // an op name after it
    return "";
}

} // namespace

std::vector<std::string> stagePrefixes(const std::vector<std::string>& nodeNames)
{
    // Two levels ("/layer3/layer3.4/"), one for nodes of a top-level module ("/fc/"); a prefix
    // holding more than an eighth of the nodes, and 16 or more (ViT's "/encoder/layers/"), is
    // refined a level at a time (to "/model/encoder/layers/encoder_layer_0/" of a wrapped ViT).
    // A top-level module with modules inside ("/encoder/" of ViT's "/encoder/Add") names none:
    // as a block's prefix it would also take the later nodes of its inner modules no cut names.
    constexpr int kDeepest = 6;
    std::map<std::string, std::size_t> count;
    std::set<std::string> nested;
    for (const std::string& n : nodeNames) {
        for (int depth = 2; depth <= kDeepest; ++depth)
            ++count[modulePrefix(n, depth)];
        if (!modulePrefix(n, 2).empty())
            nested.insert(modulePrefix(n, 1));
    }
    auto wide = [&](const std::string& p) { return !p.empty() && count[p] * 8 > nodeNames.size() && count[p] >= 16; };
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const std::string& n : nodeNames) {
        std::string p = modulePrefix(n, 2);
        if (p.empty() && modulePrefix(n, 1).size() == n.rfind('/') + 1 && !nested.count(modulePrefix(n, 1))) // a top-level module's
            p = modulePrefix(n, 1);
        else
            for (int depth = 3; wide(p) && depth <= kDeepest; ++depth)
                p = modulePrefix(n, depth); // none for a node of the wide module itself: it follows the stage before
        if (!p.empty() && seen.insert(p).second)
            out.push_back(std::move(p));
    }
    return out;
}

std::vector<std::string> finestPrefixes(const std::vector<std::string>& nodeNames)
{
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const std::string& n : nodeNames) {
        const std::size_t slash = n.rfind('/');
        if (n.empty() || n[0] != '/' || slash == 0 || slash == std::string::npos)
            continue; // a node of no module ("/Flatten") follows the stage before
        std::string p = n.substr(0, slash + 1);
        if (seen.insert(p).second)
            out.push_back(std::move(p));
    }
    return out;
}

namespace {

/** The largest x in [lo, hi] for which `holds` is true, given that it holds at lo and, once
 *  false, stays false above (memory grows with the micro-batch and with a stage's layers). */
template <typename T, typename Holds>
T largestHolding(T lo, T hi, const Holds& holds)
{
    while (lo < hi) {
        const T mid = lo + (hi - lo + 1) / 2;
        if (holds(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/** Values a variant sets, by JSON pointer from the config's root. */
using Setting = std::vector<std::pair<std::string, json>>;

/** Variants of one experiment, each checked once and recorded. */
class FitProbe
{
public:
    FitProbe(const Experiment& e, const FitsCheck& fits, json& checked) : m_e(e), m_fits(fits), m_checked(checked) {}

    /** The largest micro-batch from 1 to `upTo` that fits with `setting`, or none. */
    std::optional<uint64_t> largest(uint64_t upTo, const Setting& setting)
    {
        if (upTo < 1 || !fits(1, setting))
            return std::nullopt;
        return largestHolding<uint64_t>(1, upTo, [&](uint64_t k) { return fits(k, setting); });
    }

    bool fits(uint64_t microBatch, const Setting& setting) { return !firstOver(microBatch, setting); }

    /** The first program of the variant that does not fit (the first when it is refused). */
    std::optional<std::size_t> firstOver(uint64_t microBatch, const Setting& setting)
    {
        InterruptGuard::check("interrupted: the run wrote no results");
        config::LoadedConfig variant = m_e.config;
        variant.doc["workload"]["micro_batch"] = microBatch;
        json record = {{"micro_batch", microBatch}};
        for (const auto& [pointer, value] : setting) {
            variant.doc[json::json_pointer(pointer)] = value;
            record[pointer] = value;
        }
        std::optional<std::size_t> over = 0;
        try {
            over = m_fits(variant);
        } catch (const Interrupted&) {
            throw; // Ctrl-C ends the search with the run
        } catch (const std::exception& refused) {
            // A variant the rest of the config does not allow (a data set it must divide, a split
            // it cannot run): it does not fit, and the report says why.
            record["refused"] = refused.what();
        }
        record["fits"] = !over;
        m_checked.push_back(std::move(record));
        return over;
    }

private:
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
    if (w.contains(rts) && !w.at(rts).get<bool>() && w.contains(replicas) && w.at(replicas).is_number_integer() &&
        w.at(replicas).get<int64_t>() > 1)
        out.push_back({{"/workload/strategy/replicated_tensor_sharding", true}});
    if (w.contains("offload_optimizer") && !w.at("offload_optimizer").get<bool>()) {
        Setting both = out.back();
        both.push_back({"/workload/offload_optimizer", true});
        out.push_back(both);
    }
    return out;
}

json foundAt(uint64_t microBatch, const Setting& setting, json checked)
{
    json sets = {fmt::format("/workload/micro_batch={}", microBatch)};
    for (const auto& [pointer, value] : setting)
        sets.push_back(fmt::format("{}={}", pointer, value.dump()));
    return {{"found", true}, {"micro_batch", microBatch}, {"sets", sets}, {"checked", std::move(checked)}};
}

/** An ONNX model's layers as a split sees them: the names of the nodes they come from, in order
 *  (a stage's prefix must start one: a node that imports as no layer, such as the gather of
 *  positions from arange, a parameter, starts no block), and the layers that use another's
 *  weight (a head tied to the embedding), each with the owner's name. */
struct ModelLayers
{
    std::vector<std::string> names;
    std::vector<std::pair<std::string, std::string>> ties; // (user, owner)
};

ModelLayers modelLayers(const Experiment& e)
{
    const WorkloadSpec spec = decodeWorkload(e.config, e.system, e.run);
    ModelLayers out;
    if (const auto* graph = std::get_if<GraphSpec>(&spec))
        for (const LayerSpec& l : graph->model.layers) {
            if (l.kind == LayerKind::Parameter) // named after its value, in the block of the node reading it
                continue;
            out.names.push_back(l.name.substr(0, l.name.find_first_of("#:"))); // a second layer of one node: "name#2", "name:flatten"
            if (!l.tiedWeight.empty())
                out.ties.push_back({out.names.back(), l.tiedWeight});
        }
    return out;
}

/** Splits of an ONNX model on one IPU a replica into K pipeline stages by module prefix. */
class SplitSearch
{
public:
    /** `base`: what every split sets too (the optimizer state sharded and offloaded). */
    SplitSearch(const Experiment& e, FitProbe& probe, std::vector<std::string> prefixes, ModelLayers layers, Setting base)
        : m_e(e), m_probe(probe), m_prefixes(std::move(prefixes)), m_layers(std::move(layers)), m_w(e.config.doc.at("workload")),
          m_base(std::move(base))
    {
        findTail();
    }

    /** The first K (2, 4, 8, 16, as the replicas divide) whose greedy split fits at the
     *  config's micro-batch: its setting. */
    std::optional<Setting> search()
    {
        const uint64_t replicas = m_w.at("strategy").value("replicas", uint64_t(1));
        for (uint64_t K = 2; K <= 16 && K <= m_tail.value_or(m_prefixes.size()); K *= 2) {
            const bool ipus = replicas % K == 0 || (replicas == 1 && K <= m_e.system.topology.ipus());
            if (!ipus)
                continue;
            const uint64_t fewer = std::max<uint64_t>(replicas / K, 1);
            if (auto cuts = greedy(K, fewer))
                return setting(*cuts, fewer);
        }
        return std::nullopt;
    }

private:
    /** Stage by stage, the latest cut at which the stage still fits, the later cuts spread
     *  evenly over what is left; then the whole split checked, on `replicas` replicas. */
    std::optional<std::vector<std::size_t>> greedy(uint64_t K, uint64_t replicas)
    {
        const std::size_t n = m_tail.value_or(m_prefixes.size()); // the tail is a stage of its own
        std::vector<std::size_t> cuts{0};
        auto stageFits = [&](std::size_t s, std::size_t cut) {
            std::vector<std::size_t> c = cuts;
            c.push_back(cut);
            const std::size_t rest = K - 1 - (s + 1);
            for (std::size_t j = 1; j <= rest; ++j)
                c.push_back(cut + (n - cut) * j / (rest + 1));
            const auto over = m_probe.firstOver(m_w.at("micro_batch"), setting(c, replicas));
            return !over || *over > s;
        };
        for (std::size_t s = 0; s + 1 < K; ++s) {
            const std::size_t lo = cuts.back() + 1, hi = n - (K - 1 - (s + 1)) - 1; // cut s + 1 leaves a prefix to each later stage
            if (lo > hi || !stageFits(s, lo))
                return std::nullopt;
            cuts.push_back(largestHolding(lo, hi, [&](std::size_t cut) { return stageFits(s, cut); }));
        }
        if (m_probe.firstOver(m_w.at("micro_batch"), setting(cuts, replicas)))
            return std::nullopt;
        return cuts;
    }

    /** The prefix each layer follows (its longest matching one, else the layer before's). */
    std::map<std::string, std::size_t> prefixOfLayers() const
    {
        std::map<std::string, std::size_t> out;
        std::size_t current = 0;
        for (const std::string& name : m_layers.names) {
            std::size_t length = 0;
            for (std::size_t i = 0; i < m_prefixes.size(); ++i)
                if (name.rfind(m_prefixes[i], 0) == 0 && m_prefixes[i].size() > length) {
                    current = i;
                    length = m_prefixes[i].size();
                }
            out.emplace(name, current);
        }
        return out;
    }

    /** A layer using a weight of an earlier one's (a head tied to the embedding) runs where
     *  that weight is, as PopART copies no learned weight between IPUs: the prefixes from the
     *  one it follows on are a last stage of their own, on the IPU of the owner's stage (the
     *  owner's prefix index kept); nothing without a tie. Only the first tie is placed so (a
     *  decoder's head; a model tying several is left to blocks of its own). */
    void findTail()
    {
        if (m_layers.ties.empty())
            return;
        const auto prefixOf = prefixOfLayers();
        const auto& [user, owner] = m_layers.ties.front();
        const auto u = prefixOf.find(user);
        const auto o = prefixOf.find(owner);
        if (u != prefixOf.end() && o != prefixOf.end() && u->second > o->second) {
            m_tail = u->second;
            m_owner = o->second;
        }
    }

    Setting setting(const std::vector<std::size_t>& cuts, uint64_t replicas) const
    {
        json blocks = json::array();
        for (std::size_t i = 0; i < cuts.size(); ++i)
            blocks.push_back({{"name", fmt::format("stage{}", i)}, {"prefix", m_prefixes[cuts[i]]}, {"ipu", i}});
        if (m_tail) { // on the IPU of the stage holding the owner's prefix
            const std::size_t ownerStage = std::size_t(std::upper_bound(cuts.begin(), cuts.end(), m_owner) - cuts.begin()) - 1;
            blocks.push_back({{"name", "tied"}, {"prefix", m_prefixes[*m_tail]}, {"ipu", ownerStage}});
        }
        json strategy = m_w.at("strategy");
        strategy["kind"] = "pipelined";
        strategy["replicas"] = replicas;
        Setting out{{"/workload/blocks", blocks}};
        for (const auto& [pointer, value] : m_base) // the strategy's own keys go into the object set below
            if (pointer.rfind("/workload/strategy/", 0) == 0)
                strategy[pointer.substr(std::string("/workload/strategy/").size())] = value;
            else
                out.push_back({pointer, value});
        if (replicas == 1)
            strategy["replicated_tensor_sharding"] = false; // nothing to shard over
        out.push_back({"/workload/strategy", strategy});
        // A pipeline fills: training at least 2 K - 1 micro-batches a step, inference K a call.
        const json& run = m_e.config.doc.at("run");
        const uint64_t K = cuts.size() + (m_tail ? 1 : 0);
        if (m_w.value("mode", std::string("train")) == "train") {
            if (run.value("gradient_accumulation", uint64_t(1)) < 2 * K - 1)
                out.push_back({"/run/gradient_accumulation", 2 * K - 1});
        } else if (run.value("device_iterations", uint64_t(1)) < K) {
            out.push_back({"/run/device_iterations", K});
        }
        return out;
    }

    const Experiment& m_e;
    FitProbe& m_probe;
    std::vector<std::string> m_prefixes;
    ModelLayers m_layers;
    std::optional<std::size_t> m_tail; // the prefix a tied layer's own last stage starts at
    std::size_t m_owner = 0;           // the prefix the weight it uses is in
    const json& m_w;
    Setting m_base;
};

bool splittable(const json& w)
{
    return w.value("kind", std::string()) == "onnx" && w.contains("strategy") && w.at("strategy").value("kind", std::string()) == "single" &&
           w.value("blocks", json::array()).empty();
}

} // namespace

json searchFit(const Experiment& e, const FitsCheck& fits, const std::function<std::vector<std::string>(const Experiment&)>& nodeNames)
{
    const json& w = e.config.doc.at("workload");
    json checked = json::array();
    if (!w.contains("micro_batch") || !w.at("micro_batch").is_number_integer() || w.at("micro_batch").get<int64_t>() < 1)
        return {{"found", false}, {"checked", checked}, {"next", "a workload without a micro-batch: a smaller model or more IPUs"}};
    const uint64_t microBatch = w.at("micro_batch");
    FitProbe probe(e, fits, checked);
    const std::vector<Setting> settings = settingsToTry(w);
    for (std::size_t i = 0; i < settings.size(); ++i) {
        // The config as it is does not fit at its own micro-batch: only smaller ones are tried.
        if (const auto k = probe.largest(i == 0 ? microBatch - 1 : microBatch, settings[i]))
            return foundAt(*k, settings[i], std::move(checked));
    }
    if (splittable(w)) {
        // (The file was read to compile the config: it is imported again.)
        ModelLayers layers = nodeNames ? ModelLayers{nodeNames(e), {}} : modelLayers(e);
        const std::vector<std::string> prefixes = stagePrefixes(layers.names);
        // Then with each stage's forward pass recomputed before its backward pass from the
        // stage's inputs, as Graphcore pipelines its large models: the pipeline's stash holds
        // those inputs only.
        std::vector<Setting> bases{settings.back()};
        if (w.value("mode", std::string("train")) == "train" && w.value("recompute", std::string("none")) == "none") {
            bases.push_back(settings.back());
            bases.back().push_back({"/workload/recompute", "checkpoints"});
        }
        // Last, cuts inside modules too, at every module path, the stages recomputed.
        const std::vector<std::string> finest = finestPrefixes(layers.names);
        std::vector<std::pair<const std::vector<std::string>*, const Setting*>> tries;
        for (const Setting& base : bases)
            tries.push_back({&prefixes, &base});
        if (finest.size() > prefixes.size())
            tries.push_back({&finest, &bases.back()});
        for (const auto& [starts, base] : tries)
            if (const auto split = SplitSearch(e, probe, *starts, layers, *base).search()) {
                json found = foundAt(microBatch, *split, std::move(checked));
                found["stages"] = split->at(0).second;
                return found;
            }
    }
    return {{"found", false}, {"checked", std::move(checked)},
            {"next", "nothing tried fits (a smaller micro-batch, the optimizer state sharded and offloaded, an ONNX model's split "
                     "by module prefix, also with each stage recomputed, also cut inside modules): split the model over more IPUs "
                     "with blocks of your own (a pipelined or phased strategy), or use IPUs with more memory"}};
}

} // namespace ipusim
