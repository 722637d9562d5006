// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: the IPU's vector types for codelets compiled for the host: half, and the
// vector types float2, half4 and friends as plain aggregates of their lanes.
#include <poplar/Half.hpp>

struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct half2 { half x, y; };
struct half4 { half x, y, z, w; };
struct int2 { int x, y; };
struct uint2 { unsigned x, y; };
