// SPDX-License-Identifier: MIT
// A compute set's tile cycles from its vertices' own estimates (a Poplar program's), by hand.
#include "models/timing/ComputeSetTiming.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;

TEST_CASE("Compute set: worker vertices go to the context that frees first, the tile takes 6 x the busiest", "[compute]")
{
    CHECK(computeSetTileCycles({}, {}, 6) == 0);
    CHECK(computeSetTileCycles({20}, {}, 6) == 6 * 20);                  // one vertex: its context's every 6th cycle
    CHECK(computeSetTileCycles({20, 20, 20, 20, 20, 20}, {}, 6) == 6 * 20); // six in parallel
    CHECK(computeSetTileCycles({20, 20, 20, 20, 20, 20, 20}, {}, 6) == 6 * 40);
    // 10..60 on contexts 0..5; 70 to context 0 (free at 10, busy to 80); 80 to context 1 (free
    // at 20, busy to 100): the busiest context's total is 100.
    CHECK(computeSetTileCycles({10, 20, 30, 40, 50, 60, 70, 80}, {}, 6) == 6 * 100);
    // In order, not sorted: a long vertex last extends the context that frees first.
    CHECK(computeSetTileCycles({1, 1, 1, 1, 1, 1, 100}, {}, 6) == 6 * 101);
}

TEST_CASE("Compute set: whole-tile vertices (MultiVertex) run one after another, beside the workers' share", "[compute]")
{
    CHECK(computeSetTileCycles({}, {60, 60, 7}, 6) == 127);
    CHECK(computeSetTileCycles({20}, {100}, 6) == 100 + 6 * 20);
    CHECK(computeSetTileCycles({20, 30}, {5}, 1) == 5 + 50); // one context: the workers' vertices in turn
}
