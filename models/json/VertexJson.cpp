// SPDX-License-Identifier: MIT
#include "models/json/VertexJson.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/VertexCosts.hpp"
#include "models/timing/VertexTable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

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
        // nlohmann holds a non-negative integer as unsigned, a negative one as signed.
        if (!v.is_number_integer() || (v.is_number_unsigned() ? v.get<uint64_t>() < minimum : v.get<int64_t>() < int64_t(minimum)) ||
            v.get<uint64_t>() > kMaxCount)
            m_diag.fail(m_ptr + "/" + key, fmt::format("expected integer from {} to {}, found {}", minimum, kMaxCount, v.dump()));
        const uint64_t n = v.get<uint64_t>();
        m_work *= (long double)std::max<uint64_t>(n, 1);
        m_sizes.push_back(fmt::format("{} {}", key, n));
        if (m_work > (long double)kMaxWork) // before any formula sees the counts
            m_diag.fail(m_ptr, fmt::format("the vertex's sizes ({}) multiply to {:.3g}, above 2^40 = {}: a vertex works on "
                                           "what one tile holds", fmt::join(m_sizes, " x "), double(m_work), kMaxWork));
        return n;
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
    [[noreturn]] void fail(const std::string& key, const std::string& what) const { m_diag.fail(m_ptr + "/" + key, what); }
    void finish()
    {
        for (const auto& [k, v] : m_params.items())
            if (!m_used.count(k))
                m_diag.fail(m_ptr + "/" + k, fmt::format("unknown key \"{}\" (allowed: {})", k, fmt::join(m_used, ", ")));
    }

private:
    // Counts fit the 32-bit fields the cost formulas take; their product bounds every term of
    // those formulas (polynomials of the counts with small constant factors), so 2^40 keeps
    // every price far inside 64 bits.
    static constexpr uint64_t kMaxCount = 4294967295u;
    static constexpr uint64_t kMaxWork = uint64_t(1) << 40;

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
    long double m_work = 1;            // the product of the counts read
    std::vector<std::string> m_sizes; // "positions 1024", for the message
};


costs::ConvShape convShape(const Diagnostics& diag, const std::string& ptr, ParamReader& r, const IpuParams& hw, bool nx1)
{
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
    s.wideLoads = r.flag("wide_loads", false);
    if (nx1) {
        s.kernelHeight = uint32_t(r.count("kernel_height"));
        s.kernelWidth = uint32_t(r.count("kernel_width", 1));
    }
    return s;
}

costs::PoolTileWork poolWork(ParamReader& r)
{
    costs::PoolTileWork w;
    w.positions = r.count("positions");
    w.rowWidth = r.count("row_width", w.positions);
    w.itemsPerRow = r.count("items_per_row", 1);
    w.stride = r.count("stride", 1);
    w.channelVectors = r.count("channel_vectors", 1);
    w.channelGroups = r.count("channel_groups", 1);
    return w;
}

ReduceOp reduceOp(ParamReader& r) { return *reduceOpNamed(r.word("op", reduceOpNames(), "add")); }

} // namespace

PricedVertex vertexCyclesFromJson(const Diagnostics& diag, const std::string& ptr, const std::string& name,
                                  const json& params, const IpuParams& hw)
{
    const std::optional<Vertex> vertex = vertexNamed(name);
    if (!vertex)
        diag.fail(ptr + "/vertex", fmt::format("unknown vertex \"{}\" (known: {})", name, fmt::join(vertexNames(), ", ")));
    ParamReader r(diag, ptr + "/params", params);
    const Vertex v = *vertex;
    auto priced = [&](uint64_t cycles, Codelet codelet) {
        r.finish();
        return PricedVertex{cycles, codelet};
    };
    switch (v) {
    case Vertex::ConvPartial1x1Out: return priced(costs::convPartial1x1Out(hw, convShape(diag, ptr, r, hw, false)), v);
    case Vertex::ConvPartialnx1: return priced(costs::convPartialNx1(hw, convShape(diag, ptr, r, hw, true)), v);
    case Vertex::UnaryOp1D:
    case Vertex::UnaryOp1DInPlace: {
        const costs::UnaryOpKind op = *unaryOpNamed(r.word("op", unaryOpNames()));
        const Precision type = r.precision("type");
        return priced(costs::unaryOp(hw, op, type, r.count("elements"), v == Vertex::UnaryOp1DInPlace), {v, op});
    }
    case Vertex::BinaryOp1D:
    case Vertex::BinaryOp1DInPlace: {
        const costs::BinaryOpKind op = *binaryOpNamed(r.word("op", binaryOpNames()));
        if (op == costs::BinaryOpKind::Equal && v == Vertex::BinaryOp1DInPlace)
            r.fail("op", "expected an op other than \"equal\": BinaryOp1DInPlace<EQUAL> exists for bool operands only");
        // Comparisons also run on int32 operands (packed sequence ids), at their own rate.
        if (op == costs::BinaryOpKind::Equal && r.word("type", {"fp16", "fp32", "int32"}) == "int32")
            return priced(costs::equalInt32(hw, r.count("elements")), {v, op});
        const Precision type = r.precision("type");
        return priced(costs::binaryOp(hw, op, type, r.count("elements"), v == Vertex::BinaryOp1DInPlace), {v, op});
    }
    case Vertex::BroadcastScalar1DInPlace: {
        const costs::BinaryOpKind op = *binaryOpNamed(r.word("op", {"add", "sub", "mul", "div"}));
        const Precision type = r.precision("type");
        return priced(costs::broadcastScalar(hw, op, type, r.count("elements")), {v, op});
    }
    case Vertex::NonLinearity1DInPlace: {
        r.word("nonlinearity", {"gelu"}); // popnn's forward vertices: the others run as popops UnaryOps
        const Precision type = r.precision("type");
        return priced(costs::geluNonLinearity(hw, type, r.count("elements")), {v, costs::NonLinearity::Gelu});
    }
    case Vertex::NonLinearityGrad1D: {
        const costs::NonLinearity f = *nonLinearityNamed(r.word("nonlinearity", nonLinearityNames()));
        const Precision type = r.precision("type");
        return priced(costs::nonLinearityGrad(hw, f, type, r.count("elements")), {v, f});
    }
    case Vertex::ScaledAddSupervisor: {
        const Precision type = r.precision("type");
        return priced(costs::scaledAdd(hw, type, r.count("elements")), v);
    }
    case Vertex::Cast1D: {
        if (r.word("from", {"fp16", "fp32", "bool"}) == "bool") {
            r.precision("to");
            return priced(costs::castFromBool(hw, r.count("elements")), v);
        }
        const Precision from = r.precision("from");
        const Precision to = r.precision("to");
        return priced(costs::cast(hw, from, to, r.count("elements")), v);
    }
    case Vertex::Fill: {
        const Precision type = r.precision("type");
        return priced(costs::fill(hw, type, r.count("elements")), v);
    }
    case Vertex::ReducePartials: {
        const ReduceOp op = reduceOp(r);
        const Precision partials = r.precision("partials");
        const uint64_t outputs = r.count("outputs");
        return priced(costs::reduce(hw, partials, outputs, r.count("partials_per_output")), {v, op});
    }
    case Vertex::ReduceSingleInput: {
        const ReduceOp op = reduceOp(r);
        const Precision partials = r.precision("partials");
        const Precision out = r.precision("output", partials);
        return priced(costs::singleInputReduce(hw, partials, out, r.count("partials_per_output")), {v, op});
    }
    case Vertex::ReduceStrided: {
        const ReduceOp op = reduceOp(r);
        const Precision partials = r.precision("partials");
        const Precision out = r.precision("output", partials);
        const uint64_t outputs = r.count("outputs");
        const uint64_t n = r.count("partials_per_output");
        return priced(costs::stridedReduce(hw, partials, out, outputs, n, r.count("stride", outputs)), {v, op});
    }
    case Vertex::ReduceContinuous: {
        const ReduceOp op = reduceOp(r);
        const Precision partials = r.precision("partials");
        const uint64_t rows = r.count("outputs");
        return priced(costs::reduceRows(hw, partials, rows, r.count("partials_per_output")), {v, op});
    }
    case Vertex::MaxPooling: return priced(costs::pooling(hw, costs::PoolVertex::Max, poolWork(r)), v);
    case Vertex::SumPooling: return priced(costs::pooling(hw, costs::PoolVertex::Sum, poolWork(r)), v);
    case Vertex::MaxPoolingGrad: return priced(costs::pooling(hw, costs::PoolVertex::MaxGrad, poolWork(r)), v);
    case Vertex::InverseStdDeviation: return priced(costs::inverseStdDeviation(hw, r.count("elements")), v);
    case Vertex::DropoutSupervisor: {
        const Precision type = r.precision("type");
        return priced(costs::dropout(hw, type, r.count("elements")), v);
    }
    case Vertex::EncodeOneHot: return priced(costs::encodeOneHot(hw, r.count("indices")), v);
    case Vertex::MultiSlice:
    case Vertex::MultiUpdateAdd: {
        const Precision type = r.precision("type");
        const uint64_t offsets = r.count("offsets");
        const uint64_t elements = r.count("elements");
        return priced(v == Vertex::MultiSlice ? costs::multiSlice(hw, type, offsets, elements)
                                              : costs::multiUpdateAdd(hw, type, offsets, elements), v);
    }
    case Vertex::Copy: {
        const Precision type = r.precision("type");
        return priced(costs::copy(hw, r.count("elements") * bytesOf(type), bytesOf(type)), v);
    }
    }
    throw std::logic_error("a vertex the table lists but the schedule reader does not price");
}

} // namespace ipusim
