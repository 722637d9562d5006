// SPDX-License-Identifier: MIT
#include "models/program/ScheduleJson.hpp"

#include "models/timing/VertexCosts.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

namespace ipusim {
namespace {

using json = nlohmann::json;

// Reads a vertex's params, naming the JSON pointer in every error and rejecting unknown keys.
class ParamReader
{
public:
    ParamReader(const Diagnostics& diag, std::string pointer, const json& params)
        : m_diag(diag), m_ptr(std::move(pointer)), m_params(params)
    {
    }
    uint64_t count(const std::string& key, std::optional<uint64_t> fallback = std::nullopt, uint64_t minimum = 1)
    {
        m_used.insert(key);
        if (!m_params.contains(key)) {
            if (fallback)
                return *fallback;
            m_diag.fail(m_ptr, fmt::format("missing required key \"{}\"", key));
        }
        const json& v = m_params.at(key);
        if (!v.is_number_integer() || v.get<int64_t>() < int64_t(minimum))
            m_diag.fail(m_ptr + "/" + key, fmt::format("expected integer >= {}, found {}", minimum, v.dump()));
        return v.get<uint64_t>();
    }
    Precision precision(const std::string& key, std::optional<Precision> fallback = std::nullopt)
    {
        std::string s = word(key, {"fp16", "fp32"}, fallback ? std::optional<std::string>(nameOf(*fallback)) : std::nullopt);
        return s == "fp16" ? Precision::FP16 : Precision::FP32;
    }
    std::string word(const std::string& key, const std::vector<std::string>& allowed,
                     std::optional<std::string> fallback = std::nullopt)
    {
        m_used.insert(key);
        if (!m_params.contains(key)) {
            if (fallback)
                return *fallback;
            m_diag.fail(m_ptr, fmt::format("missing required key \"{}\"", key));
        }
        const json& v = m_params.at(key);
        if (v.is_string() && std::find(allowed.begin(), allowed.end(), v.get<std::string>()) != allowed.end())
            return v.get<std::string>();
        m_diag.fail(m_ptr + "/" + key, fmt::format("expected one of {}, found {}", fmt::join(allowed, ", "), v.dump()));
    }
    void finish()
    {
        for (const auto& [k, v] : m_params.items())
            if (!m_used.count(k))
                m_diag.fail(m_ptr + "/" + k, fmt::format("unknown key \"{}\" (allowed: {})", k, fmt::join(m_used, ", ")));
    }

private:
    const Diagnostics& m_diag;
    std::string m_ptr;
    const json& m_params;
    std::set<std::string> m_used;
};

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

struct Parser
{
    const Diagnostics& diag;
    const IpuParams& hw;
    const SystemParams& system;
    const StepCheck& check;
    uint32_t ipu = 0;

    std::pair<uint32_t, uint32_t> tileRange(const json& sel, const std::string& ptr)
    {
        if (sel.is_string())
            return {0, hw.tiles};
        uint64_t a = sel.at(0), b = sel.at(1);
        if (a > b || b >= hw.tiles)
            diag.fail(ptr, fmt::format("expected a tile range [first, last] with first <= last <= {}, found {}", hw.tiles - 1, sel.dump()));
        return {uint32_t(a), uint32_t(b - a + 1)};
    }

    template <class T, class F>
    TileRuns<T> runs(const json& list, const std::string& ptr, F&& valueOf)
    {
        TileRuns<T> out;
        uint32_t next = 0;
        for (std::size_t i = 0; i < list.size(); ++i) {
            std::string p = fmt::format("{}/{}", ptr, i);
            auto [first, count] = tileRange(list[i].at("tiles"), p + "/tiles");
            if (first < next)
                diag.fail(p + "/tiles", "tile runs must be listed in increasing tile order without overlap");
            out.add(first, count, valueOf(list[i], p));
            next = first + count;
        }
        return out;
    }

    std::vector<Step> steps(const json& list, const std::string& ptr)
    {
        std::vector<Step> out;
        for (std::size_t i = 0; i < list.size(); ++i)
            out.push_back(step(list[i], fmt::format("{}/{}", ptr, i)));
        return out;
    }

    Step step(const json& j, const std::string& ptr)
    {
        const std::string op = j.at("op");
        if (check)
            check(j, op, ptr);
        if (op == "compute") {
            ComputeStep c;
            c.name = j.at("name");
            std::set<std::string> types;
            c.cycles = runs<uint64_t>(j.at("tiles"), ptr + "/tiles", [&](const json& run, const std::string& p) -> uint64_t {
                if (run.contains("cycles") == run.contains("vertices"))
                    diag.fail(p, "expected exactly one of \"cycles\" or \"vertices\"");
                if (run.contains("cycles"))
                    return run.at("cycles").get<uint64_t>();
                uint64_t total = 0;
                const json& vs = run.at("vertices");
                for (std::size_t k = 0; k < vs.size(); ++k) {
                    std::string vp = fmt::format("{}/vertices/{}", p, k);
                    total += vertexCyclesFromJson(diag, vp, vs[k].at("vertex"), vs[k].at("params"), hw);
                    types.insert(vs[k].at("vertex").get<std::string>());
                }
                return total;
            });
            c.vertices = runs<uint32_t>(j.at("tiles"), ptr + "/tiles", [](const json& run, const std::string&) -> uint32_t {
                return run.contains("vertices") ? uint32_t(run.at("vertices").size()) : 0;
            });
            c.vertexTypes.assign(types.begin(), types.end());
            return {c};
        }
        if (op == "exchange") {
            ExchangeStep x;
            x.name = j.at("name");
            x.bytes = runs<ExchangeBytes>(j.at("tiles"), ptr + "/tiles", [](const json& run, const std::string&) {
                return ExchangeBytes{run.value("send_bytes", uint64_t(0)), run.value("recv_bytes", uint64_t(0)),
                                     run.value("recv_shared_bytes", uint64_t(0))};
            });
            return {x};
        }
        if (op == "sync")
            return {SyncStep{j.value("kind", std::string("internal")) == "external" ? SyncKind::External : SyncKind::Internal}};
        if (op == "ipu_copy") {
            IpuCopyStep c;
            c.name = j.at("name");
            auto transfers = [&](const char* key, std::vector<IpuTransfer>& out) {
                const json list = j.value(key, json::array());
                for (std::size_t i = 0; i < list.size(); ++i) {
                    const uint32_t peer = list[i].at("ipu");
                    const std::string p = fmt::format("{}/{}/{}/ipu", ptr, key, i);
                    if (peer >= system.numIpus || peer == ipu)
                        diag.fail(p, fmt::format("expected another IPU of the system (0 to {}, not {}), found {}", system.numIpus - 1, ipu, peer));
                    out.push_back({peer, list[i].at("bytes").get<uint64_t>()});
                }
            };
            transfers("send", c.send);
            transfers("recv", c.recv);
            return {c};
        }
        if (op == "host_transfer")
            return {HostTransferStep{j.at("name"), j.at("direction") == "to_ipu" ? Direction::ToIpu : Direction::FromIpu,
                                     j.at("bytes").get<uint64_t>()}};
        RepeatStep r;
        r.name = j.value("name", std::string("repeat"));
        r.count = j.at("count");
        r.body = steps(j.at("body"), ptr + "/body");
        return {r};
    }
};

} // namespace

uint64_t vertexCyclesFromJson(const Diagnostics& diag, const std::string& ptr, const std::string& vertex,
                              const json& params, const IpuParams& hw)
{
    ParamReader r(diag, ptr + "/params", params);
    uint64_t cycles = 0;
    if (vertex == "ConvPartial1x1Out" || vertex == "ConvPartialnx1") {
        costs::ConvShape s;
        s.input = r.precision("input");
        s.partials = r.precision("partials", Precision::FP32);
        if (s.input == Precision::FP32 && s.partials == Precision::FP16)
            diag.fail(ptr + "/params/partials", "fp32 inputs need fp32 partials");
        const AmpParams& amp = hw.amp(s.input, s.partials);
        s.positions = r.count("positions");
        s.inGroups = uint32_t(ceilDiv(r.count("in_chans"), amp.inChansPerGroup));
        s.outGroups = uint32_t(ceilDiv(r.count("out_chans"), amp.units));
        s.convGroups = uint32_t(r.count("conv_groups", 1));
        if (vertex == "ConvPartialnx1") {
            s.kernelHeight = uint32_t(r.count("kernel_height"));
            s.kernelWidth = uint32_t(r.count("kernel_width", 1));
            cycles = costs::convPartialNx1(hw, s);
        } else
            cycles = costs::convPartial1x1Out(hw, s);
    } else if (vertex == "UnaryOp") {
        std::vector<std::string> names = {"relu", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "neg", "square", "copy"};
        costs::UnaryOpKind op{};
        costs::parseUnaryOp(r.word("op", names), op);
        cycles = costs::unaryOp(hw, op, r.precision("type"), r.count("elements"));
    } else if (vertex == "BinaryOp") {
        std::vector<std::string> names = {"add", "sub", "mul", "div", "max", "relu_grad", "max_grad"};
        costs::BinaryOpKind op{};
        costs::parseBinaryOp(r.word("op", names), op);
        cycles = costs::binaryOp(hw, op, r.precision("type"), r.count("elements"));
    } else if (vertex == "ScaledAdd") {
        cycles = costs::scaledAdd(hw, r.precision("type"), r.count("elements"));
    } else if (vertex == "Cast") {
        Precision from = r.precision("from");
        cycles = costs::cast(hw, from, r.precision("to"), r.count("elements"));
    } else if (vertex == "Reduce") {
        Precision type = r.precision("type");
        uint64_t outputs = r.count("outputs");
        cycles = costs::reduce(hw, type, outputs, r.count("partials_per_output"));
    } else if (vertex == "MaxPool") {
        Precision type = r.precision("type");
        uint64_t outputs = r.count("outputs");
        cycles = costs::maxPool(hw, type, outputs, r.count("window"));
    } else {
        diag.fail(ptr + "/vertex", fmt::format("unknown vertex \"{}\" (known: ConvPartial1x1Out, ConvPartialnx1, UnaryOp, "
                                              "BinaryOp, ScaledAdd, Cast, Reduce, MaxPool)", vertex));
    }
    r.finish();
    return cycles;
}

namespace {

Program programFromJson(const Diagnostics& diag, Parser& parser, const json& steps, const json* tensors, const std::string& ptr)
{
    Program program;
    program.ipu = parser.ipu;
    program.steps = parser.steps(steps, ptr + "/steps");
    numberPoints(program);

    std::map<std::string, uint32_t> points;
    forEachProgramStep(program, [&](const Step& s) {
        std::visit([&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (kIsPointStep<T>)
                points.emplace(op.name, op.point);
        }, s.op);
    });
    if (!tensors)
        return program;
    for (std::size_t i = 0; i < tensors->size(); ++i) {
        const json& tj = (*tensors)[i];
        std::string p = fmt::format("{}/tensors/{}", ptr, i);
        TensorAlloc t;
        t.name = tj.at("name");
        t.kind = tj.value("kind", std::string("tensor"));
        t.bytes = parser.runs<uint64_t>(tj.at("tiles"), p + "/tiles",
                                        [](const json& run, const std::string&) { return run.at("bytes").get<uint64_t>(); });
        const json& live = tj.at("live");
        if (live.is_string())
            t.alwaysLive = true;
        else {
            auto point = [&](const char* key) {
                auto it = points.find(live.at(key).get<std::string>());
                if (it == points.end())
                    diag.fail(p + "/live/" + key, fmt::format("expected the name of a compute, exchange, host or IPU-copy step, found \"{}\"",
                                                             live.at(key).get<std::string>()));
                return it->second;
            };
            t.from = point("from");
            t.to = point("to");
            if (t.from > t.to)
                diag.fail(p + "/live", "\"from\" must not come after \"to\" in program order");
        }
        program.tensors.push_back(std::move(t));
    }
    return program;
}

} // namespace

Schedule scheduleFromJson(const json& w, const std::string& pointer, const SystemParams& system, const Diagnostics& diag,
                          const StepCheck& check)
{
    Parser parser{diag, system.ipu, system, check, 0};
    Schedule schedule;
    schedule.samplesPerHostCall = w.at("samples");
    if (w.contains("steps") == w.contains("programs"))
        diag.fail(pointer, "expected exactly one of \"steps\" (one IPU) or \"programs\" (one per IPU)");
    if (w.contains("steps")) {
        schedule.programs.push_back(programFromJson(diag, parser, w.at("steps"), w.contains("tensors") ? &w.at("tensors") : nullptr, pointer));
        return schedule;
    }
    std::set<uint32_t> seen;
    const json& programs = w.at("programs");
    for (std::size_t i = 0; i < programs.size(); ++i) {
        const std::string p = fmt::format("{}/programs/{}", pointer, i);
        parser.ipu = programs[i].at("ipu");
        if (parser.ipu >= system.numIpus)
            diag.fail(p + "/ipu", fmt::format("expected an IPU of the system (0 to {}), found {}", system.numIpus - 1, parser.ipu));
        if (!seen.insert(parser.ipu).second)
            diag.fail(p + "/ipu", fmt::format("IPU {} already has a program", parser.ipu));
        const json& pj = programs[i];
        schedule.programs.push_back(programFromJson(diag, parser, pj.at("steps"), pj.contains("tensors") ? &pj.at("tensors") : nullptr, p));
    }
    return schedule;
}

} // namespace ipusim
