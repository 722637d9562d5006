// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Snapshottable.hpp"
#include "models/link/IpuLinks.hpp"

namespace ipusim {

/** The bytes one IPU has put on each link (IPU-Links, and its host transfers' links). IpuLinks
 *  counts every IPU's bytes together, so loop fast-forward cannot see one IPU's growth there:
 *  it sees this IPU's share here, and a skip adds the skipped iterations' share to the links. */
class LinkShare : public Snapshottable
{
public:
    explicit LinkShare(IpuLinks* links) : m_links(links) {}

    /** Bytes this IPU has just put on links, as IpuLinks counted them. */
    void add(const IpuLinks::LinkBytes& bytes)
    {
        for (const auto& [edge, b] : bytes)
            m_sent[edge] += b;
    }

    void counters(std::vector<uint64_t*>& out) override
    {
        for (auto& [edge, bytes] : m_sent)
            out.push_back(&bytes);
    }
    /** A link used for the first time changes the counters: iterations before it differ. */
    void shape(uint64_t /*cycle*/, std::vector<int64_t>& out) const override { out.push_back(int64_t(m_sent.size())); }
    void skipped(const uint64_t* growth, uint64_t times, uint64_t /*cycles*/) override
    {
        if (!m_links)
            return;
        std::size_t i = 0;
        for (const auto& link : m_sent)
            m_links->account(link.first.first, link.first.second, times * growth[i++]);
    }

private:
    IpuLinks* m_links;
    IpuLinks::LinkBytes m_sent;
};

} // namespace ipusim
