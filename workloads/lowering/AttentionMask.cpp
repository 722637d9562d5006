// SPDX-License-Identifier: MIT
// GraphLowering's attention mask of packed rows (BERT sequence packing).
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/VertexCosts.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>

namespace ipusim {

void GraphLowering::lowerAttentionMask(const Op& op)
{
    // As PopTorch runs graphcore/examples' packed BERT: the ids repeated over the queries (an
    // expand, copied out), compared with their transpose (int32 EQUAL; the transposed operand
    // crosses the exchange to the output's layout), then Hugging Face's additive mask: cast to
    // the model's type, 1 - m and times -10000 (scalar broadcasts in place).
    using costs::BinaryOpKind;
    const int ids = op.inputs.at(0), output = op.outputs.at(0);
    const TensorDesc& out = m_graph.tensor(output);
    const uint64_t S = op.channels, idBytes = bytesOf(m_graph.tensor(ids).type);
    const uint32_t T = m_hw.tiles;
    const TileVector outMap = linearMapping(T, out.bytes(), kGrainBytes);
    std::vector<ExchangeBytes> idsIn(T), transposed(T);
    addSends(idsIn, ids);
    TileVector expand(T, 0), mask(T, 0), scratch(T, 0);
    uint64_t first = 0; // the tile's first mask element: the mapping is linear, in order
    for (uint32_t t = 0; t < T; ++t) {
        const uint64_t e = outMap[t] / bytesOf(out.type);
        if (!e)
            continue;
        // Each sample the tile's elements fall in sends it all its S ids.
        const uint64_t samples = (first + e - 1) / (S * S) - first / (S * S) + 1;
        first += e;
        idsIn[t].recvShared += samples * S * idBytes;
        transposed[t].send += e * idBytes;
        transposed[t].recv += e * idBytes;
        scratch[t] = e * (2 * idBytes + 1); // the expanded ids, their transpose, the booleans
        expand[t] = costs::copy(m_hw, e * idBytes, unsigned(idBytes));
        mask[t] = costs::equalInt32(m_hw, e) + costs::castFromBool(m_hw, e) + costs::broadcastScalar(m_hw, BinaryOpKind::Sub, out.type, e) +
                  costs::broadcastScalar(m_hw, BinaryOpKind::Mul, out.type, e);
    }
    m_b.sync();
    const int temp = m_b.allocate(op.name + " ids and booleans", "temporary", scratch);
    m_b.exchange(op.name + ".ids", idsIn);
    m_b.compute(op.name + ".expand", expand, {Vertex::Copy});
    m_b.touch(handleOf(ids));
    m_b.sync();
    m_b.exchange(op.name + ".transpose", transposed);
    produce(output, outMap); // live while it is written, beside the scratch
    m_b.compute(op.name, mask,
                {codelet::binary(BinaryOpKind::Equal), Vertex::Cast1D, codelet::byScalar(BinaryOpKind::Sub),
                 codelet::byScalar(BinaryOpKind::Mul)});
    m_b.touch(temp);
    m_b.touch(handleOf(output));
}

} // namespace ipusim
