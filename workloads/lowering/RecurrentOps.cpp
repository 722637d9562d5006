// SPDX-License-Identifier: MIT
// GraphLowering's recurrent layers: an LSTM or GRU runs its steps in a Repeat, as popnn's
// lstmFwd / gruFwd and lstmBwdWithWU / gruBwdWithWU do (PopART lowers ONNX LSTM and GRU to
// them, with popnn's default options: no pre-computed input projection, no recomputation).
// Each step is a matmul of [x_t, h_t-1] by the weights, then the cell's element-wise vertices
// on the tiles holding the state; the weights' and biases' gradients are ops of their own,
// over every step at once, after the loop (Training.cpp).
#include "workloads/lowering/GraphLowering.hpp"

#include "workloads/lowering/Codelets.hpp"
#include "workloads/lowering/RecurrentCalls.hpp"

namespace ipusim {

using costs::BinaryOpKind;
using costs::NonLinearity;
using costs::UnaryOpKind;

namespace {

VertexCall binaryInPlace(BinaryOpKind op, Precision type, uint64_t n) { return {codelet::binaryInPlace(op), ElementArgs{type, n}}; }

/** An [M, K] x [K, N] matmul of a recurrent step, in the op's precisions. */
ConvProblem stepProblem(const Op& op, uint64_t M, uint64_t K, uint64_t N)
{
    ConvProblem pr = op.conv;
    pr.groups = 1;
    pr.positions = M;
    pr.reduction = K;
    pr.outChans = N;
    return pr;
}

/** Each tile's share, `num` / `den` of its bytes of a placement. */
TileVector scaled(const TileVector& bytes, uint64_t num, uint64_t den)
{
    TileVector out(bytes.size());
    for (std::size_t t = 0; t < bytes.size(); ++t)
        out[t] = bytes[t] * num / den;
    return out;
}

void addSendsOf(std::vector<ExchangeBytes>& x, const TileVector& bytes)
{
    for (std::size_t t = 0; t < bytes.size(); ++t)
        x[t].send += bytes[t];
}

/** A matmul's output (each tile's `out` bytes) to the tiles that want it, `wanted` each. */
std::vector<ExchangeBytes> redistribution(const TileVector& out, const TileVector& wanted)
{
    std::vector<ExchangeBytes> x(out.size());
    for (std::size_t t = 0; t < out.size(); ++t) {
        x[t].send = out[t];
        x[t].recv = wanted[t];
    }
    return x;
}

} // namespace

/** The vertices one step of the cell runs on a tile holding `u` of the state's [B, H] elements,
 *  in popnn's order (Lstm.cpp basicLstmCellForwardPass, Gru.cpp
 *  gruCellForwardPassCalcUnitsResetAfter and basicGruCellForwardPass), then the step's output
 *  and saved intermediates copied into their sequences (popnn's dynamic update slices). */
std::vector<VertexCall> recurrentStepCalls(RecurrentCell cell, Precision type, uint64_t u)
{
    using namespace calls;
    const unsigned bytes = bytesOf(type);
    if (cell == RecurrentCell::Lstm)
        return {binaryInPlace(BinaryOpKind::Add, type, 4 * u),            // AddBias
                unaryInPlace(UnaryOpKind::Sigmoid, type, 3 * u),           // input, forget, output gates
                unaryInPlace(UnaryOpKind::Tanh, type, u),                  // candidate
                binary(BinaryOpKind::Mul, type, 2 * u),                    // {forget, input} x {c, candidate}
                binaryInPlace(BinaryOpKind::Add, type, u),                 // AddCellCand
                unary(UnaryOpKind::Tanh, type, u),                         // tanh(c)
                binary(BinaryOpKind::Mul, type, u),                        // OutputGate
                copy((1 + savedOf(cell)) * u * bytes, bytes)};             // h_t and the intermediates into their sequences
    return {binaryInPlace(BinaryOpKind::Add, type, 6 * u),                // AddBias: input and recurrent biases
            binaryInPlace(BinaryOpKind::Add, type, 2 * u),                 // recurrent part of reset and update
            unaryInPlace(UnaryOpKind::Sigmoid, type, 2 * u),               // reset, update gates
            binaryInPlace(BinaryOpKind::Mul, type, u),                     // reset x the candidate's recurrent part
            binaryInPlace(BinaryOpKind::Add, type, u),                     // the candidate's input part added
            unaryInPlace(UnaryOpKind::Tanh, type, u),                      // candidate
            binary(BinaryOpKind::Sub, type, u),                            // h = c + u (h_t-1 - c), popops' fused map
            binaryInPlace(BinaryOpKind::Mul, type, u),                     //   priced as its three element-wise ops
            binaryInPlace(BinaryOpKind::Add, type, u),
            copy((1 + savedOf(cell)) * u * bytes, bytes)};
}

/** One step backward on a tile holding `u` state elements (Lstm.cpp backwardStepImpl, Gru.cpp
 *  backwardStepImplResetAfter): the step's output gradient and saved intermediates read from
 *  their sequences, the incoming gradient added to the recurrent one, each gate's gradient,
 *  the gate gradients written into theirs. */
std::vector<VertexCall> recurrentStepGradCalls(RecurrentCell cell, Precision type, uint64_t u)
{
    using namespace calls;
    const unsigned bytes = bytesOf(type);
    const uint64_t G = gatesOf(cell);
    if (cell == RecurrentCell::Lstm)
        return {copy((1 + savedOf(cell)) * u * bytes, bytes),              // dy_t and the intermediates out of their sequences
                binary(BinaryOpKind::Add, type, u),                        // AddActGrads
                binary(BinaryOpKind::Mul, type, 2 * u),                    // MulOGate
                nonLinearityGrad(NonLinearity::Tanh, type, u),             // tanh(c)
                nonLinearityGrad(NonLinearity::Sigmoid, type, u),          // output gate
                binaryInPlace(BinaryOpKind::Add, type, u),                 // AddCellState
                binary(BinaryOpKind::Mul, type, 4 * u),                    // {input, candidate, c_t-1, forget} x dc
                nonLinearityGrad(NonLinearity::Sigmoid, type, u),          // input gate
                nonLinearityGrad(NonLinearity::Tanh, type, u),             // candidate
                nonLinearityGrad(NonLinearity::Sigmoid, type, u),          // forget gate
                copy(G * u * bytes, bytes)};                               // the gate gradients into their sequence
    return {copy((1 + savedOf(cell)) * u * bytes, bytes),
            binary(BinaryOpKind::Add, type, u),                            // dy_t + the recurrent gradient
            binary(BinaryOpKind::Sub, type, 2 * u),                        // 1 - u, h_t-1 - c
            binary(BinaryOpKind::Mul, type, 2 * u),                        // both x dh
            nonLinearityGrad(NonLinearity::Tanh, type, u),                 // candidate
            nonLinearityGrad(NonLinearity::Sigmoid, type, u),              // update gate
            binary(BinaryOpKind::Mul, type, u),                            // dc x the candidate's recurrent part
            nonLinearityGrad(NonLinearity::Sigmoid, type, u),              // reset gate
            binary(BinaryOpKind::Mul, type, u),                            // dc x r
            binary(BinaryOpKind::Mul, type, u),                            // u x dh, into dh_t-1
            copy(G * u * bytes, bytes)};
}

void GraphLowering::lowerRecurrent(const Op& op)
{
    // The state [B, H] is spread linearly over the tiles; the sequences (the output, the saved
    // intermediates) keep each tile's units of every step on that tile.
    const int x = op.inputs.at(0), w = op.inputs.at(1), b = op.inputs.at(2);
    const TensorDesc& xd = m_graph.tensor(x);
    const Precision type = xd.type;
    const uint64_t B = xd.shape.at(0), S = op.window, I = xd.shape.at(2), H = op.channels, G = gatesOf(op.cell);
    const uint32_t T = m_hw.tiles;
    const TileVector state = linearMapping(T, B * H * bytesOf(type), kGrainBytes);
    const bool training = op.outputs.size() > 1;

    OpPlan p;
    const PlanTensor h = p.temporary(op.name + " h", state);
    std::vector<PlanTensor> states{h};
    if (statesOf(op.cell) == 2) // LSTM's cell state beside h
        states.push_back(p.temporary(op.name + " c", state));
    PlanStep& init = p.compute(fillOf(op.name + ".zero_state", scaled(state, statesOf(op.cell), 1), type));
    for (PlanTensor s : states)
        init.write(s);

    p.repeat(op.name + ".steps", S);
    // x_t and h_t-1 to the matmul's tiles (popnn's matmul of their concatenation; a GRU, whose
    // reset gate acts after the recurrent matmul, runs the input's and the state's apart).
    const TileVector xStep = scaled(m_b.denseBytes(handleOf(x)), 1, S), wBytes = m_b.denseBytes(handleOf(w));
    TileVector gatesOut(T, 0);
    auto matmul = [&](const std::string& name, uint64_t reduction, bool input, bool recurrent) {
        std::vector<ExchangeBytes> sends(T);
        if (input)
            addSendsOf(sends, xStep);
        if (recurrent)
            addSendsOf(sends, state);
        addSendsOf(sends, scaled(wBytes, reduction, I + H));
        const ConvSteps c = convSteps(p, name, stepProblem(op, B, reduction, G * H), std::move(sends),
                                      {PlanTensor::graph(x), PlanTensor::graph(w), h});
        for (uint32_t t = 0; t < T; ++t)
            gatesOut[t] += c.out[t];
    };
    if (op.cell == RecurrentCell::Lstm)
        matmul(op.name + ".step", I + H, true, true);
    else {
        matmul(op.name + ".step.input", I, true, false);
        matmul(op.name + ".step.recurrent", H, false, true);
    }
    const TileVector wanted = scaled(state, (op.cell == RecurrentCell::Lstm ? 1 : 2) * G, 1); // a GRU's two matmuls' gates
    const PlanTensor gates = p.temporary(op.name + " gates", wanted);
    p.exchange(op.name + ".step.gates", redistribution(gatesOut, wanted)).write(gates);
    ComputePlan cell{op.name + ".step.cell", TileCalls(T)};
    ShareRecipes<uint64_t> cellRecipes;
    for (uint32_t t = 0; t < T; ++t)
        if (state[t])
            cell.calls.add(t, cellRecipes(state[t], [&] { return recurrentStepCalls(op.cell, type, state[t] / bytesOf(type)); }));
    PlanStep& step = p.compute(std::move(cell)).read(gates).read(PlanTensor::graph(b)).read(states);
    step.write(p.output(op.outputs.at(0), scaled(state, S, 1)));
    if (training)
        step.write(p.output(op.outputs.at(1), scaled(state, S * savedOf(op.cell), 1)));
    p.endRepeat();
    emit(p);
}

void GraphLowering::lowerRecurrentGrad(const Op& op)
{
    // Backward through time on the forward's state tiles, where the saved intermediates are;
    // dy_t comes from where dy lives. Each step's gate gradients go to the matmul by the
    // weights, whose output is dh_t-1 (back to the state tiles) and dx_t (to dx's tiles).
    const int dy = op.inputs.at(0), x = op.inputs.at(1), w = op.inputs.at(2), saved = op.inputs.at(4);
    const TensorDesc& xd = m_graph.tensor(x);
    const Precision type = xd.type;
    const uint64_t B = xd.shape.at(0), S = op.window, I = xd.shape.at(2), H = op.channels, G = gatesOf(op.cell);
    const uint32_t T = m_hw.tiles;
    const unsigned eb = bytesOf(type);
    const TileVector state = linearMapping(T, B * H * eb, kGrainBytes);
    const bool dataGrad = op.outputs.size() > 1;

    OpPlan p;
    const TileVector stateGrads = scaled(state, statesOf(op.cell), 1); // dh and (LSTM) dc
    const PlanTensor dh = p.temporary(op.name + " dh", stateGrads);
    p.compute(fillOf(op.name + ".zero_state", stateGrads, type)).write(dh);
    const PlanTensor dgates = p.output(op.outputs.at(0), scaled(state, S * G, 1));
    const TileVector dxPlace = linearMapping(T, xd.bytes(), kGrainBytes);

    p.repeat(op.name + ".steps", S);
    // dy_t onto the state tiles where dy lives elsewhere (its producer's layout).
    std::vector<ExchangeBytes> in(T);
    addSendsOf(in, scaled(m_b.denseBytes(handleOf(dy)), 1, S));
    for (uint32_t t = 0; t < T; ++t)
        in[t].recv = state[t];
    const PlanTensor dyStep = p.temporary(op.name + " dy_t", state);
    p.exchange(op.name + ".step.dy", std::move(in)).read(PlanTensor::graph(dy)).write(dyStep);
    ComputePlan cell{op.name + ".step.cell", TileCalls(T)};
    ShareRecipes<uint64_t> cellRecipes;
    for (uint32_t t = 0; t < T; ++t)
        if (state[t])
            cell.calls.add(t, cellRecipes(state[t], [&] { return recurrentStepGradCalls(op.cell, type, state[t] / eb); }));
    p.compute(std::move(cell)).read(dyStep).read(PlanTensor::graph(saved)).read(dh).write(dgates);
    // The gate gradients by the weights: [dx_t, dh_t-1] (a GRU's input and recurrent parts apart).
    const TileVector wBytes = m_b.denseBytes(handleOf(w));
    TileVector toState(T, 0), toInput(T, 0);
    auto matmul = [&](const std::string& name, uint64_t outputs, bool input, bool recurrent) {
        std::vector<ExchangeBytes> sends(T);
        addSendsOf(sends, scaled(state, G, 1));
        addSendsOf(sends, scaled(wBytes, outputs, I + H));
        const ConvSteps c = convSteps(p, name, stepProblem(op, B, G * H, outputs), std::move(sends),
                                      {dgates, PlanTensor::graph(w)});
        for (uint32_t t = 0; t < T; ++t) {
            toState[t] += recurrent ? c.out[t] * H / outputs : 0;
            toInput[t] += input ? c.out[t] * I / outputs : 0;
        }
    };
    if (op.cell == RecurrentCell::Lstm) // popnn's {Prev + Input}Grad, or PrevStepGrad without dx
        matmul(op.name + ".step.grad", dataGrad ? I + H : H, dataGrad, true);
    else {
        matmul(op.name + ".step.grad.recurrent", H, false, true);
        if (dataGrad)
            matmul(op.name + ".step.grad.input", I, true, false);
    }
    std::vector<ExchangeBytes> out(T);
    for (uint32_t t = 0; t < T; ++t) {
        out[t].send = toState[t] + (dataGrad ? toInput[t] : 0);
        out[t].recv = state[t] + (dataGrad ? dxPlace[t] / S : 0);
    }
    PlanStep& back = p.exchange(op.name + ".step.out", std::move(out)).read(dh);
    if (dataGrad)
        back.write(p.output(op.outputs.at(1), dxPlace));
    p.endRepeat();
    emit(p);
}

} // namespace ipusim
