// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/program/Schedule.hpp"
#include "models/timing/VertexTable.hpp"
#include "workloads/lowering/TileRunsPool.hpp"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ipusim {

using TileVector = std::vector<uint64_t>; // one value per tile, dense, while lowering

TileRuns<uint64_t> toRuns(const TileVector& v);
/** Dense per-tile values of `runs` over `tiles` tiles. */
TileVector toDense(const TileRuns<uint64_t>& runs, uint32_t tiles);
/** Spreads `bytes` over tiles [first, first + tiles) in chunks of whole `grain`s, as Poplar's
 *  linear mapping does: an equal share of whole grains from `first` on, and what is left on
 *  the tile after (tiles 0: every tile from `first`). */
TileRuns<uint64_t> linearMappingRuns(uint32_t totalTiles, uint64_t bytes, uint64_t grain, uint32_t first = 0, uint32_t tiles = 0);
/** The same, dense over `totalTiles`. */
TileVector linearMapping(uint32_t totalTiles, uint64_t bytes, uint64_t grain, uint32_t first = 0, uint32_t tiles = 0);

/** What lowering one op emitted, counted from the op's first program point, so that an
 *  identical op elsewhere can emit it again (ProgramBuilder::record and replay). */
struct EmittedSteps
{
    std::vector<Step> steps;          // points counted from 0
    std::vector<TensorAlloc> tensors; // the tensors it allocated, live from / to as counted
    struct Touch
    {
        int handle = -1;     // a tensor allocated before the op
        uint32_t points = 0; // the op's points emitted before the touch
    };
    std::vector<Touch> touches;
    uint32_t points = 0;
};

/** Emits one IPU's program in order and tracks when each tensor is live. Program points are
 *  numbered as numberPoints() numbers them, so liveness ranges line up with the schedule. */
class ProgramBuilder
{
public:
    /** Runs are kept in `pools`: its own, or those of builders for equivalent IPUs. */
    explicit ProgramBuilder(const IpuParams& hw, std::shared_ptr<TileRunsPools> pools = std::make_shared<TileRunsPools>());

    [[nodiscard]] uint32_t tiles() const { return m_hw.tiles; }
    [[nodiscard]] const IpuParams& hw() const { return m_hw; }
    [[nodiscard]] const std::shared_ptr<TileRunsPools>& pools() const { return m_pools; }

    /** A tensor live from the next emitted point on (or always). Returns its handle. */
    int allocate(const std::string& name, const std::string& kind, const TileVector& bytes, bool alwaysLive = false);
    int allocate(const std::string& name, const std::string& kind, TileRuns<uint64_t> bytes, bool alwaysLive = false);
    /** Extends a tensor's life through the last emitted point. */
    void touch(int handle);
    /** A tensor's bytes per tile as runs: the builder keeps no dense copy (a BERT-Large IPU
     *  has thousands of tensors, each 1,472 tiles wide). The reference lasts until the next
     *  allocate() or replay(). */
    [[nodiscard]] const TileRuns<uint64_t>& bytes(int handle) const { return m_program.tensors.at(std::size_t(handle)).bytes; }
    [[nodiscard]] TileVector denseBytes(int handle) const { return toDense(bytes(handle), m_hw.tiles); }

    void sync();
    /** Skipped when no tile moves a byte. */
    void exchange(const std::string& name, const std::vector<ExchangeBytes>& perTile);
    /** A compute set running `codelets` (their code counts once a tile): `cycles` a tile;
     *  `flops` of one execution, for the per-op-type view (matmuls and convolutions). */
    void compute(const std::string& name, const TileVector& cycles, const std::vector<Codelet>& codelets,
                 uint32_t verticesPerActiveTile = 1, double flops = 0);
    /** A compute set of vertices named by type (a Poplar program's own codelets): `vertices`
     *  instances a tile, the code of each type counted once on each tile that runs it. */
    void compute(const std::string& name, const TileVector& cycles, const std::vector<std::string>& vertexTypes, const TileVector& vertices,
                 double flops = 0);
    void host(const std::string& name, Direction direction, uint64_t bytes, bool prefetch = false, uint32_t prefetchDepth = 1);
    void beginRepeat(const std::string& name, uint64_t count);
    void endRepeat();
    /** Steps from here to endFragment() form a fragment, run by call(). Emit every fragment
     *  before the main program's own points, so liveness follows numberPoints() order. */
    uint32_t beginFragment(const std::string& name);
    void endFragment();
    void call(uint32_t fragment, int64_t microBatch = -1, bool perIteration = false, uint32_t period = 1)
    {
        body().push_back({CallStep{fragment, microBatch, perIteration, period}});
    }
    void ipuCopy(const std::string& name, std::vector<IpuTransfer> send, std::vector<IpuTransfer> recv);
    void externalSync() { body().push_back({SyncStep{SyncKind::External}}); }
    void collective(const std::string& name, CollectiveKind kind, uint64_t bytes, std::vector<uint32_t> ring);
    void streamingMemory(const std::string& name, Direction direction, uint64_t bytes);

    /** Where recording starts: the tensors, steps and touches from here on (record()). */
    struct Mark
    {
        uint32_t point = 0;
        std::size_t tensors = 0, steps = 0;
        const std::vector<Step>* body = nullptr;
    };
    /** Starts noting which earlier tensors are touched (one recording at a time). */
    [[nodiscard]] Mark startRecording();
    /** What was emitted since startRecording() (in the body it began in); stops noting touches. */
    [[nodiscard]] EmittedSteps stopRecording();
    /** Stops noting touches, keeping nothing (a lowering that threw). */
    void cancelRecording() noexcept
    {
        m_recording.reset();
        m_touchLog.clear();
    }
    /** Emits `e` again from the next point: its steps (outline keys taken afresh from their
     *  names), its tensors (handles from the returned one on), its touches of the handles
     *  `touched` gives in their place. */
    int replay(EmittedSteps e, const std::vector<int>& touched);

    /** Outlining (PopART's enableOutlining): steps the rule maps to one non-empty key are one
     *  compiled subgraph called several times, so their code and vertex state exist once. */
    void setOutlineRule(std::function<std::string(const std::string&)> rule) { m_outline = std::move(rule); }

    /** The finished program (liveness closed, points numbered). */
    Program finish(uint32_t ipu);

private:
    std::vector<Step>& body() { return *m_bodies.back(); }

    const IpuParams& m_hw;
    Program m_program;
    std::vector<std::vector<Step>*> m_bodies;
    std::deque<std::vector<Step>> m_fragments;
    uint32_t m_point = 0;
    std::function<std::string(const std::string&)> m_outline;
    /** The outline key of a step named `name` under the rule ("" without one). */
    [[nodiscard]] std::string outlineOf(const std::string& name) const { return m_outline ? m_outline(name) : std::string(); }
    std::optional<Mark> m_recording;
    std::vector<EmittedSteps::Touch> m_touchLog; // of tensors allocated before m_recording
    std::shared_ptr<TileRunsPools> m_pools;
};

} // namespace ipusim
