// SPDX-License-Identifier: MIT
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim {

/** What joins two nodes of a system: IPU-Links between IPUs; an IPU's PCIe link to its
 *  M2000's IPU-Gateway; GW-Links between gateways of different racks; a gateway's RoCE link to
 *  its host server. */
enum class LinkKind
{
    IpuLink,
    GatewayPcie,
    GwLink,
    GatewayHost
};

/** The nodes of a system (its IPUs, then one IPU-Gateway per IPU-M2000, then the host server),
 *  how many lanes of which kind join them, and the routes between them. Every IPU has a PCIe
 *  link to its gateway and every gateway a RoCE link to the host. Routes never pass through the
 *  host, nor from one IPU to another through their gateway: IPUs of one M2000 talk over
 *  IPU-Links; gateways forward only GW-Link traffic and host traffic. */
class Topology
{
public:
    /** PopLibs' ladder: rungs of two IPUs joined by 4 links, rails of 2 links to the next rung
     *  on each side and 1 cross link each way; `wrap` closes it into a ring (the POD64 torus). */
    static Topology ladder(uint32_t ipus, bool wrap);
    /** IPU-POD racks (IPU-POD128: 2, IPU-POD256: 4): each rack a wrapped ladder of ipus / racks
     *  IPUs; every IPU-M2000 (4 IPUs) has a gateway joined to each of its IPUs by PCIe, and the
     *  gateways in one position of neighbouring racks are joined by GW-Links: both of a
     *  gateway's 2 GW-Link ports to the other rack when there are 2, one port to each
     *  neighbouring rack in a ring of racks otherwise (the cabling is not published: estimate). */
    static Topology pod(uint32_t ipus, uint32_t racks);
    /** IPU-Links as listed: {a, b, links}. */
    static Topology custom(uint32_t ipus, const std::vector<std::array<uint32_t, 3>>& links);
    /** IPU-Gateways (IPU-M2000s) of `ipus` IPUs: one per 4, the last perhaps partly filled. */
    static uint32_t gatewaysFor(uint32_t ipus) { return (ipus + kIpusPerM2000 - 1) / kIpusPerM2000; }
    static constexpr uint32_t kIpusPerM2000 = 4;

    /** One bundle of lanes between two nodes. */
    struct Edge
    {
        uint32_t lanes = 0;
        LinkKind kind = LinkKind::IpuLink;
    };

    [[nodiscard]] uint32_t ipus() const { return m_ipus; }
    /** IPUs, gateways and the host: gateway g is node ipus() + g, the host node
     *  ipus() + gateways(). */
    [[nodiscard]] uint32_t nodes() const { return m_nodes; }
    [[nodiscard]] uint32_t gateways() const { return gatewaysFor(m_ipus); }
    /** The node of IPU `ipu`'s gateway, and of the host. */
    [[nodiscard]] uint32_t gatewayOf(uint32_t ipu) const { return m_ipus + ipu / kIpusPerM2000; }
    [[nodiscard]] uint32_t host() const { return m_ipus + gateways(); }
    [[nodiscard]] bool isHost(uint32_t node) const { return node == host(); }
    /** A name for node n in reports: "ipu3", "gw0", "host". */
    [[nodiscard]] std::string nodeName(uint32_t n) const;
    /** IPU-Links directly between IPUs a and b (0 if none). */
    [[nodiscard]] uint32_t links(uint32_t a, uint32_t b) const;
    /** Every bundle, by (lower node, higher node). */
    [[nodiscard]] const std::map<std::pair<uint32_t, uint32_t>, Edge>& allLinks() const { return m_links; }
    [[nodiscard]] const Edge& edge(uint32_t a, uint32_t b) const;
    /** Shortest route from a to b: hops, and the fewest lanes on any hop (the bottleneck; lanes
     *  of different kinds are counted alike, so between racks, where every route has a 1-lane
     *  PCIe hop, equally short routes tie and the search order picks one). */
    struct Route
    {
        uint32_t hops = 0;
        uint32_t links = 0;
    };
    [[nodiscard]] Route route(uint32_t a, uint32_t b) const;
    /** The nodes along that route (the widest among the shortest), a first and b last (just a
     *  when a == b; empty when b is unreachable). */
    [[nodiscard]] std::vector<uint32_t> path(uint32_t a, uint32_t b) const;
    /** Orders a ring's members as they lie along the topology's physical ring, so that ring
     *  neighbours are as close as the wiring allows (Poplar's collectives run along the ladder;
     *  racks one after another); a topology without a known ring (custom) takes IPU order. Any
     *  listing of the same members gives the same order. */
    [[nodiscard]] std::vector<uint32_t> alongRing(std::vector<uint32_t> members) const;
    /** The rack (IPU-POD64) IPU `ipu` is in: 0 but in a pod topology. */
    [[nodiscard]] uint32_t rackOf(uint32_t ipu) const { return m_ipusPerRack == 0 ? 0 : ipu / m_ipusPerRack; }
    /** IPUs not reachable from IPU 0 (empty when connected). */
    [[nodiscard]] std::vector<uint32_t> unreachable() const;

private:
    void add(uint32_t a, uint32_t b, uint32_t n, LinkKind kind = LinkKind::IpuLink);
    /** A ladder of `ipus` IPUs from IPU `first`, with its ring positions from `place`. */
    void addLadder(uint32_t first, uint32_t ipus, bool wrap, uint32_t place);
    /** Sizes the nodes for `ipus` IPUs, their gateways and the host. */
    void setNodes(uint32_t ipus);
    /** Every IPU's PCIe link to its gateway and every gateway's RoCE link to the host. */
    void addHostTier();
    /** May a route arriving at node u from `from` go on to v over `kind`? */
    [[nodiscard]] bool mayPass(uint32_t from, uint32_t u, LinkKind kind) const;
    void computeRoutes();
    uint32_t m_ipus = 1, m_nodes = 1;
    uint32_t m_ipusPerRack = 0; // 0: one rack of every IPU
    std::map<std::pair<uint32_t, uint32_t>, Edge> m_links; // (min, max) -> lanes and kind
    std::vector<std::vector<Route>> m_routes;
    std::vector<std::vector<uint32_t>> m_previous; // [a][b]: the node before b on the route from a
    std::vector<uint32_t> m_ringPosition;          // per IPU, its place on the physical ring (ladders)
};

} // namespace ipusim
