// SPDX-License-Identifier: MIT
#pragma once
#include "sim/engine/Experiment.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ipusim {

/** Where a variant of an experiment stops fitting: the index of its first program (IPU) that
 *  does not fit, none when all do. Compiled and its memory accounted, not run. */
using FitsCheck = std::function<std::optional<std::size_t>(const config::LoadedConfig&)>;

/** The check the search uses: compiles the variant (to its first IPU over) and accounts memory. */
std::optional<std::size_t> firstProgramOver(const config::LoadedConfig& variant);

/** Module prefixes a pipeline stage may start at: each node name's module path cut to its
 *  first two levels ("/features/features.3/" of "/features/features.3/conv/Conv", "/fc/" of
 *  "/fc/Gemm"; a level more while a prefix holds more than an eighth of the nodes (16 or more),
 *  as ViT's "/encoder/layers/encoder_layer_3/"), in the order the model first runs them; nodes
 *  of no module ("/Flatten") name none, and follow the stage of the node before. */
std::vector<std::string> stagePrefixes(const std::vector<std::string>& nodeNames);

/** The finest prefixes a split can start stages at: each node's whole module path
 *  ("/trunk_output/block4/block4-0/f/a/a.0/"), in the order the model runs them; for a module
 *  no split at stagePrefixes' levels can cut (RegNetY-128GF's last unit of four wide
 *  convolutions). */
std::vector<std::string> finestPrefixes(const std::vector<std::string>& nodeNames);

/** What an experiment that does not fit could change to fit, found by checking variants of its
 *  config: the largest smaller micro-batch that fits; when none does, in training, the largest
 *  micro-batch up to its own that fits with the optimizer state sharded over the replicas, then
 *  also offloaded to Streaming Memory (where the config does neither); then, for an ONNX model on
 *  one IPU a replica, a split into 2, 4, 8 or 16 pipeline stages by module prefix, as many fewer
 *  replicas. The answer, for the out-of-memory report: {"found": true, "micro_batch": 8, "sets":
 *  ["/workload/micro_batch=8", ...], "checked": [{"micro_batch": 8, "fits": true, ...}, ...]}
 *  ("stages": the split's) or {"found": false, "checked": [...], "next": what is left to try}.
 *  Memory is taken to grow with the micro-batch, so each setting is bisected (about
 *  log2(micro-batch) checks), and each stage with the layers it holds, so each cut is bisected:
 *  the earliest stages take as much of the model as fits them. A layer using an earlier one's
 *  weight (a head tied to the embedding) and the prefixes from the one it follows on are a last
 *  stage of their own on the owner's IPU. `nodeNames` gives the names the prefixes come from (by
 *  default the nodes the model's layers come from, with its tied layers). */
nlohmann::json searchFit(const Experiment& e, const FitsCheck& fits = firstProgramOver,
                         const std::function<std::vector<std::string>(const Experiment&)>& nodeNames = {});

} // namespace ipusim
