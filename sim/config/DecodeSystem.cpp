// SPDX-License-Identifier: MIT
#include "sim/config/ExperimentSpec.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace ipusim {
namespace {

using json = nlohmann::json;

/** Reads values of the validated, defaulted config by JSON pointer (so `at` cannot miss), and
 *  notes each pointer read: a test checks that every parameter the schema declares is. */
class Reader
{
public:
    Reader(const json& doc, std::set<std::string>* read) : m_doc(doc), m_read(read) {}
    template <class T>
    T at(const std::string& pointer) const
    {
        if (m_read)
            m_read->insert(pointer);
        return m_doc.at(json::json_pointer(pointer)).get<T>();
    }
    /** Notes a value read whole from the document (a list). */
    void note(const std::string& pointer) const
    {
        if (m_read)
            m_read->insert(pointer);
    }

private:
    const json& m_doc;
    std::set<std::string>* m_read;
};

Topology topologyOf(const config::LoadedConfig& cfg, const Reader& r, uint32_t numIpus)
{
    const json& t = cfg.doc.at("system").at("topology");
    const json list = t.value("links", json::array());
    r.note("/system/topology/links");
    for (std::size_t i = 0; i < list.size(); ++i)
        for (int k = 0; k < 2; ++k)
            if (list[i][k].get<uint32_t>() >= numIpus)
                cfg.fail(fmt::format("/system/topology/links/{}/{}", i, k),
                         fmt::format("expected an IPU below num_ipus ({}), found {}", numIpus, list[i][k].get<uint32_t>()));
    const bool wrap = r.at<bool>("/system/topology/wrap");
    const std::string kind = r.at<std::string>("/system/topology/kind");
    const uint32_t racks = r.at<uint32_t>("/system/topology/racks");
    if (kind == "pod") {
        if (!list.empty())
            cfg.fail("/system/topology/links", "expected no links for kind \"pod\", which lays its racks out itself");
        // Every rack holds whole IPU-M2000s (4 IPUs, one gateway) and is a ladder of rungs.
        if (numIpus % racks != 0 || (numIpus / racks) % Topology::kIpusPerM2000 != 0)
            cfg.fail("/system/topology/racks",
                     fmt::format("expected racks of whole IPU-M2000s: num_ipus ({}) / racks a multiple of 4, found {} racks", numIpus, racks));
        return Topology::pod(numIpus, racks);
    }
    if (racks != 1)
        cfg.fail("/system/topology/racks", fmt::format("expected 1 (racks are for kind \"pod\"), found {}", racks));
    if (kind != "custom")
        return Topology::ladder(numIpus, wrap);
    std::vector<std::array<uint32_t, 3>> links;
    for (const auto& e : list)
        links.push_back({e.at(0).get<uint32_t>(), e.at(1).get<uint32_t>(), e.at(2).get<uint32_t>()});
    return Topology::custom(numIpus, links);
}

} // namespace

SystemParams decodeSystem(const config::LoadedConfig& cfg, std::set<std::string>* pointersRead)
{
    const Reader r(cfg.doc, pointersRead);
    SystemParams p;
    // Every field the schema names (x-cpp-field), read at its pointer: the fields and their
    // pointers are generated from the schema, so no parameter is read by a line of its own here.
    forEachParam(p, "/system", [&](const std::string& pointer, const char*, auto& field) {
        field = r.at<std::decay_t<decltype(field)>>(pointer);
    });
    p.topology = topologyOf(cfg, r, p.numIpus);
    if (auto lost = p.topology.unreachable(); !lost.empty())
        cfg.fail("/system/topology", fmt::format("IPUs {} have no IPU-Link route to IPU 0: every IPU must be connected", fmt::join(lost, ", ")));
    return p;
}

} // namespace ipusim
