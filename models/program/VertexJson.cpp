// SPDX-License-Identifier: MIT
#include "models/program/VertexJson.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/VertexCosts.hpp"

#include <fmt/format.h>

#include <algorithm>
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
        const json* found = lookup(key, fallback.has_value());
        if (!found)
            return *fallback;
        const json& v = *found;
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
        const json* found = lookup(key, fallback.has_value());
        if (!found)
            return *fallback;
        const json& v = *found;
        if (v.is_string() && std::find(allowed.begin(), allowed.end(), v.get<std::string>()) != allowed.end())
            return v.get<std::string>();
        m_diag.fail(m_ptr + "/" + key, fmt::format("expected one of {}, found {}", fmt::join(allowed, ", "), v.dump()));
    }
    bool flag(const std::string& key, bool fallback)
    {
        const json* found = lookup(key, true);
        if (!found)
            return fallback;
        if (!found->is_boolean())
            m_diag.fail(m_ptr + "/" + key, fmt::format("expected true or false, found {}", found->dump()));
        return found->get<bool>();
    }
    void finish()
    {
        for (const auto& [k, v] : m_params.items())
            if (!m_used.count(k))
                m_diag.fail(m_ptr + "/" + k, fmt::format("unknown key \"{}\" (allowed: {})", k, fmt::join(m_used, ", ")));
    }

private:
    /** The value of `key`, marked as used; nullptr when it is absent and `optional`. */
    const json* lookup(const std::string& key, bool optional)
    {
        m_used.insert(key);
        if (m_params.contains(key))
            return &m_params.at(key);
        if (!optional)
            m_diag.fail(m_ptr, fmt::format("missing required key \"{}\"", key));
        return nullptr;
    }

    const Diagnostics& m_diag;
    std::string m_ptr;
    const json& m_params;
    std::set<std::string> m_used;
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
        costs::UnaryOpKind op{};
        costs::parseUnaryOp(r.word("op", costs::unaryOpNames()), op);
        const Precision type = r.precision("type");
        const uint64_t elements = r.count("elements");
        cycles = costs::unaryOp(hw, op, type, elements, r.flag("in_place", false));
    } else if (vertex == "BinaryOp") {
        costs::BinaryOpKind op{};
        costs::parseBinaryOp(r.word("op", costs::binaryOpNames()), op);
        const Precision type = r.precision("type");
        const uint64_t elements = r.count("elements");
        cycles = costs::binaryOp(hw, op, type, elements, r.flag("in_place", false));
    } else if (vertex == "NonLinearity1D") {
        r.word("nonlinearity", {"gelu"}); // popnn's forward vertices: the others run as popops UnaryOps
        const Precision type = r.precision("type");
        cycles = costs::geluNonLinearity(hw, type, r.count("elements"));
    } else if (vertex == "NonLinearityGrad1D") {
        const std::string f = r.word("nonlinearity", {"relu", "sigmoid", "tanh", "gelu"});
        const costs::NonLinearity kind = f == "relu" ? costs::NonLinearity::Relu : f == "sigmoid" ? costs::NonLinearity::Sigmoid
                                         : f == "tanh" ? costs::NonLinearity::Tanh : costs::NonLinearity::Gelu;
        const Precision type = r.precision("type");
        cycles = costs::nonLinearityGrad(hw, kind, type, r.count("elements"));
    } else if (vertex == "ScaledAdd") {
        cycles = costs::scaledAdd(hw, r.precision("type"), r.count("elements"));
    } else if (vertex == "Cast") {
        Precision from = r.precision("from");
        cycles = costs::cast(hw, from, r.precision("to"), r.count("elements"));
    } else if (vertex == "Reduce") {
        Precision type = r.precision("type");
        uint64_t outputs = r.count("outputs");
        cycles = costs::reduce(hw, type, outputs, r.count("partials_per_output"));
    } else if (vertex == "ReduceSingleInput") {
        const Precision partials = r.precision("partials");
        const Precision out = r.precision("output", partials);
        cycles = costs::singleInputReduce(hw, partials, out, r.count("partials_per_output"));
    } else if (vertex == "ReduceStrided") {
        const Precision partials = r.precision("partials");
        const Precision out = r.precision("output", partials);
        const uint64_t outputs = r.count("outputs");
        const uint64_t n = r.count("partials_per_output");
        cycles = costs::stridedReduce(hw, partials, out, outputs, n, r.count("stride", outputs));
    } else if (vertex == "Fill") {
        const Precision type = r.precision("type");
        cycles = costs::fill(hw, type, r.count("elements"));
    } else if (vertex == "Pooling") {
        const std::string kind = r.word("pooling", {"max", "sum", "max_grad"});
        costs::PoolTileWork w;
        w.positions = r.count("positions");
        w.rowWidth = r.count("row_width", w.positions);
        w.itemsPerRow = r.count("items_per_row", 1);
        w.stride = r.count("stride", 1);
        w.channelVectors = r.count("channel_vectors", 1);
        w.channelGroups = r.count("channel_groups", 1);
        cycles = costs::pooling(hw, kind == "max" ? costs::PoolVertex::Max : kind == "sum" ? costs::PoolVertex::Sum : costs::PoolVertex::MaxGrad, w);
    } else {
        diag.fail(ptr + "/vertex", fmt::format("unknown vertex \"{}\" (known: ConvPartial1x1Out, ConvPartialnx1, UnaryOp, "
                                              "BinaryOp, NonLinearity1D, NonLinearityGrad1D, ScaledAdd, Cast, Fill, Reduce, ReduceSingleInput, "
                                              "ReduceStrided, Pooling)", vertex));
    }
    r.finish();
    return cycles;
}

} // namespace ipusim
