// SPDX-License-Identifier: MIT
#include "models/exchange/Exchange.hpp"

#include "models/timing/ExchangeTiming.hpp"

namespace ipusim {

Exchange::Exchange(sc_core::sc_module_name name, const IpuParams& hw) : sc_module(name), m_hw(hw)
{
    m_stats.add("exchange_bytes", m_bytesSent, "B", "bytes tiles sent in exchange phases");
    m_stats.add("exchange_phases", m_phases, "phases", "exchange phases executed");
}

const Exchange::Costed& Exchange::costed(const ExchangeStep& step)
{
    auto [it, added] = m_costed.try_emplace(&step);
    if (added) {
        it->second.cycles = exchangePhaseCycles(m_hw, step);
        for (const auto& r : step.bytes.runs())
            it->second.bytesSent += r.value.send * r.count;
    }
    return it->second;
}

void Exchange::account(const ExchangeStep& step)
{
    m_bytesSent += costed(step).bytesSent;
    ++m_phases;
}

} // namespace ipusim
