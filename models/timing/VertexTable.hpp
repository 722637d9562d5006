// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/VertexCosts.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The one list of the codelets ipusim prices. The compiler names a compute set's codelets
// through it (code memory counts each once a tile), and hand-written schedules name its rows
// to have a vertex costed; no other code spells a vertex's name.
namespace ipusim {

/** Every vertex ipusim prices, one row of vertexTable() each, in this order. */
enum class Vertex : uint8_t {
    ConvPartial1x1Out,
    ConvPartialnx1,
    UnaryOp1D,
    UnaryOp1DInPlace,
    BinaryOp1D,
    BinaryOp1DInPlace,
    BroadcastScalar1DInPlace,
    NonLinearity1DInPlace,
    NonLinearityGrad1D,
    ScaledAddSupervisor,
    Cast1D,
    Fill,
    ReducePartials,
    ReduceSingleInput,
    ReduceStrided,
    ReduceContinuous,
    MaxPooling,
    SumPooling,
    MaxPoolingGrad,
    InverseStdDeviation,
    DropoutSupervisor,
    EncodeOneHot,
    MultiSlice,
    MultiUpdateAdd,
    Copy,
};
inline constexpr std::size_t kVertexCount = std::size_t(Vertex::Copy) + 1;

/** The template operation a vertex is instantiated with, if any. */
enum class VertexOps : uint8_t { None, Unary, Binary, NonLinearity, Reduce }; // opsOf() indexes by it

/** The reductions popops' reduce vertices are instantiated for, priced alike (§3.8; SQUARE_ADD
 *  squares as it adds, at ADD's cost). */
enum class ReduceOp : uint8_t { Add, Max, SquareAdd };

struct VertexRow
{
    Vertex vertex;
    const char* name;   // as schedules name it: PopLibs' codelet, or for the reduce
                        // specialisations, MultiUpdateAdd and Copy a name for the vertex kind
    VertexOps ops;      // its template operation
    const char* source; // the estimator its formula restates (poplibs-costs.md section), or
                        // the rule it follows where PopLibs has none (Copy)
};

/** The table, one row per Vertex in enum order. */
const std::array<VertexRow, kVertexCount>& vertexTable();
const VertexRow& rowOf(Vertex vertex);
/** The row a schedule's name picks; nothing for a name not in the table. */
std::optional<Vertex> vertexNamed(const std::string& name);
/** The table's names, in order (for error messages). */
std::vector<std::string> vertexNames();

/** The ops' names in schedule params ("relu", "add", "gelu", a reduce's "max"), in the order
 *  errors list them. */
const std::vector<std::string>& unaryOpNames();
const std::vector<std::string>& binaryOpNames();
const std::vector<std::string>& nonLinearityNames();
const std::vector<std::string>& reduceOpNames();
std::optional<costs::UnaryOpKind> unaryOpNamed(const std::string& name);
std::optional<costs::BinaryOpKind> binaryOpNamed(const std::string& name);
std::optional<costs::NonLinearity> nonLinearityNamed(const std::string& name);
std::optional<ReduceOp> reduceOpNamed(const std::string& name);

/** One instantiated codelet, as code memory counts it: a vertex with its operation, the
 *  operation named as PopLibs names it, e.g. BinaryOp1D<MULTIPLY> or ReduceStrided<ADD>. */
class Codelet
{
public:
    Codelet(Vertex vertex);                         // a vertex without an operation; reduces: ADD
    Codelet(Vertex vertex, costs::UnaryOpKind op);  // UnaryOp1D(InPlace)
    Codelet(Vertex vertex, costs::BinaryOpKind op); // BinaryOp1D(InPlace), BroadcastScalar1DInPlace
    Codelet(Vertex vertex, costs::NonLinearity op); // NonLinearity1DInPlace, NonLinearityGrad1D
    Codelet(Vertex vertex, ReduceOp op);            // the Reduce* vertices

    Vertex vertex() const { return m_vertex; }
    std::string name() const;
    /** The codelet a name() spells; nothing for any other string. */
    static std::optional<Codelet> parse(const std::string& name);

private:
    Codelet(Vertex vertex, VertexOps ops, uint8_t op);

    Vertex m_vertex;
    uint8_t m_op = 0;
};

/** The names of `codelets`, in order, each once. */
std::vector<std::string> codeletNames(const std::vector<Codelet>& codelets);

} // namespace ipusim
