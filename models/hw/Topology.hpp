// SPDX-License-Identifier: MIT
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim {

/** Which IPUs are joined by how many IPU-Links, and the routes between them. */
class Topology
{
public:
    /** PopLibs' ladder: rungs of two IPUs joined by 4 links, rails of 2 links to the next rung
     *  on each side and 1 cross link each way; `wrap` closes it into a ring (the POD64 torus). */
    static Topology ladder(uint32_t ipus, bool wrap);
    /** Links as listed: {a, b, links}. */
    static Topology custom(uint32_t ipus, const std::vector<std::array<uint32_t, 3>>& links);

    [[nodiscard]] uint32_t ipus() const { return m_ipus; }
    /** Links directly between a and b (0 if none). */
    [[nodiscard]] uint32_t links(uint32_t a, uint32_t b) const;
    /** Shortest route from a to b: hops, and the fewest links on any hop (the bottleneck). */
    struct Route
    {
        uint32_t hops = 0;
        uint32_t links = 0;
    };
    [[nodiscard]] Route route(uint32_t a, uint32_t b) const;
    /** The IPUs along that route, a first and b last (just a when a == b; empty when b is
     *  unreachable). Its narrowest hop has route(a, b).links links. */
    [[nodiscard]] std::vector<uint32_t> path(uint32_t a, uint32_t b) const;
    /** Orders a ring's members as they lie along the topology's physical ring, so that ring
     *  neighbours are as close as the wiring allows (Poplar's collectives run along the ladder);
     *  a topology without a known ring (custom) keeps the given order. */
    [[nodiscard]] std::vector<uint32_t> alongRing(std::vector<uint32_t> members) const;
    /** IPUs not reachable from IPU 0 (empty when connected). */
    [[nodiscard]] std::vector<uint32_t> unreachable() const;
    [[nodiscard]] const std::map<std::pair<uint32_t, uint32_t>, uint32_t>& allLinks() const { return m_links; }

private:
    void add(uint32_t a, uint32_t b, uint32_t n);
    void computeRoutes();
    uint32_t m_ipus = 1;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_links; // (min, max) -> links
    std::vector<std::vector<Route>> m_routes;
    std::vector<std::vector<uint32_t>> m_previous; // [a][b]: the IPU before b on the route from a
    std::vector<uint32_t> m_ringPosition;          // per IPU, its place on the physical ring (ladders)
};

} // namespace ipusim
