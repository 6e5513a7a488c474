// Seeded byte flips and every truncation of typed messages: decoding never crashes (the sanitizer
// run checks memory), and an error always has a kind and an offset inside the input.
#include "support.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <variant>

namespace {
struct Inner {
    std::string name;
    std::vector<std::int16_t> values;
    std::optional<mpk::timestamp> at;
    MPK_FIELDS_MAP(name, values, at)
};
struct Message {
    std::uint8_t kind = 0;
    std::variant<std::int64_t, std::string, Inner> body;
    std::map<std::string, std::vector<Inner>> groups;
    std::tuple<float, bool, mpk::bytes_view> tail;
    mpk::raw extra;
    std::chrono::system_clock::time_point when;
    MPK_FIELDS(kind, body, groups, tail, extra, when)
};

Message sample() {
    static const std::byte blob[5] = {};
    Message m;
    m.kind = 7;
    m.body = Inner{"inner", {1, -2, 300}, mpk::timestamp{5, 6}};
    m.groups["g"] = {Inner{"a", {}, std::nullopt}, Inner{"b", {-32768, 32767}, mpk::timestamp{-1, 0}}};
    m.tail = {1.5f, true, mpk::bytes_view(blob, 5)};
    static const auto extra = mpk::pack(std::make_tuple(1, "x", std::vector<int>{1, 2}));
    m.extra.bytes = mpk::bytes_view(extra);
    m.when = std::chrono::system_clock::time_point(std::chrono::microseconds(1700000000123456));
    return m;
}
} // namespace

TEST(Robust, EveryTruncationAndSeededByteFlips) {
    auto bytes = mpk::pack(sample());
    auto back = mpk::unpack<Message>(bytes);
    EXPECT_EQ(mpk::pack(back), bytes);
    std::size_t errors = 0;
    for (std::size_t n = 0; n < bytes.size(); n++) {
        auto r = mpk::try_unpack<Message>(mpk::bytes_view(bytes.data(), n));
        ASSERT_FALSE(r.ok()) << "prefix of " << n;
        EXPECT_LE(r.error().offset, n);
        errors++;
    }
    std::mt19937 rng(20261126);
    for (int round = 0; round < 20000; round++) {
        auto copy = bytes;
        int flips = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < flips; f++) copy[rng() % copy.size()] = static_cast<std::byte>(rng() & 0xff);
        auto r = mpk::try_unpack<Message>(copy);
        if (!r.ok()) {
            EXPECT_NE(r.error().kind, mpk::errc::ok);
            EXPECT_LE(r.error().offset, copy.size());
            errors++;
        }
        // the dynamic path and the typed reader agree on whether the bytes are well formed
        mpk::document doc;
        auto d = doc.try_parse(copy);
        auto raw = mpk::try_unpack<mpk::raw>(copy);
        ASSERT_EQ(d.ok(), raw.ok());
        if (!d.ok()) {
            EXPECT_EQ(d.error().kind, raw.error().kind);
            EXPECT_EQ(d.error().offset, raw.error().offset);
        }
    }
    EXPECT_GT(errors, bytes.size());
}
