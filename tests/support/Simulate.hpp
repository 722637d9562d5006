// SPDX-License-Identifier: MIT
#pragma once
// Test helpers: experiments run through the same run path as `ipusim run`.
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Experiment.hpp"
#include "sim/run/Run.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::test {

/** The source tree: configs are named relative to it. */
inline const std::string kRoot = IPUSIM_SOURCE_DIR;

/** Diagnostics that throw "pointer: message", for the layers below the config on their own. */
struct ThrowingDiagnostics : Diagnostics
{
protected:
    void raise(const std::string& pointer, const std::string& message) const override
    {
        throw std::runtime_error(pointer + ": " + message);
    }
};

/** The config error building `doc` (as if read from `file`) raises, or "no error". */
std::string configErrorOf(const nlohmann::json& doc, const std::string& file);

/** The busiest tile's cycles of each compute step of IPU 0's program, by step name. */
std::map<std::string, uint64_t> busiestStepCycles(const Schedule& schedule);

/** The summary of `e` run without files or inference phase; the test fails when it does not
 *  fit in memory. */
nlohmann::json simulate(const Experiment& e, const RunOptions& options = {});
nlohmann::json simulate(const config::LoadedConfig& cfg, const RunOptions& options = {});
/** Whether this build exported the bundled ONNX models (it does where python3-torch and
 *  python3-torchvision are installed). */
bool bundledModelsExported();
/** The file of a model this build exported, by name ("resnet50"); the test is skipped first
 *  where there are none (SKIP_WITHOUT_BUNDLED_MODELS). */
std::string bundledModel(const std::string& name);
/** Whether the config file (relative to the tree) names a bundled model ("bundled:NAME"). */
bool namesBundledModel(const std::string& config);
/** Which shipped configs: those naming a bundled model need this build's exported models. */
enum class Shipped { All, WithoutBundledModel, OnBundledModel };
/** The shipped experiment configs of that kind (each file under configs/ but the hardware
 *  descriptions, schemas, sweeps and validation suites), relative to the tree, in order. */
std::vector<std::string> shippedExperiments(Shipped which = Shipped::All);
/** Prints the line that makes ctest report the running case as skipped, not passed
 *  (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt); the case must return at once, having
 *  asserted nothing, since a skipped case's failures would not show. */
void skipTest(const std::string& reason);
/** Where two documents first differ, as a JSON pointer with both values; "" when they are
 *  equal (json::diff of two whole BERT schedules that differ everywhere takes minutes). */
std::string firstDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at = "");
/** A config file of the tree (relative path) with overrides. */
nlohmann::json simulateFile(const std::string& file, const std::vector<std::string>& sets = {});
/** An inline config document; its bases resolve from configs/. */
nlohmann::json simulateDoc(const nlohmann::json& doc);
/** Where the fast engine's phases of an inline config first differ from the per-cycle reference
 *  engine's ("" if nowhere). */
std::string engineDisagreement(const nlohmann::json& doc);

} // namespace ipusim::test

/** Ends the running test case as skipped where this build exported no ONNX models. */
#define SKIP_WITHOUT_BUNDLED_MODELS()                                                                                      \
    if (!::ipusim::test::bundledModelsExported())                                                                         \
    return ::ipusim::test::skipTest("this build exported no ONNX models (python3-torch and python3-torchvision are not installed)")
