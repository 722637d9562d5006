// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <vector>

// How concurrent transfers share links: max-min fair rates, and a stream at a rate that
// changes only at whole cycles (both engines share these rules, not their time-keeping).
namespace ipusim {

/** Max-min fair rates of flows over shared links (progressive filling, Bertsekas & Gallager,
 *  Data Networks §6.5.2): every flow's rate grows at the same pace until a link it crosses is
 *  full; a flow's rate can then rise only by lowering that of a flow no faster than it.
 *  `routes[f]` lists the links flow f crosses (indices into `capacity`, bytes per cycle); a flow
 *  crossing no link gets rate 0. The result does not depend on the order flows are given in. */
std::vector<long double> maxMinRates(const std::vector<std::vector<uint32_t>>& routes, const std::vector<long double>& capacity);

/** True when a stream that had moved `moved` bytes when its rate last changed has moved all
 *  `bytes` after `cycles` more at `rate` (forgiving 1e-9 of a cycle, as streamCycles does). */
inline bool streamDone(long double moved, uint64_t cycles, long double rate, uint64_t bytes)
{
    return moved + (long double)cycles * rate >= (long double)bytes - 1e-9L * rate;
}

/** The fewest cycles after which streamDone holds (0 when it already does); saturates at
 *  kCycleCeiling when the rate is 0. */
uint64_t cyclesToFinish(long double moved, long double rate, uint64_t bytes);

} // namespace ipusim
