// SPDX-License-Identifier: MIT
#include "sim/run/WriteAll.hpp"

#include <cerrno>
#include <unistd.h>

namespace ipusim {

bool writeAll(int fd, std::string_view text)
{
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += std::size_t(n);
    }
    return true;
}

} // namespace ipusim
