// SPDX-License-Identifier: MIT
#include "sim/config/OnnxBatch.hpp"

#include <functional>
#include <numeric>

namespace ipusim::config {
namespace {

int64_t product(std::vector<int64_t>::const_iterator first, std::vector<int64_t>::const_iterator last)
{
    return std::accumulate(first, last, int64_t(1), std::multiplies<int64_t>());
}

bool pure(const std::vector<int64_t>& full, BatchAt at, int64_t batch)
{
    return at.dim >= 0 && at.inner == 1 && full.at(std::size_t(at.dim)) == batch;
}

/** The per-sample dimension of full dimension k (none: the pure batch). */
std::optional<std::size_t> sampleDim(const std::vector<int64_t>& full, BatchAt at, int64_t batch, std::size_t k)
{
    if (!pure(full, at, batch))
        return k;
    if (int(k) == at.dim)
        return std::nullopt;
    return int(k) < at.dim ? k : k - 1;
}

} // namespace

bool leading(const std::vector<int64_t>& full, BatchAt at, int64_t batch)
{
    return at.dim < 0 || (at.dim == 0 && pure(full, at, batch));
}

std::vector<int64_t> sampleShape(const std::vector<int64_t>& full, BatchAt at, int64_t batch)
{
    std::vector<int64_t> out = full;
    if (at.dim < 0)
        return out;
    if (pure(full, at, batch))
        out.erase(out.begin() + at.dim);
    else
        out[std::size_t(at.dim)] /= batch;
    return out;
}

std::optional<uint32_t> layerAxis(const std::vector<int64_t>& full, BatchAt at, int64_t batch, std::size_t axis)
{
    if (int(axis) == at.dim)
        return std::nullopt;
    const auto k = sampleDim(full, at, batch, axis);
    return uint32_t(*k + 1);
}

std::optional<BatchAt> batchAfterReshape(const std::vector<int64_t>& in, BatchAt at, const std::vector<int64_t>& out, int64_t batch)
{
    const int64_t total = product(in.begin(), in.end());
    // The batch's stride in elements: the batch is outermost when it has no dimension.
    const int64_t stride = at.dim < 0 ? total : at.inner * product(in.begin() + at.dim + 1, in.end());
    std::vector<BatchAt> found;
    for (std::size_t j = 0; j < out.size(); ++j) {
        const int64_t after = product(out.begin() + std::ptrdiff_t(j) + 1, out.end());
        if (after > 0 && stride % after == 0 && (after * out[j]) % (stride * batch) == 0)
            found.push_back({int(j), stride / after});
    }
    if (batch != 1)
        return found.empty() ? std::nullopt : std::optional<BatchAt>(found.front()); // one dimension can hold it
    for (const BatchAt& f : found)
        if (f.inner == 1 && out[std::size_t(f.dim)] == 1)
            return f;
    if (stride == total)
        return BatchAt{-1, 1};
    return found.empty() ? std::nullopt : std::optional<BatchAt>(found.back());
}

std::vector<uint32_t> layerPerm(const std::vector<int64_t>& full, BatchAt at, int64_t batch, const std::vector<int64_t>& perm)
{
    std::vector<uint32_t> out{0};
    for (int64_t p : perm)
        if (const auto k = at.dim < 0 ? std::optional<std::size_t>(std::size_t(p)) : sampleDim(full, at, batch, std::size_t(p)))
            out.push_back(uint32_t(*k + 1));
    return out;
}

BatchAt batchAfterTranspose(BatchAt at, const std::vector<int64_t>& perm)
{
    if (at.dim < 0)
        return at;
    for (std::size_t j = 0; j < perm.size(); ++j)
        if (perm[j] == at.dim)
            return {int(j), at.inner};
    return at;
}

} // namespace ipusim::config
