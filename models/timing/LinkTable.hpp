// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace ipusim {

/** The directed links of a system, numbered, with the bytes each moves per cycle
 *  (hopBytesPerCycle), and every transfer's route as link numbers plus its latency (each hop's,
 *  hopLatencyCycles). Both engines' link models take their flows from it: it holds the rules,
 *  not the time-keeping. */
class LinkTable
{
public:
    explicit LinkTable(const SystemParams& system);

    /** A transfer's route from node to node. */
    struct Route
    {
        std::vector<uint32_t> links;
        uint64_t latency = 0;
    };
    /** The route from `from` to `to` (worked out once); throws std::logic_error when there is
     *  none (a topology the config decoder rejects). */
    const Route& route(uint32_t from, uint32_t to) const;
    /** Bytes per cycle of every link, by number. */
    [[nodiscard]] const std::vector<long double>& capacity() const { return m_capacity; }
    [[nodiscard]] uint32_t id(uint32_t from, uint32_t to) const { return m_id.at({from, to}); }

private:
    const SystemParams& m_system;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_id;
    std::vector<long double> m_capacity;
    mutable std::map<std::pair<uint32_t, uint32_t>, Route> m_routes; // the routes asked for so far
};

} // namespace ipusim
