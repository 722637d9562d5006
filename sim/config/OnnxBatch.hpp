// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

// Where the batch is in an ONNX value. The graph workload's layers are per sample, the batch a
// leading dimension of its own; an exported model may fold the batch into another dimension
// (`x.reshape(B * S, D)`, `logits.reshape(-1, V)`) or move it (`x.transpose(0, 1)`, as
// nn.MultiheadAttention does). The importer follows the batch through each reshape and
// transpose, and reads every value as its per-sample view: the batch's factor taken out.
namespace ipusim::config {

/** The batch's place in a value's full shape: dimension `dim` is outer x batch x inner (pure
 *  when outer and inner are 1). `dim` -1: a batch of one with no dimension of its own. */
struct BatchAt
{
    int dim = 0;
    int64_t inner = 1;

    friend bool operator==(const BatchAt& a, const BatchAt& b) { return a.dim == b.dim && a.inner == b.inner; }
    friend bool operator!=(const BatchAt& a, const BatchAt& b) { return !(a == b); }
};

/** Whether the batch is a leading dimension of its own (or a batch of one left out): the layout
 *  the graph workload's layers have. */
bool leading(const std::vector<int64_t>& full, BatchAt at, int64_t batch);

/** The per-sample shape: `full` with the batch's factor taken out (a pure batch dimension
 *  removed). */
std::vector<int64_t> sampleShape(const std::vector<int64_t>& full, BatchAt at, int64_t batch);

/** Dimension `axis` of `full` (0-based, non-negative) as a layer's axis (counted with the batch
 *  first); nothing when the batch is in it (an op along it would mix samples). */
std::optional<uint32_t> layerAxis(const std::vector<int64_t>& full, BatchAt at, int64_t batch, std::size_t axis);

/** Where the batch goes in a reshape of `in` to `out` (both full, `out` resolved): the dimension
 *  of `out` that holds the batch's elements, found from the batch's stride; nothing when the
 *  reshape mixes the batch with other dimensions (the samples would not stay apart). A batch of
 *  one has no size to find it by: it goes to a dimension of one at its stride, else (outermost)
 *  nowhere, else to the innermost dimension its stride allows. */
std::optional<BatchAt> batchAfterReshape(const std::vector<int64_t>& in, BatchAt at, const std::vector<int64_t>& out, int64_t batch);

/** A transpose's permutation as a layer's (every per-sample dimension, the batch first) and
 *  where the batch goes. */
std::vector<uint32_t> layerPerm(const std::vector<int64_t>& full, BatchAt at, int64_t batch, const std::vector<int64_t>& perm);
BatchAt batchAfterTranspose(BatchAt at, const std::vector<int64_t>& perm);

} // namespace ipusim::config
