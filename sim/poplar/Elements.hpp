// SPDX-License-Identifier: MIT
#pragma once
// Element values: conversion between Poplar types (constants and initial values given in one
// host type for tensors of another), and moving a tensor's elements between its variables and a
// contiguous buffer (what the exchange does before and after a compute set).
#include "sim/poplar/GraphStore.hpp"

#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace poplar::detail {

/** The element type of this name ("float", "unsigned int": a vertex field's, as its codelet
 *  reports it). */
const Type& typeNamed(const std::string& name);

/** `n` values of type `from` at `src` as type `to` at `dst` (rounding as a cast does; half to
 *  nearest even). */
void convertElements(const void* src, const Type& from, void* dst, const Type& to, std::size_t n);

/** The tensor's elements as numbers (exact for every type but 64-bit integers past 2^64 of long double). */
std::vector<long double> values(const GraphStore& store, const Tensor& t);
void setValues(GraphStore& store, const Tensor& t, const std::vector<long double>& v);

/** The tensor's elements, in order, as bytes of its element type. */
std::vector<unsigned char> gather(const GraphStore& store, const Tensor& t);
void gatherInto(const GraphStore& store, const Tensor& t, unsigned char* out);
/** Writes the tensor's elements from `in` (bytes of its element type). */
void scatter(GraphStore& store, const Tensor& t, const unsigned char* in);

} // namespace poplar::detail
