// SPDX-License-Identifier: MIT
#include "sim/run/ProcessHeap.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace ipusim {

void prepareHeapForRun(std::size_t reserve)
{
    constexpr std::size_t kHugePage = std::size_t(2) << 20;
    // Blocks up to 64 MiB come from the heap, not from mmap and munmap on each use; memory
    // freed at the heap's top stays (a run's working set is tens of MiB and it exits soon).
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // One growth of the heap maps `reserve` bytes ahead (address space only: pages are
    // faulted in where they are touched); ask for huge pages there.
    mallopt(M_TOP_PAD, int(reserve));
    const auto before = reinterpret_cast<std::uintptr_t>(sbrk(0));
    void* volatile grow = std::malloc(kHugePage); // more than the heap's free top: it grows
    std::free(grow);                              // (volatile: the pair must not be elided)
    const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
    const std::uintptr_t from = (before + kHugePage - 1) & ~(kHugePage - 1);
    if (after > from + kHugePage)
        madvise(reinterpret_cast<void*>(from), (after - from) & ~(kHugePage - 1), MADV_HUGEPAGE); // advice: may be refused
    mallopt(M_TOP_PAD, 16 << 20); // later growth: ahead, without huge pages
}

} // namespace ipusim
