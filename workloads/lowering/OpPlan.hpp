// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/Schedule.hpp"
#include "models/timing/VertexTable.hpp"
#include "workloads/lowering/ProgramBuilder.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <string>
#include <variant>
#include <vector>

// What lowering one op decides, before anything is emitted: its exchanges, the vertices each
// tile runs, and which tensors each step reads and writes. GraphLowering::emit turns a plan into
// the program's steps and tensor lifetimes, so the codelets charged to code memory and the
// cycles come from one list of vertex calls, and a tensor lives exactly from the step that
// writes it to the last step that reads it (the way MLIR's patterns return ops for one rewriter
// to insert, rather than each pattern editing the IR).
namespace ipusim {

/** A tensor a plan names: one of the graph's, or a temporary the plan declares. */
struct PlanTensor
{
    static PlanTensor graph(int tensor) { return {tensor, -1}; }
    static PlanTensor temporary(int index) { return {-1, index}; }
    int graphTensor = -1; // set for a graph tensor
    int temporaryIndex = -1;
};

/** One vertex call a tile makes `times` over (worker vertices run side by side, a batch of them
 *  at a time, each batch as long as one). */
struct TileCall
{
    VertexCall call;
    uint64_t times = 1;
    friend bool operator==(const TileCall& a, const TileCall& b) { return a.times == b.times && a.call == b.call; }
};

/** Per tile, the vertices one compute set runs, in order. Tiles making the same calls as the
 *  tile before share one list: a compute set spans up to 1,472 tiles, most in runs of equal
 *  shares, and a list per tile would be as many copies (and pricings). */
class TileCalls
{
public:
    explicit TileCalls(uint32_t tiles) : m_listOf(tiles, kNone) {}
    /** Appends `call` to tile `tile`'s calls (`times` over; none when 0). */
    void add(uint32_t tile, VertexCall call, uint64_t times = 1);
    /** Appends `calls` to tile `tile`'s. A lowering that keeps each distinct share's calls
     *  (tiles hold a few) passes the same list for a run of tiles, which then share it at once. */
    void add(uint32_t tile, const std::vector<VertexCall>& calls)
    {
        if (!sharesWithTileBefore(tile, &calls))
            addList(tile, calls);
    }
    void add(uint32_t tile, const std::vector<TileCall>& calls)
    {
        if (!sharesWithTileBefore(tile, &calls))
            addList(tile, calls);
    }
    /** A list is known by its address while the calls are added: a temporary's could be reused. */
    void add(uint32_t tile, std::vector<VertexCall>&& calls) = delete;
    void add(uint32_t tile, std::vector<TileCall>&& calls) = delete;
    [[nodiscard]] uint32_t tiles() const { return uint32_t(m_listOf.size()); }
    /** Calls kept together: a list of them is a range of one pool (no allocation a list). */
    struct Span
    {
        const TileCall* first = nullptr;
        const TileCall* last = nullptr;
        [[nodiscard]] const TileCall* begin() const { return first; }
        [[nodiscard]] const TileCall* end() const { return last; }
        [[nodiscard]] std::size_t size() const { return std::size_t(last - first); }
    };
    /** Tile `tile`'s calls (none for an idle tile). */
    [[nodiscard]] Span on(uint32_t tile) const;
    /** The list tile `tile` makes its calls from, shared by tiles making the same calls in a
     *  row; kNone for an idle tile. */
    [[nodiscard]] uint32_t listOf(uint32_t tile) const
    {
        if (m_open != kNone)
            close();
        return m_listOf.at(tile);
    }
    /** The lowering's list a list of calls was given from whole, or null: lists given from one
     *  are equal (a lowering keeps a share's calls unchanged while it adds them). */
    [[nodiscard]] const void* sourceOf(uint32_t list) const { return m_sourceOf.at(list); }
    static constexpr uint32_t kNone = UINT32_MAX;

private:
    /** Keeps the calls being added to the open tile: the list of the tile before it when
     *  equal, else a list of their own. Adding resumes on reading (hence const, on mutable state). */
    void close() const;
    template <class Call>
    void addList(uint32_t tile, const std::vector<Call>& calls);
    /** The fast path of a run of tiles given one list: the tile before was given `calls` whole. */
    bool sharesWithTileBefore(uint32_t tile, const void* calls)
    {
        if (calls != m_lastAdded || tile != m_lastAddedTile + 1 || m_open != kNone || tile >= m_listOf.size() || m_listOf[tile] != kNone)
            return false;
        m_listOf[tile] = m_listOf[tile - 1];
        m_lastAddedTile = tile;
        return true;
    }

    mutable std::vector<uint32_t> m_listOf;         // per tile: its list, or kNone
    mutable std::vector<TileCall> m_pool;                         // every list's calls, one after another
    mutable std::vector<std::pair<uint32_t, uint32_t>> m_lists;   // per list: its first call in the pool and how many
    mutable uint32_t m_open = kNone;                // the tile being added to
    mutable std::vector<TileCall> m_adding;         // its calls so far
    mutable const void* m_addingFrom = nullptr;     // the list they were given from whole, if so
    mutable std::vector<const void*> m_sourceOf;    // per list: the list it was given from whole, or null
    const void* m_lastAdded = nullptr; // the list the tile before was given whole
    uint32_t m_lastAddedTile = kNone;
};

/** A lowering's vertex calls for each distinct share a tile holds (tiles hold a few): each
 *  made once and given whole, so that a run of tiles with one share shares one list. */
template <class Key, class Recipe = std::vector<VertexCall>>
class ShareRecipes
{
public:
    template <class Make>
    const Recipe& operator()(const Key& key, Make&& make)
    {
        auto [it, added] = m_made.try_emplace(key);
        if (added)
            it->second = make();
        return it->second;
    }
    [[nodiscard]] bool empty() const { return m_made.empty(); }

private:
    std::map<Key, Recipe> m_made;
};

/** A compute set: its vertices per tile. `verticesPerActiveTile` counts vertex state and
 *  `flops` one execution's model FLOPs (matmuls and convolutions), as ProgramBuilder::compute. */
struct ComputePlan
{
    std::string name;
    TileCalls calls;
    uint32_t verticesPerActiveTile = 1;
    double flops = 0;
};

/** An exchange: the bytes each tile sends and receives. */
struct ExchangePlan
{
    std::string name;
    std::vector<ExchangeBytes> bytes;
};

/** Data to or from the host (a HostTransferStep). */
struct HostPlan
{
    std::string name;
    Direction direction = Direction::ToIpu;
    uint64_t bytes = 0;
    bool prefetch = false;
    uint32_t prefetchDepth = 1;
};

/** Data to or from Streaming Memory. */
struct StreamingMemoryPlan
{
    std::string name;
    Direction direction = Direction::ToIpu;
    uint64_t bytes = 0;
};

/** A collective over the IPU-Links of a ring of replicas (skipped with fewer than two or no bytes). */
struct CollectivePlan
{
    std::string name;
    CollectiveKind kind = CollectiveKind::AllReduce;
    uint64_t bytes = 0;
    std::vector<uint32_t> ring;
};

/** The plan's steps up to the matching EndRepeatPlan run `count` times, once per step of a
 *  recurrent layer's sequence (Poplar's Repeat program, as popnn's RNNs loop over time). */
struct RepeatPlan
{
    std::string name;
    uint64_t count = 1;
};
struct EndRepeatPlan
{
};

/** A step of the plan, after a sync when `sync` is set. */
struct PlanStep
{
    std::variant<ExchangePlan, ComputePlan, HostPlan, StreamingMemoryPlan, CollectivePlan, RepeatPlan, EndRepeatPlan> work;
    bool sync = true;
    std::vector<PlanTensor> reads;  // live through this step
    std::vector<PlanTensor> writes; // the plan's new tensors this step brings into being

    PlanStep& read(PlanTensor t)
    {
        reads.push_back(t);
        return *this;
    }
    PlanStep& read(const std::vector<int>& graphTensors)
    {
        for (int t : graphTensors)
            reads.push_back(PlanTensor::graph(t));
        return *this;
    }
    PlanStep& read(const std::vector<PlanTensor>& tensors)
    {
        reads.insert(reads.end(), tensors.begin(), tensors.end());
        return *this;
    }
    PlanStep& write(PlanTensor t)
    {
        writes.push_back(t);
        return *this;
    }
};

/** One op's plan. A temporary comes into being at the step that writes it, an output at the step
 *  that writes it or, when none does, as the op ends (the next op's first point); each lives
 *  through the last step that reads it, and later ops' reads extend it. */
struct OpPlan
{
    /** A tensor of the op's own: a temporary, or a buffer held for the whole run. */
    struct Temporary
    {
        std::string name;
        TileRuns<uint64_t> bytes;
        std::string kind = "temporary";
        bool alwaysLive = false;
    };
    /** A graph tensor the op produces: placed as `bytes`, or in place of `source`'s. */
    struct Output
    {
        int tensor = -1;
        TileRuns<uint64_t> bytes;
        int source = -1; // an in-place result: the graph tensor whose placement it takes over
        /** Set for a copy brought in from Streaming Memory: its name and kind, live only from
         *  its load to its store (else named and held as its role says). */
        std::optional<std::pair<std::string, std::string>> streamed;
    };
    std::vector<Temporary> temporaries;
    std::vector<Output> outputs;
    std::vector<PlanStep> steps;

    PlanTensor temporary(std::string name, const TileVector& bytes)
    {
        temporaries.push_back({std::move(name), toRuns(bytes)});
        return PlanTensor::temporary(int(temporaries.size()) - 1);
    }
    /** A buffer of `kind` held for the whole run (the IO tiles' input buffers, output sums). */
    PlanTensor buffer(std::string name, std::string kind, TileRuns<uint64_t> bytes)
    {
        temporaries.push_back({std::move(name), std::move(bytes), std::move(kind), true});
        return PlanTensor::temporary(int(temporaries.size()) - 1);
    }
    PlanTensor output(int tensor, TileRuns<uint64_t> bytes)
    {
        outputs.push_back({tensor, std::move(bytes), -1, std::nullopt});
        return PlanTensor::graph(tensor);
    }
    PlanTensor output(int tensor, const TileVector& bytes) { return output(tensor, toRuns(bytes)); }
    /** `tensor` is `source` updated in place. */
    void inPlace(int tensor, int source) { outputs.push_back({tensor, {}, source, std::nullopt}); }
    /** `tensor`, placed as `bytes`, brought in from Streaming Memory under `name` and `kind`. */
    PlanTensor streamed(int tensor, TileRuns<uint64_t> bytes, std::string name, std::string kind)
    {
        outputs.push_back({tensor, std::move(bytes), -1, std::make_pair(std::move(name), std::move(kind))});
        return PlanTensor::graph(tensor);
    }

    PlanStep& exchange(std::string name, std::vector<ExchangeBytes> bytes, bool sync = true)
    {
        steps.push_back({ExchangePlan{std::move(name), std::move(bytes)}, sync, {}, {}});
        return steps.back();
    }
    PlanStep& compute(ComputePlan c, bool sync = true)
    {
        steps.push_back({std::move(c), sync, {}, {}});
        return steps.back();
    }
    PlanStep& host(HostPlan h)
    {
        steps.push_back({std::move(h), false, {}, {}});
        return steps.back();
    }
    PlanStep& streamingMemory(StreamingMemoryPlan s)
    {
        steps.push_back({std::move(s), true, {}, {}});
        return steps.back();
    }
    PlanStep& collective(CollectivePlan c)
    {
        steps.push_back({std::move(c), true, {}, {}});
        return steps.back();
    }
    /** The steps from here to endRepeat() run `count` times. */
    PlanStep& repeat(std::string name, uint64_t count)
    {
        steps.push_back({RepeatPlan{std::move(name), count}, false, {}, {}});
        return steps.back();
    }
    PlanStep& endRepeat()
    {
        steps.push_back({EndRepeatPlan{}, false, {}, {}});
        return steps.back();
    }
};

/** Each tile's cycles for `calls`, every call priced by its row (tiles with the calls of the
 *  tile before are priced once); `codelets` gets the codelets called, each once, in order. */
TileVector pricedCycles(const IpuParams& hw, const TileCalls& calls, std::vector<Codelet>& codelets);

} // namespace ipusim
