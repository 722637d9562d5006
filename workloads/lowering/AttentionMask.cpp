// SPDX-License-Identifier: MIT
// GraphLowering's attention mask of packed rows (BERT sequence packing).
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
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
    TileVector scratch(T, 0);
    ComputePlan expand{op.name + ".expand", TileCalls(T)}, mask{op.name, TileCalls(T)};
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
        expand.calls.add(t, calls::copy(e * idBytes, unsigned(idBytes)));
        for (const VertexCall& call : {VertexCall{codelet::binary(BinaryOpKind::Equal), Int32Args{e}},
                                       VertexCall{Vertex::Cast1D, CastArgs{std::nullopt, out.type, e}},
                                       calls::byScalar(BinaryOpKind::Sub, out.type, e), calls::byScalar(BinaryOpKind::Mul, out.type, e)})
            mask.calls.add(t, call);
    }
    OpPlan plan;
    const PlanTensor temp = plan.temporary(op.name + " ids and booleans", scratch);
    plan.exchange(op.name + ".ids", std::move(idsIn)).write(temp);
    plan.compute(std::move(expand), false).read(PlanTensor::graph(ids));
    plan.exchange(op.name + ".transpose", std::move(transposed));
    // The output is live while it is written, beside the scratch.
    plan.compute(std::move(mask), false).read(temp).write(plan.output(output, outMap));
    emit(plan);
}

} // namespace ipusim
