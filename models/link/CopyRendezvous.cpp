// SPDX-License-Identifier: MIT
#include "models/link/CopyRendezvous.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ipusim {

void CopyRendezvous::arrive(uint32_t ipu, std::string step, std::vector<End> ends, uint64_t ready, Release release)
{
    if (m_waiting.count(ipu))
        throw std::logic_error("an IPU arrived at a copy while waiting at another");
    std::vector<uint64_t> numbers;
    for (const End& e : ends) {
        if (e.self() != ipu)
            throw std::logic_error("a copy transfer that is not the arriving IPU's");
        numbers.push_back(++m_listed[{e.from, e.to, e.sending}]);
        m_unpaired[{e.from, e.to, e.sending}].push_back({ready, e.bytes, numbers.back(), step});
    }
    Waiting w{std::move(step), std::move(ends), std::move(numbers), {}, {}, std::move(release)};
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
        checkBytes(e, w.step, partner.front());
        w.partnerReady[i] = partner.front().ready;
        w.paired[i] = true;
        partner.pop_front();
        if (e.sending && m_onPaired) // the sender's side pairs in the same arrival as the receiver's
            m_onPaired(e, w.numbers[i]);
    }
    if (!all)
        return;
    Waiting done = std::move(w);
    m_waiting.erase(it);
    done.release(done.partnerReady, done.numbers);
}

void CopyRendezvous::checkBytes(const End& mine, const std::string& myStep, const Arrival& partner)
{
    if (partner.bytes == mine.bytes || !m_mismatch.empty())
        return;
    const auto& [sendStep, sendBytes] = mine.sending ? std::pair{myStep, mine.bytes} : std::pair{partner.step, partner.bytes};
    const auto& [recvStep, recvBytes] = mine.sending ? std::pair{partner.step, partner.bytes} : std::pair{myStep, mine.bytes};
    m_mismatch = fmt::format("transfer {} from IPU {} to IPU {} is {} bytes as IPU {} sends it (IPU copy \"{}\") but {} bytes as "
                             "IPU {} receives it (\"{}\"): the n-th send on an edge pairs with its n-th receive, and both "
                             "must give the same bytes",
                             partner.number, mine.from, mine.to, sendBytes, mine.from, sendStep, recvBytes, mine.to, recvStep);
}

uint64_t CopyRendezvous::listed(const Side& side) const
{
    const auto it = m_listed.find(side);
    return it == m_listed.end() ? 0 : it->second;
}

std::vector<CopyRendezvous::Waiter> CopyRendezvous::waiting() const
{
    std::vector<Waiter> out;
    for (const auto& [ipu, w] : m_waiting)
        for (std::size_t i = 0; i < w.ends.size(); ++i)
            if (!w.paired[i]) {
                const End& e = w.ends[i];
                out.push_back({ipu, w.step, e, w.numbers[i], listed({e.from, e.to, !e.sending})});
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
