// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: printf from a codelet (the IPU's print.h), on the host the C library's.
#include <cstdio>
