// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/VertexArgs.hpp"
#include "models/timing/VertexCosts.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The one list of the codelets ipusim prices, each row with its pricing function, as PopLibs
// binds a cycle estimator to each vertex (CYCLE_ESTIMATOR_ENTRY). The compiler lowers an op to
// vertex calls priced through their rows (code memory counts each codelet once a tile), and
// hand-written schedules name the rows to have a vertex priced; no other code spells a vertex's
// name or calls its formula.
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
    BroadcastScalar1D,
    ClampInPlace,
    SelectInPlace,
    FusedMap,
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
    Select,
};
inline constexpr std::size_t kVertexCount = std::size_t(Vertex::Select) + 1;

/** The template operation a vertex is instantiated with, if any. */
enum class VertexOps : uint8_t { None, Unary, Binary, NonLinearity, Reduce, Map }; // opsOf() indexes by it

/** The reductions popops' reduce vertices are instantiated for, priced alike (§3.8; SQUARE_ADD
 *  squares as it adds, at ADD's cost). */
enum class ReduceOp : uint8_t { Add, Max, SquareAdd };



/** The ops' names in schedule params ("relu", "add", "gelu", a reduce's "max"), in the order
 *  errors list them. */
const std::vector<std::string>& unaryOpNames();
const std::vector<std::string>& binaryOpNames();
const std::vector<std::string>& nonLinearityNames();
const std::vector<std::string>& reduceOpNames();
const std::vector<std::string>& mapExprNames();
std::optional<costs::UnaryOpKind> unaryOpNamed(const std::string& name);
std::optional<costs::BinaryOpKind> binaryOpNamed(const std::string& name);
std::optional<costs::NonLinearity> nonLinearityNamed(const std::string& name);
std::optional<ReduceOp> reduceOpNamed(const std::string& name);
std::optional<costs::MapExpr> mapExprNamed(const std::string& name);

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
    Codelet(Vertex vertex, costs::MapExpr op);      // FusedMap, a generated codelet per expression

    Vertex vertex() const { return m_vertex; }
    /** The operation it is instantiated with; a logic error for a vertex of another kind. */
    costs::UnaryOpKind unaryOp() const { return costs::UnaryOpKind(opOf(VertexOps::Unary)); }
    costs::BinaryOpKind binaryOp() const { return costs::BinaryOpKind(opOf(VertexOps::Binary)); }
    costs::NonLinearity nonLinearity() const { return costs::NonLinearity(opOf(VertexOps::NonLinearity)); }
    ReduceOp reduceOp() const { return ReduceOp(opOf(VertexOps::Reduce)); }
    costs::MapExpr mapExpr() const { return costs::MapExpr(opOf(VertexOps::Map)); }
    std::string name() const;
    /** The codelet a name() spells; nothing for any other string. */
    static std::optional<Codelet> parse(const std::string& name);

    friend bool operator==(const Codelet& a, const Codelet& b) { return a.m_vertex == b.m_vertex && a.m_op == b.m_op; }

private:
    Codelet(Vertex vertex, VertexOps ops, uint8_t op);
    uint8_t opOf(VertexOps ops) const;

    Vertex m_vertex;
    uint8_t m_op = 0;
};

/** One vertex a tile runs: the codelet (vertex and operation) and what its estimator reads. */
struct VertexCall
{
    Codelet codelet;
    VertexArgs args;
    friend bool operator==(const VertexCall& a, const VertexCall& b) { return a.codelet == b.codelet && a.args == b.args; }
};

struct VertexRow
{
    Vertex vertex;
    const char* name;   // as schedules name it: PopLibs' codelet, or for the reduce
                        // specialisations, MultiUpdateAdd and Copy a name for the vertex kind
    VertexOps ops;      // its template operation
    /** Its estimator: tile cycles of one call, reading the call's operation and the one
     *  alternative of VertexArgs the vertex takes (another is a logic error). */
    uint64_t (*cycles)(const IpuParams& hw, const VertexCall& call);
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
/** Tile cycles of `call`, by its row's estimator. */
uint64_t cyclesOf(const IpuParams& hw, const VertexCall& call);

/** The names of `codelets`, in order, each once. */
std::vector<std::string> codeletNames(const std::vector<Codelet>& codelets);

} // namespace ipusim
