// SPDX-License-Identifier: MIT
#pragma once
#include <systemc>

#include <mutex>
#include <stdexcept>

namespace ipusim {

/** The SystemC kernel context of one simulation. SystemC elaborates once per context, so a
 *  simulation after another one in the same process (tests, the reference engine before the
 *  fast one, a Python session) needs a fresh one; and the old one must be deleted, not dropped,
 *  or every simulation leaks its kernel. Declare it before the modules that live in it, so they
 *  are destroyed first: a module's destructor unregisters itself from its context. SystemC's
 *  current context is one global, so one KernelContext is alive at a time: another thread's
 *  simulation (the Python module runs without the GIL) waits for it; a second one in the same
 *  thread is a bug. */
class KernelContext
{
public:
    KernelContext() : m_lock(lockKernel()), m_outer(sc_core::sc_curr_simcontext), m_context(new sc_core::sc_simcontext())
    {
        sc_core::sc_curr_simcontext = m_context;
        sc_core::sc_default_global_context = m_context;
        t_inKernel() = true;
    }
    ~KernelContext()
    {
        t_inKernel() = false;
        delete m_context;
        // Back to the context SystemC made at start-up, which its own static events live in
        // until exit: it is never ours to delete.
        sc_core::sc_curr_simcontext = m_outer;
        sc_core::sc_default_global_context = m_outer;
    }
    KernelContext(const KernelContext&) = delete;
    KernelContext& operator=(const KernelContext&) = delete;

private:
    static bool& t_inKernel()
    {
        thread_local bool in = false;
        return in;
    }
    static std::unique_lock<std::mutex> lockKernel()
    {
        static std::mutex kernel;
        if (t_inKernel())
            throw std::logic_error("a second simulation started inside another one in the same thread");
        return std::unique_lock<std::mutex>(kernel);
    }

    std::unique_lock<std::mutex> m_lock; // first: held until the context is gone
    sc_core::sc_simcontext* m_outer;
    sc_core::sc_simcontext* m_context;
};

} // namespace ipusim
