// SPDX-License-Identifier: MIT
#pragma once
#include <cstddef>

namespace ipusim {

/** Sets up the heap of a process that builds and simulates a run and then exits (the command
 *  line, its sweep workers, the benchmark's children): it keeps what it frees instead of
 *  handing it back and faulting it in again, and asks the kernel for 2 MiB pages for the first
 *  `reserve` bytes of heap (transparent huge pages, where the kernel grants them on request).
 *  A BERT-Large run otherwise spends about a quarter of its time in the kernel, serving a page
 *  fault for each fresh 4 KiB it touches. Not for a library loaded into another program (the
 *  Python module): the heap is the whole process's. Call once, early. */
void prepareHeapForRun(std::size_t reserve = std::size_t(256) << 20);

} // namespace ipusim
