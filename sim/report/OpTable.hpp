// SPDX-License-Identifier: MIT
#pragma once
#include <string>
#include <vector>

// The op table: each ONNX op the importer maps, the graph ops it becomes, the vertices those
// compile to and where each vertex's cycles come from. The vertices are not written down: each
// graph op is compiled in a small training graph (a probe) and its compute sets' codelets read
// back, so the table says what the compiler does. `ipusim ops` prints it; docs/reference/ops.md
// is its Markdown, checked by the suite.
namespace ipusim {

/** The codelets of one graph op, forward and in training's backward pass (its gradient steps). */
struct GraphOpVertices
{
    std::string graphOp;
    std::vector<std::string> forward, gradient; // vertex names (the table's rows), sorted
};

/** Every graph op of the schema's graph_ops, compiled in its probe, in the schema's key order. */
std::vector<GraphOpVertices> probeGraphOps();

/** The table as Markdown: ONNX ops, graph ops and vertices with their cost sources. */
std::string opTableMarkdown();

} // namespace ipusim
