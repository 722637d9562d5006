// SPDX-License-Identifier: MIT
#include "models/program/ScheduleCheck.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_set>

namespace ipusim {
// Named, not anonymous: ProgramChecker::Impl, which the header declares, holds a Checker.
namespace schedule_check {

class Checker
{
public:
    Checker(const SystemParams& system, std::vector<std::string>& problems) : m_system(system), m_problems(problems) {}

    void program(const Program& p)
    {
        m_program = &p;
        if (!m_ipus.insert(p.ipu).second)
            problem("has more than one program");
        m_nextPoint = 0;
        if (p.ipu >= m_system.numIpus)
            problem(fmt::format("its IPU is not one of the system's {}", m_system.numIpus));
        forEachProgramStep(p, [&](const Step& s) { std::visit([&](const auto& op) { step(op); }, s.op); });
        if (m_nextPoint != p.numPoints)
            problem(fmt::format("numbers {} program points, its steps hold {}", p.numPoints, m_nextPoint));
        for (const auto& t : p.tensors) {
            runs(t.bytes, "tensor", t.name);
            if (!t.alwaysLive && (t.from > t.to || t.to >= p.numPoints))
                problem(fmt::format("tensor \"{}\" lives from point {} to {}, outside its {} points", t.name, t.from, t.to, p.numPoints));
        }
    }

private:
    void problem(const std::string& what) { m_problems.push_back(fmt::format("IPU {}: {}", m_program->ipu, what)); }

    /** Checks runs named `kind` "name"`part` in a problem (named only then: every step has runs). */
    template <class T>
    void runs(const TileRuns<T>& r, const char* kind, const std::string& name, const char* part = "")
    {
        if (m_runsHold.count(&r.runs()))
            return;
        auto where = [&] { return fmt::format("{} \"{}\"{}", kind, name, part); };
        const std::size_t before = m_problems.size();
        uint32_t next = 0;
        for (const auto& run : r.runs()) {
            if (run.first < next)
                problem(where() + ": tile runs overlap or are out of tile order");
            next = run.end();
        }
        if (r.end() > m_system.ipu.tiles)
            problem(fmt::format("{}: tiles up to {}, the IPU has {}", where(), r.end(), m_system.ipu.tiles));
        if (m_problems.size() == before)
            m_runsHold.insert(&r.runs());
    }

    /** Whether every tile `inner` gives a value (other than T{}) lies in a run of `outer`. */
    template <class A, class B>
    static bool within(const TileRuns<B>& inner, const TileRuns<A>& outer)
    {
        auto o = outer.runs().begin();
        for (const auto& r : inner.runs()) {
            for (uint32_t t = r.first; r.value != B{} && t < r.end(); t = o->end()) {
                while (o != outer.runs().end() && o->end() <= t)
                    ++o;
                if (o == outer.runs().end() || o->first > t)
                    return false;
            }
        }
        return true;
    }

    template <class T>
    void point(const T& op)
    {
        if (op.point != m_nextPoint)
            problem(fmt::format("step \"{}\" is program point {}, expected {} (program order)", op.name, op.point, m_nextPoint));
        m_nextPoint = op.point + 1;
    }

    void otherIpu(uint32_t ipu, const std::string& copy)
    {
        if (ipu >= m_system.numIpus || ipu == m_program->ipu)
            problem(fmt::format("IPU copy \"{}\" names IPU {}: expected another IPU of the system", copy, ipu));
    }

    void step(const ComputeStep& c)
    {
        point(c);
        runs(c.cycles, "compute", c.name);
        runs(c.vertices, "compute", c.name, " vertices");
        const std::pair<const void*, const void*> both{&c.vertices.runs(), &c.cycles.runs()};
        if (m_verticesHold.count(both))
            return;
        if (within(c.vertices, c.cycles))
            m_verticesHold.insert(both);
        else
            problem("compute \"" + c.name + "\": vertices on tiles it gives no cycles");
    }
    void step(const ExchangeStep& x)
    {
        point(x);
        runs(x.bytes, "exchange", x.name);
    }
    void step(const HostTransferStep& h) { point(h); }
    void step(const StreamingMemoryStep& r) { point(r); }
    void step(const IpuCopyStep& c)
    {
        point(c);
        for (const auto* list : {&c.send, &c.recv})
            for (const auto& t : *list)
                otherIpu(t.peer, c.name);
    }
    void step(const CollectiveStep& c)
    {
        point(c);
        std::set<uint32_t> members(c.ring.begin(), c.ring.end());
        if (members.size() != c.ring.size() || !members.count(m_program->ipu))
            problem(fmt::format("collective \"{}\": its ring must hold IPU {} and each IPU once", c.name, m_program->ipu));
        for (uint32_t ipu : c.ring)
            if (ipu >= m_system.numIpus)
                problem(fmt::format("collective \"{}\": ring member {} is not an IPU of the system", c.name, ipu));
    }
    void step(const CallStep& c)
    {
        if (c.fragment >= m_program->fragments.size())
            problem(fmt::format("a call names fragment {}, the program has {}", c.fragment, m_program->fragments.size()));
    }
    void step(const SyncStep&) {}
    void step(const RepeatStep&) {}

    const SystemParams& m_system;
    std::vector<std::string>& m_problems;
    const Program* m_program = nullptr;
    uint32_t m_nextPoint = 0;
    // Identical layers' steps share their tile runs (a TileRuns copy shares its storage): runs,
    // and vertices over cycles, found to hold are not walked again.
    struct PairHash
    {
        std::size_t operator()(const std::pair<const void*, const void*>& p) const
        {
            return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
        }
    };
    std::unordered_set<const void*> m_runsHold;
    std::unordered_set<std::pair<const void*, const void*>, PairHash> m_verticesHold;
    std::set<uint32_t> m_ipus; // of the programs checked
};

} // namespace schedule_check

struct ProgramChecker::Impl
{
    explicit Impl(const SystemParams& system) : checker(system, problems) {}
    std::vector<std::string> problems;
    schedule_check::Checker checker;
};

ProgramChecker::ProgramChecker(const SystemParams& system) : m_impl(std::make_unique<Impl>(system)) {}
ProgramChecker::~ProgramChecker() = default;

std::vector<std::string> ProgramChecker::check(const Program& program)
{
    m_impl->problems.clear();
    m_impl->checker.program(program);
    return std::move(m_impl->problems);
}

void ProgramChecker::require(const Program& program)
{
    requireNoProblems(check(program));
}

std::vector<std::string> checkCopyPairs(const Schedule& schedule, const std::vector<uint32_t>& ipusLeftOut)
{
    std::vector<std::string> problems;
    CopyListing<std::string> copies; // per edge, a copy step listing it
    for (const auto& p : schedule.programs)
        forEachProgramStep(p, [&](const Step& s) {
            if (const auto* c = std::get_if<IpuCopyStep>(&s.op)) {
                for (const auto& t : c->send)
                    copies.sends.emplace(std::pair{p.ipu, t.peer}, c->name);
                for (const auto& t : c->recv)
                    copies.recvs.emplace(std::pair{t.peer, p.ipu}, c->name);
            }
        });
    copies.forEachUnpaired([&](std::pair<uint32_t, uint32_t> edge, const std::string& step, bool sending) {
        const uint32_t self = sending ? edge.first : edge.second, peer = sending ? edge.second : edge.first;
        if (std::find(ipusLeftOut.begin(), ipusLeftOut.end(), peer) != ipusLeftOut.end())
            return; // its other side was never compiled
        problems.push_back(fmt::format("IPU {}: IPU copy \"{}\" {} IPU {}, whose program {} nothing {} IPU {} (list the transfer on "
                                       "both: a send on one, a receive on the other)",
                                       self, step, sending ? "sends to" : "receives from", peer, sending ? "receives" : "sends",
                                       sending ? "from" : "to", self));
    });
    return problems;
}

std::vector<std::string> checkSchedule(const Schedule& schedule, const SystemParams& system)
{
    std::vector<std::string> problems;
    ProgramChecker checker(system);
    for (const auto& p : schedule.programs)
        for (std::string& problem : checker.check(p))
            problems.push_back(std::move(problem));
    for (std::string& problem : checkCopyPairs(schedule))
        problems.push_back(std::move(problem));
    return problems;
}

void requireNoProblems(const std::vector<std::string>& problems)
{
    if (!problems.empty())
        throw std::logic_error(fmt::format("the Schedule breaks an invariant the engines rely on: {}", fmt::join(problems, "; ")));
}

void requireScheduleInvariants(const Schedule& schedule, const SystemParams& system)
{
    requireNoProblems(checkSchedule(schedule, system));
}

} // namespace ipusim
