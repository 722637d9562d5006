// SPDX-License-Identifier: MIT
#include "sim/poplar/Elements.hpp"

#include <poplar/Half.hpp>
#include <poplar/exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace poplar::detail {

namespace {

template <class T>
long double load(const void* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<long double>(v);
}

long double loadAny(const unsigned char* p, const Type& t)
{
    if (t == FLOAT) return load<float>(p);
    if (t == HALF) {
        std::uint16_t bits;
        std::memcpy(&bits, p, 2);
        return halfBitsToFloat(bits);
    }
    if (t == INT) return load<int>(p);
    if (t == UNSIGNED_INT) return load<unsigned>(p);
    if (t == SHORT) return load<short>(p);
    if (t == UNSIGNED_SHORT) return load<unsigned short>(p);
    if (t == CHAR) return load<char>(p);
    if (t == SIGNED_CHAR) return load<signed char>(p);
    if (t == UNSIGNED_CHAR) return load<unsigned char>(p);
    if (t == BOOL) return load<bool>(p);
    if (t == LONGLONG) return load<long long>(p);
    if (t == UNSIGNED_LONGLONG) return load<unsigned long long>(p);
    throw type_error("no conversion from type " + t.toString());
}

template <class T>
void store(unsigned char* p, long double v)
{
    T x{};
    if constexpr (std::is_floating_point_v<T>) {
        x = static_cast<T>(v);
    } else if (std::isfinite(v)) {
        // An integer wraps as the IPU's does: the value's low bits (values past 64 bits saturate).
        const long double limit = 9.2e18L;
        const long long whole = static_cast<long long>(std::clamp(std::trunc(v), -limit, limit));
        x = static_cast<T>(static_cast<unsigned long long>(whole));
    }
    std::memcpy(p, &x, sizeof x);
}

void storeAny(unsigned char* p, const Type& t, long double v)
{
    if (t == FLOAT) return store<float>(p, v);
    if (t == HALF) {
        const std::uint16_t bits = floatToHalfBits(float(v));
        std::memcpy(p, &bits, 2);
        return;
    }
    if (t == INT) return store<int>(p, v);
    if (t == UNSIGNED_INT) return store<unsigned>(p, v);
    if (t == SHORT) return store<short>(p, v);
    if (t == UNSIGNED_SHORT) return store<unsigned short>(p, v);
    if (t == CHAR) return store<char>(p, v);
    if (t == SIGNED_CHAR) return store<signed char>(p, v);
    if (t == UNSIGNED_CHAR) return store<unsigned char>(p, v);
    if (t == BOOL) return store<bool>(p, v != 0);
    if (t == LONGLONG) return store<long long>(p, v);
    if (t == UNSIGNED_LONGLONG) return store<unsigned long long>(p, v);
    throw type_error("no conversion to type " + t.toString());
}

} // namespace

const Type& typeNamed(const std::string& name)
{
    static const Type kTypes[] = {BOOL, CHAR, UNSIGNED_CHAR, SIGNED_CHAR, SHORT, UNSIGNED_SHORT, INT, UNSIGNED_INT, LONGLONG,
                                  UNSIGNED_LONGLONG, HALF, FLOAT};
    for (const auto& t : kTypes)
        if (t.toString() == name)
            return t;
    throw type_error("no element type named '" + name + "'");
}

void convertElements(const void* src, const Type& from, void* dst, const Type& to, std::size_t n)
{
    if (from == to) {
        std::memcpy(dst, src, n * from.size());
        return;
    }
    auto* in = static_cast<const unsigned char*>(src);
    auto* out = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < n; ++i)
        storeAny(out + i * to.size(), to, loadAny(in + i * from.size(), from));
}

std::vector<long double> values(const GraphStore& store, const Tensor& t)
{
    const auto bytes = gather(store, t);
    const Type type = t.elementType();
    std::vector<long double> out(t.numElements());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = loadAny(bytes.data() + i * type.size(), type);
    return out;
}

void setValues(GraphStore& store, const Tensor& t, const std::vector<long double>& v)
{
    const Type type = t.elementType();
    std::vector<unsigned char> bytes(v.size() * type.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        storeAny(bytes.data() + i * type.size(), type, v[i]);
    scatter(store, t, bytes.data());
}

void gatherInto(const GraphStore& store, const Tensor& t, unsigned char* out)
{
    const std::size_t size = t.elementType().size();
    for (const auto& r : t.regions()) {
        const auto& v = store.variables.at(r.var);
        const std::size_t bytes = (r.end - r.begin) * size;
        std::memcpy(out, v.data.data() + r.begin * size, bytes);
        out += bytes;
    }
}

std::vector<unsigned char> gather(const GraphStore& store, const Tensor& t)
{
    std::vector<unsigned char> out(t.numElements() * t.elementType().size());
    gatherInto(store, t, out.data());
    return out;
}

void scatter(GraphStore& store, const Tensor& t, const unsigned char* in)
{
    const std::size_t size = t.elementType().size();
    for (const auto& r : t.regions()) {
        auto& v = store.variables.at(r.var);
        const std::size_t bytes = (r.end - r.begin) * size;
        std::memcpy(v.data.data() + r.begin * size, in, bytes);
        in += bytes;
    }
}

} // namespace poplar::detail
