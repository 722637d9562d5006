// SPDX-License-Identifier: MIT
// A vertex's cycles from what the program gave: its own estimate, its type's estimator, or its
// type's entry in a file of estimates. ipusim does not guess a price a program did not give.
#include "sim/poplar/CompiledGraph.hpp"
#include "sim/poplar/Elements.hpp"

#include <poplar/exceptions.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

namespace poplar::detail {

namespace {

FieldData fieldData(const VertexRecord& v, const std::string& name)
{
    const auto it = v.fields.find(name);
    if (it == v.fields.end())
        throw unknown_field(fmt::format("a perf estimator of '{}' asked for field '{}', which it does not have", v.type, name));
    const FieldRecord& f = it->second;
    std::vector<std::size_t> sizes;
    if (f.info->direction == FieldDirection::State)
        sizes.push_back(f.valueCount);
    else
        for (const auto& e : f.edges)
            sizes.push_back(e ? e->numElements() : 0);
    return FieldData(std::move(sizes), f.info->vectorOfEdges || f.info->shape == FieldShape::VectorList, typeNamed(f.info->elementType),
                     f.value);
}

/** IPUSIM_PERF_ESTIMATES: a JSON object of cycles by vertex type, {"SumVertex": 20}. */
std::map<std::string, std::uint64_t> estimatesFile()
{
    std::map<std::string, std::uint64_t> out;
    const char* path = std::getenv("IPUSIM_PERF_ESTIMATES");
    if (!path || !*path)
        return out;
    std::ifstream in(path);
    if (!in)
        throw poplar_error(fmt::format("IPUSIM_PERF_ESTIMATES={}: cannot read the file", path));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        throw poplar_error(fmt::format("IPUSIM_PERF_ESTIMATES={}: not JSON: {}", path, e.what()));
    }
    if (!doc.is_object())
        throw poplar_error(fmt::format("IPUSIM_PERF_ESTIMATES={}: expected an object of cycles by vertex type, {{\"MyVertex\": 120}}", path));
    for (const auto& [type, cycles] : doc.items()) {
        if (!cycles.is_number_unsigned())
            throw poplar_error(fmt::format("IPUSIM_PERF_ESTIMATES={}: /{}: expected cycles as a whole number, found {}", path, type, cycles.dump()));
        out[type] = cycles.get<std::uint64_t>();
    }
    return out;
}

} // namespace

std::vector<std::uint64_t> priceVertices(const GraphStore& store)
{
    const auto fromFile = estimatesFile();
    std::vector<std::uint64_t> out(store.vertices.size(), 0);
    for (unsigned id = 0; id < store.vertices.size(); ++id) {
        const VertexRecord& v = store.vertices[id];
        if (v.estimate) {
            out[id] = v.estimate->cycles;
        } else if (const auto it = store.estimators.find(v.type); it != store.estimators.end()) {
            const VertexIntrospector introspector([&](const std::string& name) { return fieldData(v, name); }, v.type);
            out[id] = it->second(introspector, store.target).cycles;
        } else if (const auto f = fromFile.find(v.type); f != fromFile.end()) {
            out[id] = f->second;
        } else {
            throw missing_perf_estimate(fmt::format(
                "{} in compute set '{}' has no cycle estimate; give one in any of three ways: Graph::setPerfEstimate(vertex, cycles) "
                "for this vertex, Graph::registerPerfEstimator(\"{}\", estimator) for every vertex of its type, or an entry "
                "\"{}\": cycles in the JSON file IPUSIM_PERF_ESTIMATES names",
                store.describeVertex(id), store.computeSets[v.computeSet].name, v.type, v.type));
        }
    }
    return out;
}

} // namespace poplar::detail
