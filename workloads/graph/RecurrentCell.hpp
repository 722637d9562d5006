// SPDX-License-Identifier: MIT
#pragma once

// The recurrent cells a Recurrent op runs (torch.nn.LSTM and nn.GRU, ONNX LSTM and GRU), as
// popnn's lstmFwd / gruFwd run them for PopART: the sizes the graph needs (weights, saved
// intermediates). The vertices each step runs are the lowering's (RecurrentOps.cpp).
namespace ipusim {

enum class RecurrentCell { Lstm, Gru };

/** Gates per hidden unit: LSTM's input, forget, candidate and output; GRU's reset, update and
 *  candidate. The weights are [gates x H, I + H] (input and recurrent weights side by side) and
 *  the biases [2 x gates x H] (torch's and ONNX's input and recurrent biases). */
inline unsigned gatesOf(RecurrentCell c) { return c == RecurrentCell::Lstm ? 4 : 3; }

/** The [B, H] intermediates popnn keeps per step for the backward pass (no recomputation, the
 *  full output sequence an output of its own): LSTM's forget, input, candidate and output gates,
 *  the cell state's tanh and the previous cell state (popnn Lstm.cpp, FwdIntermediates); GRU's
 *  reset, update and candidate gates and the candidate's recurrent part, reset after the matmul
 *  as torch's GRU (popnn Gru.cpp, FwdIntermediates with resetAfter). */
inline unsigned savedOf(RecurrentCell c) { return c == RecurrentCell::Lstm ? 6 : 4; }

/** The [B, H] tensors carried from step to step: h, and LSTM's cell state c. */
inline unsigned statesOf(RecurrentCell c) { return c == RecurrentCell::Lstm ? 2 : 1; }

inline const char* nameOf(RecurrentCell c) { return c == RecurrentCell::Lstm ? "lstm" : "gru"; }

} // namespace ipusim
