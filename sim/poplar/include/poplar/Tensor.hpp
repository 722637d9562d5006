// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a tensor is a view of elements of variables (and constants): its shape,
// its element type, and which elements of which variables it holds, in row-major order.
// Slicing, reshaping and shuffling make new views; no element is copied.
#include <poplar/ArrayRef.hpp>
#include <poplar/Interval.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace poplar {

namespace detail {
/** Elements [begin, end) of variable `var`. */
struct Region
{
    unsigned var = 0;
    std::size_t begin = 0;
    std::size_t end = 0;
};
} // namespace detail

class Tensor
{
public:
    Tensor() = default;
    Tensor(Type type, std::vector<std::size_t> shape, std::vector<detail::Region> regions);

    [[nodiscard]] Type elementType() const { return m_type; }
    [[nodiscard]] const std::vector<std::size_t>& shape() const { return m_shape; }
    [[nodiscard]] unsigned rank() const { return unsigned(m_shape.size()); }
    [[nodiscard]] std::size_t dim(unsigned i) const;
    [[nodiscard]] std::size_t numElements() const;
    [[nodiscard]] bool valid() const { return m_valid; }
    [[nodiscard]] bool isContiguous() const { return m_regions.size() <= 1; }

    [[nodiscard]] Tensor operator[](std::size_t i) const { return index(i); }
    [[nodiscard]] Tensor index(std::size_t i) const { return slice(i, i + 1, 0).squeeze({0}); }
    [[nodiscard]] Tensor slice(std::size_t begin, std::size_t end, unsigned dimension = 0) const;
    [[nodiscard]] Tensor slice(const Interval& region, unsigned dimension = 0) const { return slice(region.begin(), region.end(), dimension); }
    [[nodiscard]] Tensor slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const;
    [[nodiscard]] std::vector<Tensor> slices(ArrayRef<Interval> intervals, unsigned dimension = 0) const;
    [[nodiscard]] Tensor reshape(ArrayRef<std::size_t> shape) const;
    [[nodiscard]] Tensor flatten() const { return reshape({numElements()}); }
    /** Dimensions [from, to) merged into one. */
    [[nodiscard]] Tensor flatten(unsigned from, unsigned to) const;
    [[nodiscard]] Tensor dimShuffle(ArrayRef<unsigned> permutation) const;
    [[nodiscard]] Tensor dimRoll(unsigned from, unsigned to = 0) const;
    [[nodiscard]] Tensor transpose() const;
    [[nodiscard]] Tensor squeeze(ArrayRef<std::size_t> dims) const;
    [[nodiscard]] Tensor expand(ArrayRef<std::size_t> positions) const;
    [[nodiscard]] Tensor reverse(unsigned dimension) const;
    [[nodiscard]] Tensor broadcast(unsigned n, unsigned dimension) const;
    [[nodiscard]] Tensor subSample(unsigned stride, unsigned dimension) const;
    /** Intervals of the flattened tensor whose elements lie side by side in memory, in order. */
    [[nodiscard]] std::vector<Interval> getContiguousRegions() const;
    [[nodiscard]] std::string shapeToString() const;

    /** The same elements of the same variables, in the same order and shape. */
    [[nodiscard]] bool operator==(const Tensor& o) const;
    [[nodiscard]] bool operator!=(const Tensor& o) const { return !(*this == o); }
    [[nodiscard]] bool intersectsWith(const Tensor& o) const;

    /** ipusim: the variable regions this view holds, in row-major order. */
    [[nodiscard]] const std::vector<detail::Region>& regions() const { return m_regions; }

private:
    /** The elements at these row-major positions (ranges of flat indices), as a tensor of `shape`. */
    [[nodiscard]] Tensor select(const std::vector<std::pair<std::size_t, std::size_t>>& flat, std::vector<std::size_t> shape) const;

    Type m_type;
    std::vector<std::size_t> m_shape;
    std::vector<detail::Region> m_regions;
    bool m_valid = false;
};

/** Tensors joined along `dimension` (their other dimensions equal). */
Tensor concat(ArrayRef<Tensor> ts, unsigned dimension = 0);
inline Tensor concat(const Tensor& a, const Tensor& b, unsigned dimension = 0) { return concat({a, b}, dimension); }
std::ostream& operator<<(std::ostream& os, const Tensor& t);

} // namespace poplar
