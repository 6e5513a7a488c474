// fast_test.cpp — the typed fast path (mpk/fast.hpp) against the general path it falls back to.
//
// The general path of a described struct is callable on its own (struct_codec<T>::decode_general /
// encode_general); every input here is decoded both ways and must give the same fields, or the same
// error (kind, offset, path, detail). The inputs: valid encodings of many values (every integer
// boundary in every MessagePack form), each truncated at every length and with every byte replaced
// by heads of every family, under the default options and under tight limits and strict UTF-8.
#include "support.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>

namespace {

enum class Color : std::int8_t { red = -3, green = 0, blue = 100 };

struct Inner {
    std::int32_t x = 0;
    std::uint16_t y = 0;
    MPK_FIELDS(x, y)
};

struct Flat {
    std::uint8_t u8 = 0;
    std::int8_t i8 = 0;
    std::uint16_t u16 = 0;
    std::int16_t i16 = 0;
    std::uint32_t u32 = 0;
    std::int32_t i32 = 0;
    std::uint64_t u64 = 0;
    std::int64_t i64 = 0;
    bool b = false;
    float f = 0;
    double d = 0;
    Color c = Color::green;
    Inner in;
    mpk::bytes_view bin;
    std::string_view str;
    MPK_FIELDS(u8, i8, u16, i16, u32, i32, u64, i64, b, f, d, c, in, bin, str)
};

// Scalars only: the encoder's fast path applies too.
struct Scalars {
    std::uint8_t u8 = 0;
    std::int8_t i8 = 0;
    std::uint16_t u16 = 0;
    std::int16_t i16 = 0;
    std::uint32_t u32 = 0;
    std::int32_t i32 = 0;
    std::uint64_t u64 = 0;
    std::int64_t i64 = 0;
    bool b = false;
    float f = 0;
    double d = 0;
    Color c = Color::green;
    Inner in;
    MPK_FIELDS(u8, i8, u16, i16, u32, i32, u64, i64, b, f, d, c, in)
};

static_assert(mpk::detail::fast_field<Flat>::dec && !mpk::detail::fast_field<Flat>::enc);
static_assert(mpk::detail::fast_field<Scalars>::dec && mpk::detail::fast_field<Scalars>::enc);
static_assert(mpk::detail::fast_field<Scalars>::depth == 2);

template <class T>
auto fields_of(const T &v) {
    return mpk::detail::fields<T>::tie(v);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
template <class V>
bool same_bits(const V &a, const V &b) { return a == b; }
bool same_bits(const Inner &a, const Inner &b) { return a.x == b.x && a.y == b.y; }

template <class T, std::size_t... I>
bool same_fields(const T &a, const T &b, std::index_sequence<I...>) {
    auto ta = fields_of(a), tb = fields_of(b);
    return (same_bits(std::get<I>(ta), std::get<I>(tb)) && ...);
}

template <class T>
bool same(const T &a, const T &b) {
    return same_fields(a, b, std::make_index_sequence<mpk::detail::fields<T>::count>{});
}

/// Decodes `in` with mpk::try_unpack (fast path first) and with the general path alone; expects
/// the same outcome. Returns true when the input decoded.
template <class T>
bool expect_same_decode(const std::vector<std::byte> &in, const mpk::options &opts) {
    T fast{}, general{};
    auto r = mpk::try_unpack(mpk::bytes_view(in), fast, opts);
    mpk::decoder d(in, opts);
    bool ok = mpk::detail::struct_codec<T>::decode_general(d, general) && d.finish();
    mpk::error_info e = d.error(mpk::detail::type_name<T>());
    EXPECT_EQ(r.ok(), ok) << mpk_test::to_hex(in);
    if (r.ok() && ok) {
        EXPECT_TRUE(same(fast, general)) << mpk_test::to_hex(in);
    } else if (!r.ok() && !ok) {
        EXPECT_EQ(r.error().message(), e.message()) << mpk_test::to_hex(in);
    }
    return ok;
}

/// Every truncation, and every byte replaced by each of these heads.
const std::uint8_t kHeads[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x91, 0x92, 0x9f, 0xa0, 0xa3, 0xbf, 0xc0,
                               0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1,
                               0xd2, 0xd3, 0xd9, 0xda, 0xdb, 0xdc, 0xe0, 0xff};

template <class T>
int mutate_and_compare(const std::vector<std::byte> &valid, const mpk::options &opts) {
    int decoded = 0;
    decoded += expect_same_decode<T>(valid, opts);
    for (std::size_t n = 0; n < valid.size(); n++)
        expect_same_decode<T>(std::vector<std::byte>(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(n)), opts);
    for (std::size_t i = 0; i < valid.size(); i++)
        for (std::uint8_t h : kHeads) {
            auto m = valid;
            m[i] = static_cast<std::byte>(h);
            decoded += expect_same_decode<T>(m, opts);
        }
    return decoded;
}

std::vector<mpk::options> option_sets() {
    std::vector<mpk::options> v(1);
    mpk::options strict;
    strict.strict_utf8 = true;
    v.push_back(strict);
    for (std::uint32_t depth : {1u, 2u}) {
        mpk::options o;
        o.limits.depth = depth;
        v.push_back(o);
    }
    mpk::options tight;
    tight.limits.array = 2;
    tight.limits.str = 3;
    tight.limits.bin = 3;
    v.push_back(tight);
    return v;
}

const std::uint8_t kBin[] = {1, 2, 3, 4, 5};

Flat sample(std::uint64_t seed) {
    std::mt19937_64 g(seed);
    auto pick = [&](auto lo, auto hi) {
        using V = decltype(lo);
        // boundaries of the MessagePack forms, and random values between
        const std::int64_t edges[] = {0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 4294967295LL, 4294967296LL,
                                      -1, -32, -33, -128, -129, -32768, -32769, -2147483648LL, -2147483649LL};
        std::int64_t e = edges[g() % (sizeof edges / sizeof edges[0])];
        if (g() % 3 == 0 || e < static_cast<std::int64_t>(lo) || (e > 0 && static_cast<std::uint64_t>(e) > static_cast<std::uint64_t>(hi)))
            return static_cast<V>(g());
        return static_cast<V>(e);
    };
    Flat f;
    f.u8 = pick(std::uint8_t{0}, std::uint8_t{255});
    f.i8 = pick(std::int8_t{-128}, std::int8_t{127});
    f.u16 = pick(std::uint16_t{0}, std::uint16_t{65535});
    f.i16 = pick(std::int16_t{-32768}, std::int16_t{32767});
    f.u32 = pick(std::uint32_t{0}, std::numeric_limits<std::uint32_t>::max());
    f.i32 = pick(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
    f.u64 = pick(std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max());
    f.i64 = pick(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    f.b = g() & 1;
    f.f = static_cast<float>(static_cast<std::int32_t>(g())) / 7.0f;
    f.d = static_cast<double>(static_cast<std::int64_t>(g())) / 3.0;
    const Color colors[] = {Color::red, Color::green, Color::blue};
    f.c = colors[g() % 3];
    f.in.x = pick(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
    f.in.y = pick(std::uint16_t{0}, std::uint16_t{65535});
    f.bin = mpk::bytes_view(kBin, g() % 6);
    static const char text[] = "hello, world";
    f.str = std::string_view(text, g() % 13);
    return f;
}

Scalars scalars_of(const Flat &f) {
    return {f.u8, f.i8, f.u16, f.i16, f.u32, f.i32, f.u64, f.i64, f.b, f.f, f.d, f.c, f.in};
}

} // namespace

TEST(FastPath, DecodeMatchesTheGeneralPathOnMutatedInputs) {
    int decoded = 0;
    for (std::uint64_t seed = 1; seed <= 12; seed++) {
        Flat f = sample(seed);
        auto bytes = mpk::pack(f);
        auto sbytes = mpk::pack(scalars_of(f));
        for (const auto &opts : option_sets()) {
            decoded += mutate_and_compare<Flat>(bytes, opts);
            decoded += mutate_and_compare<Scalars>(sbytes, opts);
        }
    }
    EXPECT_GT(decoded, 100); // plenty of the mutations still decode (and take the fast path)
}

// Every integer boundary, written in every form MessagePack has (not only the shortest), into
// every integer field type: the fast path takes some forms and gives the others to the general
// path; both must agree on the value or the error.
TEST(FastPath, EveryIntegerFormIntoEveryIntegerType) {
    const std::int64_t values[] = {0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 2147483647LL, 2147483648LL,
                                   4294967295LL, 4294967296LL, std::numeric_limits<std::int64_t>::max(),
                                   -1, -32, -33, -128, -129, -32768, -32769, -2147483648LL, -2147483649LL,
                                   std::numeric_limits<std::int64_t>::min()};
    struct U8 { std::uint8_t v; MPK_FIELDS(v) };
    struct I8 { std::int8_t v; MPK_FIELDS(v) };
    struct U16 { std::uint16_t v; MPK_FIELDS(v) };
    struct I16 { std::int16_t v; MPK_FIELDS(v) };
    struct U32 { std::uint32_t v; MPK_FIELDS(v) };
    struct I32 { std::int32_t v; MPK_FIELDS(v) };
    struct U64 { std::uint64_t v; MPK_FIELDS(v) };
    struct I64 { std::int64_t v; MPK_FIELDS(v) };
    struct E { Color v; MPK_FIELDS(v) };
    int decoded = 0;
    for (std::int64_t v : values) {
        // [v] in each form that can hold it
        std::vector<std::vector<std::byte>> forms;
        auto add = [&](std::uint8_t head, int len, std::uint64_t bits) {
            std::vector<std::byte> b{std::byte{0x91}, static_cast<std::byte>(head)};
            for (int k = len - 1; k >= 0; k--) b.push_back(static_cast<std::byte>(bits >> (8 * k)));
            forms.push_back(b);
        };
        std::uint64_t u = static_cast<std::uint64_t>(v);
        if (v >= 0 && v < 128) add(static_cast<std::uint8_t>(v), 0, 0);
        if (v < 0 && v >= -32) add(static_cast<std::uint8_t>(v), 0, 0);
        if (v >= 0) {
            if (u <= 0xff) add(0xcc, 1, u);
            if (u <= 0xffff) add(0xcd, 2, u);
            if (u <= 0xffffffffu) add(0xce, 4, u);
            add(0xcf, 8, u);
        }
        if (v >= -128 && v <= 127) add(0xd0, 1, u);
        if (v >= -32768 && v <= 32767) add(0xd1, 2, u);
        if (v >= INT32_MIN && v <= INT32_MAX) add(0xd2, 4, u);
        add(0xd3, 8, u);
        for (auto &in : forms) {
            mpk::options o;
            decoded += expect_same_decode<U8>(in, o) + expect_same_decode<I8>(in, o) + expect_same_decode<U16>(in, o) +
                       expect_same_decode<I16>(in, o) + expect_same_decode<U32>(in, o) + expect_same_decode<I32>(in, o) +
                       expect_same_decode<U64>(in, o) + expect_same_decode<I64>(in, o) + expect_same_decode<E>(in, o);
        }
    }
    EXPECT_GT(decoded, 200);
}

TEST(FastPath, FloatsOfEitherWidthAndInts) {
    struct F { float v; MPK_FIELDS(v) };
    struct D { double v; MPK_FIELDS(v) };
    const char *inputs[] = {"91ca3fc00000", "91cb3ff8000000000000", "91cb3ff8000000000001", "9101", "91cf0020000000000001",
                            "91ca7fc00000", "91cb7ff8000000000000", "91c0", "91ca3fc000"};
    for (const char *h : inputs) {
        auto in = mpk_test::hex(h);
        expect_same_decode<F>(in, {});
        expect_same_decode<D>(in, {});
    }
}

// A fast struct as an element of containers, at every depth up to the limit and one past it: the
// reader's bookkeeping after a fast decode (the element closes its parent) matches the general one.
TEST(FastPath, InsideContainersUpToTheDepthLimit) {
    struct Pair { std::uint32_t a = 1; std::int32_t b = -2; MPK_FIELDS(a, b) };
    std::vector<Pair> many(40, Pair{});
    many[7] = Pair{300, -70000};
    auto bytes = mpk::pack(std::make_tuple(many, std::vector<Pair>{}, many));
    auto back = mpk::unpack<std::tuple<std::vector<Pair>, std::vector<Pair>, std::vector<Pair>>>(bytes);
    ASSERT_EQ(std::get<0>(back).size(), 40u);
    EXPECT_EQ(std::get<2>(back)[7].a, 300u);
    EXPECT_EQ(std::get<2>(back)[7].b, -70000);
    EXPECT_TRUE(std::get<1>(back).empty());

    // [[...[Pair]...]] nested k deep, with the depth limit at k+1 (fits) and k (does not).
    for (std::uint32_t k = 1; k < 20; k++) {
        std::vector<std::byte> in(k, std::byte{0x91});
        auto p = mpk::pack(Pair{5, -6});
        in.insert(in.end(), p.begin(), p.end());
        for (std::uint32_t limit : {k + 1, k}) {
            mpk::options o;
            o.limits.depth = limit;
            mpk::reader r(in, o);
            mpk::decoder &d = r.get_decoder();
            bool ok = true;
            for (std::uint32_t i = 0; i < k && ok; i++) {
                mpk_tag t;
                ok = d.next(t);
            }
            Pair got{};
            if (ok) ok = r.read(got);
            EXPECT_EQ(ok, limit == k + 1) << k;
            if (ok) {
                EXPECT_EQ(got.a, 5u);
                EXPECT_EQ(got.b, -6);
                EXPECT_TRUE(d.at_end()); // every enclosing array closed
                EXPECT_TRUE(d.finish());
            } else {
                EXPECT_EQ(r.error().kind, mpk::errc::depth_limit);
                EXPECT_EQ(r.error().offset, k);
            }
        }
    }
}

// Encoding: the fast writer's bytes are the general path's, for many values, into a growing buffer
// and into fixed buffers of every size around the encoding (too small: the general path reports
// buffer_full, having written the same prefix).
TEST(FastPath, EncodeMatchesTheGeneralPath) {
    for (std::uint64_t seed = 1; seed <= 200; seed++) {
        Scalars s = scalars_of(sample(seed));
        mpk::writer fast, general;
        fast.write(s);
        mpk::detail::struct_codec<Scalars>::encode_general(general, s);
        ASSERT_EQ(mpk_test::to_hex(fast.bytes()), mpk_test::to_hex(general.bytes())) << seed;
        std::size_t n = general.size();
        for (std::size_t cap = n > 20 ? n - 20 : 0; cap <= n + 20; cap++) {
            std::vector<std::byte> a(cap + 1), b(cap + 1);
            auto ra = mpk::try_pack_into(a.data(), cap, s);
            mpk::writer wb = mpk::writer::fixed(b.data(), cap);
            mpk::detail::struct_codec<Scalars>::encode_general(wb, s);
            auto rb = wb.finish();
            ASSERT_EQ(ra.ok(), rb.ok()) << cap;
            if (ra.ok()) {
                EXPECT_EQ(*ra, n);
                EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n));
            } else {
                EXPECT_EQ(ra.error().kind, mpk::errc::buffer_full);
                EXPECT_EQ(rb.error().kind, mpk::errc::buffer_full);
            }
        }
    }
}

// ---- containers: std::vector runs, std::array and std::string fields ------------------------------

namespace {

struct Row {
    std::string s;
    std::int32_t n = 0;
    bool b = false;
    MPK_FIELDS(s, n, b)
};

struct Pt {
    std::array<double, 2> at{};
    std::uint16_t id = 0;
    MPK_FIELDS(at, id)
};

#ifndef MPK_CPP_NO_FAST_PATH
static_assert(mpk::detail::fast_field<Row>::dec && !mpk::detail::fast_field<Row>::enc);
static_assert(mpk::detail::fast_field<std::array<double, 2>>::dec && mpk::detail::fast_field<std::array<double, 2>>::enc);
static_assert(mpk::detail::fast_field<Pt>::depth == 2);
static_assert(mpk::codec<std::vector<std::int64_t>>::run_dec && mpk::codec<std::vector<Pt>>::run_dec);
static_assert(!mpk::codec<std::vector<Row>>::run_dec && mpk::codec<std::vector<Row>>::fast_dec);
#endif

bool operator==(const Row &a, const Row &b) { return a.s == b.s && a.n == b.n && a.b == b.b; }
bool same_elem(const Row &a, const Row &b) { return a == b; }
bool same_elem(const std::string &a, const std::string &b) { return a == b; }
bool same_elem(const Pt &a, const Pt &b) {
    return std::memcmp(a.at.data(), b.at.data(), sizeof a.at) == 0 && a.id == b.id;
}
template <class T, std::size_t N>
bool same_elem(const std::array<T, N> &a, const std::array<T, N> &b) {
    return std::memcmp(a.data(), b.data(), sizeof a) == 0;
}
template <class T>
bool same_elem(const T &a, const T &b) {
    return std::memcmp(&a, &b, sizeof a) == 0; // floats by bits
}
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class T>
bool same_vec(const std::vector<T> &a, const std::vector<T> &b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); i++)
        if (!same_elem(a[i], b[i])) return false;
    return true;
}

/// Decodes `in` into `start` (a vector already holding elements: reuse) with mpk::try_unpack (the
/// fast path) and with the vector's general path; expects the same vector or the same error.
std::string short_hex(const std::vector<std::byte> &in) {
    std::string h = mpk_test::to_hex(in);
    return h.size() > 120 ? h.substr(0, 120) + "... (" + std::to_string(in.size()) + " bytes)" : h;
}

template <class V>
bool expect_same_container(const std::vector<std::byte> &in, const mpk::options &opts, const V &start) {
    V fast = start, general = start;
    auto r = mpk::try_unpack(mpk::bytes_view(in), fast, opts);
    mpk::decoder d(in, opts);
    bool ok = mpk::codec<V>::decode_general(d, general) && d.finish();
    mpk::error_info e = d.error(mpk::detail::root_name<V>()); // as try_unpack names the root
    EXPECT_EQ(r.ok(), ok) << short_hex(in);
    if (r.ok() && ok) {
        if constexpr (is_vector<V>::value) {
            EXPECT_TRUE(same_vec(fast, general)) << short_hex(in);
        } else {
            EXPECT_TRUE(same_elem(fast, general)) << short_hex(in);
        }
    } else if (!r.ok() && !ok) {
        EXPECT_EQ(r.error().message(), e.message()) << short_hex(in);
    }
    return ok;
}

template <class V>
int mutate_container(const std::vector<std::byte> &valid, const mpk::options &opts, const V &start) {
    int decoded = expect_same_container(valid, opts, start);
    for (std::size_t n = 0; n < valid.size(); n++)
        expect_same_container(std::vector<std::byte>(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(n)), opts, start);
    for (std::size_t i = 0; i < valid.size(); i++)
        for (std::uint8_t h : kHeads) {
            auto m = valid;
            m[i] = static_cast<std::byte>(h);
            decoded += expect_same_container(m, opts, start);
        }
    return decoded;
}

std::vector<mpk::options> container_option_sets() {
    auto v = option_sets();
    mpk::options budget; // the allocation budget runs out inside a run
    budget.max_alloc = 40;
    v.push_back(budget);
    return v;
}

} // namespace

// Vectors of every kind of fast element, read in runs (plain data) or one at a time (strings and
// structs holding them), into empty vectors and into vectors already holding more or fewer
// elements; every truncation and head mutation must give what the general path gives.
TEST(FastPath, VectorsMatchTheGeneralPath) {
    std::vector<std::int64_t> ints;
    for (std::int64_t v : {0LL, 1LL, -1LL, 127LL, 128LL, -33LL, 65536LL, -2147483649LL, 4294967296LL}) ints.push_back(v);
    std::vector<std::uint16_t> u16s = {0, 1, 127, 128, 255, 256, 65535};
    std::vector<double> doubles = {0.5, -0.0, 1e300, std::nan(""), 3.0};
    std::vector<float> floats = {0.5f, -1.25f};
    std::vector<bool> bools = {true, false, true};
    std::vector<Color> colors = {Color::red, Color::blue};
    std::vector<Row> rows = {{"hello", 123, true}, {"", -5, false}, {"world, and more than 31 bytes of text", 70000, true}};
    std::vector<Pt> pts = {{{1.5, -2.5}, 7}, {{0, 0}, 65535}};
    std::vector<std::array<double, 2>> pairs = {{1.0, 2.0}, {-3.5, 4.25}, {0, 0}};
    std::vector<std::string> strs = {"a", "", "bc", std::string(40, 'x')};
    int decoded = 0;
    for (const auto &opts : container_option_sets()) {
        decoded += mutate_container(mpk::pack(ints), opts, std::vector<std::int64_t>{});
        decoded += mutate_container(mpk::pack(ints), opts, std::vector<std::int64_t>{9, 9});
        decoded += mutate_container(mpk::pack(u16s), opts, std::vector<std::uint16_t>{});
        decoded += mutate_container(mpk::pack(doubles), opts, std::vector<double>{});
        decoded += mutate_container(mpk::pack(floats), opts, std::vector<float>{1, 2, 3, 4});
        decoded += mutate_container(mpk::pack(bools), opts, std::vector<bool>{});
        decoded += mutate_container(mpk::pack(colors), opts, std::vector<Color>{});
        decoded += mutate_container(mpk::pack(rows), opts, std::vector<Row>{});
        decoded += mutate_container(mpk::pack(rows), opts, std::vector<Row>{{"old", 1, false}, {"old", 2, true}, {"x", 3, false}, {"y", 4, true}});
        decoded += mutate_container(mpk::pack(pts), opts, std::vector<Pt>{});
        decoded += mutate_container(mpk::pack(pairs), opts, std::vector<std::array<double, 2>>{});
        decoded += mutate_container(mpk::pack(strs), opts, std::vector<std::string>{"keep", "these"});
        decoded += mutate_container(mpk::pack(pairs[1]), opts, std::array<double, 2>{});
        decoded += mutate_container(mpk::pack(rows[2]), opts, Row{});
    }
    EXPECT_GT(decoded, 1000);
}

// Long vectors: a run fills the reserved room, the element after it grows the vector, runs go on;
// an element the fast path does not take (a float 32 among float 64s, an int form it leaves to
// the general path) ends the runs and the rest goes one at a time, with the same result.
TEST(FastPath, LongVectorsAcrossRoomAndOddElements) {
    std::vector<double> d(5000);
    for (std::size_t i = 0; i < d.size(); i++) d[i] = static_cast<double>(i) * 0.25 - 100;
    auto bytes = mpk::pack(d);
    EXPECT_TRUE(expect_same_container(bytes, {}, std::vector<double>{}));
    std::vector<double> warm(7000, 1.0); // more room than needed, then fewer elements
    EXPECT_TRUE(expect_same_container(bytes, {}, warm));
    // element 3000 as float 32 (0xca 3f800000: 1.0), the rest float 64
    std::vector<std::byte> odd;
    mpk::writer w;
    w.array(5000);
    for (std::size_t i = 0; i < 5000; i++) {
        if (i == 3000) w.write(1.0f);
        else w.write(d[i]);
    }
    odd.assign(w.data(), w.data() + w.size());
    EXPECT_TRUE(expect_same_container(odd, {}, std::vector<double>{}));
    auto back = mpk::unpack<std::vector<double>>(odd);
    EXPECT_EQ(back[3000], 1.0);
    EXPECT_EQ(back[4999], d[4999]);
    // a truncation deep inside a run: truncated at the input's length, as the general path says
    std::vector<std::byte> cut(bytes.begin(), bytes.begin() + 20000);
    auto r = mpk::try_unpack<std::vector<double>>(cut);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, mpk::errc::truncated);
    EXPECT_TRUE(expect_same_container(cut, {}, std::vector<double>{}) == false);
    // ints in every form, many of them
    std::vector<std::int64_t> ints;
    for (int i = 0; i < 3000; i++) ints.push_back((i % 2 ? -1 : 1) * (std::int64_t{1} << (i % 63)));
    EXPECT_TRUE(expect_same_container(mpk::pack(ints), {}, std::vector<std::int64_t>{}));
    // the same ints into a narrower type: the first that does not fit is a type error at its offset
    EXPECT_FALSE(expect_same_container(mpk::pack(ints), {}, std::vector<std::int32_t>{}));
}

// The reader's bookkeeping after a run: arrays of runs nested in arrays and maps, and the values
// after them, decode as the general path decodes them; a run that ends its array closes it.
TEST(FastPath, RunsInsideContainers) {
    using T = std::tuple<std::vector<std::vector<std::uint32_t>>, std::map<std::string, std::vector<double>>, std::string>;
    T v{{{1, 2, 3}, {}, {70000, 5}}, {{"a", {1.5, 2.5}}, {"b", {}}}, "end"};
    auto bytes = mpk::pack(v);
    auto back = mpk::unpack<T>(bytes);
    EXPECT_EQ(std::get<0>(back), std::get<0>(v));
    EXPECT_EQ(std::get<1>(back), std::get<1>(v));
    EXPECT_EQ(std::get<2>(back), "end");
    // 17 nested arrays around a run (deeper than the reader's small stack)
    std::vector<std::byte> deep(17, std::byte{0x91});
    auto inner = mpk::pack(std::vector<std::uint8_t>{1, 2, 3});
    deep.insert(deep.end(), inner.begin(), inner.end());
    mpk::reader r(deep);
    mpk::decoder &d = r.get_decoder();
    for (int i = 0; i < 17; i++) {
        mpk_tag t;
        ASSERT_TRUE(d.next(t));
    }
    std::vector<std::uint8_t> got;
    ASSERT_TRUE(r.read(got));
    EXPECT_EQ(got, (std::vector<std::uint8_t>{1, 2, 3}));
    EXPECT_TRUE(d.at_end());
    EXPECT_TRUE(d.finish());
}

// Encoding vectors in runs: the same bytes as the general path, into a growing buffer and into
// fixed buffers of every size around the encoding (too small: buffer_full either way).
TEST(FastPath, VectorEncodeMatchesTheGeneralPath) {
    std::vector<std::int64_t> ints;
    for (int i = 0; i < 300; i++) ints.push_back((i % 2 ? -1 : 1) * (std::int64_t{1} << (i % 63)));
    std::vector<double> doubles = {0.5, -0.0, 1e300, 3.0};
    std::vector<std::array<double, 2>> pairs = {{1.0, 2.0}, {-3.5, 4.25}};
    std::vector<Pt> pts = {{{1.5, -2.5}, 7}, {{0, 0}, 65535}};
    auto check = [](const auto &v) {
        using V = std::decay_t<decltype(v)>;
        mpk::writer fast, general;
        fast.write(v);
        mpk::codec<V>::encode_general(general, v);
        ASSERT_EQ(mpk_test::to_hex(fast.bytes()), mpk_test::to_hex(general.bytes()));
        std::size_t n = general.size();
        for (std::size_t cap = n > 30 ? n - 30 : 0; cap <= n + 30; cap++) {
            std::vector<std::byte> a(cap + 1), b(cap + 1);
            auto ra = mpk::try_pack_into(a.data(), cap, v);
            mpk::writer wb = mpk::writer::fixed(b.data(), cap);
            mpk::codec<V>::encode_general(wb, v);
            auto rb = wb.finish();
            ASSERT_EQ(ra.ok(), rb.ok()) << cap;
            if (ra.ok()) {
                EXPECT_EQ(*ra, n);
                EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n));
            } else {
                EXPECT_EQ(ra.error().kind, mpk::errc::buffer_full);
                EXPECT_EQ(rb.error().kind, mpk::errc::buffer_full);
            }
        }
    };
    check(ints);
    check(doubles);
    check(pairs);
    check(pts);
    check(pairs[1]);
}

// ---- encode_snapshot and write_str_inline ---------------------------------------------------------

namespace {

// Larger than encode_snapshot copies (64 bytes): written from the caller's object.
struct Wide {
    std::array<double, 9> a{};
    std::int64_t x = 0;
    Inner in;
    MPK_FIELDS(a, x, in)
};
static_assert(mpk::detail::fast_field<Wide>::enc);
static_assert(mpk::detail::snapshot_fits_v<Scalars> && mpk::detail::snapshot_fits_v<Inner>);
static_assert(!mpk::detail::snapshot_fits_v<Wide>);

/// The core's own encoding of a str of n bytes into a fresh writer initialised by `init`.
template <class Init>
std::string core_str(const std::string &s, Init init, std::size_t *chunks = nullptr) {
    mpk_writer w;
    init(&w);
    mpk_write_str(&w, s.data(), s.size());
    std::string out;
    if (mpk_writer_finish(&w) == MPK_OK) {
        const mpk_chunk *c = nullptr;
        std::size_t n = 0;
        if (chunks && mpk_writer_chunks(&w, &c, &n)) {
            *chunks = n;
            for (std::size_t i = 0; i < n; i++) out.append(static_cast<const char *>(c[i].data), c[i].len);
        } else {
            out.assign(reinterpret_cast<const char *>(mpk_writer_data(&w)), mpk_writer_size(&w));
        }
    } else {
        out = "<error " + std::to_string(mpk_writer_error(&w)) + ">";
    }
    mpk_writer_destroy(&w);
    return out;
}

/// The same str written by mpk::writer (wrapping a writer initialised by `init`).
template <class Init>
std::string cpp_str(const std::string &s, Init init, std::size_t *chunks = nullptr) {
    mpk_writer w;
    init(&w);
    std::string out;
    {
        mpk::writer cw = mpk::writer::wrap(&w);
        cw.write(s);
        auto r = cw.finish();
        if (r.ok()) {
            const mpk_chunk *c = nullptr;
            std::size_t n = 0;
            if (chunks && mpk_writer_chunks(&w, &c, &n)) {
                *chunks = n;
                for (std::size_t i = 0; i < n; i++) out.append(static_cast<const char *>(c[i].data), c[i].len);
            } else {
                out.assign(reinterpret_cast<const char *>(mpk_writer_data(&w)), mpk_writer_size(&w));
            }
        } else {
            out = "<error " + std::to_string(static_cast<int>(r.error().kind)) + ">";
        }
    }
    mpk_writer_destroy(&w);
    return out;
}

} // namespace

// encode_snapshot (fast_encode copies a small struct before writing it) and the portable path
// (a struct over 64 bytes, written from the caller's object): the general path's bytes, for many
// values, and buffer_full from fixed buffers one byte short.
TEST(FastPath, SnapshotAndDirectEncodeMatchTheGeneralPath) {
    for (std::uint64_t seed = 1; seed <= 100; seed++) {
        Flat f = sample(seed);
        Wide wd;
        for (std::size_t i = 0; i < wd.a.size(); i++) wd.a[i] = f.d * static_cast<double>(i) - f.f;
        wd.x = f.i64;
        wd.in = f.in;
        auto check = [&](const auto &v) {
            using V = std::decay_t<decltype(v)>;
            mpk::writer fast(512), general;
            fast.write(v);
            fast.write(v); // twice: the second one after the first moved the position
            mpk::detail::struct_codec<V>::encode_general(general, v);
            mpk::detail::struct_codec<V>::encode_general(general, v);
            ASSERT_EQ(mpk_test::to_hex(fast.bytes()), mpk_test::to_hex(general.bytes())) << seed;
            std::size_t n = general.size() / 2;
            std::vector<std::byte> a(n);
            auto r = mpk::try_pack_into(a.data(), n - 1, v);
            ASSERT_FALSE(r.ok());
            EXPECT_EQ(r.error().kind, mpk::errc::buffer_full);
        };
        check(scalars_of(f));
        check(f.in);
        check(wd);
    }
}

// write_str_inline (codec.hpp, strs of 128..1023 bytes) against the core's mpk_write_str: the same
// bytes at every length class around its bounds, into a growing buffer (small: the core grows it;
// large: written inline), into fixed buffers from 4 bytes short to 1 byte over, and in reference-
// chunk mode, where bodies at or over the threshold must stay referenced (the same chunks).
TEST(FastPath, StrWritesMatchTheCore) {
    for (std::size_t n : {0u, 1u, 31u, 32u, 127u, 128u, 129u, 255u, 256u, 257u, 300u, 1000u, 1023u, 1024u, 1025u, 65535u,
                          65536u, 70000u}) {
        std::string s(n, '\0');
        for (std::size_t i = 0; i < n; i++) s[i] = static_cast<char>('a' + i % 26);
        for (std::size_t cap : {std::size_t{0}, std::size_t{8192}, n + 200000}) {
            auto grow = [cap](mpk_writer *w) { mpk_writer_init_growable(w, cap); };
            EXPECT_EQ(mpk_test::to_hex(mpk::bytes_view(cpp_str(s, grow))), mpk_test::to_hex(mpk::bytes_view(core_str(s, grow))))
                << n << " " << cap;
        }
        std::size_t head = n <= 31 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : 5;
        for (std::size_t cap = n + head >= 4 ? n + head - 4 : 0; cap <= n + head + 1; cap++) {
            std::vector<char> a(cap + 1), b(cap + 1);
            auto fa = [&](mpk_writer *w) { mpk_writer_init_buf(w, a.data(), cap); };
            auto fb = [&](mpk_writer *w) { mpk_writer_init_buf(w, b.data(), cap); };
            EXPECT_EQ(cpp_str(s, fa), core_str(s, fb)) << n << " in " << cap;
        }
        for (std::size_t threshold : {std::size_t{128}, std::size_t{200}, std::size_t{0}}) {
            std::size_t ca = 0, cb = 0;
            auto ch = [threshold](mpk_writer *w) { mpk_writer_init_chunks(w, threshold); };
            EXPECT_EQ(cpp_str(s, ch, &ca), core_str(s, ch, &cb)) << n << " threshold " << threshold;
            EXPECT_EQ(ca, cb) << n << " threshold " << threshold;
        }
    }
    // Inside a vector (the codecs' path to it), beside the core writing the same strs.
    std::vector<std::string> strs;
    for (std::size_t n = 100; n < 1100; n += 37) strs.push_back(std::string(n, 'q'));
    mpk::writer fast(65536);
    fast.write(strs);
    mpk_writer core;
    mpk_writer_init_growable(&core, 0);
    mpk_write_array(&core, static_cast<std::uint32_t>(strs.size()));
    for (auto &x : strs) mpk_write_str(&core, x.data(), x.size());
    EXPECT_EQ(mpk_test::to_hex(fast.bytes()), mpk_test::to_hex(mpk::bytes_view(mpk_writer_data(&core), mpk_writer_size(&core))));
    mpk_writer_destroy(&core);
    EXPECT_EQ(mpk::unpack<std::vector<std::string>>(fast.bytes()), strs);
}

// ---- map-form structs: keys in the declared order first (decode_in_order) --------------------------

namespace {

struct MapRec {
    std::int64_t id = 0;
    std::string name;
    std::uint16_t port = 0;
    Inner in;
    std::vector<std::string> tags;
    MPK_FIELDS_MAP(id, name, port, in, tags)
};

bool same_bits(const MapRec &a, const MapRec &b) {
    return a.id == b.id && a.name == b.name && a.port == b.port && same_bits(a.in, b.in) && a.tags == b.tags;
}

/// A map of the given pairs, each key written as a fixstr (or as a str 8 when `long_key` names it).
template <class... Pairs>
std::vector<std::byte> map_of(std::string_view long_key, const Pairs &...pairs) {
    mpk::writer w;
    w.map(static_cast<std::uint32_t>(sizeof...(Pairs)));
    auto one = [&](const auto &p) {
        std::string_view k = p.first;
        if (k == long_key) {
            const std::uint8_t h[2] = {0xd9, static_cast<std::uint8_t>(k.size())};
            mpk_write_bytes(w.c(), h, 2);
            mpk_write_bytes(w.c(), k.data(), k.size());
        } else {
            w.write(k);
        }
        w.write(p.second);
    };
    (one(pairs), ...);
    return w.to_vector();
}

} // namespace

// The same fields, or the same error (kind, offset, path, detail), as the general loop (which finds
// every key by name), for maps in the declared order, in other orders, with unknown, repeated,
// missing and non-fixstr keys; each truncated at every length and with every byte replaced by heads
// of every family, under every option set (strict UTF-8 and a str limit under the key lengths
// included, where the in-order match must step aside).
TEST(FastPath, MapKeysInOrderMatchTheGeneralLoop) {
    MapRec rec;
    rec.id = -70000;
    rec.name = "alpha";
    rec.port = 8080;
    rec.in = {-5, 300};
    rec.tags = {"x", "yy"};
    using P = std::pair<std::string_view, std::int64_t>;
    std::vector<std::vector<std::byte>> inputs = {
        mpk::pack(rec),
        map_of("", std::pair{"tags", rec.tags}, std::pair{"in", rec.in}, std::pair{"port", rec.port}, std::pair{"name", rec.name},
               P{"id", rec.id}),
        map_of("", P{"id", 1}, std::pair{"name", rec.name}, P{"zzz", 7}, std::pair{"port", rec.port}, std::pair{"in", rec.in}),
        map_of("", P{"id", 1}, std::pair{"name", rec.name}, P{"id", 2}, std::pair{"port", rec.port}),
        map_of("port", P{"id", 1}, std::pair{"name", rec.name}, std::pair{"port", rec.port}, std::pair{"in", rec.in},
               std::pair{"tags", rec.tags}),
        map_of("", P{"id", 1}, std::pair{"port", rec.port}),
        map_of("", P{"idx", 1}, std::pair{"name", rec.name}),
    };
    int decoded = 0;
    for (const auto &in : inputs)
        for (const auto &opts : option_sets()) decoded += mutate_and_compare<MapRec>(in, opts);
    EXPECT_GT(decoded, 100);
    // and what they decode to
    MapRec back = mpk::unpack<MapRec>(inputs[0]);
    EXPECT_TRUE(same_bits(back, rec));
    back = mpk::unpack<MapRec>(inputs[1]);
    EXPECT_TRUE(same_bits(back, rec));
    back = mpk::unpack<MapRec>(inputs[3]);
    EXPECT_EQ(back.id, 2);
    EXPECT_EQ(back.port, 8080);
    back = mpk::unpack<MapRec>(inputs[4]);
    EXPECT_TRUE(same_bits(back, MapRec{1, rec.name, rec.port, rec.in, rec.tags}));
    mpk::options req;
    req.require_fields = true;
    auto r = mpk::try_unpack<MapRec>(inputs[5], req);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().path, "MapRec.name");
}

// ---- sized encode: strs, bins, vectors and map-form structs ---------------------------------------

namespace {

struct Named {
    std::string s;
    std::int32_t n = 0;
    bool b = false;
    MPK_FIELDS(s, n, b)
};

struct Keyed {
    std::int64_t id = 0;
    std::string name;
    mpk::bytes_view data;
    std::vector<std::string> tags;
    Inner in;
    std::string_view note;
    MPK_FIELDS_MAP(id, name, data, tags, in, note)
};

struct KeyedScalars {
    std::int32_t x = 0;
    double y = 0;
    Inner in;
    MPK_FIELDS_MAP(x, y, in)
};

static_assert(mpk::detail::fast_field<Named>::venc && !mpk::detail::fast_field<Named>::enc);
static_assert(mpk::detail::fast_field<Keyed>::venc && !mpk::detail::fast_field<Keyed>::dec);
static_assert(mpk::detail::fast_field<KeyedScalars>::enc && !mpk::detail::fast_field<KeyedScalars>::dec);
static_assert(mpk::detail::fast_field<Flat>::venc && !mpk::detail::fast_field<Flat>::enc);

/// The output of `write` into a writer: growing, or wrapping a reference-chunk writer (threshold
/// 128; the chunks concatenated, their count after a '#').
template <class Write>
std::string output_of(Write write, bool chunks) {
    mpk_writer cw;
    if (chunks) mpk_writer_init_chunks(&cw, 128);
    else mpk_writer_init_growable(&cw, 0);
    std::string out;
    {
        mpk::writer w = mpk::writer::wrap(&cw);
        write(w);
        if (!w.finish().ok()) out = "<error>";
    }
    const mpk_chunk *c = nullptr;
    std::size_t n = 0;
    if (out.empty() && chunks && mpk_writer_chunks(&cw, &c, &n)) {
        for (std::size_t i = 0; i < n; i++) out.append(static_cast<const char *>(c[i].data), c[i].len);
        out += "#" + std::to_string(n);
    } else if (out.empty()) {
        out.assign(reinterpret_cast<const char *>(mpk_writer_data(&cw)), mpk_writer_size(&cw));
    }
    mpk_writer_destroy(&cw);
    return out;
}

/// v through the fast path (mpk::writer::write) and through `general`: the same bytes growing, the
/// same chunks, and the same bytes or buffer_full in fixed buffers from 40 bytes short to 1 over.
template <class T, class General>
void expect_same_encode(const T &v, General general, const std::string &what) {
    auto fast = [&](mpk::writer &w) { w.write(v); };
    std::string a = output_of(fast, false), b = output_of(general, false);
    ASSERT_EQ(mpk_test::to_hex(mpk::bytes_view(a)), mpk_test::to_hex(mpk::bytes_view(b))) << what;
    EXPECT_EQ(output_of(fast, true), output_of(general, true)) << what;
    std::size_t n = b.size();
    for (std::size_t cap = n > 40 ? n - 40 : 0; cap <= n + 1; cap++) {
        std::vector<char> x(cap + 1), y(cap + 1);
        auto rx = mpk::try_pack_into(x.data(), cap, v);
        mpk::writer wy = mpk::writer::fixed(y.data(), cap);
        general(wy);
        auto ry = wy.finish();
        ASSERT_EQ(rx.ok(), ry.ok()) << what << " in " << cap;
        if (rx.ok()) {
            EXPECT_EQ(*rx, n);
            EXPECT_EQ(0, std::memcmp(x.data(), y.data(), n)) << what << " in " << cap;
        } else {
            EXPECT_EQ(rx.error().kind, mpk::errc::buffer_full) << what;
            EXPECT_EQ(ry.error().kind, mpk::errc::buffer_full) << what;
        }
    }
}

} // namespace

TEST(FastPath, SizedEncodeMatchesTheGeneralPath) {
    const std::size_t lengths[] = {0, 5, 31, 32, 127, 128, 200, 255, 256, 1000, 1023, 1024, 3000};
    std::string text(3000, '\0');
    for (std::size_t i = 0; i < text.size(); i++) text[i] = static_cast<char>('A' + i % 50);
    int k = 0;
    for (std::size_t len : lengths) {
        k++;
        std::string s = text.substr(0, len);
        Named nm{s, -k * 1000, k % 2 == 0};
        expect_same_encode(nm, [&](mpk::writer &w) { mpk::detail::struct_codec<Named>::encode_general(w, nm); },
                           "Named " + std::to_string(len));
        Keyed kd;
        kd.id = -static_cast<std::int64_t>(len) * 99999;
        kd.name = s;
        kd.data = mpk::bytes_view(text.data(), len);
        kd.tags = {"a", s, std::string(len % 40, 'z')};
        kd.in = {k, static_cast<std::uint16_t>(len)};
        kd.note = std::string_view(text).substr(len % 7, 33);
        expect_same_encode(kd, [&](mpk::writer &w) { mpk::detail::struct_codec<Keyed>::encode_general(w, kd); },
                           "Keyed " + std::to_string(len));
        Flat f = sample(static_cast<std::uint64_t>(len) + 1);
        f.bin = mpk::bytes_view(text.data(), len);
        expect_same_encode(f, [&](mpk::writer &w) { mpk::detail::struct_codec<Flat>::encode_general(w, f); },
                           "Flat " + std::to_string(len));
        KeyedScalars ks{k * -77777, static_cast<double>(len) / 3, {k, 7}};
        expect_same_encode(ks, [&](mpk::writer &w) { mpk::detail::struct_codec<KeyedScalars>::encode_general(w, ks); },
                           "KeyedScalars " + std::to_string(len));
    }
    // Vectors of them and of strs (runs of the sized encode), against every element written by its
    // general path; the long ones (over 1023 bytes) in the middle go to the core.
    std::vector<Named> rows;
    std::vector<std::string> strs;
    for (std::size_t len : lengths) {
        rows.push_back(Named{text.substr(0, len), static_cast<std::int32_t>(len), len % 2 == 1});
        strs.push_back(text.substr(0, len));
    }
    expect_same_encode(rows, [&](mpk::writer &w) {
        w.array(static_cast<std::uint32_t>(rows.size()));
        for (auto &r : rows) mpk::detail::struct_codec<Named>::encode_general(w, r);
    }, "rows");
    expect_same_encode(strs, [&](mpk::writer &w) {
        w.array(static_cast<std::uint32_t>(strs.size()));
        for (auto &x : strs) mpk_write_str(w.c(), x.data(), x.size());
    }, "strs");
    // and they decode back
    EXPECT_EQ(mpk::unpack<std::vector<std::string>>(mpk::pack(strs)), strs);
}

// ---- write_body_streaming (codec.hpp) and stream_body_avx2 (writer.hpp) ---------------------------

// Bins and strs of 1 KiB and more written 4 MiB and more into the output (where the C++ writer may
// copy them with its own streaming stores) give the core's bytes, at every alignment of the body
// to a 64-byte line and at the str/bin 16 -> 32 boundary; in a fixed buffer one byte short, the same
// buffer_full; in reference chunks, the same chunks.
TEST(FastPath, LargeBodiesFarIntoTheOutputMatchTheCore) {
    std::string body(70000, '\0');
    for (std::size_t i = 0; i < body.size(); i++) body[i] = static_cast<char>(i * 7 + i / 251);
    const std::size_t lead = std::size_t{4} << 20;
    std::string filler(lead + 64, 'f'); // up to lead + 63 bytes are written from it
    for (std::size_t n : {std::size_t{1024}, std::size_t{1025}, std::size_t{8192}, std::size_t{65535}, std::size_t{65536},
                          std::size_t{70000}}) {
        for (std::size_t shift = 0; shift < 64; shift += (n == 8192 ? 1 : 13)) {
            mpk::bytes_view bin(body.data(), n);
            std::string_view str(body.data(), n);
            mpk::writer w(lead + 200000);
            mpk_writer c;
            mpk_writer_init_growable(&c, lead + 200000);
            mpk_write_bytes(w.c(), filler.data(), lead + shift); // unframed: only the offset matters
            mpk_write_bytes(&c, filler.data(), lead + shift);
            w.write(bin).write(str).write(bin);
            mpk_write_bin(&c, bin.data(), n);
            mpk_write_str(&c, str.data(), n);
            mpk_write_bin(&c, bin.data(), n);
            ASSERT_TRUE(w.finish().ok());
            ASSERT_EQ(mpk_writer_finish(&c), MPK_OK);
            ASSERT_EQ(w.size(), mpk_writer_size(&c)) << n << " " << shift;
            ASSERT_EQ(0, std::memcmp(w.data(), mpk_writer_data(&c), w.size())) << n << " " << shift;
            mpk_writer_destroy(&c);
        }
        // a fixed buffer one byte short of the body: buffer_full, as from the core
        std::vector<std::byte> buf(lead + n + 5);
        mpk::writer f = mpk::writer::fixed(buf.data(), lead + n + 2);
        mpk_write_bytes(f.c(), filler.data(), lead);
        f.write(mpk::bytes_view(body.data(), n));
        auto r = f.finish();
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().kind, mpk::errc::buffer_full);
    }
    // reference chunks far into the output: the body stays referenced, as the core does it
    mpk_writer ch;
    mpk_writer_init_chunks(&ch, 0);
    {
        mpk::writer w = mpk::writer::wrap(&ch);
        mpk_write_bytes(w.c(), filler.data(), 1000); // copied (under the threshold)
        std::string pad(lead, 'p');
        w.write(std::string_view(pad.data(), 1000)); // a str under the threshold: copied
        w.write(mpk::bytes_view(body.data(), 8192)); // referenced
        ASSERT_TRUE(w.finish().ok());
    }
    const mpk_chunk *chunks = nullptr;
    std::size_t count = 0;
    ASSERT_TRUE(mpk_writer_chunks(&ch, &chunks, &count));
    ASSERT_EQ(count, 2u);
    EXPECT_EQ(chunks[1].data, static_cast<const void *>(body.data()));
    mpk_writer_destroy(&ch);
}

// ---- signed ints: width first (fast.hpp fast_field<I>::write, the core's mpk_write_int) -----------

namespace {

// The spec's shortest form written the plain way, sign first: the reference both writers must match.
std::string ref_int_hex(std::int64_t v) {
    std::uint8_t b[9];
    std::size_t n;
    const std::uint64_t u = static_cast<std::uint64_t>(v);
    int len = 0;
    if (v >= 0 ? u < 128 : v >= -32) {
        b[0] = static_cast<std::uint8_t>(u);
    } else if (v >= 0) {
        len = u <= 0xff ? 1 : u <= 0xffff ? 2 : u <= 0xffffffffu ? 4 : 8;
        b[0] = static_cast<std::uint8_t>(len == 1 ? 0xcc : len == 2 ? 0xcd : len == 4 ? 0xce : 0xcf);
    } else {
        len = v >= -128 ? 1 : v >= -32768 ? 2 : v >= INT32_MIN ? 4 : 8;
        b[0] = static_cast<std::uint8_t>(len == 1 ? 0xd0 : len == 2 ? 0xd1 : len == 4 ? 0xd2 : 0xd3);
    }
    for (int i = 0; i < len; i++) b[1 + i] = static_cast<std::uint8_t>(u >> (8 * (len - 1 - i)));
    n = 1 + static_cast<std::size_t>(len);
    return mpk_test::to_hex(mpk::bytes_view(reinterpret_cast<const std::byte *>(b), n));
}

template <class I>
struct OneInt {
    I v{};
    MPK_FIELDS(v)
};

template <class I>
void signed_ints_match_reference() {
    const std::int64_t lo = std::numeric_limits<I>::min(), hi = std::numeric_limits<I>::max();
    std::vector<std::int64_t> vals;
    const std::int64_t edges[] = {0, 31, 32, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 2147483647LL,
                                  2147483648LL, 4294967295LL, 4294967296LL, hi, -1, -31, -32, -33, -127,
                                  -128, -129, -32767, -32768, -32769, -2147483647LL, -2147483648LL,
                                  -2147483649LL, lo};
    for (std::int64_t e : edges)
        for (int d = -2; d <= 2; d++)
            if ((d <= 0 || e <= hi - d) && (d >= 0 || e >= lo - d) && e + d >= lo && e + d <= hi) vals.push_back(e + d);
    std::mt19937_64 g(7);
    for (int i = 0; i < 20000; i++) { // random bit lengths, random signs
        std::uint64_t x = g();
        std::uint64_t m = (x >> (x % 64)) >> 1;
        std::int64_t v = (x >> 63) ? -static_cast<std::int64_t>(m) - 1 : static_cast<std::int64_t>(m);
        if (v >= lo && v <= hi) vals.push_back(v);
    }
    std::vector<I> typed;
    std::string all;
    for (std::int64_t v : vals) {
        const I x = static_cast<I>(v);
        typed.push_back(x);
        const std::string want = ref_int_hex(v);
        all += want;
        // a struct field: the sized fast encode (fast_field<I>::write)
        mpk::writer fast;
        fast.write(OneInt<I>{x});
        ASSERT_EQ(mpk_test::to_hex(fast.bytes()), "91" + want) << v;
        // the core's inline writer, into a buffer of exactly its size and one byte less
        std::vector<std::uint8_t> buf(want.size() / 2);
        mpk_writer c;
        mpk_writer_init_buf(&c, buf.data(), buf.size());
        mpk_write_int(&c, v);
        ASSERT_EQ(mpk_writer_finish(&c), MPK_OK) << v;
        ASSERT_EQ(mpk_test::to_hex(mpk::bytes_view(reinterpret_cast<const std::byte *>(buf.data()), buf.size())), want) << v;
        mpk_writer_init_buf(&c, buf.data(), buf.size() - 1);
        mpk_write_int(&c, v);
        ASSERT_EQ(mpk_writer_finish(&c), MPK_ERR_BUFFER_FULL) << v;
    }
    // a vector of them: the fast path's runs
    mpk::writer w;
    w.write(typed);
    const std::string hex = mpk_test::to_hex(w.bytes());
    const std::size_t n = typed.size();
    ASSERT_TRUE(n > 15 && n <= 0xffff);
    ASSERT_EQ(hex.substr(0, 2), "dc"); // array 16, then the values
    ASSERT_EQ(hex.size(), 6 + all.size());
    ASSERT_EQ(hex.substr(6), all);
}

} // namespace

TEST(FastPath, SignedIntsMatchASignFirstReference) {
    signed_ints_match_reference<std::int8_t>();
    signed_ints_match_reference<std::int16_t>();
    signed_ints_match_reference<std::int32_t>();
    signed_ints_match_reference<std::int64_t>();
    signed_ints_match_reference<long long>();
}
