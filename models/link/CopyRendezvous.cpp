// SPDX-License-Identifier: MIT
#include "models/link/CopyRendezvous.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim {

void CopyRendezvous::arrive(uint32_t ipu, std::string step, std::vector<End> ends, uint64_t ready, Release release)
{
    if (m_waiting.count(ipu))
        throw std::logic_error("an IPU arrived at a copy while waiting at another");
    for (const End& e : ends) {
        if (e.self() != ipu)
            throw std::logic_error("a copy transfer that is not the arriving IPU's");
        m_unpaired[{e.from, e.to, e.sending}].push_back(ready);
    }
    Waiting w{std::move(step), std::move(ends), {}, {}, std::move(release)};
    w.partnerReady.assign(w.ends.size(), 0);
    w.paired.assign(w.ends.size(), false);
    std::vector<uint32_t> partners;
    for (const End& e : w.ends)
        partners.push_back(e.partner());
    m_waiting.emplace(ipu, std::move(w));
    // This arrival may complete partners already waiting; then this IPU takes what is there.
    for (uint32_t p : partners)
        if (m_waiting.count(p))
            settle(p);
    settle(ipu);
}

void CopyRendezvous::settle(uint32_t ipu)
{
    auto it = m_waiting.find(ipu);
    if (it == m_waiting.end())
        return;
    Waiting& w = it->second;
    bool all = true;
    for (std::size_t i = 0; i < w.ends.size(); ++i) {
        if (w.paired[i])
            continue;
        const End& e = w.ends[i];
        auto& partner = m_unpaired[{e.from, e.to, !e.sending}];
        if (partner.empty()) {
            all = false;
            continue;
        }
        w.partnerReady[i] = partner.front();
        w.paired[i] = true;
        partner.pop_front();
    }
    if (!all)
        return;
    Waiting done = std::move(w);
    m_waiting.erase(it);
    done.release(done.partnerReady);
}

std::vector<CopyRendezvous::Waiter> CopyRendezvous::waiting() const
{
    std::vector<Waiter> out;
    for (const auto& [ipu, w] : m_waiting)
        for (std::size_t i = 0; i < w.ends.size(); ++i)
            if (!w.paired[i]) {
                out.push_back({ipu, w.step, w.ends[i]});
                break;
            }
    return out;
}

std::vector<CopyRendezvous::Phase> CopyRendezvous::phases(uint64_t from, std::vector<std::pair<uint64_t, uint64_t>> spans)
{
    std::sort(spans.begin(), spans.end());
    std::vector<Phase> out;
    uint64_t at = from;
    auto reach = [&](bool copying, uint64_t end) {
        if (end <= at)
            return;
        if (!out.empty() && out.back().copying == copying)
            out.back().end = end;
        else
            out.push_back({copying, at, end});
        at = end;
    };
    for (const auto& [start, end] : spans) {
        reach(false, start); // a transfer with no bytes still waits for its partner
        reach(true, end);
    }
    return out;
}

} // namespace ipusim
