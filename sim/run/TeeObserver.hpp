// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/PhaseObserver.hpp"

namespace ipusim {

/** Sends every phase to two observers: the trace (`a`, which also gets tile, fragment and link
 *  spans and chooses the tile window) and the reference engine's check (`b`). Either may be
 *  null. */
class TeeObserver : public IPhaseObserver
{
public:
    TeeObserver(IPhaseObserver* a, IPhaseObserver* b) : m_a(a), m_b(b) {}
    [[nodiscard]] CycleRange observedCycles() const override
    {
        if (m_b) // the reference engine's check compares every phase
            return {};
        return m_a ? m_a->observedCycles() : CycleRange{1, 0};
    }
    void phase(uint32_t ipu, PhaseKind kind, const std::string& name, uint64_t start, uint64_t end, uint64_t it) override
    {
        for (auto* o : {m_a, m_b})
            if (o)
                o->phase(ipu, kind, name, start, end, it);
    }
    [[nodiscard]] bool tileWindow(uint32_t ipu, uint32_t& first, uint32_t& last, uint64_t& from, uint64_t& to) const override
    {
        return m_a && m_a->tileWindow(ipu, first, last, from, to);
    }
    void tileSpan(uint32_t ipu, uint32_t tile, const std::string& name, uint64_t start, uint64_t end) override
    {
        if (m_a)
            m_a->tileSpan(ipu, tile, name, start, end);
    }
    void fragmentSpan(uint32_t ipu, const std::string& fragment, uint64_t start, uint64_t end, int64_t mb) override
    {
        if (m_a)
            m_a->fragmentSpan(ipu, fragment, start, end, mb);
    }
    void linkSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end, uint64_t bytes) override
    {
        if (m_a)
            m_a->linkSpan(track, name, start, end, bytes);
    }
    void hostSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end) override
    {
        if (m_a)
            m_a->hostSpan(track, name, start, end);
    }

private:
    IPhaseObserver* m_a;
    IPhaseObserver* m_b;
};

} // namespace ipusim
