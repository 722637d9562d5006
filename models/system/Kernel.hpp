// SPDX-License-Identifier: MIT
#pragma once
#include <systemc>

namespace ipusim {

/** The SystemC kernel context of one simulation. SystemC elaborates once per context, so a
 *  simulation after another one in the same process (tests, the reference engine before the
 *  fast one, a Python session) needs a fresh one; and the old one must be deleted, not dropped,
 *  or every simulation leaks its kernel. Declare it before the modules that live in it, so they
 *  are destroyed first: a module's destructor unregisters itself from its context. At most one
 *  KernelContext is alive at a time. */
class KernelContext
{
public:
    KernelContext() : m_outer(sc_core::sc_curr_simcontext), m_context(new sc_core::sc_simcontext())
    {
        sc_core::sc_curr_simcontext = m_context;
        sc_core::sc_default_global_context = m_context;
    }
    ~KernelContext()
    {
        delete m_context;
        // Back to the context SystemC made at start-up, which its own static events live in
        // until exit: it is never ours to delete.
        sc_core::sc_curr_simcontext = m_outer;
        sc_core::sc_default_global_context = m_outer;
    }
    KernelContext(const KernelContext&) = delete;
    KernelContext& operator=(const KernelContext&) = delete;

private:
    sc_core::sc_simcontext* m_outer;
    sc_core::sc_simcontext* m_context;
};

} // namespace ipusim
