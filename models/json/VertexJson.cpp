// SPDX-License-Identifier: MIT
#include "models/json/VertexJson.hpp"

#include "models/common/CeilDiv.hpp"
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


// Each vertex's params, read into the call its row prices; every reader reads the keys its
// vertex takes, in the order errors report them missing.
using CallReader = VertexCall (*)(Vertex v, ParamReader& r, const IpuParams& hw);

VertexCall readConv(Vertex v, ParamReader& r, const IpuParams& hw)
{
    costs::ConvShape s;
    s.input = r.precision("input");
    s.partials = r.precision("partials", Precision::FP32);
    if (s.input == Precision::FP32 && s.partials == Precision::FP16)
        r.fail("partials", "fp32 inputs need fp32 partials");
    const AmpParams& amp = hw.amp(s.input, s.partials);
    s.positions = r.count("positions");
    s.inGroups = uint32_t(ceilDiv(r.count("in_chans"), amp.inChansPerGroup));
    s.outGroups = uint32_t(ceilDiv(r.count("out_chans"), amp.units));
    s.convGroups = uint32_t(r.count("conv_groups", 1));
    s.wideLoads = r.flag("wide_loads", false);
    if (v == Vertex::ConvPartialnx1) {
        s.kernelHeight = uint32_t(r.count("kernel_height"));
        s.kernelWidth = uint32_t(r.count("kernel_width", 1));
    }
    return {v, s};
}

ElementArgs elements(ParamReader& r)
{
    const Precision type = r.precision("type");
    return {type, r.count("elements")};
}

VertexCall readUnary(Vertex v, ParamReader& r, const IpuParams&)
{
    const costs::UnaryOpKind op = *unaryOpNamed(r.word("op", unaryOpNames()));
    return {{v, op}, elements(r)};
}

VertexCall readBinary(Vertex v, ParamReader& r, const IpuParams&)
{
    const costs::BinaryOpKind op = *binaryOpNamed(r.word("op", binaryOpNames()));
    const bool comparison = op == costs::BinaryOpKind::Equal || op == costs::BinaryOpKind::NotEqual || op == costs::BinaryOpKind::Greater ||
                            op == costs::BinaryOpKind::Less;
    if (comparison && v == Vertex::BinaryOp1DInPlace)
        r.fail("op", "expected an op other than a comparison (\"equal\", \"not_equal\", \"greater\", \"less\"): BinaryOp1DInPlace of a "
                     "comparison exists for bool operands only");
    // Comparisons also run on int32 operands (packed sequence ids), at their own rate.
    if (op == costs::BinaryOpKind::Equal && r.word("type", {"fp16", "fp32", "int32"}) == "int32")
        return {{v, op}, Int32Args{r.count("elements")}};
    return {{v, op}, elements(r)};
}

VertexCall readByScalar(Vertex v, ParamReader& r, const IpuParams&)
{
    const costs::BinaryOpKind op = *binaryOpNamed(r.word("op", {"add", "sub", "mul", "div"}));
    return {{v, op}, elements(r)};
}

VertexCall readMap(Vertex v, ParamReader& r, const IpuParams&)
{
    const costs::MapExpr e = *mapExprNamed(r.word("expression", mapExprNames()));
    return {{v, e}, elements(r)};
}

VertexCall readCompareScalar(Vertex v, ParamReader& r, const IpuParams&)
{
    // Out of place: the comparisons (bool out), and operands another op still reads.
    const costs::BinaryOpKind op = *binaryOpNamed(r.word("op", {"add", "sub", "mul", "div", "max", "not_equal", "greater"}));
    return {{v, op}, elements(r)};
}

VertexCall readNonLinearity(Vertex v, ParamReader& r, const IpuParams&)
{
    r.word("nonlinearity", {"gelu"}); // popnn's forward vertices: the others run as popops UnaryOps
    return {{v, costs::NonLinearity::Gelu}, elements(r)};
}

VertexCall readNonLinearityGrad(Vertex v, ParamReader& r, const IpuParams&)
{
    const costs::NonLinearity f = *nonLinearityNamed(r.word("nonlinearity", nonLinearityNames()));
    return {{v, f}, elements(r)};
}

VertexCall readElements(Vertex v, ParamReader& r, const IpuParams&) { return {v, elements(r)}; }

VertexCall readCast(Vertex v, ParamReader& r, const IpuParams&)
{
    CastArgs a;
    if (r.word("from", {"fp16", "fp32", "bool"}) != "bool")
        a.from = r.precision("from");
    a.to = r.precision("to");
    a.elements = r.count("elements");
    return {v, a};
}

VertexCall readReduce(Vertex v, ParamReader& r, const IpuParams&)
{
    const ReduceOp op = *reduceOpNamed(r.word("op", reduceOpNames(), "add"));
    ReduceArgs a;
    a.partials = r.precision("partials");
    const bool typedOutput = v == Vertex::ReduceSingleInput || v == Vertex::ReduceStrided;
    a.output = typedOutput ? r.precision("output", a.partials) : a.partials;
    if (v != Vertex::ReduceSingleInput)
        a.outputs = r.count("outputs");
    a.partialsPerOutput = r.count("partials_per_output");
    if (v == Vertex::ReduceStrided)
        a.stride = r.count("stride", a.outputs);
    return {{v, op}, a};
}

VertexCall readPool(Vertex v, ParamReader& r, const IpuParams&)
{
    costs::PoolTileWork w;
    w.positions = r.count("positions");
    w.rowWidth = r.count("row_width", w.positions);
    w.itemsPerRow = r.count("items_per_row", 1);
    w.stride = r.count("stride", 1);
    w.channelVectors = r.count("channel_vectors", 1);
    w.channelGroups = r.count("channel_groups", 1);
    return {v, w};
}

VertexCall readCount(Vertex v, ParamReader& r, const IpuParams&)
{
    return {v, CountArgs{r.count(v == Vertex::EncodeOneHot ? "indices" : "elements")}};
}

VertexCall readSlice(Vertex v, ParamReader& r, const IpuParams&)
{
    SliceArgs a;
    a.type = r.precision("type");
    a.offsets = r.count("offsets");
    a.elements = r.count("elements");
    return {v, a};
}

VertexCall readCopy(Vertex v, ParamReader& r, const IpuParams&)
{
    const Precision type = r.precision("type");
    return {v, CopyArgs{r.count("elements") * bytesOf(type), bytesOf(type)}};
}

/** The reader of a vertex's params: a vertex the table gains does not compile until it has one. */
CallReader readerOf(Vertex v)
{
    switch (v) {
    case Vertex::ConvPartial1x1Out:
    case Vertex::ConvPartialnx1: return readConv;
    case Vertex::UnaryOp1D:
    case Vertex::UnaryOp1DInPlace: return readUnary;
    case Vertex::BinaryOp1D:
    case Vertex::BinaryOp1DInPlace: return readBinary;
    case Vertex::BroadcastScalar1DInPlace: return readByScalar;
    case Vertex::BroadcastScalar1D: return readCompareScalar;
    case Vertex::ClampInPlace: return readElements;
    case Vertex::FusedMap: return readMap;
    case Vertex::SelectInPlace:
    case Vertex::Select: return readCount;
    case Vertex::NonLinearity1DInPlace: return readNonLinearity;
    case Vertex::NonLinearityGrad1D: return readNonLinearityGrad;
    case Vertex::ScaledAddSupervisor:
    case Vertex::Fill:
    case Vertex::DropoutSupervisor: return readElements;
    case Vertex::Cast1D: return readCast;
    case Vertex::ReducePartials:
    case Vertex::ReduceSingleInput:
    case Vertex::ReduceStrided:
    case Vertex::ReduceContinuous: return readReduce;
    case Vertex::MaxPooling:
    case Vertex::SumPooling:
    case Vertex::MaxPoolingGrad: return readPool;
    case Vertex::InverseStdDeviation:
    case Vertex::EncodeOneHot: return readCount;
    case Vertex::MultiSlice:
    case Vertex::MultiUpdateAdd: return readSlice;
    case Vertex::Copy: return readCopy;
    }
    throw std::logic_error("a vertex the table lists but the schedule reader does not read");
}

} // namespace

VertexCall vertexCallFromJson(const Diagnostics& diag, const std::string& ptr, const std::string& name, const json& params,
                              const IpuParams& hw)
{
    const std::optional<Vertex> vertex = vertexNamed(name);
    if (!vertex)
        diag.fail(ptr + "/vertex", fmt::format("unknown vertex \"{}\" (known: {})", name, fmt::join(vertexNames(), ", ")));
    ParamReader r(diag, ptr + "/params", params);
    const VertexCall call = readerOf(*vertex)(*vertex, r, hw);
    r.finish();
    return call;
}

} // namespace ipusim
