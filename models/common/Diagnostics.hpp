// SPDX-License-Identifier: MIT
#pragma once
#include <cstdlib>
#include <string>

namespace ipusim {

/** Where a layer reports bad input it finds after decoding (a placement the topology cannot
 *  link, a schedule step naming an unknown vertex): the layers below the config never see a
 *  config file, so they name the JSON pointer and let the implementation add the file. */
class Diagnostics
{
public:
    virtual ~Diagnostics() = default;
    /** Reports bad input at `pointer` by throwing the implementation's error type. */
    [[noreturn]] void fail(const std::string& pointer, const std::string& message) const
    {
        raise(pointer, message);
        std::abort(); // raise() broke its contract
    }

protected:
    /** Contract: throws; never returns. */
    virtual void raise(const std::string& pointer, const std::string& message) const = 0;
};

} // namespace ipusim
