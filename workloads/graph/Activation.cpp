// SPDX-License-Identifier: MIT
#include "workloads/graph/Activation.hpp"

namespace ipusim {

const std::vector<ActivationRow>& activationTable()
{
#define IPUSIM_ACTIVATION_ROW(kind, graph, onnx, reads, inPlace) \
    {LayerKind::kind, OpKind::kind, OpKind::kind##Grad, graph, onnx, GradientReads::reads, inPlace},
    static const std::vector<ActivationRow> table = {IPUSIM_ACTIVATIONS(IPUSIM_ACTIVATION_ROW)};
#undef IPUSIM_ACTIVATION_ROW
    return table;
}

const ActivationRow* activationOf(LayerKind kind)
{
    for (const ActivationRow& row : activationTable())
        if (row.layer == kind)
            return &row;
    return nullptr;
}

const ActivationRow* activationOf(OpKind kind)
{
    for (const ActivationRow& row : activationTable())
        if (row.op == kind || row.grad == kind)
            return &row;
    return nullptr;
}

} // namespace ipusim
