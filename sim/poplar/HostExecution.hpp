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
    HostExecution(GraphStore& store, std::map<std::string, StreamBuffer>& streams) : m_store(store), m_streams(streams) {}
    void run(const ProgramNode& node);

private:
    void execute(unsigned computeSet);
    void stream(const DataStream& stream, const Tensor& t, bool toDevice);
    GraphStore& m_store;
    std::map<std::string, StreamBuffer>& m_streams;
};

} // namespace poplar::detail
