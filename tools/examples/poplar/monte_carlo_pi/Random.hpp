// The generator the codelet and the host's check share: xorshift32 (Marsaglia 2003), seeded so
// that no stream starts at zero, and uniform floats in [0, 1) from its top 24 bits.
#pragma once
#include <cstdint>

namespace montecarlo {

class Generator
{
public:
    explicit Generator(std::uint32_t seed) : m_state(seed * 2654435761u + 1u) {}
    std::uint32_t next()
    {
        m_state ^= m_state << 13;
        m_state ^= m_state >> 17;
        m_state ^= m_state << 5;
        return m_state;
    }
    float uniform() { return float(next() >> 8) * (1.0f / 16777216.0f); }

private:
    std::uint32_t m_state;
};

} // namespace montecarlo
