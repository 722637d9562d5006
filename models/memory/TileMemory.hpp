// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/program/Schedule.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipusim {

/** One tile's memory: always-live bytes, the peak of not-always-live bytes and where it peaks,
 *  and where it first needs more than the tile has. */
struct TileMemoryUse
{
    static constexpr uint32_t kNever = UINT32_MAX;
    uint64_t alwaysLive = 0;
    uint64_t notAlwaysLivePeak = 0;
    uint32_t peakPoint = 0;
    uint32_t firstOverPoint = kNever; // the first program point over capacity
    uint64_t firstOverBytes = 0;      // the bytes live there
    [[nodiscard]] uint64_t peak() const { return alwaysLive + notAlwaysLivePeak; }
};

struct LiveTensor
{
    std::string name, kind;
    uint64_t bytes = 0;
    bool alwaysLive = false;
};

/** Static memory accounting of one IPU's program, as Poplar's compiler does it: every tensor
 *  (plus vertex code, vertex state, control and exchange code) is placed per tile, and
 *  not-always-live tensors overlap only where their program-point ranges overlap. */
class TileMemory
{
public:
    TileMemory(const Program& program, const IpuParams& hw);
    /** As above; when `same` accounted the same not-always-live tensors (bytes and lifetimes;
     *  names may differ), as an IPU whose program replays another's does (a pipeline's middle
     *  stages: their stash depths, always live, differ), its peaks are taken instead of sweeping
     *  the program points again, as long as every tile fits. */
    TileMemory(const Program& program, const IpuParams& hw, const TileMemory* same);

    [[nodiscard]] const std::vector<TileMemoryUse>& tiles() const { return m_tiles; }
    [[nodiscard]] uint64_t capacity() const { return m_capacity; }
    [[nodiscard]] bool fits() const;
    /** Tiles ordered by peak, largest first (at most n). */
    [[nodiscard]] std::vector<uint32_t> worstTiles(std::size_t n) const;
    /** Tensors on `tile` live at its peak point, largest first. */
    [[nodiscard]] std::vector<LiveTensor> liveAtPeak(uint32_t tile) const { return liveAt(tile, m_tiles.at(tile).peakPoint); }
    /** Tensors on `tile` live at program point `point`, largest first. */
    [[nodiscard]] std::vector<LiveTensor> liveAt(uint32_t tile, uint32_t point) const;
    /** Bytes live (always-live ones included) at each program point in [0, points): on `tile`,
     *  or on the whole IPU without one. The liveness view over program steps. */
    [[nodiscard]] std::vector<uint64_t> liveBytesByPoint(std::optional<uint32_t> tile, uint32_t points) const;
    /** The tile that runs out of memory first (at the earliest program point; of those, the
     *  one with the most bytes), or none when every tile fits. */
    [[nodiscard]] std::optional<uint32_t> firstOver() const;
    [[nodiscard]] const std::vector<TensorAlloc>& tensors() const { return m_tensors; }

private:
    /** Takes `other`'s peaks over this program's always-live bytes; false (nothing taken) if
     *  its not-always-live tensors differ or a tile does not fit. */
    bool takePeaksOf(const TileMemory& other, uint32_t tiles);
    void sweep(uint32_t tiles);

    std::vector<TensorAlloc> m_tensors; // the program's tensors plus code and vertex state
    std::vector<TileMemoryUse> m_tiles;
    uint64_t m_capacity;
};

/** Code, vertex-state, control-code and exchange-code allocations implied by the program. */
std::vector<TensorAlloc> programOverheads(const Program& program, const IpuParams& hw);

} // namespace ipusim
