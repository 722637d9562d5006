// SPDX-License-Identifier: MIT
#include "sim/config/OnnxModel.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/config/OnnxBatch.hpp"
#include "sim/config/OnnxConstantFold.hpp"
#include "sim/config/OnnxFoldPass.hpp"

#include "workloads/graph/Activation.hpp"

#include <fmt/format.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <unordered_map>

namespace ipusim::config {
namespace {

/** Operand positions that hold weights (parameters), never data, by op type. */
bool weightPosition(const std::string& op, std::size_t k)
{
    if (op == "Conv" || op == "Gemm" || op == "LayerNormalization")
        return k >= 1;
    if (op == "BatchNormalization" || op == "InstanceNormalization")
        return k >= 1;
    if (op == "Gather")
        return k == 0;
    if (op == "LSTM" || op == "GRU") // W, R, B (and LSTM's peepholes P)
        return k == 1 || k == 2 || k == 3 || k == 7;
    return false;
}

/** Whether every element of a constant is zero. */
bool allZeros(const onnx::TensorProto& t)
{
    if (t.has_raw_data())
        return std::all_of(t.raw_data().begin(), t.raw_data().end(), [](char c) { return c == 0; });
    return std::all_of(t.float_data().begin(), t.float_data().end(), [](float v) { return v == 0.0f; }) &&
           std::all_of(t.double_data().begin(), t.double_data().end(), [](double v) { return v == 0.0; }) &&
           std::all_of(t.int32_data().begin(), t.int32_data().end(), [](int32_t v) { return v == 0; }) &&
           std::all_of(t.int64_data().begin(), t.int64_data().end(), [](int64_t v) { return v == 0; });
}

bool integerType(int32_t elemType)
{
    using T = onnx::TensorProto_DataType;
    return elemType == T::TensorProto_DataType_INT64 || elemType == T::TensorProto_DataType_INT32;
}

/** One dimension as the file gives it: a size, or unknown (a name or nothing). */
struct Dim
{
    std::optional<int64_t> size;
    std::string name;
};

std::vector<Dim> dimsOf(const onnx::TypeProto& type)
{
    std::vector<Dim> dims;
    if (!type.has_tensor_type() || !type.tensor_type().has_shape())
        return dims;
    for (const auto& d : type.tensor_type().shape().dim()) {
        Dim dim;
        if (d.has_dim_value() && d.dim_value() > 0)
            dim.size = d.dim_value();
        dim.name = d.has_dim_param() ? d.dim_param() : "";
        dims.push_back(dim);
    }
    return dims;
}

std::string dimsText(const std::vector<Dim>& dims)
{
    std::vector<std::string> parts;
    for (const auto& d : dims)
        parts.push_back(d.size ? std::to_string(*d.size) : (d.name.empty() ? "?" : d.name));
    return fmt::format("[{}]", fmt::join(parts, ", "));
}

class OnnxImporter
{
public:
    OnnxImporter(const OnnxSource& source, const Diagnostics& diag) : m_src(source), m_diag(diag) {}

    ModelSpec run()
    {
        try {
            read();
            collectTensors();
            findZeroStates();
            declareInputs();
        } catch (const Blocked& b) {
            failFile(b.what);
        }
        for (const auto& node : m_model.graph().node())
            convertOrRecord(node);
        failIfBlocked();
        try {
            checkBlocks();
            outputs();
        } catch (const Blocked& b) {
            failFile(b.what);
        }
        return std::move(m_spec);
    }

private:
    /** What stops a node's import: its origin and why. The import goes on past it, to list
     *  every one in one error. */
    struct Blocked
    {
        std::string what;
    };

    [[noreturn]] void failFile(const std::string& message) const { m_diag.fail("/workload/file", message); }

    [[noreturn]] void failNode(const onnx::NodeProto& node, const std::string& message) const
    {
        throw Blocked{fmt::format("{}: {}", originOf(node), message)};
    }

    /** Converts a node, or records what stops it. A node that reads a blocked value is not
     *  converted (its operands are unknown) but is listed if its op is unsupported too. */
    void convertOrRecord(const onnx::NodeProto& node)
    {
        if (knownWithoutImport(node) || m_zeroStateNodes.count(&node))
            return; // a constant or a shape computation: nothing downstream waits on its import
        const bool downstream = std::any_of(node.input().begin(), node.input().end(), [&](const std::string& in) { return m_blocked.count(in); });
        if (downstream) {
            if (!handlers().count(node.op_type()))
                m_blockers.emplace_back(node.op_type(), fmt::format("{}: unsupported op", originOf(node)));
        } else {
            try {
                return convert(node);
            } catch (const Blocked& b) {
                m_blockers.emplace_back(node.op_type(), b.what);
            }
        }
        for (const std::string& out : node.output())
            if (!out.empty()) // an omitted optional output
                m_blocked.insert(out);
    }

    /** A Constant, or a node whose every output shape inference's data propagation computed. */
    bool knownWithoutImport(const onnx::NodeProto& node) const
    {
        return node.op_type() == "Constant" ||
               (node.output_size() > 0 &&
                std::all_of(node.output().begin(), node.output().end(), [&](const std::string& o) { return m_shapeValues.count(o) > 0; }));
    }

    /** One error for every node that stands in the way. */
    void failIfBlocked() const
    {
        if (m_blockers.empty())
            return;
        // The supported ops, once, when some op is not one of them.
        const bool unsupported = std::any_of(m_blockers.begin(), m_blockers.end(), [](const auto& b) { return !handlers().count(b.first); });
        const std::string supported = unsupported ? fmt::format("supported: {}", fmt::join(supportedOnnxOps(), ", ")) : "";
        if (m_blockers.size() == 1)
            failFile(unsupported ? fmt::format("{}; {}", m_blockers[0].second, supported) : m_blockers[0].second);
        // How many of each op first (a transformer's list runs to hundreds), most first.
        std::map<std::string, std::size_t> count;
        for (const auto& [op, what] : m_blockers)
            ++count[op];
        std::vector<std::pair<std::string, std::size_t>> byCount(count.begin(), count.end());
        std::stable_sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        std::vector<std::string> counts, lines;
        for (const auto& [op, n] : byCount)
            counts.push_back(fmt::format("{} {}", op, n));
        for (const auto& [op, what] : m_blockers)
            lines.push_back(what);
        failFile(fmt::format("{} nodes stand in the way ({}), in graph order:\n  {}{}", m_blockers.size(), fmt::join(counts, ", "),
                             fmt::join(lines, "\n  "), unsupported ? "\n" + supported : ""));
    }

    std::string nameOf(const onnx::NodeProto& node) const { return node.name().empty() ? node.output(0) : node.name(); }
    std::string originOf(const onnx::NodeProto& node) const { return fmt::format("ONNX node \"{}\" ({})", nameOf(node), node.op_type()); }

    void read()
    {
        std::ifstream in(m_src.path, std::ios::binary);
        if (!in)
            failFile(fmt::format("cannot read ONNX model \"{}\"", m_src.path));
        if (!m_model.ParseFromIstream(&in))
            failFile(fmt::format("\"{}\" is not an ONNX model (a ModelProto)", m_src.path));
        int64_t opset = -1;
        for (const auto& o : m_model.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx")
                opset = o.version();
        if (opset < 0)
            failFile("expected an opset of the default ONNX domain (13 to 17), found none");
        if (opset < 13 || opset > 17)
            failFile(fmt::format("expected opset 13 to 17 (torch.onnx.export(..., opset_version=13)), found {}", opset));
        checkDivisors();
        try {
            // Constants folded, and with data propagation the values of shape computations
            // (Shape, Gather, Concat, ... as torch writes them for x.size() or chunk) known.
            m_shapeValues = foldModelConstants(m_model);
        } catch (const std::exception& e) {
            failFile(fmt::format("ONNX shape inference failed on \"{}\": {}", m_src.path, e.what()));
        }
    }

    /** ONNX's shape inference divides by strides, dilations, kernel sizes and groups without
     *  checking them: a zero would stop the process, so they are checked first. */
    void checkDivisors() const
    {
        for (const auto& node : m_model.graph().node())
            for (const auto& a : node.attribute()) {
                const bool divisors = a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape";
                if (divisors && std::any_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v < 1; }))
                    failNode(node, fmt::format("expected {} of 1 to 65535, found [{}]", a.name(), fmt::join(a.ints(), ", ")));
                if (a.name() == "group" && a.i() < 1)
                    failNode(node, fmt::format("expected a group count of at least 1, found {}", a.i()));
            }
    }

    /** Shapes and types of every named value, weights and constants. */
    void collectTensors()
    {
        const auto& g = m_model.graph();
        for (const auto& init : g.initializer()) {
            m_params.insert(init.name());
            m_dims[init.name()] = {};
            for (int64_t d : init.dims())
                m_dims[init.name()].push_back({d, ""});
            if (init.dims_size() <= 1 && (init.dims_size() == 0 || init.dims(0) <= 16)) // shapes and scalars, not weights
                m_constants[init.name()] = init;
        }
        for (const auto& vi : g.value_info())
            m_dims[vi.name()] = dimsOf(vi.type());
        for (const auto& vi : g.output())
            m_dims[vi.name()] = dimsOf(vi.type());
        for (const auto* list : {&g.value_info(), &g.output(), &g.input()})
            for (const auto& vi : *list)
                m_types[vi.name()] = vi.type().tensor_type().elem_type();
        for (const auto& vi : g.input())
            if (!m_params.count(vi.name())) // an initializer's own dims stand
                m_dims[vi.name()] = dimsOf(vi.type());
        for (const auto& node : g.node())
            if (node.op_type() == "Constant")
                for (const auto& a : node.attribute())
                    if (a.name() == "value")
                        m_constants[node.output(0)] = a.t();
        // torch.onnx.export without parameters makes the weights graph inputs: an input is a
        // weight when everything that reads it reads a weight.
        for (const auto& node : g.node()) {
            for (int k = 0; k < node.input_size(); ++k)
                m_readers[node.input(k)].push_back({&node, k});
            for (const auto& out : node.output())
                m_producers[out] = &node;
        }
        declareBuffers();
        for (const auto& vi : g.input()) {
            const bool isData = !m_buffers.count(vi.name()) && (m_src.inputs.count(vi.name()) > 0 || !weightLike(vi.name()));
            if (isData && !m_params.count(vi.name()))
                m_dataInputs.push_back(vi);
            else
                m_params.insert(vi.name());
        }
        // The batch is the first data input's leading dimension. An input without it (a relative
        // position index buffer [49 * 49] beside images [1, 3, H, W]) is a buffer: a weight.
        const auto batchOfInput = [](const onnx::ValueInfoProto& vi) {
            const std::vector<Dim> dims = dimsOf(vi.type());
            return dims.empty() ? std::optional<int64_t>() : dims[0].size;
        };
        if (!m_dataInputs.empty()) {
            const auto batch = batchOfInput(m_dataInputs.front());
            const auto buffer = [&](const onnx::ValueInfoProto& vi) {
                return batch && !m_src.inputs.count(vi.name()) && batchOfInput(vi) && *batchOfInput(vi) != *batch;
            };
            for (const auto& vi : m_dataInputs)
                if (buffer(vi))
                    m_params.insert(vi.name());
            m_dataInputs.erase(std::remove_if(m_dataInputs.begin(), m_dataInputs.end(), buffer), m_dataInputs.end());
        }
    }

    /** Whether every reader of `value` takes it as a weight: in a weight position, as an operand
     *  of an element-wise op that is 1-D (a bias) or of lower rank than the other operand (data
     *  carries the batch: a per-channel [C, 1, 1] scale), or through a transpose, identity,
     *  unsqueeze or slice whose output is read as a weight (a causal mask buffer's [:S, :S]). */
    bool weightLike(const std::string& value) const
    {
        auto it = m_readers.find(value);
        if (it == m_readers.end())
            return false;
        for (const auto& [node, k] : it->second) {
            const std::string& op = node->op_type();
            const bool elementwise = op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
            const bool lowerRank = elementwise && node->input_size() == 2 && rankOf(value) < rankOf(node->input(1 - k));
            if (weightPosition(op, std::size_t(k)) || (op == "MatMul" && k == 1) || (elementwise && rankOf(value) == 1) || lowerRank)
                continue;
            if ((op == "Transpose" || op == "Identity" || op == "Unsqueeze" || op == "Concat" || (op == "Slice" && k == 0)) &&
                weightLike(node->output(0)))
                continue;
            return false;
        }
        return true;
    }

    /** The config's buffers: graph inputs, not data, each a model tensor that is not learned. */
    void declareBuffers()
    {
        const auto& g = m_model.graph();
        for (std::size_t i = 0; i < m_src.buffers.size(); ++i) {
            const std::string& name = m_src.buffers[i];
            const bool input = std::any_of(g.input().begin(), g.input().end(), [&](const auto& vi) { return vi.name() == name; }) ||
                               std::any_of(g.initializer().begin(), g.initializer().end(), [&](const auto& t) { return t.name() == name; });
            if (!input)
                m_diag.fail(fmt::format("/workload/buffers/{}", i),
                            fmt::format("expected the name of a graph input or initializer of \"{}\", found \"{}\"", m_src.path, name));
            if (m_src.inputs.count(name))
                m_diag.fail(fmt::format("/workload/buffers/{}", i), fmt::format("expected a buffer or a data input, found \"{}\" as both (in /workload/inputs too)", name));
            m_params.insert(name);
            m_buffers.insert(name);
        }
    }

    /** torch exports an RNN's default initial state as zeros: a Constant, sliced per layer and
     *  expanded over the batch. Such a value is a zero state, and the nodes making it are not
     *  imported when nothing else reads them (the layer starts from zeros on the IPU). */
    void findZeroStates()
    {
        for (const auto& node : m_model.graph().node())
            if (node.op_type() == "LSTM" || node.op_type() == "GRU")
                for (int k : {5, 6})
                    if (k < node.input_size() && !node.input(k).empty())
                        zeroFromConstants(node.input(k));
        // Only nodes every reader of which is another of them or an initial state are left out
        // (dropping one may leave its own inputs' nodes with another reader: until none drops).
        for (bool changed = true; changed;) {
            changed = false;
            for (auto it = m_zeroStateNodes.begin(); it != m_zeroStateNodes.end();)
                if (readOnlyAsZeroState(**it)) {
                    ++it;
                } else {
                    it = m_zeroStateNodes.erase(it);
                    changed = true;
                }
        }
    }

    /** Whether only zero-state nodes and recurrent ops' initial states read `node`'s outputs. */
    bool readOnlyAsZeroState(const onnx::NodeProto& node) const
    {
        for (const std::string& out : node.output()) {
            if (isGraphOutput(out))
                return false;
            auto readers = m_readers.find(out);
            if (readers == m_readers.end())
                continue;
            for (const auto& [reader, k] : readers->second) {
                const bool state = (reader->op_type() == "LSTM" || reader->op_type() == "GRU") && k >= 5;
                if (!state && !m_zeroStateNodes.count(reader))
                    return false;
            }
        }
        return true;
    }

    /** Whether `value` is zeros computed from constants alone through views and copies. */
    bool zeroFromConstants(const std::string& value)
    {
        if (m_zeroStates.count(value) || m_shapeValues.count(value))
            return true;
        auto p = m_producers.find(value);
        if (p == m_producers.end())
            return false;
        const onnx::NodeProto& node = *p->second;
        static const std::set<std::string> views = {"Slice", "Expand", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Identity", "Cast", "Transpose", "Tile"};
        bool zero = false;
        if (node.op_type() == "Constant") {
            auto c = m_constants.find(value);
            zero = c != m_constants.end() && allZeros(c->second);
        } else if (views.count(node.op_type())) {
            zero = !m_params.count(node.input(0)) && zeroFromConstants(node.input(0));
            for (int k = 1; zero && k < node.input_size(); ++k) // a Slice's bounds, an Expand's shape
                zero = node.input(k).empty() || knownIntegers(node.input(k)).has_value() || m_shapeValues.count(node.input(k)) ||
                       zeroFromConstants(node.input(k));
            if (zero)
                m_zeroStateNodes.insert(&node);
        }
        if (zero)
            m_zeroStates.insert(value);
        return zero;
    }

    /** `out`, computed from model tensor `from` alone (a part, a view, a transpose of it), is a
     *  model tensor too, a buffer when `from` is. */
    void deriveModelTensor(const std::string& out, const std::string& from)
    {
        m_params.insert(out);
        if (m_buffers.count(from))
            m_buffers.insert(out);
    }

    /** A layer's weight is learned (graph layers have no frozen weights): a buffer in a
     *  convolution's, linear layer's or embedding's weight position is learned there, as a
     *  buffer in a bias or norm position is. */
    void learnedAt(const onnx::NodeProto& node, int k) { m_buffers.erase(node.input(k)); }

    void declareInputs()
    {
        for (const auto& input : m_src.inputs) {
            const std::string& name = input.first; // a structured binding cannot be captured in C++17
            const bool found = std::any_of(m_dataInputs.begin(), m_dataInputs.end(), [&](const auto& vi) { return vi.name() == name; });
            if (!found)
                m_diag.fail("/workload/inputs/" + name, fmt::format("expected the name of a graph input of \"{}\"", m_src.path));
        }
        for (const auto& vi : m_dataInputs) {
            const std::vector<Dim> dims = dimsOf(vi.type());
            if (dims.empty())
                m_diag.fail("/workload/inputs", fmt::format("expected the per-sample shape of input \"{}\": the file gives none", vi.name()));
            ModelInput in;
            in.name = vi.name();
            in.integer = integerType(vi.type().tensor_type().elem_type());
            in.eightBit = m_src.eightBitInputs && !in.integer;
            auto given = m_src.inputs.find(vi.name());
            if (given != m_src.inputs.end()) {
                if (given->second.size() + 1 != dims.size())
                    m_diag.fail("/workload/inputs/" + vi.name(), fmt::format("expected {} dimension{} (the file's input is {}, the batch first), found {}",
                                                                           dims.size() - 1, dims.size() == 2 ? "" : "s", dimsText(dims),
                                                                           given->second.size()));
                in.shape = given->second;
            } else {
                for (std::size_t k = 1; k < dims.size(); ++k) {
                    if (!dims[k].size)
                        m_diag.fail("/workload/inputs", fmt::format("expected the per-sample shape of input \"{}\": the file leaves dimension {} "
                                                                    "of {} dynamic",
                                                                    vi.name(), k, dimsText(dims)));
                    in.shape.push_back(uint64_t(*dims[k].size));
                }
            }
            if (m_spec.inputs.empty())
                m_fileBatch = dims[0].size.value_or(-1);
            m_values[vi.name()] = vi.name();
            m_spec.inputs.push_back(in);
        }
    }

    // --- attributes ---------------------------------------------------------------------

    const onnx::AttributeProto* attr(const onnx::NodeProto& node, const std::string& name) const
    {
        for (const auto& a : node.attribute())
            if (a.name() == name)
                return &a;
        return nullptr;
    }
    int64_t intAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) const
    {
        const auto* a = attr(node, name);
        return a ? a->i() : fallback;
    }
    std::vector<int64_t> intsAttr(const onnx::NodeProto& node, const std::string& name, std::vector<int64_t> fallback) const
    {
        const auto* a = attr(node, name);
        return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
    }

    /** A 2-D attribute as [height, width]. */
    std::array<uint32_t, 2> pairAttr(const onnx::NodeProto& node, const std::string& name, std::array<uint32_t, 2> fallback) const
    {
        const auto v = intsAttr(node, name, {});
        if (v.empty())
            return fallback;
        if (v.size() != 2)
            failNode(node, fmt::format("expected a 2-D {} (an NCHW input), found {} values", name, v.size()));
        if (v[0] < 1 || v[1] < 1 || v[0] > 65535 || v[1] > 65535)
            failNode(node, fmt::format("expected {} of 1 to 65535, found [{}, {}]", name, v[0], v[1]));
        return {uint32_t(v[0]), uint32_t(v[1])};
    }

    /** ONNX pads [top, left, bottom, right] as torch's symmetric padding. */
    std::array<uint32_t, 2> padsAttr(const onnx::NodeProto& node) const
    {
        const auto* autoPad = attr(node, "auto_pad");
        if (autoPad && autoPad->s() != "NOTSET")
            failNode(node, fmt::format("expected explicit pads, found auto_pad {}", autoPad->s()));
        const auto p = intsAttr(node, "pads", {0, 0, 0, 0});
        if (p.size() != 4 || p[0] != p[2] || p[1] != p[3])
            failNode(node, fmt::format("expected the same padding on both sides of each dimension, found pads [{}]", fmt::join(p, ", ")));
        if (p[0] < 0 || p[1] < 0 || p[0] > 65535 || p[1] > 65535)
            failNode(node, fmt::format("expected pads of 0 to 65535, found [{}]", fmt::join(p, ", ")));
        // A zero Pad before this node (pad()) widens its padding.
        auto extra = m_padOf.find(node.input(0));
        if (extra == m_padOf.end())
            return {uint32_t(p[0]), uint32_t(p[1])};
        return {uint32_t(p[0]) + extra->second[0], uint32_t(p[1]) + extra->second[1]};
    }

    std::vector<int64_t> dimsOfParam(const onnx::NodeProto& node, int k) const
    {
        const std::string& name = node.input(k);
        if (!m_params.count(name))
            failNode(node, fmt::format("expected input {} (\"{}\") to be a weight of the model, not computed", k, name));
        std::vector<int64_t> out;
        auto it = m_dims.find(name);
        if (it != m_dims.end())
            for (const auto& d : it->second)
                out.push_back(d.size.value_or(-1));
        if (out.empty() || std::count(out.begin(), out.end(), -1))
            failNode(node, fmt::format("expected a known shape for weight \"{}\"", name));
        return out;
    }

    /** The rank of a value (from shape inference), or 0 when unknown. */
    std::size_t rankOf(const std::string& value) const
    {
        auto it = m_dims.find(value);
        return it == m_dims.end() ? 0 : it->second.size();
    }

    /** The value of a constant (a Constant node or an initializer with data), as integers. */
    std::optional<std::vector<int64_t>> constantInts(const std::string& name) const
    {
        auto shape = m_shapeValues.find(name);
        if (shape != m_shapeValues.end())
            return shape->second;
        auto it = m_constants.find(name);
        if (it == m_constants.end())
            return std::nullopt;
        const onnx::TensorProto& t = it->second;
        return t.data_type() == onnx::TensorProto_DataType_INT64 ? onnx::ParseData<int64_t>(&t) : std::vector<int64_t>();
    }

    /** The value of a single-element floating-point constant (given or computed). */
    std::optional<double> constantScalar(const std::string& name) const
    {
        const auto t = scalarConstant(name) ? knownTensor(name) : std::nullopt;
        return t && t->real() ? std::optional<double>(t->values[0]) : std::nullopt;
    }

    /** Whether a value is a single-element constant (a scalar operand), given or folded. */
    bool scalarConstant(const std::string& name) const
    {
        auto it = m_constants.find(name);
        if (it == m_constants.end())
            return false;
        int64_t n = 1;
        for (int64_t d : it->second.dims())
            n *= d;
        return n == 1;
    }

    // --- nodes ---------------------------------------------------------------------------

    /** The layer reading value `name`. */
    std::string valueOf(const onnx::NodeProto& node, int k) const
    {
        const std::string& name = node.input(k);
        auto it = m_values.find(name);
        if (it != m_values.end())
            return it->second;
        if (m_params.count(name))
            failNode(node, fmt::format("expected input {} (\"{}\") to be data, found a weight: broadcasting a learned tensor is not modelled yet", k, name));
        if (m_constants.count(name) || m_shapeValues.count(name))
            failNode(node, fmt::format("expected input {} (\"{}\") to be data, found a constant: a constant tensor operand is not modelled yet", k, name));
        failNode(node, fmt::format("input {} (\"{}\") is no graph input and no earlier node's output", k, name));
    }

    LayerSpec layerFor(const onnx::NodeProto& node, LayerKind kind, std::vector<int> inputs)
    {
        LayerSpec l;
        l.name = nameOf(node);
        if (m_layerNames.count(l.name))
            l.name += "#" + std::to_string(m_layerNames.size());
        m_layerNames.insert(l.name);
        l.kind = kind;
        l.origin = originOf(node);
        for (int k : inputs)
            l.inputs.push_back(valueOf(node, k));
        const OnnxBlock* block = blockOf(l.name);
        if (block) {
            l.block = block->name;
            l.ipu = block->ipu;
            l.ipuPointer = fmt::format("/workload/blocks/{}/ipu", block - m_src.blocks.data());
        }
        return l;
    }

    /** The block whose prefix is the longest that starts `name`. */
    const OnnxBlock* blockOf(const std::string& name)
    {
        std::optional<std::size_t> best;
        for (std::size_t i = 0; i < m_src.blocks.size(); ++i) {
            const OnnxBlock& b = m_src.blocks[i];
            if (name.rfind(b.prefix, 0) == 0 && (!best || b.prefix.size() > m_src.blocks[*best].prefix.size()))
                best = i;
        }
        if (!best)
            return nullptr;
        m_usedBlocks.insert(*best);
        return &m_src.blocks[*best];
    }

    /** Whether `node` is the only reader of `value` and `value` is no graph output. */
    bool isGraphOutput(const std::string& value) const
    {
        return std::any_of(m_model.graph().output().begin(), m_model.graph().output().end(),
                           [&](const auto& o) { return o.name() == value; });
    }

    bool onlyReader(const std::string& value, const onnx::NodeProto& node) const
    {
        auto it = m_readers.find(value);
        return !isGraphOutput(value) && it != m_readers.end() && it->second.size() == 1 && it->second[0].first == &node;
    }

    bool scalarNear(const std::string& value, double expected) const
    {
        const auto v = constantScalar(value);
        return v && std::abs(*v - expected) < 1e-3 * std::abs(expected);
    }

    /** torch's exact GELU as torch.onnx.export writes it, x / sqrt(2), Erf, + 1, x times that,
     *  times 0.5, from its first node: one gelu layer, as PopTorch lowers both GELU forms to
     *  popnn's GELU. */
    bool geluErf(const onnx::NodeProto& div)
    {
        if (!scalarNear(div.input(1), std::sqrt(2.0)))
            return false;
        const std::string& x = div.input(0);
        const onnx::NodeProto* erf = soleReader(div.output(0), "Erf");
        const onnx::NodeProto* plusOne = erf ? soleReader(erf->output(0), "Add") : nullptr;
        if (!plusOne || !scalarNear(otherOperand(*plusOne, erf->output(0)), 1.0))
            return false;
        const onnx::NodeProto* times = soleReader(plusOne->output(0), "Mul");
        const onnx::NodeProto* half = times && otherOperand(*times, plusOne->output(0)) == x ? soleReader(times->output(0), "Mul") : nullptr;
        if (!half || !scalarNear(otherOperand(*half, times->output(0)), 0.5))
            return false;
        LayerSpec l = layerFor(div, LayerKind::Gelu, {0});
        l.origin = fmt::format("ONNX nodes \"{}\" to \"{}\" (GELU, erf form)", nameOf(div), nameOf(*half));
        m_fused.insert({erf, plusOne, times, half});
        m_values[half->output(0)] = l.name;
        setBatch(half->output(0), batchOf(x));
        m_spec.layers.push_back(std::move(l));
        return true;
    }

    /** The layer whose output `value` is, if it is the last layer so far (nothing read it yet
     *  that a fused bias would change). */
    LayerSpec* producer(const std::string& value)
    {
        auto it = m_values.find(value);
        if (it == m_values.end() || m_spec.layers.empty() || m_spec.layers.back().name != it->second)
            return nullptr;
        return &m_spec.layers.back();
    }

    void add(const onnx::NodeProto& node, LayerSpec l)
    {
        m_values[node.output(0)] = l.name;
        m_spec.layers.push_back(std::move(l));
        inheritBatch(node, node.output(0));
    }

    // --- the batch (OnnxBatch.hpp) ------------------------------------------------------

    /** Data operands, not weights or constants. */
    bool isData(const std::string& value) const { return m_values.count(value) && !m_params.count(value); }

    BatchAt batchOf(const std::string& value) const
    {
        auto it = m_batch.find(value);
        return it == m_batch.end() ? BatchAt{} : it->second;
    }

    void setBatch(const std::string& value, BatchAt at)
    {
        if (at == BatchAt{})
            m_batch.erase(value);
        else
            m_batch[value] = at;
    }

    /** An element-wise or per-row op's output: the batch where its first data operand has it. */
    void inheritBatch(const onnx::NodeProto& node, const std::string& out)
    {
        for (const std::string& in : node.input())
            if (isData(in))
                return setBatch(out, batchOf(in));
    }

    /** A value's shape as the file gives or infers it, for messages ("[?]" when unknown). */
    std::string shapeText(const std::string& value) const
    {
        auto it = m_dims.find(value);
        return it == m_dims.end() || it->second.empty() ? "[?]" : dimsText(it->second);
    }

    /** A value's full shape, when every dimension is known. */
    std::optional<std::vector<int64_t>> fullDims(const std::string& value) const
    {
        auto it = m_dims.find(value);
        if (it == m_dims.end() || it->second.empty())
            return std::nullopt;
        std::vector<int64_t> out;
        for (const Dim& d : it->second) {
            if (!d.size)
                return std::nullopt;
            out.push_back(*d.size);
        }
        return out;
    }

    /** Input k's full shape, where the batch is moved or folded (the file must give it). */
    std::vector<int64_t> knownDims(const onnx::NodeProto& node, int k) const
    {
        const auto dims = fullDims(node.input(k));
        if (!dims || m_fileBatch < 1)
            failNode(node, fmt::format("expected a known shape of input {} (\"{}\") and batch: shape inference left it {}", k,
                                       node.input(k), shapeText(node.input(k))));
        return *dims;
    }

    /** Whether data value `value` has the batch as its leading dimension, as layers do. */
    bool batchLeads(const std::string& value) const
    {
        if (batchOf(value) == BatchAt{})
            return true;
        const auto dims = fullDims(value);
        return dims && leading(*dims, batchOf(value), m_fileBatch);
    }

    /** Ops that follow a batch folded into another dimension or moved: the rest need it leading. */
    static bool followsTheBatch(const std::string& op)
    {
        static const std::set<std::string> ops = {"Reshape", "Transpose", "MatMul", "Einsum", "Gemm", "Add", "Sub", "Mul", "Div", "Softmax",
                                                  "LogSoftmax", "LayerNormalization", "Dropout", "Identity", "Split", "Slice", "Concat", "Gather",
                                                  "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "LSTM", "GRU"};
        return ops.count(op) || std::any_of(activationTable().begin(), activationTable().end(),
                                            [&](const ActivationRow& a) { return op == a.onnxName; });
    }

    void expectLeadingBatch(const onnx::NodeProto& node) const
    {
        if (!followsTheBatch(node.op_type()))
            expectLeadingBatchOperands(node);
    }

    void expectLeadingBatchOperands(const onnx::NodeProto& node) const
    {
        for (int k = 0; k < node.input_size(); ++k)
            if (isData(node.input(k)) && !batchLeads(node.input(k)))
                failNode(node, fmt::format("expected the batch as the first dimension of input {} (\"{}\" {}, the batch in dimension {}): "
                                           "{} of a folded or moved batch is not modelled yet",
                                           k, node.input(k), shapeText(node.input(k)), batchOf(node.input(k)).dim,
                                           node.op_type()));
    }

    /** Data operands of one op (an element-wise op, a matmul) must hold the batch alike (a
     *  leading batch and a batch of one left out are alike: their per-sample views agree). */
    void expectOneBatch(const onnx::NodeProto& node) const
    {
        std::optional<int> first;
        for (int k = 0; k < node.input_size(); ++k)
            if (isData(node.input(k))) {
                const std::string& in = node.input(k);
                const bool alike = !first || batchOf(node.input(*first)) == batchOf(in) || (batchLeads(node.input(*first)) && batchLeads(in));
                if (!alike)
                    failNode(node, fmt::format("expected the batch in the same place in every data operand: input {} (\"{}\" {}) has it "
                                               "elsewhere than input {} (\"{}\" {})",
                                               k, in, shapeText(in), *first, node.input(*first), shapeText(node.input(*first))));
                first = first.value_or(k);
            }
    }

    /** ONNX axis `axis` of data input k as a layer's axis (counted with the batch first). */
    uint32_t layerAxisOf(const onnx::NodeProto& node, int64_t axis, int k = 0) const
    {
        const std::string& value = node.input(k);
        const auto rank = int64_t(rankOf(value));
        if (axis < 0)
            axis += rank;
        if (batchOf(value) == BatchAt{}) { // the batch leads: the axis as ONNX counts it
            if (axis < 1 || (rank && axis >= rank))
                failNode(node, fmt::format("expected an axis after the batch (1 to {}), found {}", rank - 1, axis));
            return uint32_t(axis);
        }
        const auto dims = knownDims(node, k);
        if (axis < 0 || axis >= rank)
            failNode(node, fmt::format("expected an axis of 0 to {}, found {}", rank - 1, axis));
        const auto at = layerAxis(dims, batchOf(value), m_fileBatch, std::size_t(axis));
        if (!at)
            failNode(node, fmt::format("expected an axis other than the batch's: dimension {} of {} holds the batch", axis,
                                       shapeText(value)));
        return *at;
    }

    /** A zero pad of an image's height and width, the same on both sides, read by convolutions
     *  or poolings only (torch writes F.pad before a convolution, and an average pooling's
     *  count_include_pad, as one): the padding of each reader, whose windows then cover it.
     *  PopART's PadInplace makes the pad itself a view (no vertex runs). Any other pad (another
     *  constant, reflect or edge, of any dimension after the batch) is a pad layer. */
    void pad(const onnx::NodeProto& node)
    {
        const auto* modeAttr = attr(node, "mode");
        const std::string mode = modeAttr ? modeAttr->s() : "constant";
        if (mode != "constant" && mode != "reflect" && mode != "edge")
            failNode(node, fmt::format("expected mode \"constant\", \"reflect\" or \"edge\", found \"{}\"", mode));
        const auto pads = node.input_size() > 1 ? constantInts(node.input(1)) : std::nullopt;
        if (!pads || pads->size() % 2 != 0)
            failNode(node, "expected constant pads (a shape computed in the graph is not supported)");
        if (node.input_size() > 3 && !node.input(3).empty())
            failNode(node, "expected pads of every dimension (no axes input)");
        const bool zeros = node.input_size() < 3 || node.input(2).empty() || constantScalar(node.input(2)).value_or(1.0) == 0.0;
        const std::size_t rank = pads->size() / 2;
        const auto& p = *pads;
        if (std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; }))
            return alias(node);
        if (std::any_of(p.begin(), p.end(), [](int64_t v) { return v < 0 || v > 65535; }))
            failNode(node, fmt::format("expected pads of 0 to 65535 (a negative pad crops), found [{}]", fmt::join(p, ", ")));
        if (mode == "constant" && zeros && readByWindowsOnly(node, rank)) {
            m_padOf[node.output(0)] = {uint32_t(p[rank - 2]), uint32_t(p[rank - 1])};
            return alias(node);
        }
        if (p[0] != 0 || p[rank] != 0)
            failNode(node, fmt::format("expected no padding of the batch (dimension 0), found pads [{}]", fmt::join(p, ", ")));
        LayerSpec l = layerFor(node, LayerKind::Pad, {0});
        for (std::size_t d = 1; d < rank; ++d)
            l.pads.insert(l.pads.end(), {uint64_t(p[d]), uint64_t(p[rank + d])});
        l.padMode = mode == "reflect" ? PadMode::Reflect : mode == "edge" ? PadMode::Edge : PadMode::Constant;
        add(node, l);
    }

    /** Whether a pad of the last two dimensions, the same on both sides, is read by convolutions
     *  and poolings only (as their padding): their windows cover it. */
    bool readByWindowsOnly(const onnx::NodeProto& node, std::size_t rank) const
    {
        const auto p = *constantInts(node.input(1));
        for (std::size_t d = 0; d < rank; ++d)
            if ((d + 2 < rank && (p[d] != 0 || p[rank + d] != 0)) || p[d] != p[rank + d])
                return false;
        auto readers = m_readers.find(node.output(0));
        return rank >= 2 && !isGraphOutput(node.output(0)) && readers != m_readers.end() &&
               std::all_of(readers->second.begin(), readers->second.end(), [](const auto& r) {
                   const std::string& op = r.first->op_type();
                   return r.second == 0 && (op == "Conv" || op == "AveragePool" || op == "MaxPool");
               });
    }

    /** A node that only renames its input (Identity, a Dropout in inference export). */
    void alias(const onnx::NodeProto& node)
    {
        m_values[node.output(0)] = valueOf(node, 0);
        setBatch(node.output(0), batchOf(node.input(0)));
    }

public:
    using Handler = void (OnnxImporter::*)(const onnx::NodeProto&);

    /** One supported op: its handler and what it becomes (the op table, onnxOpTable). */
    struct Row
    {
        const char* op;
        Handler handler;
        std::vector<std::string> graphOps; // the graph ops it may become; none: folded away
        const char* how;
    };

    /** Every supported op (beside Constant, which is folded away), in ONNX op order. */
    static const std::vector<Row>& rows()
    {
        static const std::vector<Row> table = [] {
            using I = OnnxImporter;
            std::vector<Row> t = {
                {"Add", &I::binary, {"add", "scale", "parameter"}, "one shape or numpy broadcasting of one operand; a weight operand is a learned `parameter`, a scalar constant a `scale`; after `MatMul` of a weight, a bias: one `linear`"},
                {"AveragePool", &I::pool, {"avg_pool2d"}, "2-D, floor or ceil mode"},
                {"BatchNormalization", &I::batchNorm, {"batch_norm"}, "training or inference statistics"},
                {"Concat", &I::concat, {"concat"}, "of one input: that input; of weights only (an RNN's packed gates): a weight; a weight operand (a class token) repeats over the batch"},
                {"Conv", &I::conv, {"conv2d"}, "2-D, symmetric padding"},
                {"Div", &I::binary, {"div", "scale", "reciprocal"}, "as `Add`; by a scalar constant: a `scale`; a scalar constant by a tensor (torch's rsqrt, `1 / sqrt`): a `reciprocal`"},
                {"Dropout", &I::unaryLayer, {"dropout"}, "training: a random mask; inference: the identity"},
                {"Pow", &I::pow, {"sqrt", "reciprocal", "pow"}, "by a constant exponent: 0.5 a sqrt, -1 a reciprocal, 1 the operand, any other a pow"},
                {"Expand", &I::expand, {"parameter", "expand"}, "of a weight [1, ...] over the batch (a class token): the weight, repeated where read; of data, consecutive dimensions of 1 after the batch repeated: an `expand`"},
                {"Flatten", &I::flatten, {"flatten"}, "everything after the batch in one dimension"},
                {"Gather", &I::gather, {"embedding", "parameter", "gather"}, "of a weight: an embedding, or at constant indices (positions from arange) the rows taken, a learned parameter; of data: a constant index or list after the batch"},
                {"Gemm", &I::matmul, {"linear"}, "a weight operand, optionally transposed, and a bias"},
                {"GRU", &I::recurrent, {"gru"}, "as torch's nn.GRU exports it: forward, linear_before_reset, a zero initial state, the output sequence through a Squeeze"},
                {"GlobalAveragePool", &I::unaryLayer, {"global_avg_pool"}, "of an image's height and width"},
                {"Identity", &I::identity, {}, "the operand under another name"},
                {"InstanceNormalization", &I::instanceNorm, {"group_norm"}, "a group per channel; with `Reshape`s around it and per-channel `Mul` and `Add`, torch's `nn.GroupNorm`"},
                {"LayerNormalization", &I::lastAxis, {"layer_norm"}, "last axis"},
                {"LogSoftmax", &I::lastAxis, {"log_softmax"}, "last axis"},
                {"LSTM", &I::recurrent, {"lstm"}, "as torch's nn.LSTM exports it: forward, no peepholes, a zero initial state, the output sequence through a Squeeze"},
                {"MatMul", &I::matmul, {"linear", "matmul"}, "a weight operand: a linear layer (by an embedding table transposed: tied to it); else a batched matmul, one operand's leading dimensions of 1 repeated over the other's"},
                {"MaxPool", &I::pool, {"max_pool2d"}, "2-D, floor or ceil mode"},
                {"Mul", &I::binary, {"mul", "scale", "parameter"}, "as `Add`"},
                {"NegativeLogLikelihoodLoss", &I::loss, {"nll_loss", "transpose"}, "as SoftmaxCrossEntropyLoss"},
                {"Pad", &I::pad, {"pad"}, "zeros on height and width, read by convolutions or poolings: their padding; any other (constant, reflect, edge; dimensions after the batch): a `pad`"},
                {"ReduceMean", &I::reduce, {"global_avg_pool", "reduce"}, "of an image's height and width: global average pooling; over other consecutive axes after the batch: a reduce"},
                {"ReduceSum", &I::reduce, {"reduce"}, "over consecutive axes after the batch (constant axes)"},
                {"Reshape", &I::reshapeOrGroupNorm, {"reshape", "group_norm"}, "a constant shape; the batch followed from its stride where it folds into a dimension (reshape(-1, V)) or unfolds"},
                {"Slice", &I::slices, {"slice"}, "one axis, any positive step (PopTorch's subsample of a slice); of a weight or buffer (a causal mask's [:S, :S]): one of its own"},
                {"Softmax", &I::lastAxis, {"softmax"}, "last axis"},
                {"SoftmaxCrossEntropyLoss", &I::loss, {"cross_entropy", "transpose"}, "mean reduction, no class weights; [N, C, d1, ...] logits through a view moving the classes last"},
                {"Split", &I::slices, {"slice"}, "a slice per output"},
                {"Sub", &I::binary, {"sub", "scale", "parameter"}, "as `Add`"},
                {"Einsum", &I::einsum, {"matmul", "transpose"}, "of two operands, a batched matmul (shared leading letters, one contracted letter among each operand's last two, as \"bhid,bhjd->bhij\"); an operand read transposed is a view"},
                {"Transpose", &I::transpose, {"transpose"}, "a view; the batch followed where it moves (nn.MultiheadAttention)"},
                {"Unsqueeze", &I::unsqueeze, {}, "of a weight"},
                {"Where", &I::where, {"masked_fill", "where", "parameter"}, "a tensor and a scalar constant by a condition, data or a buffer that broadcasts to it (torch's masked_fill); two tensors of one shape: a `where`"},
                {"Equal", &I::compare, {"eq", "parameter"}, "of data and data, a constant or a weight (broadcast as `Add`): a mask"},
                {"Less", &I::compare, {"lt", "parameter"}, "as `Equal`"},
                {"Greater", &I::compare, {"gt", "parameter"}, "as `Equal`"},
                {"Not", &I::logicalNot, {"logical_not"}, "of a mask computed from data"},
                {"Cast", &I::castOfData, {}, "of data to its own type (torch's masked_fill casts its bool mask to bool): the operand"}};
            for (const ActivationRow& a : activationTable())
                if (*a.onnxName)
                    t.push_back({a.onnxName, &I::activation, {a.graphName}, "element-wise, an activation"});
            std::sort(t.begin(), t.end(), [](const Row& x, const Row& y) { return std::string(x.op) < y.op; });
            return t;
        }();
        return table;
    }

    static const std::map<std::string, Handler>& handlers()
    {
        static const std::map<std::string, Handler> table = [] {
            std::map<std::string, Handler> t;
            for (const Row& r : rows())
                t.emplace(r.op, r.handler);
            return t;
        }();
        return table;
    }

private:
    void convert(const onnx::NodeProto& node)
    {
        const std::string& op = node.op_type();
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            failNode(node, fmt::format("unsupported op domain \"{}\"", node.domain()));
        expectOperands(node);
        if (m_fused.count(&node))
            return; // mapped with the node that starts its pattern
        if (knownWithoutImport(node))
            return; // a constant (given or folded), or a shape computation whose values shape inference found
        expectLeadingBatch(node);
        auto handler = handlers().find(op);
        if (handler != handlers().end())
            return (this->*handler->second)(node);
        failUnsupported(node, "");
    }

    [[noreturn]] void failUnsupported(const onnx::NodeProto& node, const std::string& hint) const
    {
        failNode(node, fmt::format("unsupported op{}", hint));
    }

    void unaryLayer(const onnx::NodeProto& node)
    {
        static const std::map<std::string, LayerKind> kinds = {{"GlobalAveragePool", LayerKind::GlobalAvgPool}, {"Dropout", LayerKind::Dropout}};
        add(node, layerFor(node, kinds.at(node.op_type()), {0}));
    }

    /** An activation of the table (workloads/graph/Activation.hpp) that names this ONNX op. */
    void activation(const onnx::NodeProto& node)
    {
        for (const ActivationRow& a : activationTable())
            if (node.op_type() == a.onnxName)
                return add(node, layerFor(node, a.layer, {0}));
    }

    void batchNorm(const onnx::NodeProto& node) { add(node, layerFor(node, LayerKind::BatchNorm2d, {0})); }

    /** Identity of a weight is the weight; of data, the data under another name. */
    void identity(const onnx::NodeProto& node)
    {
        if (!m_params.count(node.input(0)))
            return alias(node);
        deriveModelTensor(node.output(0), node.input(0));
        m_dims[node.output(0)] = m_dims[node.input(0)];
    }

    /** A weight of [C] as [C, 1, 1] (shape inference gives its shape); of data, not modelled. */
    void unsqueeze(const onnx::NodeProto& node)
    {
        if (!m_params.count(node.input(0)))
            failUnsupported(node, " of data (Unsqueeze of a weight is supported)");
        deriveModelTensor(node.output(0), node.input(0));
    }

    void reshapeOrGroupNorm(const onnx::NodeProto& node)
    {
        if (m_params.count(node.input(0))) // a weight or buffer seen in another shape
            return deriveModelTensor(node.output(0), node.input(0));
        if (!groupNorm(node))
            reshape(node);
    }

    /** x ** c of a constant c: 0.5 is sqrt, -1 reciprocal, 1 the operand, as PopART's patterns
     *  make them; any other constant a pow layer (PopART's Pow). */
    void pow(const onnx::NodeProto& node)
    {
        const auto c = node.input_size() > 1 ? constantScalar(node.input(1)) : std::nullopt;
        if (!c)
            failUnsupported(node, fmt::format(" of an exponent computed in the graph (\"{}\"; a constant scalar is supported)", node.input(1)));
        if (*c == 1.0)
            return alias(node);
        add(node, layerFor(node, *c == 0.5 ? LayerKind::Sqrt : *c == -1.0 ? LayerKind::Reciprocal : LayerKind::Pow, {0}));
    }

    /** A weight [1, ...] repeated over the batch (ViT's class_token.expand(n, -1, -1)): a weight
     *  of the per-sample shape, repeated where it is read. */
    void expand(const onnx::NodeProto& node)
    {
        if (!m_params.count(node.input(0)))
            return expandData(node);
        const auto shape = constantInts(node.input(1));
        const auto w = dimsOfParam(node, 0);
        bool batchOnly = shape && shape->size() == w.size() && w[0] == 1;
        for (std::size_t k = 1; batchOnly && k < w.size(); ++k)
            batchOnly = (*shape)[k] == -1 || (*shape)[k] == 1 || (*shape)[k] == w[k];
        if (!batchOnly || !((*shape)[0] == m_fileBatch || (*shape)[0] == 1 || (*shape)[0] == -1))
            failNode(node, fmt::format("expected weight \"{}\" [{}] repeated over the batch only ([{}, ...] with the rest kept)",
                                       node.input(0), fmt::join(w, ", "), m_fileBatch));
        deriveModelTensor(node.output(0), node.input(0));
        m_dims[node.output(0)].clear();
        for (std::size_t k = 1; k < w.size(); ++k)
            m_dims[node.output(0)].push_back({w[k], ""});
    }

    /** Expand of data (an attention mask [B, 1, 1, S] over the heads and queries): its
     *  dimensions of 1 after the batch repeated to the target's sizes (numpy's broadcast, the
     *  target's 1 keeping the input's size), an expand layer; the batch stays. */
    void expandData(const onnx::NodeProto& node)
    {
        const auto target = constantInts(node.input(1));
        if (!target)
            failNode(node, fmt::format("expected a constant target shape (input 1, \"{}\")", node.input(1)));
        const std::vector<int64_t> in = knownDims(node, 0);
        if (target->size() != in.size())
            failNode(node, fmt::format("expected a target of {} dimensions, as the input {}, found [{}]", in.size(), shapeText(node.input(0)),
                                       fmt::join(*target, ", ")));
        if ((*target)[0] != 1 && (*target)[0] != in[0])
            failNode(node, fmt::format("expected the batch kept (a target of {} or 1 in dimension 0), found [{}]", in[0], fmt::join(*target, ", ")));
        LayerSpec l = layerFor(node, LayerKind::Expand, {0});
        for (std::size_t k = 1; k < in.size(); ++k)
            l.shape.push_back((*target)[k] == 1 ? -1 : (*target)[k]);
        add(node, l);
    }

    /** ReduceMean or ReduceSum: of an NCHW image's height and width (x.mean([2, 3])) global
     *  average pooling, as popnn pools; over other consecutive axes after the batch a reduce
     *  layer. The axes: ReduceMean's attribute, ReduceSum's operand (opset 13). */
    void reduce(const onnx::NodeProto& node)
    {
        const bool mean = node.op_type() == "ReduceMean";
        if (mean && imageMean(node))
            return;
        std::vector<int64_t> axes = intsAttr(node, "axes", {});
        if (!mean && node.input_size() > 1 && !node.input(1).empty()) {
            const auto given = constantInts(node.input(1));
            if (!given)
                failNode(node, fmt::format("expected constant axes (input 1, \"{}\")", node.input(1)));
            axes = *given;
        }
        if (axes.empty())
            failNode(node, "expected axes: a reduction over every dimension would mix the samples");
        LayerSpec l = layerFor(node, LayerKind::Reduce, {0});
        for (int64_t a : axes)
            l.perm.push_back(layerAxisOf(node, a));
        l.mean = mean;
        l.keepDim = intAttr(node, "keepdims", 1) != 0;
        add(node, l);
    }

    /** The values of an integer or boolean constant or shape computation; nothing for data,
     *  weights and floating-point constants. */
    std::optional<std::vector<int64_t>> knownIntegers(const std::string& name) const
    {
        if (m_shapeValues.count(name))
            return m_shapeValues.at(name);
        auto it = m_constants.find(name);
        return it == m_constants.end() ? std::nullopt : integerValues(it->second);
    }

    /** A known value with its shape: a constant (given or folded), or a shape computation's
     *  (shaped as shape inference has it, else 1-D); nothing for data and weights. */
    std::optional<ConstantTensor> knownTensor(const std::string& name) const
    {
        if (auto constant = m_constants.find(name); constant != m_constants.end())
            return constantTensor(constant->second);
        auto shape = m_shapeValues.find(name);
        if (shape == m_shapeValues.end())
            return std::nullopt;
        ConstantTensor t{{int64_t(shape->second.size())}, std::vector<double>(shape->second.begin(), shape->second.end()),
                         onnx::TensorProto_DataType_INT64};
        const auto dims = fullDims(name);
        int64_t n = 1;
        for (int64_t d : dims.value_or(std::vector<int64_t>{-1}))
            n *= d;
        if (dims && n == int64_t(shape->second.size()))
            t.shape = *dims; // a scalar (Gather of one dimension) keeps its rank
        return t;
    }

    /** A known tensor read as an operand (Swin's attention mask added to the scores; with
     *  `scalars`, a comparison's constant): a buffer, as PopART holds a folded constant in tile
     *  memory, unlearned. A scalar is a buffer of one element. */
    void constantAsBuffer(const std::string& name, bool scalars = false)
    {
        if (m_values.count(name) || m_params.count(name) || (scalarConstant(name) && !scalars))
            return;
        const auto t = knownTensor(name);
        if (!t)
            return;
        m_params.insert(name);
        m_buffers.insert(name);
        m_dims[name].clear();
        for (int64_t d : t->shape)
            m_dims[name].push_back({d, ""});
        if (t->shape.empty())
            m_dims[name].push_back({1, ""});
    }

    /** Every op this maps reads at least its required operands and writes an output. */
    void expectOperands(const onnx::NodeProto& node) const
    {
        static const std::map<std::string, int> required = {
            {"Conv", 2}, {"BatchNormalization", 5}, {"Gemm", 2}, {"MatMul", 2}, {"Add", 2}, {"Sub", 2}, {"Mul", 2}, {"Div", 2},
            {"Reshape", 2}, {"Expand", 2}, {"Pow", 2}, {"Gather", 2}, {"SoftmaxCrossEntropyLoss", 2}, {"NegativeLogLikelihoodLoss", 2}, {"LayerNormalization", 2}, {"InstanceNormalization", 3}};
        auto it = required.find(node.op_type());
        const int needed = it == required.end() ? 1 : it->second;
        if (node.op_type() != "Constant" && node.input_size() < needed)
            failNode(node, fmt::format("expected {} input{}, found {}", needed, needed == 1 ? "" : "s", node.input_size()));
        if (node.output_size() < 1)
            failNode(node, "expected an output");
    }

    /** The size of dimension `k` of a value, when the file or shape inference knows it. */
    std::optional<int64_t> dimOf(const std::string& value, std::size_t k) const
    {
        auto it = m_dims.find(value);
        if (it == m_dims.end() || k >= it->second.size())
            return std::nullopt;
        return it->second[k].size;
    }

    void conv(const onnx::NodeProto& node)
    {
        learnedAt(node, 1);
        const auto w = dimsOfParam(node, 1);
        if (w.size() != 4)
            failNode(node, fmt::format("expected a 2-D convolution (weight [out, in, kh, kw]), found a weight of {} dimensions", w.size()));
        LayerSpec l = layerFor(node, LayerKind::Conv2d, {0});
        l.features = uint64_t(w[0]);
        l.kernel = pairAttr(node, "kernel_shape", {uint32_t(w[2]), uint32_t(w[3])});
        l.stride = pairAttr(node, "strides", {1, 1});
        l.dilation = pairAttr(node, "dilations", {1, 1});
        l.padding = padsAttr(node);
        const int64_t group = intAttr(node, "group", 1);
        if (group < 1 || w[0] % group != 0)
            failNode(node, fmt::format("expected a group count that divides the {} output channels, found {}", w[0], group));
        l.groups = uint32_t(group);
        const auto channels = dimOf(node.input(0), 1);
        if (channels && *channels != w[1] * group)
            failNode(node, fmt::format("expected an input of {} x {} = {} channels for weight \"{}\" [{}], found {}", w[1], group,
                                       w[1] * group, node.input(1), fmt::join(w, ", "), *channels));
        l.bias = node.input_size() > 2 && !node.input(2).empty();
        add(node, l);
    }

    void pool(const onnx::NodeProto& node)
    {
        if (pairAttr(node, "dilations", {1, 1}) != std::array<uint32_t, 2>{1, 1})
            failNode(node, "expected dilations 1: dilated pooling is not modelled yet");
        LayerSpec l = layerFor(node, node.op_type() == "MaxPool" ? LayerKind::MaxPool2d : LayerKind::AvgPool2d, {0});
        if (!attr(node, "kernel_shape"))
            failNode(node, "expected a kernel_shape");
        l.kernel = pairAttr(node, "kernel_shape", {1, 1});
        l.stride = pairAttr(node, "strides", {1, 1}); // ONNX's default, unlike torch's
        l.padding = padsAttr(node);
        l.ceilMode = intAttr(node, "ceil_mode", 0) != 0;
        add(node, l);
    }

    /** Einsum of two operands that is a batched matmul (attention's scores and context as
     *  MaxViT writes them, "B G H I D, B G H J D -> B G H I J"): the leading letters shared by
     *  both operands and the output, and one letter contracted among each operand's last two.
     *  An operand whose contracted letter is not where a matmul reads it is transposed first. */
    void einsum(const onnx::NodeProto& node)
    {
        const auto* eq = attr(node, "equation");
        std::string text = eq ? eq->s() : "";
        text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
        const auto arrow = text.find("->"), comma = text.find(',');
        const std::string a = text.substr(0, comma), b = comma == std::string::npos ? "" : text.substr(comma + 1, arrow - comma - 1),
                          o = arrow == std::string::npos ? "" : text.substr(arrow + 2);
        const std::size_t r = a.size();
        const auto distinct = [](std::string s) { std::sort(s.begin(), s.end()); return std::adjacent_find(s.begin(), s.end()) == s.end(); };
        bool isMatMul = node.input_size() == 2 && comma != std::string::npos && arrow != std::string::npos && r >= 2 &&
                      b.size() == r && o.size() == r && text.find('.') == std::string::npos && distinct(a) && distinct(b) && distinct(o) &&
                      a.compare(0, r - 2, o, 0, r - 2) == 0 && b.compare(0, r - 2, o, 0, r - 2) == 0;
        const char i = isMatMul ? o[r - 2] : 0, j = isMatMul ? o[r - 1] : 0;
        const char k = isMatMul ? (a[r - 2] == i ? a[r - 1] : a[r - 2]) : 0;
        isMatMul = isMatMul && std::set<char>{a[r - 2], a[r - 1]} == std::set<char>{i, k} && std::set<char>{b[r - 2], b[r - 1]} == std::set<char>{k, j} &&
                 o.find(k) == std::string::npos;
        if (!isMatMul)
            failUnsupported(node, fmt::format(" of equation \"{}\" (of two operands, a batched matmul is supported: shared leading "
                                              "letters and one contracted among each operand's last two, \"bhid,bhjd->bhij\")",
                                              eq ? eq->s() : ""));
        onnx::NodeProto& mm = m_synthetic.emplace_back();
        mm.set_name(node.name());
        mm.set_op_type("MatMul");
        mm.add_input(a[r - 1] == k ? node.input(0) : swappedLastTwo(node, 0));
        mm.add_input(b[r - 2] == k ? node.input(1) : swappedLastTwo(node, 1));
        mm.add_output(node.output(0));
        matmul(mm);
    }

    /** An LSTM or GRU as torch exports nn.LSTM and nn.GRU: forward, the sequence [S, B, I] (the
     *  batch second: batch_first's Transpose before it), a zero initial state, every step's
     *  hidden state read through a Squeeze of the direction; one lstm or gru layer. */
    void recurrent(const onnx::NodeProto& node)
    {
        const bool lstm = node.op_type() == "LSTM";
        const auto* hidden = attr(node, "hidden_size");
        if (!hidden || hidden->i() < 1)
            failNode(node, "expected a hidden_size of at least 1");
        const auto* direction = attr(node, "direction");
        if (direction && direction->s() != "forward")
            failNode(node, fmt::format("expected direction \"forward\": a {} {} is not modelled yet", direction->s(), node.op_type()));
        for (const char* a : {"activations", "activation_alpha", "activation_beta", "clip"})
            if (attr(node, a))
                failNode(node, fmt::format("expected the default activations without clipping, found attribute {}", a));
        if (const auto* layout = attr(node, "layout"); layout && layout->i() != 0)
            failNode(node, "expected layout 0 ([steps, batch, features], as torch exports)");
        if (const auto* coupled = attr(node, "input_forget"); coupled && coupled->i() != 0)
            failNode(node, "expected input_forget 0: a coupled input and forget gate is not modelled");
        const auto* beforeReset = attr(node, "linear_before_reset");
        if (!lstm && (!beforeReset || beforeReset->i() != 1))
            failNode(node, "expected linear_before_reset 1 (torch's GRU): the reset gate before the recurrent matmul is not modelled");
        if (node.input_size() > 4 && !node.input(4).empty())
            failNode(node, fmt::format("expected no sequence_lens (input 4, \"{}\"): sequences of one length", node.input(4)));
        if (lstm && node.input_size() > 7 && !node.input(7).empty())
            failNode(node, "expected no peepholes (input 7): torch's LSTM has none");
        for (int k : {5, 6})
            if (k < node.input_size() && !node.input(k).empty() && !m_zeroStates.count(node.input(k)))
                failNode(node, fmt::format("expected a zero initial state (input {}, \"{}\"), as torch's default: a given state is not modelled yet",
                                           k, node.input(k)));
        for (int k = 1; k < 4 && k < node.input_size(); ++k)
            if (!node.input(k).empty() && !m_params.count(node.input(k)))
                failNode(node, fmt::format("expected input {} (\"{}\") to be weights", k, node.input(k)));
        if (batchOf(node.input(0)) != BatchAt{1, 1})
            failNode(node, fmt::format("expected the sequence \"{}\" {} as [steps, batch, features] (torch's batch_first layer exports a "
                                       "Transpose before it)", node.input(0), shapeText(node.input(0))));
        for (int k = 1; k < node.output_size(); ++k)
            if (!node.output(k).empty() && (isGraphOutput(node.output(k)) || m_readers.count(node.output(k))))
                failNode(node, fmt::format("expected the final states (output {}, \"{}\") unread: read them from the output sequence", k, node.output(k)));
        const onnx::NodeProto* squeeze = soleReader(node.output(0), "Squeeze");
        const auto axes = squeeze && squeeze->input_size() > 1 ? constantInts(squeeze->input(1)) : std::nullopt;
        if (!squeeze || !axes || axes->size() != 1 || (*axes)[0] != 1)
            failNode(node, fmt::format("expected the output \"{}\" read by one Squeeze of axis 1 (the direction), as torch exports it", node.output(0)));
        LayerSpec l = layerFor(node, lstm ? LayerKind::Lstm : LayerKind::Gru, {0});
        l.features = uint64_t(hidden->i());
        m_fused.insert(squeeze);
        m_values[squeeze->output(0)] = l.name;
        setBatch(squeeze->output(0), BatchAt{1, 1});
        m_spec.layers.push_back(std::move(l));
    }

    /** Operand k of `node` with its last two dimensions swapped: a Transpose, a view. */
    std::string swappedLastTwo(const onnx::NodeProto& node, int k)
    {
        const std::size_t rank = rankOf(node.input(k));
        onnx::NodeProto& t = m_synthetic.emplace_back();
        t.set_name(fmt::format("{}/transpose{}", nameOf(node), k));
        t.set_op_type("Transpose");
        t.add_input(node.input(k));
        t.add_output(fmt::format("{}/transpose{}_output", nameOf(node), k));
        auto* perm = t.add_attribute();
        perm->set_name("perm");
        perm->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (std::size_t d = 0; d < rank; ++d)
            perm->add_ints(int64_t(d + 2 == rank ? rank - 1 : d + 1 == rank ? rank - 2 : d));
        std::vector<Dim> dims = m_dims[node.input(k)];
        if (dims.size() >= 2)
            std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
        m_dims[t.output(0)] = dims;
        transpose(t);
        return t.output(0);
    }

    void matmul(const onnx::NodeProto& node)
    {
        const bool gemm = node.op_type() == "Gemm";
        if (gemm && intAttr(node, "transA", 0) != 0)
            failNode(node, "expected transA 0");
        if (!gemm && !m_params.count(node.input(1))) { // two activations: the batch among the leading dimensions
            expectOneBatch(node);
            const BatchAt at = batchOf(node.input(0));
            if (at.dim >= 0 && at != BatchAt{} && std::size_t(at.dim) + 2 >= rankOf(node.input(0)))
                failNode(node, "expected the batch in a leading dimension of a matmul of two activations, not in its rows or columns");
            return add(node, layerFor(node, LayerKind::MatMul, {0, 1}));
        }
        if (batchOf(node.input(0)) != BatchAt{})
            layerAxisOf(node, int64_t(rankOf(node.input(0))) - 1); // the reduced dimension is no batch's
        learnedAt(node, 1);
        const auto w = dimsOfParam(node, 1);
        if (w.size() != 2)
            failNode(node, fmt::format("expected a 2-D weight, found {} dimensions", w.size()));
        LayerSpec l = layerFor(node, LayerKind::Linear, {0});
        const bool transposed = gemm && intAttr(node, "transB", 0);
        l.features = uint64_t(transposed ? w[0] : w[1]);
        const int64_t reduced = transposed ? w[1] : w[0];
        const std::size_t rank = rankOf(node.input(0));
        const auto k = rank ? dimOf(node.input(0), rank - 1) : std::nullopt;
        if (k && *k != reduced)
            failNode(node, fmt::format("expected an input whose last dimension is {} for weight \"{}\" [{}], found {}", reduced,
                                       node.input(1), fmt::join(w, ", "), *k));
        l.bias = gemm && node.input_size() > 2 && !node.input(2).empty();
        l.tiedWeight = tiedEmbedding(node.input(1), transposed);
        add(node, l);
    }

    /** A linear layer's weight that is an embedding table seen transposed (GPT-2's LM head,
     *  x @ wte.weight.t()): the embedding layer, whose weight it shares; "" otherwise. */
    std::string tiedEmbedding(const std::string& weight, bool transposedByGemm) const
    {
        std::string root = weight;
        bool transposed = transposedByGemm;
        for (auto p = m_producers.find(root); p != m_producers.end() && m_params.count(p->second->input(0));
             p = m_producers.find(root)) {
            if (p->second->op_type() == "Transpose")
                transposed = !transposed;
            else if (p->second->op_type() != "Identity")
                break;
            root = p->second->input(0);
        }
        auto it = m_embeddingOf.find(root);
        return transposed && it != m_embeddingOf.end() ? it->second : "";
    }

    void binary(const onnx::NodeProto& node)
    {
        static const std::map<std::string, LayerKind> kinds = {
            {"Add", LayerKind::Add}, {"Sub", LayerKind::Sub}, {"Mul", LayerKind::Mul}, {"Div", LayerKind::Div}};
        if (node.op_type() == "Div" && geluErf(node))
            return;
        // A constant scalar operand (an attention scale, a residual factor) is one multiply-like
        // pass over the other operand.
        for (int k : {0, 1})
            if (scalarConstant(node.input(k))) {
                // c / x (torch's rsqrt as 1 / sqrt): popops' DIVIDE map of the constant and x,
                // whatever c, as a reciprocal is priced.
                if (node.op_type() == "Div" && k == 0)
                    return add(node, layerFor(node, LayerKind::Reciprocal, {1}));
                return add(node, layerFor(node, LayerKind::Scale, {1 - k}));
            }
        // MatMul then Add of a 1-D weight is nn.Linear's bias (torch exports a linear layer on
        // more than two dimensions so).
        for (int k : {0, 1}) {
            LayerSpec* linear = producer(node.input(1 - k));
            if (node.op_type() == "Add" && m_params.count(node.input(k)) && !m_buffers.count(node.input(k)) && rankOf(node.input(k)) == 1 && linear &&
                linear->kind == LayerKind::Linear && !linear->bias && onlyReader(node.input(1 - k), node)) {
                linear->bias = true;
                m_values[node.output(0)] = linear->name;
                setBatch(node.output(0), batchOf(node.input(1 - k)));
                return;
            }
        }
        expectOneBatch(node);
        // A weight operand is a learned element-wise parameter (a per-channel scale, GroupNorm's
        // affine after InstanceNormalization), broadcast over the batch; a constant one a buffer.
        for (int k : {0, 1})
            modelOperand(node, k);
        add(node, layerFor(node, kinds.at(node.op_type()), {0, 1}));
    }

    /** Where(cond, x, c) or Where(cond, c, x) of a tensor x and a scalar constant c (torch's
     *  masked_fill, and torch.where against a scalar): a masked_fill layer of x by the condition,
     *  data or a buffer (a causal mask) that broadcasts to x. Of two tensors: a where layer. */
    void where(const onnx::NodeProto& node)
    {
        if (node.input_size() != 3)
            failNode(node, fmt::format("expected 3 inputs (condition, x, y), found {}", node.input_size()));
        const bool xScalar = scalarConstant(node.input(1)), yScalar = scalarConstant(node.input(2));
        if (xScalar && yScalar)
            failNode(node, "expected a tensor among x and y, found two scalar constants");
        if (!xScalar && !yScalar)
            return whereOfTensors(node);
        const int data = xScalar ? 2 : 1;
        if (!isData(node.input(data)))
            failNode(node, fmt::format("expected input {} (\"{}\") to be data", data, node.input(data)));
        modelOperand(node, 0);
        LayerSpec l = layerFor(node, LayerKind::MaskedFill, {data, 0});
        m_values[node.output(0)] = l.name;
        m_spec.layers.push_back(std::move(l));
        setBatch(node.output(0), batchOf(node.input(data)));
    }

    /** Where(cond, x, y) of two tensors (torch.where): x and y data of one shape, the condition
     *  data or a buffer that broadcasts to them. */
    void whereOfTensors(const onnx::NodeProto& node)
    {
        for (int k : {1, 2})
            if (!isData(node.input(k)))
                failNode(node, fmt::format("expected input {} (\"{}\") to be data, as x and y of a select of two tensors are", k,
                                           node.input(k)));
        expectOneBatch(node);
        modelOperand(node, 0);
        LayerSpec l = layerFor(node, LayerKind::Where, {0, 1, 2});
        m_values[node.output(0)] = l.name;
        m_spec.layers.push_back(std::move(l));
        setBatch(node.output(0), batchOf(node.input(1)));
    }

    /** Equal, Less or Greater of data and data, a constant or a weight: a mask (a compare layer),
     *  broadcast as Add's operands. */
    void compare(const onnx::NodeProto& node)
    {
        expectOneBatch(node);
        for (int k : {0, 1})
            modelOperand(node, k, true);
        LayerSpec l = layerFor(node, LayerKind::Compare, {0, 1});
        l.comparison = node.op_type() == "Less" ? Comparison::Less : node.op_type() == "Greater" ? Comparison::Greater : Comparison::Equal;
        add(node, l);
    }

    void logicalNot(const onnx::NodeProto& node) { add(node, layerFor(node, LayerKind::LogicalNot, {0})); }

    /** A cast of data to the type it has: nothing to do. Between types (a mask to floating
     *  point) a conversion the graph does not model: it stops the import. */
    void castOfData(const onnx::NodeProto& node)
    {
        auto from = m_types.find(node.input(0));
        const int64_t to = intAttr(node, "to", 0);
        auto typeName = [](int64_t t) {
            return onnx::TensorProto_DataType_IsValid(int(t)) ? onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(t)) : "unknown";
        };
        if (from == m_types.end() || from->second != to)
            failUnsupported(node, fmt::format(" of data from {} to {}: only a cast to the value's own type (a no-op) is modelled",
                                              from == m_types.end() ? "an unknown type" : typeName(from->second), typeName(to)));
        alias(node);
    }

    /** Operand k of an element-wise op, when of the model rather than data: a known constant a
     *  buffer (with `scalars`, a scalar too), and a weight or buffer its parameter layer, once. */
    void modelOperand(const onnx::NodeProto& node, int k, bool scalars = false)
    {
        constantAsBuffer(node.input(k), scalars);
        if (m_params.count(node.input(k)) && !m_values.count(node.input(k)))
            addParameter(node, k);
    }

    /** A parameter layer for weight operand k of `node`, named as the weight. */
    void addParameter(const onnx::NodeProto& node, int k)
    {
        const std::string& weight = node.input(k);
        LayerSpec l = layerFor(node, LayerKind::Parameter, {});
        l.name = weight;
        if (!m_layerNames.insert(weight).second)
            l.name += "#" + std::to_string(m_layerNames.size());
        l.shape = dimsOfParam(node, k);
        l.learned = !m_buffers.count(weight);
        m_values[weight] = l.name;
        m_spec.layers.push_back(std::move(l));
    }

    /** Softmax and LayerNormalization over the last axis, as the graph workload has them. */
    void lastAxis(const onnx::NodeProto& node)
    {
        static const std::map<std::string, LayerKind> kinds = {
            {"Softmax", LayerKind::Softmax}, {"LogSoftmax", LayerKind::LogSoftmax}, {"LayerNormalization", LayerKind::LayerNorm}};
        const int64_t axis = intAttr(node, "axis", -1);
        const auto rank = int64_t(rankOf(node.input(0)));
        if (axis != -1 && axis != rank - 1)
            failNode(node, fmt::format("expected axis -1 (the last of {} dimensions), found {}", rank, axis));
        if (batchOf(node.input(0)) != BatchAt{})
            layerAxisOf(node, rank - 1); // not along the batch
        LayerSpec l = layerFor(node, kinds.at(node.op_type()), {0});
        if (l.kind == LayerKind::LayerNorm)
            l.affine = learnedScaleAndBias(node);
        add(node, l);
    }

    /** Whether a norm's scale (operand 1) and bias (operand 2) are learned (weights: torch's
     *  affine and elementwise_affine), or neither (constants of ones and zeros). */
    bool learnedScaleAndBias(const onnx::NodeProto& node) const
    {
        const bool scale = m_params.count(node.input(1)) > 0;
        const bool bias = node.input_size() > 2 && m_params.count(node.input(2)) > 0;
        if (scale != bias)
            failNode(node, "expected a learned scale and bias, or neither");
        return scale;
    }

    /** torch's cross_entropy and nll_loss: a mean over the batch, no class weights (an ignored
     *  label index changes no cycles). */
    void loss(const onnx::NodeProto& node)
    {
        const auto* reduction = attr(node, "reduction");
        if (reduction && reduction->s() != "mean")
            failNode(node, fmt::format("expected reduction \"mean\", found \"{}\"", reduction->s()));
        if (node.input_size() > 2 && !node.input(2).empty())
            failNode(node, "expected no class weights");
        const bool nll = node.op_type() == "NegativeLogLikelihoodLoss";
        LayerSpec l = layerFor(node, nll ? LayerKind::NllLoss : LayerKind::CrossEntropy, {0, 1});
        // ONNX's classes are dimension 1 ([N, C, d1, ...]); the layers' are the last: a view
        // moves them there.
        const std::size_t rank = rankOf(node.input(0));
        if (rank >= 3) {
            std::vector<int64_t> perm{0};
            for (std::size_t k = 2; k < rank; ++k)
                perm.push_back(int64_t(k));
            perm.push_back(1);
            LayerSpec view = layerFor(node, LayerKind::Transpose, {0});
            view.name += ":classes_last";
            view.perm = batchOf(node.input(0)) == BatchAt{} ? std::vector<uint32_t>(perm.begin(), perm.end())
                                                            : layerPerm(knownDims(node, 0), batchOf(node.input(0)), m_fileBatch, perm);
            l.inputs[0] = view.name;
            m_spec.layers.push_back(std::move(view));
        }
        add(node, l);
    }

    /** The mean of each channel's image (x.mean([2, 3]) of NCHW): global average pooling, then
     *  without keepdims a flatten of the [N, C, 1, 1] result. False for other axes. */
    bool imageMean(const onnx::NodeProto& node)
    {
        const auto rank = int64_t(rankOf(node.input(0)));
        std::vector<int64_t> axes = intsAttr(node, "axes", {});
        for (int64_t& a : axes)
            a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        if (rank != 4 || axes != std::vector<int64_t>{2, 3})
            return false;
        LayerSpec pool = layerFor(node, LayerKind::GlobalAvgPool, {0});
        if (intAttr(node, "keepdims", 1)) {
            add(node, pool);
            return true;
        }
        LayerSpec flat = layerFor(node, LayerKind::Flatten, {});
        flat.name = pool.name + ":flatten";
        flat.inputs = {pool.name};
        m_spec.layers.push_back(std::move(pool));
        add(node, flat);
        return true;
    }

    void flatten(const onnx::NodeProto& node)
    {
        if (intAttr(node, "axis", 1) != 1)
            failNode(node, "expected axis 1 (keep the batch, flatten the rest)");
        add(node, layerFor(node, LayerKind::Flatten, {0}));
    }

    void reshape(const onnx::NodeProto& node)
    {
        const auto target = constantInts(node.input(1));
        if (!target || target->empty())
            failNode(node, "expected a constant target shape (a shape computed in the graph is not supported)");
        if (m_fileBatch >= 1 && fullDims(node.input(0)))
            return reshapeFollowingTheBatch(node, *target);
        const int64_t first = target->front();
        if (!(first == 0 || first == -1 || first == m_fileBatch))
            failNode(node, fmt::format("expected the batch dimension first in the target shape [{}]", fmt::join(*target, ", ")));
        LayerSpec l = layerFor(node, LayerKind::Reshape, {0});
        const auto it = m_dims.find(node.input(0));
        for (std::size_t k = 1; k < target->size(); ++k) {
            int64_t d = (*target)[k];
            if (d == 0) { // copy the input's dimension
                if (it == m_dims.end() || k >= it->second.size() || !it->second[k].size)
                    failNode(node, fmt::format("expected a known input dimension {} for the 0 in the target shape", k));
                d = *it->second[k].size;
            }
            l.shape.push_back(d);
        }
        add(node, l);
    }

    /** A reshape whose input's shape is known: the batch found again in the target from its
     *  stride (it may fold into a dimension, `reshape(-1, V)`, or unfold back), the layer's shape
     *  the target's per-sample view. */
    void reshapeFollowingTheBatch(const onnx::NodeProto& node, std::vector<int64_t> target)
    {
        const std::vector<int64_t> in = knownDims(node, 0);
        const int64_t total = std::accumulate(in.begin(), in.end(), int64_t(1), std::multiplies<int64_t>());
        int64_t known = 1;
        for (std::size_t k = 0; k < target.size(); ++k) {
            if (target[k] == 0 && intAttr(node, "allowzero", 0) == 0) {
                if (k >= in.size())
                    failNode(node, fmt::format("expected an input dimension {} for the 0 in the target shape", k));
                target[k] = in[k];
            }
            if (target[k] < -1 || target[k] == 0)
                failNode(node, fmt::format("expected target dimensions of at least 1 (or one -1), found [{}]", fmt::join(target, ", ")));
            known *= target[k] == -1 ? 1 : target[k];
        }
        if (std::count(target.begin(), target.end(), -1) > 1 || total % known != 0)
            failNode(node, fmt::format("expected a target shape of {} elements (the input {}), found [{}]", total,
                                       shapeText(node.input(0)), fmt::join(target, ", ")));
        for (int64_t& d : target)
            d = d == -1 ? total / known : d;
        if (std::accumulate(target.begin(), target.end(), int64_t(1), std::multiplies<int64_t>()) != total)
            failNode(node, fmt::format("expected a target shape of {} elements (the input {}), found [{}]", total,
                                       shapeText(node.input(0)), fmt::join(target, ", ")));
        const auto at = batchAfterReshape(in, batchOf(node.input(0)), target, m_fileBatch);
        if (!at)
            failNode(node, fmt::format("expected each sample's elements to stay together: reshaping {} to [{}] splits the batch of {} "
                                       "across dimensions",
                                       shapeText(node.input(0)), fmt::join(target, ", "), m_fileBatch));
        LayerSpec l = layerFor(node, LayerKind::Reshape, {0});
        l.shape = sampleShape(target, *at, m_fileBatch);
        add(node, l);
        setBatch(node.output(0), *at);
    }

    void transpose(const onnx::NodeProto& node)
    {
        const std::size_t rank = rankOf(node.input(0));
        std::vector<int64_t> fallback;
        for (std::size_t k = rank; k-- > 0;)
            fallback.push_back(int64_t(k));
        if (m_params.count(node.input(0))) { // a transposed weight (a training-mode nn.Linear)
            const auto w = dimsOfParam(node, 0);
            std::vector<Dim> out;
            for (int64_t d : intsAttr(node, "perm", fallback)) {
                if (d < 0 || std::size_t(d) >= w.size())
                    failNode(node, fmt::format("expected perm values 0 to {}, found {}", w.size() - 1, d));
                out.push_back({w[std::size_t(d)], ""});
            }
            deriveModelTensor(node.output(0), node.input(0));
            m_dims[node.output(0)] = out;
            return;
        }
        LayerSpec l = layerFor(node, LayerKind::Transpose, {0});
        const std::vector<int64_t> perm = intsAttr(node, "perm", fallback);
        for (int64_t d : perm)
            if (d < 0 || (rank && std::size_t(d) >= rank))
                failNode(node, fmt::format("expected perm values 0 to {}, found {}", rank ? rank - 1 : 0, d));
        const BatchAt at = batchOf(node.input(0));
        if (at == BatchAt{} && !perm.empty() && perm[0] == 0) { // the batch stays first
            for (int64_t d : perm)
                l.perm.push_back(uint32_t(d));
            return add(node, l);
        }
        l.perm = layerPerm(knownDims(node, 0), at, m_fileBatch, perm); // the batch moves (nn.MultiheadAttention)
        add(node, l);
        setBatch(node.output(0), batchAfterTranspose(at, perm));
    }

    void concat(const onnx::NodeProto& node)
    {
        if (node.input_size() == 1) // torch.cat of one tensor (DenseNet's first layer of a block)
            return alias(node);
        const auto modelTensors = [&](const std::set<std::string>& set) {
            return std::all_of(node.input().begin(), node.input().end(), [&](const std::string& in) { return set.count(in) > 0; });
        };
        if (modelTensors(m_params)) { // weights packed together (an RNN's gates): a weight, buffers: a buffer
            m_params.insert(node.output(0));
            if (modelTensors(m_buffers))
                m_buffers.insert(node.output(0));
            return;
        }
        std::vector<int> inputs;
        for (int k = 0; k < node.input_size(); ++k)
            inputs.push_back(k);
        expectOneBatch(node);
        for (int k = 0; k < node.input_size(); ++k) // a weight operand (a class token) repeats over the batch
            if (m_params.count(node.input(k)) && !m_values.count(node.input(k)))
                addParameter(node, k);
        LayerSpec l = layerFor(node, LayerKind::Concat, inputs);
        int data = 0; // the axis as a data operand counts it
        while (data + 1 < node.input_size() && !isData(node.input(data)))
            ++data;
        l.axis = layerAxisOf(node, intAttr(node, "axis", 1), data);
        add(node, l);
    }

    /** Slice (one axis, step 1, constant bounds) and Split (each output a slice). */
    void slices(const onnx::NodeProto& node)
    {
        if (m_params.count(node.input(0))) { // a part of a weight or buffer (a causal mask's [:S, :S]): one of its own
            for (const std::string& out : node.output())
                deriveModelTensor(out, node.input(0));
            return;
        }
        const bool split = node.op_type() == "Split";
        auto constant = [&](int k) -> std::vector<int64_t> {
            if (node.input_size() <= k || node.input(k).empty())
                return {};
            auto v = constantInts(node.input(k));
            if (!v)
                failNode(node, fmt::format("expected input {} (\"{}\") to be a constant", k, node.input(k)));
            return *v;
        };
        int64_t onnxAxis = split ? intAttr(node, "axis", 0) : [&] {
            const auto axes = constant(3);
            if (axes.size() > 1)
                failNode(node, "expected one axis: a slice of several dimensions is not modelled yet");
            return axes.empty() ? int64_t(0) : axes[0];
        }();
        if (onnxAxis < 0)
            onnxAxis += int64_t(rankOf(node.input(0)));
        const uint32_t axis = layerAxisOf(node, onnxAxis);
        // The size is needed for an even split and for bounds counted from the end; otherwise the
        // graph builder clamps the bounds to the size it infers.
        const auto size = dimOf(node.input(0), std::size_t(std::max<int64_t>(onnxAxis, 0)));
        auto known = [&]() {
            if (!size)
                failNode(node, fmt::format("expected a known size of dimension {} for an even split or a bound from the end", axis));
            return *size;
        };
        std::vector<std::pair<int64_t, int64_t>> parts; // [start, end)
        int64_t step = 1;                               // x[..., 0::2]: PopTorch's subsample of the slice
        if (split) {
            std::vector<int64_t> sizes = constant(1);
            if (sizes.empty())
                sizes.assign(std::size_t(node.output_size()), known() / node.output_size());
            int64_t at = 0;
            for (int64_t n : sizes) {
                parts.emplace_back(at, at + n);
                at += n;
            }
        } else {
            const auto starts = constant(1), ends = constant(2), steps = constant(4);
            if (starts.size() != 1 || ends.size() != 1 || steps.size() > 1 || (!steps.empty() && steps[0] < 1))
                failNode(node, fmt::format("expected one start, one end and a step of at least 1, found {} starts, {} ends and steps [{}]",
                                           starts.size(), ends.size(), fmt::join(steps, ", ")));
            auto clamp = [&](int64_t v) { return v < 0 ? std::max<int64_t>(v + known(), 0) : v; };
            parts.push_back({clamp(starts[0]), clamp(ends[0])});
            step = steps.empty() ? 1 : steps[0];
        }
        for (std::size_t k = 0; k < parts.size() && int(k) < node.output_size(); ++k) {
            LayerSpec l = layerFor(node, LayerKind::Slice, {0});
            if (split) { // one layer per output, each named by its index
                l.name = nameOf(node) + ":" + std::to_string(k);
                m_layerNames.insert(l.name);
            }
            l.axis = axis;
            l.start = uint64_t(parts[k].first);
            l.end = uint64_t(parts[k].second);
            l.step = uint64_t(step);
            m_values[node.output(int(k))] = l.name;
            setBatch(node.output(int(k)), batchOf(node.input(0)));
            if (auto dims = fullDims(node.input(0)); dims && !fullDims(node.output(int(k)))) {
                // The part's shape, where shape inference did not know the bounds (computed here).
                const int64_t span = std::min<int64_t>(parts[k].second, (*dims)[std::size_t(onnxAxis)]) - parts[k].first;
                (*dims)[std::size_t(onnxAxis)] = (span + step - 1) / step;
                m_dims[node.output(int(k))].clear();
                for (int64_t d : *dims)
                    m_dims[node.output(int(k))].push_back({d, ""});
            }
            m_spec.layers.push_back(std::move(l));
        }
    }

    void gather(const onnx::NodeProto& node)
    {
        if (!m_params.count(node.input(0)))
            return dataGather(node);
        expectLeadingBatchOperands(node); // indices with the batch first
        if (!isData(node.input(1)) && (constantInts(node.input(1)) || m_params.count(node.input(1)))) {
            // Rows of a table at constant indices (GPT-2's position embedding of arange(S), a
            // relative position bias by an index buffer): the rows taken are a learned tensor,
            // broadcast over the batch where it is read.
            deriveModelTensor(node.output(0), node.input(0));
            return;
        }
        if (intAttr(node, "axis", 0) != 0)
            failNode(node, "expected axis 0 (rows of an embedding table)");
        learnedAt(node, 0);
        const auto table = dimsOfParam(node, 0);
        if (table.size() != 2)
            failNode(node, "expected a 2-D table [rows, dim]");
        LayerSpec l = layerFor(node, LayerKind::Embedding, {1});
        m_embeddingOf.emplace(node.input(0), l.name);
        l.rows = uint64_t(table[0]);
        l.features = uint64_t(table[1]);
        add(node, l);
    }

    /** A Gather of data along the dimension after the batch by a constant index (`x[:, 0]`,
     *  `x[:, -1]`) or a constant list of them (`x[:, [0, 2]]`). ONNX's indices are shared by
     *  every sample (index_select), which the graph's per-sample gather by indices does not
     *  express: indices computed in the graph stop the import. */
    void dataGather(const onnx::NodeProto& node)
    {
        if (oneAlongAnyAxis(node))
            return;
        expectLeadingBatchOperands(node);
        if (intAttr(node, "axis", 0) != 1)
            failNode(node, fmt::format("expected axis 1 (the dimension after the batch) to gather data, found {}", intAttr(node, "axis", 0)));
        auto constant = m_constants.find(node.input(1));
        const std::vector<int64_t> index = constantInts(node.input(1)).value_or(std::vector<int64_t>());
        const int rank = constant == m_constants.end() ? -1 : constant->second.dims_size();
        if (rank < 0 || rank > 1 || index.empty() || (rank == 0 && index.size() != 1))
            failNode(node, "expected a constant index or list of them (x[:, i], x[:, [i, j]]): gathering data by indices computed in "
                           "the graph is not modelled yet");
        const auto size = dimOf(node.input(0), 1);
        LayerSpec l = layerFor(node, LayerKind::Gather, {0});
        for (int64_t i : index) {
            if (i < 0 && !size)
                failNode(node, "expected a known size of dimension 1 for an index counted from the end");
            const int64_t at = i < 0 ? i + *size : i; // torch writes x[:, -1] as -1
            if (at < 0)
                failNode(node, fmt::format("expected indices within dimension 1 of size {}, found {}", *size, i));
            if (rank == 0)
                l.index = uint64_t(at);
            else
                l.indexList.push_back(uint64_t(at));
        }
        add(node, l);
    }

    /** x[i] by one constant index along a dimension other than 1 or of a moved batch (Swin's
     *  q, k, v = qkv[0], qkv[1], qkv[2] after a permute put the batch second): the slice
     *  [i, i + 1) of that dimension, then a reshape without it, as PopART's Gather of one index
     *  is a slice. False for an index list, or dimension 1 after a leading batch (a gather). */
    bool oneAlongAnyAxis(const onnx::NodeProto& node)
    {
        const auto index = constantInts(node.input(1));
        auto constant = m_constants.find(node.input(1));
        const bool scalar = index && index->size() == 1 && constant != m_constants.end() && constant->second.dims_size() == 0;
        const int64_t rank = int64_t(rankOf(node.input(0)));
        int64_t axis = intAttr(node, "axis", 0);
        axis += axis < 0 ? rank : 0;
        if (!scalar || (axis == 1 && batchLeads(node.input(0))))
            return false;
        const std::vector<int64_t> in = knownDims(node, 0);
        LayerSpec part = layerFor(node, LayerKind::Slice, {0});
        part.name += ":slice";
        m_layerNames.insert(part.name);
        part.axis = layerAxisOf(node, axis);
        const int64_t size = in[std::size_t(axis)], i = index->front() < 0 ? index->front() + size : index->front();
        if (i < 0 || i >= size)
            failNode(node, fmt::format("expected an index within dimension {} of size {}, found {}", axis, size, index->front()));
        part.start = uint64_t(i);
        part.end = uint64_t(i + 1);
        std::vector<int64_t> out = in;
        out.erase(out.begin() + axis);
        BatchAt at = batchOf(node.input(0));
        at.dim -= at.dim > axis ? 1 : 0;
        LayerSpec drop = layerFor(node, LayerKind::Reshape, {});
        drop.inputs = {part.name};
        drop.shape = sampleShape(out, at, m_fileBatch);
        m_spec.layers.push_back(std::move(part));
        m_values[node.output(0)] = drop.name;
        m_spec.layers.push_back(std::move(drop));
        setBatch(node.output(0), at);
        return true;
    }

    /** InstanceNorm2d: statistics per sample and channel, and a learned scale and bias per
     *  channel or none; the graph's group norm with a group per channel. */
    void instanceNorm(const onnx::NodeProto& node)
    {
        const auto channels = dimOf(node.input(0), 1);
        if (rankOf(node.input(0)) < 3 || !channels)
            failNode(node, "expected an input [batch, channels, ...] with a known number of channels");
        LayerSpec l = layerFor(node, LayerKind::GroupNorm, {0});
        l.groups = uint32_t(*channels);
        l.affine = learnedScaleAndBias(node);
        add(node, l);
    }

    /** torch's GroupNorm as torch.onnx.export writes it (ONNX has no GroupNormalization before
     *  opset 18): x reshaped to [N, G, -1], an InstanceNormalization with a constant unit scale
     *  and zero bias, a reshape back to x's shape, times a per-channel weight plus a per-channel
     *  bias (learned, or constant ones and zeros without affine). Mapped as one group norm layer
     *  when `reshape` starts that chain. */
    bool groupNorm(const onnx::NodeProto& reshape)
    {
        const auto* norm = soleReader(reshape.output(0), "InstanceNormalization");
        const auto* back = norm ? soleReader(norm->output(0), "Reshape") : nullptr;
        const std::string& x = reshape.input(0);
        const auto target = constantInts(reshape.input(1));
        const auto channels = dimOf(x, 1);
        if (!back || !target || target->size() != 3 || (*target)[1] < 1 || !channels || *channels % (*target)[1] != 0 ||
            m_params.count(norm->input(1)) || m_params.count(norm->input(2)) || rankOf(back->output(0)) != rankOf(x))
            return false;
        const auto* mul = soleReader(back->output(0), "Mul");
        const auto* shift = mul ? soleReader(mul->output(0), "Add") : nullptr;
        const std::string* weight = shift ? &otherOperand(*mul, back->output(0)) : nullptr;
        const std::string* offset = shift ? &otherOperand(*shift, mul->output(0)) : nullptr;
        const PerChannel scale = shift ? perChannel(*weight, *channels, rankOf(x)) : PerChannel::No;
        const PerChannel bias = shift ? perChannel(*offset, *channels, rankOf(x)) : PerChannel::No;
        const bool scaled = scale != PerChannel::No && scale == bias;
        LayerSpec l = layerFor(*norm, LayerKind::GroupNorm, {});
        l.inputs = {valueOf(reshape, 0)};
        l.groups = uint32_t((*target)[1]);
        l.affine = scaled && scale == PerChannel::Learned;
        m_fused.insert({norm, back});
        if (scaled)
            m_fused.insert({mul, shift});
        if (scaled && scale == PerChannel::Constant)
            for (const std::string* operand : {weight, offset}) {
                auto producer = m_producers.find(*operand); // a constant's Unsqueeze is no layer
                if (producer != m_producers.end() && producer->second->op_type() == "Unsqueeze")
                    m_fused.insert(producer->second);
            }
        add(scaled ? *shift : *back, std::move(l));
        return true;
    }

    /** The node that alone reads `value` (no graph output), if it is an `op` node. */
    const onnx::NodeProto* soleReader(const std::string& value, const std::string& op) const
    {
        auto it = m_readers.find(value);
        if (it == m_readers.end() || it->second.empty())
            return nullptr;
        const onnx::NodeProto* reader = it->second.front().first;
        return reader->op_type() == op && onlyReader(value, *reader) ? reader : nullptr;
    }

    static const std::string& otherOperand(const onnx::NodeProto& node, const std::string& value)
    {
        return node.input(0) == value ? node.input(1) : node.input(0);
    }

    enum class PerChannel { No, Learned, Constant };

    /** Whether `value` is a learned [C, 1, ...] per channel of a rank-`rank` activation (a
     *  weight), or a constant of that shape or [1, 1, ...] (torch's ones and zeros without
     *  affine); either may come unsqueezed. */
    PerChannel perChannel(const std::string& value, int64_t channels, std::size_t rank) const
    {
        auto producer = m_producers.find(value);
        const bool unsqueezed = producer != m_producers.end() && producer->second->op_type() == "Unsqueeze";
        const std::string& source = unsqueezed ? producer->second->input(0) : value;
        auto dims = m_dims.find(value);
        if (dims == m_dims.end() || dims->second.size() + 1 != rank ||
            !std::all_of(dims->second.begin() + 1, dims->second.end(), [](const Dim& d) { return d.size == int64_t(1); }))
            return PerChannel::No;
        const auto first = dims->second[0].size;
        if (m_params.count(source))
            return first == channels ? PerChannel::Learned : PerChannel::No;
        return m_constants.count(source) && (first == channels || first == int64_t(1)) ? PerChannel::Constant : PerChannel::No;
    }

    void checkBlocks() const
    {
        for (std::size_t i = 0; i < m_src.blocks.size(); ++i)
            if (!m_usedBlocks.count(i))
                m_diag.fail(fmt::format("/workload/blocks/{}/prefix", i),
                            fmt::format("no node name of \"{}\" starts with \"{}\"", m_src.path, m_src.blocks[i].prefix));
    }

    void outputs()
    {
        for (const auto& out : m_model.graph().output()) {
            auto it = m_values.find(out.name());
            if (it == m_values.end())
                failFile(fmt::format("graph output \"{}\" is no node's output", out.name()));
            m_spec.outputs.push_back(it->second);
        }
        if (!m_src.crossEntropy)
            return;
        if (m_spec.outputs.empty())
            failFile("expected a graph output (the logits) for \"loss\": \"cross_entropy\"");
        if (std::any_of(m_spec.layers.begin(), m_spec.layers.end(),
                        [](const LayerSpec& l) { return l.kind == LayerKind::CrossEntropy || l.kind == LayerKind::NllLoss; }))
            m_diag.fail("/workload/loss", "expected \"none\": the model has its own loss");
        if (std::any_of(m_spec.inputs.begin(), m_spec.inputs.end(), [](const ModelInput& in) { return in.name == "labels"; }))
            m_diag.fail("/workload/loss", "expected \"none\": the model already has an input \"labels\" (its own loss?)");
        m_spec.inputs.push_back({"labels", {}, true, false, "", std::nullopt});
        LayerSpec loss;
        loss.name = "loss";
        loss.kind = LayerKind::CrossEntropy;
        loss.inputs = {m_spec.outputs.front(), "labels"};
        loss.origin = "the cross-entropy loss /workload/loss adds";
        m_spec.layers.push_back(loss);
        m_spec.outputs.push_back("loss");
    }

    const OnnxSource& m_src;
    const Diagnostics& m_diag;
    onnx::ModelProto m_model;
    ModelSpec m_spec;
    std::set<std::string> m_params;                      // model tensors: initializers, weight-only inputs, buffers
    std::map<std::string, int32_t> m_types;              // element types (TensorProto_DataType) as inferred
    std::set<std::string> m_buffers;                     // model tensors kept but not learned (the config's buffers)
    std::map<std::string, std::vector<Dim>> m_dims;      // value -> its shape, as the file gives or infers it
    std::map<std::string, onnx::TensorProto> m_constants;
    std::map<std::string, std::vector<int64_t>> m_shapeValues; // shape computations' values (data propagation)
    std::vector<onnx::ValueInfoProto> m_dataInputs;
    std::map<std::string, std::vector<std::pair<const onnx::NodeProto*, int>>> m_readers; // value -> (node, operand)
    std::map<std::string, const onnx::NodeProto*> m_producers; // value -> the node that writes it
    std::set<const onnx::NodeProto*> m_fused;            // nodes mapped into the layer of a pattern's first node
    std::vector<std::pair<std::string, std::string>> m_blockers; // each node that cannot be imported: its op, what stops it
    std::set<std::string> m_blocked;                     // values of nodes that were not imported
    std::map<std::string, std::array<uint32_t, 2>> m_padOf; // a zero Pad's output -> the height and width it adds
    std::deque<onnx::NodeProto> m_synthetic;              // nodes an op is imported as (an Einsum's Transpose, MatMul)
    std::map<std::string, std::string> m_values;         // ONNX value -> the model input or layer that holds it
    std::set<std::string> m_layerNames;
    std::set<std::size_t> m_usedBlocks;
    int64_t m_fileBatch = -1;
    std::map<std::string, BatchAt> m_batch;            // data values whose batch is not the leading dimension (OnnxBatch.hpp)
    std::map<std::string, std::string> m_embeddingOf;  // an embedding table (weight) -> its embedding layer
    std::set<std::string> m_zeroStates;                // values of zeros from constants alone (an RNN's initial state)
    std::set<const onnx::NodeProto*> m_zeroStateNodes; // the nodes making them, read by nothing else: not imported
};

} // namespace

const std::vector<OnnxOpRow>& onnxOpTable()
{
    static const std::vector<OnnxOpRow> table = [] {
        std::vector<OnnxOpRow> t{{"Constant", {}, "a value of shape computations and scalar operands"}};
        for (const auto& r : OnnxImporter::rows())
            t.push_back({r.op, r.graphOps, r.how});
        std::sort(t.begin(), t.end(), [](const OnnxOpRow& x, const OnnxOpRow& y) { return x.op < y.op; });
        return t;
    }();
    return table;
}

const std::vector<std::string>& supportedOnnxOps()
{
    static const std::vector<std::string> ops = [] {
        std::vector<std::string> names;
        for (const auto& r : onnxOpTable())
            names.push_back(r.op);
        return names;
    }();
    return ops;
}

namespace {

onnx::ModelProto readModel(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    onnx::ModelProto model;
    if (!in || !model.ParseFromIstream(&in))
        throw ConfigError(path, "", "expected an ONNX model (a ModelProto)");
    return model;
}

} // namespace

std::vector<std::string> onnxGraphInputs(const std::string& path)
{
    const onnx::ModelProto model = readModel(path); // held: the loop reads into it
    std::vector<std::string> names;
    for (const auto& vi : model.graph().input())
        names.push_back(vi.name());
    return names;
}

std::vector<std::string> onnxNodeNames(const std::string& path)
{
    const onnx::ModelProto model = readModel(path);
    std::vector<std::string> names;
    for (const auto& node : model.graph().node())
        names.push_back(node.name());
    return names;
}

ModelSpec importOnnx(const OnnxSource& source, const Diagnostics& diag)
{
    ModelSpec m = OnnxImporter(source, diag).run();
    m.pointer = "/workload/file";
    m.lossPointer = "/workload/loss";
    m.lossExpected = "\"cross_entropy\" (or a SoftmaxCrossEntropyLoss or NegativeLogLikelihoodLoss node in the model)";
    return m;
}

} // namespace ipusim::config
