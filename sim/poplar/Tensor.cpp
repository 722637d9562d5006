// SPDX-License-Identifier: MIT
// Tensor views: each operation picks row-major positions of the view (ranges of flat indices)
// and maps them onto the variables' regions, merging neighbours; no element is copied.
#include <poplar/Tensor.hpp>
#include <poplar/exceptions.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

namespace poplar {

namespace {

using FlatRanges = std::vector<std::pair<std::size_t, std::size_t>>;

std::size_t product(const std::vector<std::size_t>& shape, std::size_t from = 0, std::size_t to = ~std::size_t(0))
{
    const std::size_t stop = std::min(to, shape.size());
    if (from >= stop)
        return 1;
    return std::accumulate(shape.begin() + std::ptrdiff_t(from), shape.begin() + std::ptrdiff_t(stop), std::size_t(1), std::multiplies<>());
}

void appendRegion(std::vector<detail::Region>& out, detail::Region r)
{
    if (r.begin == r.end)
        return;
    if (!out.empty() && out.back().var == r.var && out.back().end == r.begin)
        out.back().end = r.end;
    else
        out.push_back(r);
}

void appendRange(FlatRanges& out, std::size_t begin, std::size_t end)
{
    if (begin == end)
        return;
    if (!out.empty() && out.back().second == begin)
        out.back().second = end;
    else
        out.emplace_back(begin, end);
}

std::string shapeText(const std::vector<std::size_t>& shape)
{
    std::string s = "{";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "}";
}

/** Row-major positions of the view with dimensions permuted: element at index (i_perm) of the
 *  result is element (i) of the source. Each run of the innermost source-contiguous dimension is
 *  one range. */
FlatRanges permutedRanges(const std::vector<std::size_t>& shape, const std::vector<unsigned>& perm)
{
    const std::size_t rank = shape.size();
    std::vector<std::size_t> strides(rank, 1);
    for (std::size_t d = rank; d-- > 1;)
        strides[d - 1] = strides[d] * shape[d];
    std::vector<std::size_t> outShape(rank);
    for (std::size_t d = 0; d < rank; ++d)
        outShape[d] = shape[perm[d]];
    FlatRanges out;
    const std::size_t total = product(shape);
    if (total == 0)
        return out;
    std::vector<std::size_t> index(rank, 0);
    const bool innerContiguous = rank > 0 && strides[perm[rank - 1]] == 1;
    const std::size_t innerLen = rank ? outShape[rank - 1] : 1;
    for (std::size_t done = 0; done < total;) {
        std::size_t flat = 0;
        for (std::size_t d = 0; d < rank; ++d)
            flat += index[d] * strides[perm[d]];
        if (innerContiguous) {
            appendRange(out, flat, flat + innerLen);
            done += innerLen;
            if (rank)
                index[rank - 1] = innerLen - 1;
        } else {
            appendRange(out, flat, flat + 1);
            ++done;
        }
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < outShape[d])
                break;
            index[d] = 0;
        }
    }
    return out;
}

} // namespace

Tensor::Tensor(Type type, std::vector<std::size_t> shape, std::vector<detail::Region> regions)
    : m_type(type), m_shape(std::move(shape)), m_valid(true)
{
    for (const auto& r : regions)
        appendRegion(m_regions, r);
}

std::size_t Tensor::dim(unsigned i) const
{
    if (i >= m_shape.size())
        throw index_error(fmt::format("dim({}) of a tensor of rank {}", i, m_shape.size()));
    return m_shape[i];
}

std::size_t Tensor::numElements() const { return product(m_shape); }

Tensor Tensor::select(const FlatRanges& flat, std::vector<std::size_t> shape) const
{
    // Walk the regions once per range, both in ascending order when they are (the common case).
    std::vector<std::size_t> starts(m_regions.size() + 1, 0);
    for (std::size_t i = 0; i < m_regions.size(); ++i)
        starts[i + 1] = starts[i] + (m_regions[i].end - m_regions[i].begin);
    std::vector<detail::Region> out;
    for (auto [begin, end] : flat) {
        auto it = std::upper_bound(starts.begin(), starts.end(), begin);
        std::size_t r = std::size_t(it - starts.begin()) - 1;
        while (begin < end) {
            const auto& reg = m_regions[r];
            const std::size_t offset = begin - starts[r];
            const std::size_t take = std::min(end - begin, (reg.end - reg.begin) - offset);
            appendRegion(out, {reg.var, reg.begin + offset, reg.begin + offset + take});
            begin += take;
            ++r;
        }
    }
    return Tensor(m_type, std::move(shape), std::move(out));
}

Tensor Tensor::slice(std::size_t begin, std::size_t end, unsigned dimension) const
{
    if (dimension >= rank() || begin > end || end > m_shape[dimension])
        throw index_error(fmt::format("slice [{}, {}) of dimension {} of a tensor of shape {}", begin, end, dimension, shapeText(m_shape)));
    const std::size_t outer = product(m_shape, 0, dimension);
    const std::size_t inner = product(m_shape, dimension + 1);
    const std::size_t rows = m_shape[dimension];
    FlatRanges flat;
    for (std::size_t o = 0; o < outer; ++o)
        appendRange(flat, (o * rows + begin) * inner, (o * rows + end) * inner);
    std::vector<std::size_t> shape = m_shape;
    shape[dimension] = end - begin;
    return select(flat, std::move(shape));
}

Tensor Tensor::slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const
{
    if (begin.size() != rank() || end.size() != rank())
        throw index_error(fmt::format("slice of a tensor of rank {} with {} begins and {} ends", rank(), begin.size(), end.size()));
    Tensor t = *this;
    for (unsigned d = 0; d < rank(); ++d)
        t = t.slice(begin[d], end[d], d);
    return t;
}

std::vector<Tensor> Tensor::slices(ArrayRef<Interval> intervals, unsigned dimension) const
{
    std::vector<Tensor> out;
    for (const auto& i : intervals)
        out.push_back(slice(i, dimension));
    return out;
}

Tensor Tensor::reshape(ArrayRef<std::size_t> shape) const
{
    std::vector<std::size_t> s = shape.vec();
    if (product(s) != numElements())
        throw index_error(fmt::format("reshape of a tensor of shape {} ({} elements) to {}", shapeText(m_shape), numElements(), shapeText(s)));
    return Tensor(m_type, std::move(s), m_regions);
}

Tensor Tensor::flatten(unsigned from, unsigned to) const
{
    if (from > to || to > rank())
        throw index_error(fmt::format("flatten({}, {}) of a tensor of rank {}", from, to, rank()));
    std::vector<std::size_t> s(m_shape.begin(), m_shape.begin() + from);
    s.push_back(product(m_shape, from, to));
    s.insert(s.end(), m_shape.begin() + to, m_shape.end());
    return reshape(s);
}

Tensor Tensor::dimShuffle(ArrayRef<unsigned> permutation) const
{
    std::vector<unsigned> perm = permutation.vec();
    std::vector<unsigned> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<unsigned> identity(rank());
    std::iota(identity.begin(), identity.end(), 0u);
    if (sorted != identity)
        throw index_error(fmt::format("dimShuffle of a tensor of rank {}: expected a permutation of 0..{}", rank(), rank() ? rank() - 1 : 0));
    std::vector<std::size_t> shape(rank());
    for (unsigned d = 0; d < rank(); ++d)
        shape[d] = m_shape[perm[d]];
    return select(permutedRanges(m_shape, perm), std::move(shape));
}

Tensor Tensor::dimRoll(unsigned from, unsigned to) const
{
    std::vector<unsigned> perm(rank());
    std::iota(perm.begin(), perm.end(), 0u);
    if (from >= rank() || to >= rank())
        throw index_error(fmt::format("dimRoll({}, {}) of a tensor of rank {}", from, to, rank()));
    perm.erase(perm.begin() + from);
    perm.insert(perm.begin() + to, from);
    return dimShuffle(perm);
}

Tensor Tensor::transpose() const
{
    if (rank() != 2)
        throw index_error(fmt::format("transpose of a tensor of rank {}: expected rank 2", rank()));
    return dimShuffle({1, 0});
}

Tensor Tensor::squeeze(ArrayRef<std::size_t> dims) const
{
    std::vector<std::size_t> s;
    for (std::size_t d = 0; d < rank(); ++d) {
        const bool drop = std::find(dims.begin(), dims.end(), d) != dims.end();
        if (drop && m_shape[d] != 1)
            throw index_error(fmt::format("squeeze of dimension {} of size {}: expected size 1", d, m_shape[d]));
        if (!drop)
            s.push_back(m_shape[d]);
    }
    return Tensor(m_type, std::move(s), m_regions);
}

Tensor Tensor::expand(ArrayRef<std::size_t> positions) const
{
    std::vector<std::size_t> s = m_shape;
    std::vector<std::size_t> sorted = positions.vec();
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t p : sorted) {
        if (p > s.size())
            throw index_error(fmt::format("expand at {} of a tensor of rank {}", p, s.size()));
        s.insert(s.begin() + std::ptrdiff_t(p), 1);
    }
    return Tensor(m_type, std::move(s), m_regions);
}

Tensor Tensor::reverse(unsigned dimension) const
{
    if (dimension >= rank())
        throw index_error(fmt::format("reverse of dimension {} of a tensor of rank {}", dimension, rank()));
    std::vector<Tensor> parts;
    for (std::size_t i = m_shape[dimension]; i-- > 0;)
        parts.push_back(slice(i, i + 1, dimension));
    return concat(parts, dimension);
}

Tensor Tensor::broadcast(unsigned n, unsigned dimension) const
{
    std::vector<Tensor> parts(n, *this);
    return concat(parts, dimension);
}

Tensor Tensor::subSample(unsigned stride, unsigned dimension) const
{
    if (stride == 0 || dimension >= rank())
        throw index_error(fmt::format("subSample by {} of dimension {} of a tensor of rank {}", stride, dimension, rank()));
    std::vector<Tensor> parts;
    for (std::size_t i = 0; i < m_shape[dimension]; i += stride)
        parts.push_back(slice(i, i + 1, dimension));
    return concat(parts, dimension);
}

std::vector<Interval> Tensor::getContiguousRegions() const
{
    // Intervals of the flattened tensor whose elements lie side by side in one variable.
    std::vector<Interval> out;
    std::size_t flat = 0;
    for (const auto& r : m_regions) {
        out.emplace_back(flat, flat + (r.end - r.begin));
        flat += r.end - r.begin;
    }
    return out;
}

std::string Tensor::shapeToString() const { return shapeText(m_shape); }

bool Tensor::operator==(const Tensor& o) const
{
    if (m_type != o.m_type || m_shape != o.m_shape || m_regions.size() != o.m_regions.size())
        return false;
    for (std::size_t i = 0; i < m_regions.size(); ++i)
        if (m_regions[i].var != o.m_regions[i].var || m_regions[i].begin != o.m_regions[i].begin || m_regions[i].end != o.m_regions[i].end)
            return false;
    return true;
}

bool Tensor::intersectsWith(const Tensor& o) const
{
    for (const auto& a : m_regions)
        for (const auto& b : o.m_regions)
            if (a.var == b.var && a.begin < b.end && b.begin < a.end)
                return true;
    return false;
}

Tensor concat(ArrayRef<Tensor> ts, unsigned dimension)
{
    if (ts.empty())
        throw index_error("concat of no tensors");
    const Tensor& first = ts[0];
    if (dimension >= first.rank())
        throw index_error(fmt::format("concat along dimension {} of tensors of rank {}", dimension, first.rank()));
    std::vector<std::size_t> shape = first.shape();
    shape[dimension] = 0;
    for (const auto& t : ts) {
        std::vector<std::size_t> a = t.shape(), b = first.shape();
        if (a.size() != b.size() || t.elementType() != first.elementType())
            throw index_error(fmt::format("concat of tensors of shapes {} and {} (types {} and {})", t.shapeToString(),
                                          first.shapeToString(), t.elementType().toString(), first.elementType().toString()));
        a[dimension] = b[dimension] = 0;
        if (a != b)
            throw index_error(fmt::format("concat along dimension {} of tensors of shapes {} and {}", dimension, t.shapeToString(),
                                          first.shapeToString()));
        shape[dimension] += t.dim(dimension);
    }
    // Row-major: for each index of the outer dimensions, each tensor's block in turn.
    std::size_t outer = 1;
    for (unsigned d = 0; d < dimension; ++d)
        outer *= shape[d];
    std::vector<detail::Region> regions;
    for (std::size_t o = 0; o < outer; ++o)
        for (const auto& t : ts) {
            if (t.numElements() == 0)
                continue;
            const std::size_t block = t.numElements() / outer;
            const Tensor part = t.reshape({t.numElements()}).slice(o * block, (o + 1) * block);
            for (const auto& r : part.regions())
                regions.push_back(r);
        }
    return Tensor(first.elementType(), std::move(shape), std::move(regions));
}

std::ostream& operator<<(std::ostream& os, const Tensor& t)
{
    return os << "Tensor" << t.shapeToString() << " of " << t.elementType();
}

} // namespace poplar
