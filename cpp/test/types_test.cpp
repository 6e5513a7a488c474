// Typed round trips: every supported type at its boundaries, the exact bytes, and back.
#include "support.hpp"

#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <variant>

using mpk_test::hex;
using mpk_test::pack_hex;
using mpk_test::to_hex;

namespace {

template <class T>
T round_trip(const T &v) {
    auto bytes = mpk::pack(v);
    return mpk::unpack<T>(bytes);
}

template <class I>
void check_int_boundaries() {
    using L = std::numeric_limits<I>;
    for (I v : {L::min(), static_cast<I>(L::min() + 1), I{0}, I{1}, static_cast<I>(L::max() - 1), L::max()})
        EXPECT_EQ(round_trip(v), v) << +v;
    // the next value beyond either end, encoded as a wider int, is a type error, never truncated
    if constexpr (sizeof(I) < 8) {
        using W = std::conditional_t<std::is_signed_v<I>, std::int64_t, std::uint64_t>;
        auto over = mpk::pack(static_cast<W>(L::max()) + 1);
        auto r = mpk::try_unpack<I>(over);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().kind, mpk::errc::type);
        EXPECT_EQ(r.error().offset, 0u);
        if constexpr (std::is_signed_v<I>) {
            auto under = mpk::pack(static_cast<std::int64_t>(L::min()) - 1);
            EXPECT_EQ(mpk::try_unpack<I>(under).error().kind, mpk::errc::type);
        }
    }
    if constexpr (std::is_unsigned_v<I>) {
        EXPECT_EQ(mpk::try_unpack<I>(mpk::pack(-1)).error().kind, mpk::errc::type);
    } else if constexpr (sizeof(I) == 8) {
        EXPECT_EQ(mpk::try_unpack<I>(mpk::pack(std::uint64_t{1} << 63)).error().kind, mpk::errc::type);
    }
}

} // namespace

TEST(Ints, EveryWidthAtEveryBoundary) {
    check_int_boundaries<std::int8_t>();
    check_int_boundaries<std::int16_t>();
    check_int_boundaries<std::int32_t>();
    check_int_boundaries<std::int64_t>();
    check_int_boundaries<std::uint8_t>();
    check_int_boundaries<std::uint16_t>();
    check_int_boundaries<std::uint32_t>();
    check_int_boundaries<std::uint64_t>();
    check_int_boundaries<char>();
    check_int_boundaries<long long>();
    check_int_boundaries<unsigned short>();
}

TEST(Ints, ShortestFormAtEveryFamilyEdge) {
    EXPECT_EQ(pack_hex(127), "7f");
    EXPECT_EQ(pack_hex(128), "cc80");
    EXPECT_EQ(pack_hex(255u), "ccff");
    EXPECT_EQ(pack_hex(256), "cd0100");
    EXPECT_EQ(pack_hex(65535), "cdffff");
    EXPECT_EQ(pack_hex(65536), "ce00010000");
    EXPECT_EQ(pack_hex(4294967295u), "ceffffffff");
    EXPECT_EQ(pack_hex(4294967296ull), "cf0000000100000000");
    EXPECT_EQ(pack_hex(-32), "e0");
    EXPECT_EQ(pack_hex(-33), "d0df");
    EXPECT_EQ(pack_hex(-128), "d080");
    EXPECT_EQ(pack_hex(-129), "d1ff7f");
    EXPECT_EQ(pack_hex(-32768), "d18000");
    EXPECT_EQ(pack_hex(-32769), "d2ffff7fff");
    EXPECT_EQ(pack_hex(std::numeric_limits<std::int64_t>::min()), "d38000000000000000");
}

TEST(Ints, AnyFamilyDecodes) {
    // 1 as uint 64 and as int 64; -1 as int 8 into every signed width
    EXPECT_EQ(mpk::unpack<std::uint8_t>(hex("cf0000000000000001")), 1);
    EXPECT_EQ(mpk::unpack<std::uint8_t>(hex("d30000000000000001")), 1);
    EXPECT_EQ(mpk::unpack<std::int64_t>(hex("d0ff")), -1);
    EXPECT_EQ(mpk::unpack<std::int8_t>(hex("d3ffffffffffffffff")), -1);
}

enum class Color : std::uint8_t { red = 1, blue = 200 };
enum Plain { zero, one };

TEST(Scalars, BoolEnumFloats) {
    EXPECT_EQ(pack_hex(true), "c3");
    EXPECT_EQ(pack_hex(false), "c2");
    EXPECT_EQ(round_trip(true), true);
    EXPECT_EQ(pack_hex(Color::blue), "ccc8");
    EXPECT_EQ(round_trip(Color::blue), Color::blue);
    EXPECT_EQ(round_trip(one), one);
    EXPECT_EQ(mpk::try_unpack<Color>(mpk::pack(256)).error().kind, mpk::errc::type);
    EXPECT_EQ(pack_hex(1.5f), "ca3fc00000");
    EXPECT_EQ(pack_hex(1.5), "cb3ff8000000000000");
    for (double d : {0.0, -0.0, 1e300, -1e-300, std::numeric_limits<double>::denorm_min(),
                     std::numeric_limits<double>::infinity()}) {
        double back = round_trip(d);
        EXPECT_EQ(std::memcmp(&back, &d, 8), 0) << d;
    }
    EXPECT_TRUE(std::isnan(round_trip(std::numeric_limits<float>::quiet_NaN())));
    EXPECT_TRUE(std::signbit(round_trip(-0.0f)));
    // widenings: float 32 into double, exact ints into floats, exact float64 into float
    EXPECT_EQ(mpk::unpack<double>(hex("ca3fc00000")), 1.5);
    EXPECT_EQ(mpk::unpack<double>(hex("d0ff")), -1.0);
    EXPECT_EQ(mpk::unpack<float>(hex("cb3ff8000000000000")), 1.5f);
    EXPECT_EQ(mpk::unpack<double>(hex("cf001fffffffffffff")), 9007199254740991.0);
    // inexact: 0.1 as float64 into float, 2^53+1 into double, 2^24+1 into float
    EXPECT_EQ(mpk::try_unpack<float>(mpk::pack(0.1)).error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<double>(hex("cf0020000000000001")).error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<float>(mpk::pack(16777217)).error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<float>(hex("cfffffffffffffffff")).error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<bool>(hex("01")).error().kind, mpk::errc::type);
}

TEST(Strings, LengthBoundariesAndViews) {
    for (std::size_t n : {0u, 31u, 32u, 255u, 256u, 65535u, 65536u}) {
        std::string s(n, 'x');
        auto bytes = mpk::pack(s);
        std::size_t head = n <= 31 ? 1 : n <= 255 ? 2 : n <= 65535 ? 3 : 5;
        EXPECT_EQ(bytes.size(), head + n) << n;
        EXPECT_EQ(mpk::unpack<std::string>(bytes), s);
        auto view = mpk::unpack<std::string_view>(bytes);
        EXPECT_EQ(view, s);
        if (n) {
            EXPECT_EQ(static_cast<const void *>(view.data()), static_cast<const void *>(bytes.data() + head));
        }
    }
    EXPECT_EQ(pack_hex(std::string_view("abc")), "a3616263");
    EXPECT_EQ(pack_hex("abc"), "a3616263");
    EXPECT_EQ(pack_hex(static_cast<const char *>(nullptr)), "c0");
    EXPECT_EQ(mpk::try_unpack<std::string>(hex("c403616263")).error().kind, mpk::errc::type);
}

TEST(Bytes, BinFormsAndZeroCopy) {
    for (std::size_t n : {0u, 255u, 256u, 65535u, 65536u}) {
        std::vector<std::byte> v(n, std::byte{7});
        auto bytes = mpk::pack(v);
        std::size_t head = n <= 255 ? 2 : n <= 65535 ? 3 : 5;
        ASSERT_EQ(bytes.size(), head + n);
        EXPECT_EQ(static_cast<int>(bytes[0]), n <= 255 ? 0xc4 : n <= 65535 ? 0xc5 : 0xc6);
        EXPECT_EQ(mpk::unpack<std::vector<std::byte>>(bytes), v);
        auto view = mpk::unpack<mpk::bytes_view>(bytes);
        EXPECT_EQ(view.size(), n);
        if (n) {
            EXPECT_EQ(view.data(), bytes.data() + head);
        }
    }
    std::vector<unsigned char> u{1, 2, 3};
    EXPECT_EQ(pack_hex(u), "c403010203");
    EXPECT_EQ(round_trip(u), u);
    std::array<std::uint8_t, 3> a{9, 8, 7};
    EXPECT_EQ(pack_hex(a), "c403090807");
    EXPECT_EQ(round_trip(a), a);
    auto r = mpk::try_unpack<std::array<std::byte, 4>>(hex("c403090807"));
    EXPECT_EQ(r.error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<mpk::bytes_view>(hex("a3616263")).error().kind, mpk::errc::type);
}

TEST(Containers, VectorArrayMapAtCountBoundaries) {
    for (std::size_t n : {0u, 15u, 16u, 65535u, 65536u}) {
        std::vector<int> v(n, 1);
        auto bytes = mpk::pack(v);
        EXPECT_EQ(static_cast<int>(bytes[0]), n <= 15 ? static_cast<int>(0x90 + n) : n <= 65535 ? 0xdc : 0xdd);
        EXPECT_EQ(mpk::unpack<std::vector<int>>(bytes), v);
        std::map<int, int> m;
        for (std::size_t i = 0; i < n; i++) m[static_cast<int>(i)] = -static_cast<int>(i);
        auto mb = mpk::pack(m);
        EXPECT_EQ(static_cast<int>(mb[0]), n <= 15 ? static_cast<int>(0x80 + n) : n <= 65535 ? 0xde : 0xdf);
        EXPECT_EQ(mpk::unpack<decltype(m)>(mb), m);
    }
    std::vector<bool> vb{true, false, true};
    EXPECT_EQ(pack_hex(vb), "93c3c2c3");
    EXPECT_EQ(round_trip(vb), vb);
    std::array<std::string, 2> sa{"a", "b"};
    EXPECT_EQ(pack_hex(sa), "92a161a162");
    EXPECT_EQ(round_trip(sa), sa);
    EXPECT_EQ((mpk::try_unpack<std::array<int, 3>>(hex("920102")).error().kind), mpk::errc::type);
    std::unordered_map<std::string, std::vector<int>> um{{"k", {1, 2}}};
    EXPECT_EQ(pack_hex(um), "81a16b920102");
    EXPECT_EQ(round_trip(um), um);
    // a repeated key: the last one wins
    EXPECT_EQ((mpk::unpack<std::map<std::string, int>>(hex("82a16101a16102"))),
              (std::map<std::string, int>{{"a", 2}}));
}

TEST(Containers, OptionalTuplePairVariant) {
    std::optional<int> none, some = 5;
    EXPECT_EQ(pack_hex(none), "c0");
    EXPECT_EQ(pack_hex(some), "05");
    EXPECT_EQ(round_trip(none), none);
    EXPECT_EQ(round_trip(some), some);
    auto t = std::make_tuple(1, std::string("x"), true);
    EXPECT_EQ(pack_hex(t), "9301a178c3");
    EXPECT_EQ(round_trip(t), t);
    auto p = std::make_pair(-1, 2.5);
    EXPECT_EQ(pack_hex(p), "92ffcb4004000000000000");
    EXPECT_EQ(round_trip(p), p);
    EXPECT_EQ((mpk::try_unpack<std::pair<int, int>>(hex("93010203")).error().kind), mpk::errc::type);
    std::variant<int, std::string> v1 = 7, v2 = std::string("s");
    EXPECT_EQ(pack_hex(v1), "920007");
    EXPECT_EQ(pack_hex(v2), "9201a173");
    EXPECT_EQ(round_trip(v1), v1);
    EXPECT_EQ(round_trip(v2), v2);
    auto bad = mpk::try_unpack<std::variant<int, std::string>>(hex("920207"));
    EXPECT_EQ(bad.error().kind, mpk::errc::type);
    EXPECT_EQ(bad.error().offset, 1u);
    EXPECT_EQ(bad.error().path, "[0]");
}

TEST(Time, TimestampChronoAndExt) {
    using namespace std::chrono;
    EXPECT_EQ(pack_hex(mpk::timestamp{1, 0}), "d6ff00000001");
    EXPECT_EQ(pack_hex(mpk::timestamp{1, 1}), "d7ff0000000400000001");
    EXPECT_EQ(pack_hex(mpk::timestamp{-1, 0}), "c70cff00000000ffffffffffffffff");
    for (mpk::timestamp ts : {mpk::timestamp{0, 0}, mpk::timestamp{4294967295, 0}, mpk::timestamp{4294967296, 0},
                              mpk::timestamp{17179869183, 999999999}, mpk::timestamp{17179869184, 0},
                              mpk::timestamp{-1, 999999999}, mpk::timestamp{INT64_MIN, 0},
                              mpk::timestamp{INT64_MAX, 999999999}})
        EXPECT_EQ(round_trip(ts), ts) << ts.sec;
    system_clock::time_point tp{nanoseconds(1700000000123456789)};
    tp = time_point_cast<system_clock::duration>(tp);
    EXPECT_EQ(round_trip(tp), tp);
    EXPECT_EQ(pack_hex(time_point<system_clock, seconds>(seconds(1))), "d6ff00000001");
    EXPECT_EQ(pack_hex(milliseconds(-1)), pack_hex(mpk::timestamp{-1, 999000000}));
    EXPECT_EQ(round_trip(milliseconds(-1)), milliseconds(-1));
    EXPECT_EQ(round_trip(hours(-5)), hours(-5));
    EXPECT_EQ(round_trip(microseconds(123456789)), microseconds(123456789));
    // a timestamp a duration cannot hold exactly is a type error: sub-second into seconds,
    // 1.5 s into hours, out of range for nanoseconds
    EXPECT_EQ(mpk::try_unpack<seconds>(mpk::pack(mpk::timestamp{1, 5})).error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<hours>(mpk::pack(mpk::timestamp{1, 0})).error().kind, mpk::errc::type);
    EXPECT_EQ(mpk::try_unpack<nanoseconds>(mpk::pack(mpk::timestamp{INT64_MAX / 1000000000 + 1, 0})).error().kind,
              mpk::errc::type);
    EXPECT_EQ((mpk::try_unpack<duration<std::int32_t>>(mpk::pack(mpk::timestamp{1ll << 31, 0})).error().kind),
              mpk::errc::type);
    // hours beyond int64 seconds have no timestamp
    auto far = mpk::try_pack(hours(INT64_MAX / 3600 + 1));
    EXPECT_EQ(far.error().kind, mpk::errc::invalid_argument);

    std::byte payload[2] = {std::byte{1}, std::byte{2}};
    mpk::ext e{5, mpk::bytes_view(payload, 2)};
    EXPECT_EQ(pack_hex(e), "d5050102");
    auto bytes = mpk::pack(e);
    auto back = mpk::unpack<mpk::ext>(bytes);
    EXPECT_EQ(back, e);
    EXPECT_EQ(back.data.data(), bytes.data() + 2);
    auto ts_bytes = hex("d6ff00000001");
    auto ts_as_ext = mpk::unpack<mpk::ext>(ts_bytes);
    EXPECT_EQ(ts_as_ext.type, -1);
    EXPECT_EQ(ts_as_ext.data.size(), 4u);
    EXPECT_EQ(pack_hex(ts_as_ext), "d6ff00000001");
    std::byte bad_ts[3] = {};
    EXPECT_EQ(mpk::try_pack(mpk::ext{-1, mpk::bytes_view(bad_ts, 3)}).error().kind, mpk::errc::invalid_timestamp);
    EXPECT_EQ(mpk::try_unpack<mpk::timestamp>(hex("d5010203")).error().kind, mpk::errc::type);
}

TEST(Raw, KeepsOneValueAsItsBytes) {
    auto bytes = hex("92a3616464920102");
    auto call = mpk::unpack<std::tuple<std::string_view, mpk::raw>>(bytes);
    EXPECT_EQ(std::get<0>(call), "add");
    EXPECT_EQ(to_hex(std::get<1>(call).bytes), "920102");
    EXPECT_EQ(std::get<1>(call).bytes.data(), bytes.data() + 5);
    auto args = mpk::unpack<std::pair<int, int>>(std::get<1>(call).bytes);
    EXPECT_EQ(args.first + args.second, 3);
    EXPECT_EQ(mpk::pack(call), bytes);
}

// ---- described structs ---------------------------------------------------------------------------

struct Test1 {
    unsigned a = 1, b = 2;
    MPK_FIELDS(a, b)
};
struct Test2 {
    int a = -1, b = -2;
    MPK_FIELDS(a, b)
};
struct Test3 {
    std::vector<std::byte> data = std::vector<std::byte>(8192, std::byte{0x55});
    MPK_FIELDS(data)
};
struct Test4 {
    Test1 test1;
    Test2 test2;
    Test3 test3;
    MPK_FIELDS(test1, test2, test3)
};

struct Config {
    std::string host = "localhost";
    std::uint16_t port = 80;
    std::optional<std::string> user;
    MPK_FIELDS_MAP(host, port, user)
};

namespace geo {
struct Point {
    int x = 0, y = 0;
};
MPK_DESCRIBE(Point, x, y)
struct Place {
    std::string name;
    Point at;
    std::vector<Point> outline;
};
MPK_DESCRIBE_MAP(Place, name, at, outline)
} // namespace geo

TEST(Structs, ArrayFormIsTheSeedsTuple) {
    Test1 t1;
    EXPECT_EQ(pack_hex(t1), "920102");
    Test2 t2;
    EXPECT_EQ(pack_hex(t2), "92fffe");
    Test4 t4;
    auto bytes = mpk::pack(t4);
    EXPECT_EQ(bytes.size(), 1u + 3 + 3 + 1 + 3 + 8192);
    EXPECT_EQ(to_hex(mpk::bytes_view(bytes.data(), 8)), "9392010292fffe91");
    Test4 other;
    other.test1.a = 9;
    other.test3.data.clear();
    mpk::unpack(bytes, other);
    EXPECT_EQ(other.test1.a, 1u);
    EXPECT_EQ(other.test3.data, t4.test3.data);
}

TEST(Structs, MapFormAndNonIntrusive) {
    Config c;
    c.user = "root";
    EXPECT_EQ(pack_hex(c), "83a4686f7374a96c6f63616c686f7374a4706f727450a475736572a4726f6f74");
    auto back = round_trip(c);
    EXPECT_EQ(back.host, c.host);
    EXPECT_EQ(back.user, c.user);
    EXPECT_EQ(pack_hex(geo::Point{1, -1}), "9201ff");
    geo::Place p{"home", {3, 4}, {{1, 2}, {5, 6}}};
    auto pb = round_trip(p);
    EXPECT_EQ(pb.name, "home");
    EXPECT_EQ(pb.at.y, 4);
    ASSERT_EQ(pb.outline.size(), 2u);
    EXPECT_EQ(pb.outline[1].x, 5);
    EXPECT_TRUE(mpk::is_described_v<geo::Place>);
    EXPECT_FALSE(mpk::is_described_v<int>);
}

TEST(Structs, ForwardCompatible) {
    // array form: extra trailing elements are skipped, missing ones keep their defaults
    auto t = mpk::unpack<Test1>(hex("9407089300c0a178a26162"));
    EXPECT_EQ(t.a, 7u);
    EXPECT_EQ(t.b, 8u);
    auto shorter = mpk::unpack<Test1>(hex("9109"));
    EXPECT_EQ(shorter.a, 9u);
    EXPECT_EQ(shorter.b, 2u);
    // map form: any order, unknown keys (str or not, containers too) skipped, missing keep defaults
    auto c = mpk::unpack<Config>(hex("84a3616e799101a4706f7274cd1f9092c0c001a4686f7374a178"));
    EXPECT_EQ(c.host, "x");
    EXPECT_EQ(c.port, 8080);
    EXPECT_FALSE(c.user.has_value());
    // options::require_fields makes a missing field an error naming it
    mpk::options strict;
    strict.require_fields = true;
    mpk_test::expect_error<Test1>("9109", mpk::errc::type, 0, "Test1.b", strict);
    mpk_test::expect_error<Config>("81a4686f7374a178", mpk::errc::type, 0, "Config.port", strict);
}

TEST(Writer, CallersBufferManyMessagesAndWrap) {
    std::byte buf[16];
    EXPECT_EQ(mpk::pack_into(buf, sizeof buf, Test1{}), 3u);
    auto full = mpk::try_pack_into(buf, 4, Test2{3, -300});
    EXPECT_EQ(full.error().kind, mpk::errc::buffer_full);

    // the seed's loop: many messages into one buffer, then read back one after another
    mpk::writer w;
    for (unsigned i = 0; i < 1000; i++) w.write(Test1{i, i * 2});
    ASSERT_TRUE(w.finish().ok());
    mpk::reader r(w.bytes());
    Test1 t;
    unsigned n = 0;
    while (!r.done()) {
        ASSERT_TRUE(r.read(t)) << r.error().message();
        EXPECT_EQ(t.a, n);
        EXPECT_EQ(t.b, 2 * n);
        n++;
    }
    EXPECT_EQ(n, 1000u);
    auto past = r.try_next<Test1>();
    EXPECT_EQ(past.error().kind, mpk::errc::truncated);
    EXPECT_EQ(past.error().offset, w.size());

    // typed values on a writer the caller set up (reference chunks here)
    mpk_writer c;
    mpk_writer_init_chunks(&c, 0);
    Test4 t4; // chunk mode keeps pointers to its 8 KiB body: it must outlive the chunks
    {
        mpk::writer typed = mpk::writer::wrap(&c);
        typed.write(t4);
        EXPECT_TRUE(typed.finish().ok());
    }
    const mpk_chunk *chunks;
    std::size_t count;
    ASSERT_TRUE(mpk_writer_chunks(&c, &chunks, &count));
    std::vector<std::byte> joined;
    for (std::size_t i = 0; i < count; i++) {
        auto p = static_cast<const std::byte *>(chunks[i].data);
        joined.insert(joined.end(), p, p + chunks[i].len);
    }
    EXPECT_GE(count, 2u);
    EXPECT_EQ(joined, mpk::pack(t4));
    mpk_writer_destroy(&c);
}

TEST(Writer, EncodeErrorsNameTheirPath) {
    struct Event {
        std::string name;
        mpk::timestamp at;
        MPK_FIELDS(name, at)
    };
    struct Log {
        std::vector<Event> events;
        std::map<std::string, Event> by_name;
        MPK_FIELDS_MAP(events, by_name)
    };
    Log log;
    log.events.resize(3);
    log.events[2].at.nsec = 1000000000;
    auto r = mpk::try_pack(log);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, mpk::errc::invalid_timestamp);
    EXPECT_NE(r.error().path.find("events[2].at"), std::string::npos) << r.error().path;
    log.events[2].at.nsec = 0;
    log.by_name["boot"].at.nsec = 2000000000;
    r = mpk::try_pack(log);
    EXPECT_NE(r.error().path.find("by_name[boot].at"), std::string::npos) << r.error().path;
    EXPECT_NE(r.error().message().find("nsec 2000000000"), std::string::npos) << r.error().message();
    // after an error the writer writes nothing more, and reset() makes it usable again
    mpk::writer w;
    w.write(log).write(1);
    EXPECT_FALSE(w.ok());
    w.reset();
    w.write(1);
    EXPECT_EQ(to_hex(w.bytes()), "01");
#if MPK_CPP_EXCEPTIONS
    try {
        (void)mpk::pack(log);
        FAIL() << "no exception";
    } catch (const mpk::error &e) {
        EXPECT_EQ(e.kind(), mpk::errc::invalid_timestamp);
        EXPECT_NE(std::string(e.what()).find("by_name[boot].at"), std::string::npos) << e.what();
    }
#endif
}

// ---- plain aggregates: no macro ------------------------------------------------------------------

namespace plain {
struct Point {
    int x = 0, y = 0;
};
struct Shape {
    std::string name;
    std::vector<Point> points;
    std::optional<Point> center;
    mpk::timestamp made;
};
} // namespace plain

TEST(Structs, PlainAggregatesWithNoMacro) {
    EXPECT_EQ(pack_hex(plain::Point{1, -1}), "9201ff");
    plain::Shape s{"tri", {{0, 0}, {1, 0}, {0, 1}}, plain::Point{1, 1}, {1, 0}};
    auto back = round_trip(s);
    EXPECT_EQ(back.name, "tri");
    ASSERT_EQ(back.points.size(), 3u);
    EXPECT_EQ(back.points[2].y, 1);
    EXPECT_EQ(back.center->x, 1);
    EXPECT_EQ(back.made, s.made);
    // forward compatible like MPK_FIELDS: extra elements skipped, missing ones keep defaults
    auto p = mpk::unpack<plain::Point>(hex("930102a178"));
    EXPECT_EQ(p.y, 2);
    EXPECT_EQ(mpk::unpack<plain::Point>(hex("9105")).y, 0);
    // fields have no names: the path shows their position
    mpk_test::expect_error<plain::Shape>("94a174919201c3c0c0", mpk::errc::type, 6, "plain::Shape[1][0][1]");
    s.made.nsec = 1000000000;
    EXPECT_EQ(mpk::try_pack(s).error().path, "plain::Shape[3]");
}
