// SPDX-License-Identifier: MIT
#include "models/exchange/Exchange.hpp"

#include "models/timing/ExchangeTiming.hpp"

namespace ipusim {

Exchange::Exchange(sc_core::sc_module_name name, const IpuParams& hw, uint32_t points)
    : sc_module(name), m_hw(hw), m_costed(points)
{
    m_stats.add("exchange_bytes", m_bytesSent, "B", "bytes tiles sent in exchange phases");
    m_stats.add("exchange_phases", m_phases, "phases", "exchange phases executed");
}

const Exchange::Costed& Exchange::costed(const ExchangeStep& step)
{
    Costed& c = step.point < m_costed.size() && (!m_costed[step.point].step || m_costed[step.point].step == &step)
                    ? m_costed[step.point]
                    : m_uncached;
    if (c.step != &step) {
        c = {&step, exchangePhaseCycles(m_hw, step), 0};
        for (const auto& r : step.bytes.runs())
            c.bytesSent += r.value.send * r.count;
    }
    return c;
}

void Exchange::account(const ExchangeStep& step)
{
    m_bytesSent += costed(step).bytesSent;
    ++m_phases;
}

} // namespace ipusim
