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
