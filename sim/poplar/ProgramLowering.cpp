// SPDX-License-Identifier: MIT
// A Poplar program onto the simulated IPUs, step by step as Poplar runs it (bulk-synchronous):
//   Execute(cs)   sync; exchange of the inputs its vertices read from other tiles (IPU-Links for
//                 another IPU's); compute (computeSetTileCycles of the vertices on each tile);
//                 then, if outputs live elsewhere, sync and exchange them there.
//   Copy          sync; the elements that change tile are exchanged (IPU-Links between IPUs);
//                 those that stay are copied on their tile (the Copy vertex, an estimate).
//   stream Copy   sync; a host transfer of the tensor's bytes on each IPU holding some.
//   Repeat(n, b)  a loop of n iterations: the simulator runs one and skips the identical rest.
//   Sync          internal (one IPU) or external (every IPU of the device).
// Variables and constants are always live, on the tiles they are mapped to.
#include "models/timing/ComputeSetTiming.hpp"
#include "models/timing/VertexCosts.hpp"
#include "sim/poplar/CompiledGraph.hpp"
#include "sim/poplar/TargetAccess.hpp"
#include "workloads/lowering/ConvPlanner.hpp"
#include "workloads/lowering/ProgramBuilder.hpp"

#include <poplar/exceptions.hpp>

#include <fmt/format.h>

#include <map>
#include <set>

namespace poplar::detail {

namespace {

using ipusim::ExchangeBytes;
using ipusim::ProgramBuilder;
using ipusim::TileVector;

class Lowering
{
public:
    Lowering(const GraphStore& store, const std::vector<std::uint64_t>& vertexCycles, const ControlOutcomes* outcomes)
        : m_store(store), m_cycles(vertexCycles), m_outcomes(outcomes), m_system(systemOf(store.target)), m_ipus(store.target.getNumIPUs()),
          m_tilesPerIpu(store.target.getTilesPerIPU())
    {
        // A compute set's steps share their vertex state and code however often it runs (the
        // outline key, its name, made unique among the graph's compute sets).
        std::map<std::string, unsigned> uses;
        for (const auto& cs : store.computeSets)
            ++uses[cs.name];
        for (unsigned id = 0; id < store.computeSets.size(); ++id) {
            const std::string& name = store.computeSets[id].name;
            m_csName.push_back(uses[name] > 1 ? fmt::format("{} (compute set {})", name, id) : name);
            m_outlined.insert(m_csName.back());
            m_outlined.insert(m_csName.back() + "/exchange");
            m_outlined.insert(m_csName.back() + "/exchange out");
        }
        for (unsigned i = 0; i < m_ipus; ++i) {
            m_b.push_back(std::make_unique<ProgramBuilder>(m_system.ipu));
            m_b.back()->setOutlineRule([this](const std::string& step) { return m_outlined.count(step) ? step : std::string(); });
        }
        m_codeTiles.resize(m_ipus);
        allocateVariables();
    }

    void lower(const ProgramNode& node);

    ipusim::Schedule finish(const std::string& name)
    {
        allocateCode();
        ipusim::Schedule s;
        s.name = name;
        for (unsigned i = 0; i < m_ipus; ++i)
            s.programs.push_back(m_b[i]->finish(m_store.target.ipusimFirstIpu() + i));
        return s;
    }

private:
    /** Bytes moved between tiles of the device: within an IPU per tile, between IPUs per pair. */
    struct Traffic
    {
        std::vector<ExchangeBytes> tiles;
        std::map<std::pair<unsigned, unsigned>, std::uint64_t> links;
        void add(std::uint32_t from, std::uint32_t to, std::uint64_t bytes, unsigned tilesPerIpu)
        {
            if (from == to || bytes == 0)
                return;
            if (from / tilesPerIpu == to / tilesPerIpu) {
                tiles[from].send += bytes;
                tiles[to].recv += bytes;
            } else {
                links[{from / tilesPerIpu, to / tilesPerIpu}] += bytes;
            }
        }
        [[nodiscard]] bool empty() const
        {
            if (!links.empty())
                return false;
            for (const auto& t : tiles)
                if (t.send || t.recv)
                    return false;
            return true;
        }
    };

    [[nodiscard]] Traffic traffic() const { return Traffic{std::vector<ExchangeBytes>(std::size_t(m_ipus) * m_tilesPerIpu), {}}; }

    void allocateVariables();
    /** Each vertex type's code, once on each tile that runs it (the program's own vertices). */
    void allocateCode();
    void syncAll();
    void emit(const Traffic& t, const std::string& name);
    /** Runs of a tensor's elements by the tile they live on: f(tile, elements). */
    template <class F>
    void forEachTileRun(const Tensor& t, F&& f) const;
    void lowerExecute(unsigned cs, const std::string& name);
    void lowerCopy(const CopyNode& copy, const std::string& name);
    void lowerHost(const Tensor& t, ipusim::Direction direction, const std::string& name);
    /** The tile of each of a tensor's elements, in order. */
    [[nodiscard]] std::vector<std::uint32_t> tilesOf(const Tensor& t) const;
    void lowerPoplibs(const PoplibsNode& op, const std::string& name);
    void lowerMatMul(const PoplibsNode& op, const std::string& name);
    /** The next outcome the host run recorded for an If or a RepeatWhile loop. */
    std::uint64_t next(const ProgramNode& node);
    /** Takes the outcomes one run of `node` consumes, appending them to `signature`. */
    void consume(const ProgramNode& node, std::vector<std::uint64_t>& signature);
    /** `n` iterations: consumeOne takes one iteration's outcomes, lowerOne emits one. Where
     *  iterations decide alike they are one loop of them (all of them unless `dependsOnData`). */
    template <class Consume, class Emit>
    void lowerIterations(std::uint64_t n, const std::string& name, bool dependsOnData, Consume consumeOne, Emit lowerOne);
    void beginRepeat(const std::string& name, std::uint64_t count)
    {
        for (auto& b : m_b)
            b->beginRepeat(name, count);
    }
    void endRepeat()
    {
        for (auto& b : m_b)
            b->endRepeat();
    }
    /** A compute set of one `codelet` vertex on each tile with cycles; none where 0. */
    void computeOnTiles(const std::string& name, const std::vector<std::uint64_t>& cycles, const std::string& codelet);

    const GraphStore& m_store;
    const std::vector<std::uint64_t>& m_cycles;
    const ControlOutcomes* m_outcomes;
    std::map<const ProgramNode*, std::size_t> m_cursor; // outcomes taken so far, by node
    ipusim::SystemParams m_system;
    unsigned m_ipus;
    unsigned m_tilesPerIpu;
    std::vector<std::unique_ptr<ProgramBuilder>> m_b;
    std::vector<std::string> m_csName;                          // by compute set: its steps' name
    std::set<std::string> m_outlined;                           // the names of steps sharing their code
    std::vector<std::map<std::string, std::set<unsigned>>> m_codeTiles; // by IPU: the tiles running each vertex type
};

template <class F>
void Lowering::forEachTileRun(const Tensor& t, F&& f) const
{
    for (const auto& r : t.regions()) {
        const auto& tiles = m_store.variables[r.var].tile;
        std::size_t e = r.begin;
        while (e < r.end) {
            std::size_t end = e + 1;
            while (end < r.end && tiles[end] == tiles[e])
                ++end;
            f(tiles[e], end - e);
            e = end;
        }
    }
}

void Lowering::allocateVariables()
{
    for (const auto& v : m_store.variables) {
        std::vector<TileVector> bytes(m_ipus, TileVector(m_tilesPerIpu, 0));
        for (std::size_t e = 0; e < v.elements; ++e)
            bytes[v.tile[e] / m_tilesPerIpu][v.tile[e] % m_tilesPerIpu] += v.type.size();
        for (unsigned i = 0; i < m_ipus; ++i) {
            bool any = false;
            for (auto b : bytes[i])
                any = any || b;
            if (any)
                m_b[i]->allocate(v.name, v.constant ? "constant" : "variable", bytes[i], true);
        }
    }
}

void Lowering::allocateCode()
{
    for (unsigned i = 0; i < m_ipus; ++i) {
        TileVector bytes(m_tilesPerIpu, 0);
        for (const auto& [type, tiles] : m_codeTiles[i])
            for (unsigned t : tiles)
                bytes[t] += m_system.ipu.codeBytesPerVertexType;
        if (!m_codeTiles[i].empty())
            m_b[i]->allocate("vertex code (the program's codelets)", "code", bytes, true);
    }
}

void Lowering::syncAll()
{
    for (auto& b : m_b) {
        if (m_ipus == 1)
            b->sync();
        else
            b->externalSync();
    }
}

void Lowering::emit(const Traffic& t, const std::string& name)
{
    for (unsigned i = 0; i < m_ipus; ++i) {
        std::vector<ExchangeBytes> local(t.tiles.begin() + std::ptrdiff_t(i) * m_tilesPerIpu,
                                         t.tiles.begin() + std::ptrdiff_t(i + 1) * m_tilesPerIpu);
        m_b[i]->exchange(name, local);
        std::vector<ipusim::IpuTransfer> send, recv;
        for (const auto& [pair, bytes] : t.links) {
            const unsigned first = m_store.target.ipusimFirstIpu();
            if (pair.first == i)
                send.push_back({first + pair.second, bytes});
            if (pair.second == i)
                recv.push_back({first + pair.first, bytes});
        }
        if (!send.empty() || !recv.empty())
            m_b[i]->ipuCopy(name + " (IPU-Links)", send, recv);
    }
}

void Lowering::lowerExecute(unsigned cs, const std::string& name)
{
    const auto& set = m_store.computeSets[cs];
    Traffic in = traffic(), out = traffic();
    std::map<std::uint32_t, std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>> perTile; // worker, whole-tile vertices
    std::vector<bool> active(m_ipus, false);
    for (unsigned id : set.vertices) {
        const VertexRecord& v = m_store.vertices[id];
        auto& [workers, whole] = perTile[v.tile];
        (v.codelet->kind == VertexKind::Worker ? workers : whole).push_back(m_cycles[id]);
        active[v.tile / m_tilesPerIpu] = true;
        m_codeTiles[v.tile / m_tilesPerIpu][v.type].insert(v.tile % m_tilesPerIpu);
        for (const auto& [fieldName, f] : v.fields) {
            const auto dir = f.info->direction;
            if (dir == FieldDirection::State)
                continue;
            const std::uint64_t size = f.info->elementSize;
            for (const auto& edge : f.edges)
                forEachTileRun(*edge, [&](std::uint32_t tile, std::size_t n) {
                    if (dir != FieldDirection::Output)
                        in.add(tile, v.tile, n * size, m_tilesPerIpu);
                    if (dir != FieldDirection::Input)
                        out.add(v.tile, tile, n * size, m_tilesPerIpu);
                });
        }
    }
    syncAll();
    emit(in, name + "/exchange");
    for (unsigned i = 0; i < m_ipus; ++i) {
        if (!active[i])
            continue;
        TileVector cycles(m_tilesPerIpu, 0), vertices(m_tilesPerIpu, 0);
        for (const auto& [tile, lists] : perTile) {
            if (tile / m_tilesPerIpu != i)
                continue;
            cycles[tile % m_tilesPerIpu] = ipusim::computeSetTileCycles(lists.first, lists.second, m_system.ipu.workers);
            vertices[tile % m_tilesPerIpu] = lists.first.size() + lists.second.size();
        }
        m_b[i]->compute(name, cycles, std::vector<std::string>{}, vertices); // code: allocateCode
    }
    if (!out.empty()) {
        syncAll();
        emit(out, name + "/exchange out");
    }
}

void Lowering::lowerCopy(const CopyNode& copy, const std::string& name)
{
    // Element by element, in runs where both sides stay on one tile each.
    Traffic moved = traffic();
    std::vector<std::uint64_t> onTile(std::size_t(m_ipus) * m_tilesPerIpu, 0);
    const std::uint64_t size = copy.src.elementType().size();
    const std::vector<std::uint32_t> srcTiles = tilesOf(copy.src);
    std::size_t at = 0;
    forEachTileRun(copy.dst, [&](std::uint32_t tile, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k, ++at) {
            if (srcTiles[at] == tile)
                onTile[tile] += size;
            else
                moved.add(srcTiles[at], tile, size, m_tilesPerIpu);
        }
    });
    syncAll();
    emit(moved, name);
    for (unsigned i = 0; i < m_ipus; ++i) {
        TileVector cycles(m_tilesPerIpu, 0), vertices(m_tilesPerIpu, 0);
        bool any = false;
        for (unsigned t = 0; t < m_tilesPerIpu; ++t)
            if (const std::uint64_t bytes = onTile[std::size_t(i) * m_tilesPerIpu + t]) {
                cycles[t] = ipusim::costs::copy(m_system.ipu, bytes, unsigned(size));
                vertices[t] = 1;
                any = true;
            }
        if (any)
            m_b[i]->compute(name + " (on tile)", cycles, {"Copy"}, vertices);
    }
}

void Lowering::lowerHost(const Tensor& t, ipusim::Direction direction, const std::string& name)
{
    std::vector<std::uint64_t> bytes(m_ipus, 0);
    forEachTileRun(t, [&](std::uint32_t tile, std::size_t n) { bytes[tile / m_tilesPerIpu] += n * t.elementType().size(); });
    syncAll();
    for (unsigned i = 0; i < m_ipus; ++i)
        if (bytes[i])
            m_b[i]->host(name, direction, bytes[i]);
}

std::uint64_t Lowering::next(const ProgramNode& node)
{
    const std::size_t index = m_cursor[&node]++;
    const bool isIf = std::holds_alternative<IfNode>(node.op);
    if (m_outcomes)
        if (const auto it = m_outcomes->taken.find(&node); it != m_outcomes->taken.end() && index < it->second.size())
            return it->second[index];
    throw poplar_error(fmt::format("{} '{}': the simulated run follows the {} the host run took, and it recorded none: a program "
                                   "whose control flow depends on its data cannot run timing only (IPUSIM_FUNCTIONAL=0)",
                                   isIf ? "If" : "RepeatWhile loop", node.name, isIf ? "branches" : "iterations"));
}

void Lowering::consume(const ProgramNode& node, std::vector<std::uint64_t>& signature)
{
    if (!dependsOnData(node))
        return;
    std::visit(
        [&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, SequenceNode>) {
                for (const auto& c : op.children)
                    consume(*c, signature);
            } else if constexpr (std::is_same_v<T, RepeatNode>) {
                for (unsigned i = 0; i < op.count; ++i)
                    consume(*op.body, signature);
            } else if constexpr (std::is_same_v<T, IfNode>) {
                const std::uint64_t taken = next(node);
                signature.push_back(taken);
                consume(taken ? *op.then : *op.otherwise, signature);
            } else if constexpr (std::is_same_v<T, RepeatWhileNode>) {
                const std::uint64_t iterations = next(node);
                signature.push_back(iterations);
                consume(*op.condition, signature);
                for (std::uint64_t i = 0; i < iterations; ++i) {
                    consume(*op.body, signature);
                    consume(*op.condition, signature);
                }
            }
        },
        node.op);
}

template <class Consume, class Emit>
void Lowering::lowerIterations(std::uint64_t n, const std::string& name, bool dynamic, Consume consumeOne, Emit lowerOne)
{
    if (n == 0)
        return;
    if (!dynamic) {
        beginRepeat(name, n);
        lowerOne();
        endRepeat();
        return;
    }
    // Iterations deciding alike (the same outcomes, in order) run the same steps: a loop each run
    // of them, its body lowered once.
    const auto start = m_cursor;
    std::vector<std::vector<std::uint64_t>> signatures(n);
    for (auto& s : signatures)
        consumeOne(s);
    m_cursor = start;
    for (std::uint64_t i = 0; i < n;) {
        std::uint64_t j = i + 1;
        while (j < n && signatures[j] == signatures[i])
            ++j;
        const auto before = m_cursor;
        if (j - i > 1)
            beginRepeat(name, j - i);
        lowerOne();
        if (j - i > 1)
            endRepeat();
        m_cursor = before;
        std::vector<std::uint64_t> skipped;
        for (std::uint64_t k = i; k < j; ++k)
            consumeOne(skipped);
        i = j;
    }
}

std::vector<std::uint32_t> Lowering::tilesOf(const Tensor& t) const
{
    std::vector<std::uint32_t> out;
    out.reserve(t.numElements());
    forEachTileRun(t, [&](std::uint32_t tile, std::size_t n) { out.insert(out.end(), n, tile); });
    return out;
}

void Lowering::computeOnTiles(const std::string& name, const std::vector<std::uint64_t>& cycles, const std::string& codelet)
{
    for (unsigned i = 0; i < m_ipus; ++i) {
        TileVector c(cycles.begin() + std::ptrdiff_t(i) * m_tilesPerIpu, cycles.begin() + std::ptrdiff_t(i + 1) * m_tilesPerIpu);
        TileVector vertices(m_tilesPerIpu, 0);
        bool any = false;
        for (unsigned t = 0; t < m_tilesPerIpu; ++t)
            if (c[t]) {
                vertices[t] = 1;
                any = true;
            }
        if (any)
            m_b[i]->compute(name, c, {codelet}, vertices);
    }
}

void Lowering::lowerPoplibs(const PoplibsNode& op, const std::string& name)
{
    if (op.kind == PoplibsNode::Kind::MatMul)
        return lowerMatMul(op, name);
    // One vertex a tile over the tile's elements of the output, its operands' elements brought to
    // it: element i of an operand to the tile of output i (a single-element operand to every tile
    // of the output; a reduction's input element to the tile of the output it adds to).
    const std::vector<std::uint32_t> outTiles = tilesOf(op.output);
    const std::size_t size = op.output.elementType().size();
    Traffic in = traffic();
    for (const Tensor& input : op.inputs) {
        const std::vector<std::uint32_t> inTiles = tilesOf(input);
        if (inTiles.size() == 1 && outTiles.size() != 1) {
            std::set<std::uint32_t> targets(outTiles.begin(), outTiles.end());
            for (std::uint32_t t : targets)
                in.add(inTiles[0], t, size, m_tilesPerIpu);
            continue;
        }
        for (std::size_t e = 0; e < inTiles.size(); ++e)
            in.add(inTiles[e], outTiles[op.kind == PoplibsNode::Kind::Reduce ? op.reduceOutputOf[e] : e], size, m_tilesPerIpu);
    }
    std::vector<std::uint64_t> elements(std::size_t(m_ipus) * m_tilesPerIpu, 0);
    for (std::uint32_t t : outTiles)
        ++elements[t];
    const ipusim::Precision type = op.output.elementType() == HALF ? ipusim::Precision::FP16 : ipusim::Precision::FP32;
    std::vector<std::uint64_t> cycles(elements.size(), 0);
    for (std::size_t t = 0; t < elements.size(); ++t) {
        if (!elements[t])
            continue;
        ipusim::VertexArgs args = ipusim::ElementArgs{type, elements[t]};
        if (op.kind == PoplibsNode::Kind::Reduce)
            args = ipusim::ReduceArgs{ipusim::Precision::FP32, type, elements[t], op.partialsPerOutput, 0};
        cycles[t] = ipusim::cyclesOf(m_system.ipu, ipusim::VertexCall{*op.codelet, args});
    }
    syncAll();
    emit(in, name + "/exchange");
    computeOnTiles(name, cycles, ipusim::codeletNames({*op.codelet}).front());
}

void Lowering::lowerMatMul(const PoplibsNode& op, const std::string& name)
{
    // The plan the compiler gives a model's matmul of this shape, on the tiles of the graph it
    // was made in: each of its tiles receives its share of the operands (from the tiles that
    // hold them, each sending in proportion to what it holds), runs its AMP vertex, and, with
    // the reduction split over tiles, exchanges and reduces its partials.
    ipusim::IpuParams hw = m_system.ipu;
    hw.tiles = op.tiles;
    const ipusim::ConvPlan plan = ipusim::planConv(hw, op.problem);
    const std::uint32_t used = std::uint32_t(std::min<std::uint64_t>(plan.tilesUsed(), op.tiles));
    Traffic in = traffic();
    const std::uint64_t perTile = plan.inputBytesPerTile + plan.weightBytesPerTile;
    std::map<std::uint32_t, std::uint64_t> held;
    std::uint64_t heldTotal = 0;
    for (const Tensor& operand : op.inputs)
        forEachTileRun(operand, [&](std::uint32_t tile, std::size_t n) {
            held[tile] += n * operand.elementType().size();
            heldTotal += n * operand.elementType().size();
        });
    const std::uint64_t total = perTile * used;
    const unsigned planIpu = op.firstTile / m_tilesPerIpu;
    for (const auto& [tile, bytes] : held) {
        const std::uint64_t send = heldTotal ? (total * bytes + heldTotal - 1) / heldTotal : 0;
        if (tile / m_tilesPerIpu == planIpu)
            in.tiles[tile].send += send;
        else
            in.links[{tile / m_tilesPerIpu, planIpu}] += send;
    }
    std::vector<std::uint64_t> compute(std::size_t(m_ipus) * m_tilesPerIpu, 0), reduce = compute;
    for (std::uint32_t t = op.firstTile; t < op.firstTile + used; ++t) {
        in.tiles[t].recv += perTile;
        compute[t] = plan.computeCycles;
        reduce[t] = plan.reduceCycles;
    }
    const int temporaries = m_b[planIpu]->allocate(name + "/temporaries", "temporary", [&] {
        TileVector bytes(m_tilesPerIpu, 0);
        for (std::uint32_t t = op.firstTile; t < op.firstTile + used; ++t)
            bytes[t % m_tilesPerIpu] = plan.tempBytesPerTile();
        return bytes;
    }());
    syncAll();
    emit(in, name + "/exchange");
    computeOnTiles(name, compute, "ConvPartial1x1Out");
    if (plan.tilesPerInGroups > 1 && plan.reduceCycles > 0) {
        Traffic partials = traffic();
        for (std::uint32_t t = op.firstTile; t < op.firstTile + used; ++t)
            partials.tiles[t] = {plan.partialBytesPerTile, plan.partialBytesPerTile, 0};
        syncAll();
        emit(partials, name + "/partials");
        computeOnTiles(name + "/reduce", reduce, "ReducePartials");
    }
    m_b[planIpu]->touch(temporaries);
}

void Lowering::lower(const ProgramNode& node)
{
    std::visit(
        [&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, SequenceNode>) {
                for (const auto& c : op.children)
                    lower(*c);
            } else if constexpr (std::is_same_v<T, ExecuteNode>) {
                lowerExecute(op.computeSet, m_csName.at(op.computeSet));
            } else if constexpr (std::is_same_v<T, CopyNode>) {
                lowerCopy(op, node.name.empty() ? "Copy" : node.name);
            } else if constexpr (std::is_same_v<T, StreamToTensorNode>) {
                lowerHost(op.dst, ipusim::Direction::ToIpu, node.name.empty() ? "stream " + op.stream.handle() : node.name);
            } else if constexpr (std::is_same_v<T, TensorToStreamNode>) {
                lowerHost(op.src, ipusim::Direction::FromIpu, node.name.empty() ? "stream " + op.stream.handle() : node.name);
            } else if constexpr (std::is_same_v<T, RepeatNode>) {
                lowerIterations(
                    op.count, node.name.empty() ? "Repeat" : node.name, dependsOnData(*op.body),
                    [&](std::vector<std::uint64_t>& signature) { consume(*op.body, signature); }, [&] { lower(*op.body); });
            } else if constexpr (std::is_same_v<T, RemoteCopyNode>) {
                // A load or store of each IPU's share of the tensor through its gateway.
                std::vector<std::uint64_t> bytes(m_ipus, 0);
                forEachTileRun(op.tensor, [&](std::uint32_t tile, std::size_t n) { bytes[tile / m_tilesPerIpu] += n * op.tensor.elementType().size(); });
                syncAll();
                const std::string name = node.name.empty() ? "remote buffer " + op.buffer.handle() : node.name;
                for (unsigned i = 0; i < m_ipus; ++i)
                    if (bytes[i])
                        m_b[i]->streamingMemory(name, op.store ? ipusim::Direction::FromIpu : ipusim::Direction::ToIpu, bytes[i]);
            } else if constexpr (std::is_same_v<T, IfNode>) {
                // The supervisor reads the predicate once its writers have synced; then the branch.
                const std::uint64_t taken = next(node);
                syncAll();
                lower(taken ? *op.then : *op.otherwise);
            } else if constexpr (std::is_same_v<T, RepeatWhileNode>) {
                // The condition, then each iteration's body and condition, a sync before each reading.
                const std::uint64_t iterations = next(node);
                lower(*op.condition);
                syncAll();
                lowerIterations(
                    iterations, node.name.empty() ? "RepeatWhile" : node.name, dependsOnData(*op.body) || dependsOnData(*op.condition),
                    [&](std::vector<std::uint64_t>& signature) {
                        consume(*op.body, signature);
                        consume(*op.condition, signature);
                    },
                    [&] {
                        lower(*op.body);
                        lower(*op.condition);
                        syncAll();
                    });
            } else if constexpr (std::is_same_v<T, SyncNode>) {
                if (op.type == SyncType::INTERNAL || m_ipus == 1)
                    for (auto& b : m_b)
                        b->sync();
                else
                    for (auto& b : m_b)
                        b->externalSync();
            } else if constexpr (std::is_same_v<T, PoplibsNode>) {
                lowerPoplibs(op, node.name);
            } else if constexpr (std::is_same_v<T, PrintTensorNode>) {
                lowerHost(op.tensor, ipusim::Direction::FromIpu, "PrintTensor " + op.title);
            } else if constexpr (std::is_same_v<T, WriteUndefNode>) {
                // No work: the tensor's bytes stay where they are.
            }
        },
        node.op);
}

} // namespace

ipusim::Schedule lowerProgram(const GraphStore& store, const std::vector<std::uint64_t>& vertexCycles, const ProgramNode& program,
                              const std::string& name, const ControlOutcomes* outcomes)
{
    Lowering l(store, vertexCycles, outcomes);
    l.lower(program);
    return l.finish(name);
}

namespace {

/** The program as it is now: the engine's own copy of its nodes (the user's Sequences may grow
 *  after), shared subprograms still shared; a program holding itself is refused. */
NodePtr snapshot(const NodePtr& node, std::map<const ProgramNode*, NodePtr>& copies, std::set<const ProgramNode*>& path)
{
    if (const auto it = copies.find(node.get()); it != copies.end())
        return it->second;
    if (!path.insert(node.get()).second)
        throw invalid_program(fmt::format("program '{}' holds itself (a Sequence added to one inside it): programs are trees", node->name));
    auto copy = std::make_shared<ProgramNode>(*node);
    auto sub = [&](NodePtr& child) { child = snapshot(child, copies, path); };
    std::visit(
        [&](auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, SequenceNode>) {
                for (auto& c : op.children)
                    sub(c);
            } else if constexpr (std::is_same_v<T, RepeatNode>) {
                sub(op.body);
            } else if constexpr (std::is_same_v<T, IfNode>) {
                sub(op.then);
                sub(op.otherwise);
            } else if constexpr (std::is_same_v<T, RepeatWhileNode>) {
                sub(op.condition);
                sub(op.body);
            }
        },
        copy->op);
    path.erase(node.get());
    copies[node.get()] = copy;
    return copy;
}

} // namespace

std::shared_ptr<CompiledGraph> compile(const Graph& graph, ArrayRef<program::Program> programs)
{
    auto c = std::make_shared<CompiledGraph>();
    c->store = std::make_shared<GraphStore>(*graph.store());
    std::map<const ProgramNode*, NodePtr> copies;
    std::set<const ProgramNode*> path;
    for (const auto& p : programs)
        c->programs.push_back(snapshot(p.node(), copies, path));
    checkGraph(*c->store, c->programs);
    c->vertexCycles = priceVertices(*c->store);
    for (std::size_t i = 0; i < c->programs.size(); ++i) {
        c->schedules.emplace_back(); // a program whose control flow depends on its data is lowered as each run goes
        if (!dependsOnData(*c->programs[i]))
            c->schedules.back() = lowerProgram(*c->store, c->vertexCycles, *c->programs[i], programName(i));
    }
    return c;
}

} // namespace poplar::detail
