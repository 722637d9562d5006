// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"
#include "models/timing/VertexCosts.hpp"

#include <cstdint>
#include <optional>
#include <tuple>
#include <variant>

// What a vertex's estimator reads besides the hardware, as PopLibs' estimators read a vertex's
// fields and template types: sizes and element types. The operation a vertex is instantiated
// with (ADD, RELU, ...) is not here but in its Codelet, so the codelet charged to code memory
// and the one priced cannot differ.
namespace ipusim {

/** A vertex over `elements` of one type: the element-wise, fill, scaled-add and dropout vertices. */
struct ElementArgs
{
    Precision type = Precision::FP16;
    uint64_t elements = 0;
};

/** A comparison of int32 operands (packed sequence ids), priced at the integer rate. */
struct Int32Args
{
    uint64_t elements = 0;
};

/** Cast1D: `from` nothing is a bool source (the attention mask's comparison result). */
struct CastArgs
{
    std::optional<Precision> from;
    Precision to = Precision::FP16;
    uint64_t elements = 0;
};

/** The reduce vertices: `outputs` results of `partialsPerOutput` partials each; the strided
 *  reduce's partials lie `stride` elements apart (0: `outputs`, adjacent columns). Each vertex
 *  reads the fields its estimator takes (ReduceSingleInput: one output). */
struct ReduceArgs
{
    Precision partials = Precision::FP32;
    Precision output = Precision::FP32;
    uint64_t outputs = 1;
    uint64_t partialsPerOutput = 1;
    uint64_t stride = 0;
};

/** A vertex whose cost is set by one count: InverseStdDeviation's channels (fp32 inside),
 *  EncodeOneHot's indices. */
struct CountArgs
{
    uint64_t count = 0;
};

/** MultiSlice and MultiUpdateAdd: `offsets` checked, `elements` copied (or added). */
struct SliceArgs
{
    Precision type = Precision::FP16;
    uint64_t offsets = 0;
    uint64_t elements = 0;
};

/** An on-tile copy of `bytes` in elements of `elementBytes`. */
struct CopyArgs
{
    uint64_t bytes = 0;
    unsigned elementBytes = 2;
};

/** One vertex's arguments: the alternative its row's pricing function reads. */
using VertexArgs = std::variant<costs::ConvShape, ElementArgs, Int32Args, CastArgs, ReduceArgs, CountArgs, costs::PoolTileWork,
                                SliceArgs, CopyArgs>;

// Equal arguments price equally: a compute set prices each run of tiles with equal calls once.
inline bool operator==(const ElementArgs& a, const ElementArgs& b) { return std::tie(a.type, a.elements) == std::tie(b.type, b.elements); }
inline bool operator==(const Int32Args& a, const Int32Args& b) { return a.elements == b.elements; }
inline bool operator==(const CastArgs& a, const CastArgs& b) { return std::tie(a.from, a.to, a.elements) == std::tie(b.from, b.to, b.elements); }
inline bool operator==(const ReduceArgs& a, const ReduceArgs& b)
{
    return std::tie(a.partials, a.output, a.outputs, a.partialsPerOutput, a.stride) ==
           std::tie(b.partials, b.output, b.outputs, b.partialsPerOutput, b.stride);
}
inline bool operator==(const CountArgs& a, const CountArgs& b) { return a.count == b.count; }
inline bool operator==(const SliceArgs& a, const SliceArgs& b)
{
    return std::tie(a.type, a.offsets, a.elements) == std::tie(b.type, b.offsets, b.elements);
}
inline bool operator==(const CopyArgs& a, const CopyArgs& b) { return std::tie(a.bytes, a.elementBytes) == std::tie(b.bytes, b.elementBytes); }

} // namespace ipusim

namespace ipusim::costs {
inline bool operator==(const ConvShape& a, const ConvShape& b)
{
    return std::tie(a.positions, a.inGroups, a.outGroups, a.convGroups, a.kernelHeight, a.kernelWidth, a.input, a.partials, a.wideLoads) ==
           std::tie(b.positions, b.inGroups, b.outGroups, b.convGroups, b.kernelHeight, b.kernelWidth, b.input, b.partials, b.wideLoads);
}
inline bool operator==(const PoolTileWork& a, const PoolTileWork& b)
{
    return std::tie(a.channelVectors, a.channelGroups, a.positions, a.rowWidth, a.itemsPerRow, a.stride) ==
           std::tie(b.channelVectors, b.channelGroups, b.positions, b.rowWidth, b.itemsPerRow, b.stride);
}
} // namespace ipusim::costs
