// SPDX-License-Identifier: MIT
#pragma once
// Runs a Poplar program on the host, as Poplar's IPUModel does: each compute set's vertices read
// their inputs (as the exchange delivers them before compute), run compute() and write their
// outputs; copies move elements; host streams read and write the buffers the program connected.
#include "sim/poplar/GraphStore.hpp"
#include "sim/poplar/ProgramNode.hpp"

#include <functional>
#include <map>
#include <string>

namespace poplar::detail {

/** A host buffer a stream is connected to: one stream's worth at every Copy from `at`, wrapping
 *  from `end` to `begin` (a circular buffer), or a callback. */
struct StreamBuffer
{
    unsigned char* begin = nullptr;
    unsigned char* end = nullptr;
    unsigned char* at = nullptr;
    std::function<void(void*)> callback;
};

class HostExecution
{
public:
    /** Records in `outcomes` what each If and RepeatWhile loop decided. */
    HostExecution(GraphStore& store, std::map<std::string, StreamBuffer>& streams, ControlOutcomes& outcomes)
        : m_store(store), m_streams(streams), m_outcomes(outcomes) {}
    void run(const ProgramNode& node);
    /** A RepeatWhile loop still running after this many iterations is an error, not a hang. */
    static constexpr std::uint64_t kMaxWhileIterations = 100'000'000;

private:
    void execute(unsigned computeSet);
    void stream(const DataStream& stream, const Tensor& t, bool toDevice);
    [[nodiscard]] bool truth(const Tensor& predicate) const;
    GraphStore& m_store;
    std::map<std::string, StreamBuffer>& m_streams;
    ControlOutcomes& m_outcomes;
};

} // namespace poplar::detail
