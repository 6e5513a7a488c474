// support.hpp — helpers shared by the C++ tests.
#ifndef MPK_CPP_TEST_SUPPORT_HPP
#define MPK_CPP_TEST_SUPPORT_HPP

#include <gtest/gtest.h>
#include <mpk.hpp>

#include <string>
#include <vector>

namespace mpk_test {

inline std::vector<std::byte> hex(std::string_view h) {
    std::vector<std::byte> out;
    auto digit = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
        if (h[i] == ' ' || h[i] == '-') { i--; continue; }
        out.push_back(static_cast<std::byte>(digit(h[i]) << 4 | digit(h[i + 1])));
    }
    return out;
}

inline std::string to_hex(mpk::bytes_view b) {
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (std::byte x : b) {
        s += d[std::to_integer<int>(x) >> 4];
        s += d[std::to_integer<int>(x) & 15];
    }
    return s;
}

template <class T>
std::string pack_hex(const T &v) {
    auto r = mpk::try_pack(v);
    EXPECT_TRUE(r.ok()) << r.error().message();
    return r.ok() ? to_hex(*r) : std::string("<error>");
}

/// Decodes `h` as T and expects the error kind, offset and path.
template <class T>
void expect_error(std::string_view h, mpk::errc kind, std::size_t offset, std::string_view path = {},
                  const mpk::options &opts = mpk::options{}) {
    auto bytes = hex(h);
    auto r = mpk::try_unpack<T>(bytes, opts);
    ASSERT_FALSE(r.ok()) << "decoded " << h;
    EXPECT_EQ(mpk::name(r.error().kind), std::string(mpk::name(kind))) << r.error().message();
    EXPECT_EQ(r.error().offset, offset) << r.error().message();
    EXPECT_EQ(r.error().path, path) << r.error().message();
}

} // namespace mpk_test

#endif
