// SPDX-License-Identifier: MIT
#include "models/exchange/Exchange.hpp"

#include "models/timing/ExchangeTiming.hpp"

namespace ipusim {

Exchange::Exchange(sc_core::sc_module_name name, const IpuParams& hw) : sc_module(name), m_hw(hw)
{
    m_stats.add("exchange_bytes", m_bytesSent, "B", "bytes tiles sent in exchange phases");
    m_stats.add("exchange_phases", m_phases, "phases", "exchange phases executed");
}

uint64_t Exchange::phaseCycles(const ExchangeStep& step) const { return exchangePhaseCycles(m_hw, step); }

void Exchange::account(const ExchangeStep& step)
{
    for (const auto& r : step.bytes.runs())
        m_bytesSent += r.value.send * r.count;
    ++m_phases;
}

} // namespace ipusim
