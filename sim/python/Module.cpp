// SPDX-License-Identifier: MIT
// _ipusim, the C++ half of the Python package ipusim (sim/python/ipusim): the library the command
// line runs, called from Python. Summaries cross as summary.json's exact text; a config error
// raises ipusim.ConfigError carrying the file, the JSON pointer and what was expected.
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/HardwarePresets.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/config/Schema.hpp"
#include "sim/engine/FitSearch.hpp"
#include "sim/report/Summary.hpp"
#include "sim/run/Run.hpp"
#include "sim/sweep/Sweep.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <systemc> // declares sc_main with the C linkage libsystemc expects

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace py = pybind11;
using json = nlohmann::json;

namespace ipusim::python {
namespace {

/** A config given as a path, or as a dict (its relative paths resolved in `folder`). */
config::LoadedConfig loadFrom(const py::object& config, const std::vector<std::string>& sets, const std::string& folder)
{
    if (py::isinstance<py::dict>(config)) {
        const py::object dumps = py::module_::import("json").attr("dumps");
        const std::string text = dumps(config, py::arg("allow_nan") = false).cast<std::string>();
        return config::loadConfig(json::parse(text), folder + "/<dict>", sets, "overrides");
    }
    return config::loadConfig(py::module_::import("os").attr("fspath")(config).cast<std::string>(), sets, "overrides");
}

/** run(): {"status": "ok", "summary": text, "files": [...]} or {"status": "out_of_memory",
 *  "report": text, "phase": "" or "inference", "files": [...]}. */
py::dict runConfig(const py::object& config, const std::vector<std::string>& sets, const std::string& folder, const std::string& outDir,
                   bool trace, bool vcd, bool reference, bool inference, bool force)
{
    RunRequest request{loadFrom(config, sets, folder), {}};
    for (const auto& note : config::deprecationNotes(request.config))
        if (PyErr_WarnEx(PyExc_DeprecationWarning, note.c_str(), 1) < 0)
            throw py::error_already_set(); // warnings turned into errors
    request.options.outDir = outDir;
    request.options.trace = trace;
    request.options.vcd = vcd;
    request.options.engine = reference ? EngineKind::Reference : EngineKind::Fast;
    request.options.inferencePhase = inference;
    request.options.force = force;
    request.options.searchFit = true;
    RunOutcome r;
    {
        py::gil_scoped_release free; // a long run leaves other Python threads (a notebook's) running
        const ipusim::InterruptGuard guard; // Ctrl-C unwinds the run and raises KeyboardInterrupt
        r = run(std::move(request));
    }
    py::dict out;
    out["files"] = r.files;
    if (r.status == RunOutcome::Status::OutOfMemory) {
        out["status"] = "out_of_memory";
        out["report"] = r.oomReport.dump(1) + "\n";
        out["phase"] = r.oomPhase;
        return out;
    }
    out["status"] = "ok";
    out["summary"] = r.summary.dump(1) + "\n"; // the bytes of summary.json
    return out;
}

/** The text the command line prints for a summary or an out-of-memory report. */
std::string printed(const std::string& text, bool oom)
{
    std::ostringstream s;
    if (oom)
        report::printOomReport(s, json::parse(text));
    else
        report::printSummary(s, json::parse(text));
    return s.str();
}

py::list params()
{
    py::list out;
    for (const auto& p : config::Schema::instance().params())
        out.append(py::dict(py::arg("pointer") = p.pointer, py::arg("type") = p.type, py::arg("unit") = p.unit,
                            py::arg("default") = p.defaultValue, py::arg("source") = p.source, py::arg("description") = p.description,
                            py::arg("range") = p.range));
    return out;
}

/** The hardware presets (--set /system=NAME), smallest first: (name, IPUs). */
std::vector<std::pair<std::string, uint32_t>> hardwarePresets()
{
    std::vector<std::pair<std::string, uint32_t>> out;
    for (const std::string& name : config::hardwarePresetNames())
        out.emplace_back(name, config::hardwarePreset(name, "", "").value("num_ipus", 1u));
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    return out;
}

/** Runs a sweep file's missing points; returns (results folder, failed points). */
std::pair<std::string, std::size_t> sweep(const std::string& file, const std::string& outDir, unsigned jobs, bool resume)
{
    const Sweep s = Sweep::load(file);
    const SweepOptions options{outDir, jobs, resume};
    py::gil_scoped_release free;
    return {resultsDir(s, options), runSweep(s, options).failed};
}

} // namespace
} // namespace ipusim::python

/** libsystemc's entry point, which a module loaded into Python never enters: Python is the
 *  program, and each run elaborates its own kernel. */
__attribute__((visibility("default"))) int sc_main(int, char*[])
{
    return 1;
}

PYBIND11_MODULE(_ipusim, m)
{
    using namespace ipusim::python;
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); // the simulator's output is its own
    m.doc() = "ipusim's C++ library for the ipusim package; use the package, not this module";
    static py::exception<ipusim::config::ConfigError> configError(m, "ConfigError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const ipusim::config::ConfigError& e) {
            py::object error = py::handle(configError.ptr())(e.what()); // an instance, to carry attributes
            error.attr("file") = e.file();
            error.attr("pointer") = e.pointer();
            error.attr("message") = e.message();
            PyErr_SetObject(configError.ptr(), error.ptr());
        } catch (const ipusim::Interrupted& e) {
            PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        }
    });
    m.attr("configs_dir") = IPUSIM_CONFIGS_DIR;
    m.def("run", &runConfig, py::arg("config"), py::arg("sets"), py::arg("folder"), py::arg("out_dir"), py::arg("trace"), py::arg("vcd"),
          py::arg("reference"), py::arg("inference"), py::arg("force"));
    m.def("printed", &printed, py::arg("text"), py::arg("oom"));
    m.def("params", &params);
    m.def("hardware_presets", &hardwarePresets);
    m.def("host_models", &ipusim::config::hostModelNames);
    m.def("onnx_graph_inputs", &ipusim::config::onnxGraphInputs, py::arg("path"));
    // The module prefixes the fit search cuts an ONNX model at (tests pick pipeline stages so).
    m.def("onnx_stage_prefixes", [](const std::string& path) { return ipusim::stagePrefixes(ipusim::config::onnxNodeNames(path)); },
          py::arg("path"));
    m.def("sweep", &sweep, py::arg("file"), py::arg("out_dir"), py::arg("jobs"), py::arg("resume"));
}
