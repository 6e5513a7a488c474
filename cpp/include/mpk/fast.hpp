// mpk/fast.hpp — the typed fast path for small array-form structs (a speed trick; see below).
//
// What: a struct described in array form (MPK_FIELDS / MPK_DESCRIBE) with at most 15 fields, each
// an integer, bool, float, double, enum, mpk::bytes_view, std::string_view or another such struct,
// is read straight from the input bytes and written straight into the output buffer, with the
// position in a local pointer: one bounds check per token on decode, one room check per struct on
// encode (structs of scalars only), and no per-token call into the core reader or writer.
//
// Why: the general path reads every token through mpk_reader_next (container bookkeeping, limit
// checks, a tag struct in memory) and writes every scalar through a room check, and a store through
// uint8_t * makes the compiler reload the writer's position after each byte. The seed's Test1
// {1, 2} took 226 instructions per message to decode and 50 to encode (callgrind, cpp/bench/
// callgrind.py), against protobuf's 706 and 99; the bar is 5x protobuf.
//
// The same readers serve containers (codec.hpp): a std::array<T, N> of fast elements (N <= 15) is
// itself a fast field (GeoJSON's [lng, lat]), and a std::vector of fast elements reads and writes
// them in a run (fast_decode_run / fast_encode_run) with the position in a local pointer and the
// container's bookkeeping settled once per run. A std::string field is read by the fast path too
// (decode only): its body is copied in, the only fast read that allocates.
// Measured (callgrind, cpp/bench/callgrind.py, instructions per message, before → after the
// container paths): the common workloads' rb_model3d (30000 float 64 and 27000 ints in three
// vectors) decode 8,246,524 → 1,677,427 and encode 1,321,599 → 670,050; c_ints (65536 ints)
// decode 9,298,559 → 2,620,434; rb_geojson (rings of [lng, lat]) decode 721,878 → 179,990;
// table16 (16 rows of [str, int, bool]) decode 9,398 → 4,003. Per element, the general path paid a
// call into the core's reader for every token beyond the forms it reads inline (uint 16/32,
// int 32, float 64, bool), the decoder's bookkeeping and the vector's; a run pays the read.
//
// Fallback: the fast path only ever handles input the general path would accept with the same
// result. Anything else — another head than fixarray of exactly N, an int in a form or range the
// field does not take, a float of the other width, a str under strict UTF-8, a length over a limit,
// too few bytes, nesting that would reach the depth limit, an earlier error — makes it give up
// before it changes the reader's state, and the general path (codec.hpp, describe.hpp) decodes the
// value from its start, reporting any error with its kind, offset and path. Fields the fast path
// wrote before giving up are written again by the general path. On encode, a buffer without room for
// the struct's largest encoding takes the general path (which grows, flushes or fails). Define
// MPK_CPP_NO_FAST_PATH to build without it; the tests compare both paths on the same inputs.
#ifndef MPK_CPP_FAST_HPP
#define MPK_CPP_FAST_HPP

#include "types.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// MPK_CPP_FAST_INLINE (always_inline; plain inline on other compilers) marks the decode chain from
// reader::read / struct_codec::decode down to every scalar and view reader (fast_struct::read,
// read_fields, fast_field<T>::read, fast_body), so a message's fast read is inlined whole into the
// caller's loop, and the cold or big parts stay calls (the general path decode_as, a str's
// allocation, prefetch_alike_out_of_line). Why: GCC inlines a plain `inline` function only while the
// translation unit's growth budget (--param inline-unit-growth) lasts, so whether the seed's loop got
// its readers inline depended on everything else in the file. In cpp/bench's seed_bench.cpp the
// map-form decode added call sites of the int reader, the budget ran out first and GCC 12 emitted
// fast_field<int>::read as an out-of-line clone called per field: Test2 decode 44 -> 75
// instructions per message (callgrind, cpp/bench/callgrind.py, -O2). With the chain forced, -O2 /
// -O3: Test1 38 / 38 (38 / 37 before), Test2 44 / 44 (75 / 61), Test4 133 / 140 (185 / 203),
// Product 1,220 / 1,157 (1,299 / 1,222), 100 Products 135,416 / 131,342 (143,058 / 137,442); -O2:
// c_ints 2,620,415 -> 2,489,354, table16 3,699 -> 3,218; no encode count moved. cpp/test/
// inline_guard.cpp (run by run.sh) builds a file with the budget spent up front and fails if any of
// these readers is emitted out of line.
#if defined(__GNUC__) || defined(__clang__)
#define MPK_CPP_FAST_INLINE inline __attribute__((always_inline))
#define MPK_CPP_NOINLINE __attribute__((noinline))
#else
#define MPK_CPP_FAST_INLINE inline
#define MPK_CPP_NOINLINE
#endif

namespace mpk {
namespace detail {

/// What the fast readers need from the reader: its limits and flags.
struct fast_ctx {
    const mpk_limits *limits;
    unsigned flags;
};

/// fast_field<T>: `dec` — T can be read by the fast path; `enc` and `max_size` — T has a bounded
/// encoding that write() stores without a room check of its own; `depth` — containers it opens.
template <class T, class = void>
struct fast_field {
    static constexpr bool dec = false, enc = false, venc = false;
    static constexpr std::size_t max_size = 0;
    static constexpr std::uint32_t depth = 0;
};

template <class I>
struct fast_field<I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>> {
    static constexpr bool dec = true, enc = true, venc = true;
    static constexpr std::size_t max_size = 9;
    static constexpr std::uint32_t depth = 0;

    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, I &v, const fast_ctx &) noexcept {
        if (p >= end) return false;
        std::uint8_t b = *p;
        if (b < 0x80) { // every integer type holds 0..127
            v = static_cast<I>(b);
            p++;
            return true;
        }
        if (b >= 0xe0) { // -32..-1
            if constexpr (std::is_signed_v<I>) {
                v = static_cast<I>(static_cast<std::int8_t>(b));
                p++;
                return true;
            }
            return false;
        }
        if (b < 0xcc || b > 0xd3) return false;
        std::size_t len = std::size_t{1} << ((b - 0xcc) & 3); // 1, 2, 4, 8
        if (static_cast<std::size_t>(end - p) < 1 + len) return false;
        std::uint64_t u;
        switch (len) {
        case 1: u = p[1]; break;
        case 2: u = mpk__load16(p + 1); break;
        case 4: u = mpk__load32(p + 1); break;
        default: u = mpk__load64(p + 1); break;
        }
        if (b <= 0xcf) { // uint 8..64
            if (u > static_cast<std::uint64_t>(std::numeric_limits<I>::max())) return false;
            v = static_cast<I>(u);
        } else { // int 8..64, sign-extended from its width
            if constexpr (!std::is_signed_v<I>) {
                return false; // the general path decides (a non-negative int 8..64 fits, a negative one is an error)
            } else {
                unsigned shift = static_cast<unsigned>(64 - 8 * len);
                std::int64_t i = static_cast<std::int64_t>(u << shift) >> shift;
                if (i < static_cast<std::int64_t>(std::numeric_limits<I>::min()) ||
                    i > static_cast<std::int64_t>(std::numeric_limits<I>::max()))
                    return false;
                v = static_cast<I>(i);
            }
        }
        p += 1 + len;
        return true;
    }

    /// The shortest form, as mpk_write_int / mpk_write_uint write it. A signed type's width is
    /// found first and its sign picks only the head byte, as mpk_write_int does (c/include/mpk/
    /// writer.h says why: a sign test first is an unpredictable branch on mixed-sign data).
    /// Measured with cpp/bench/callgrind.py and a same-process A/B: numbers in cpp/README.md.
    static std::uint8_t *write(std::uint8_t *p, I value) noexcept {
        if constexpr (std::is_signed_v<I>) {
            const std::uint64_t u = static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
            if (u + 32 < 32 + 128) { // -32..127: positive or negative fixint
                *p = static_cast<std::uint8_t>(u);
                return p + 1;
            }
            const std::uint8_t neg = static_cast<std::uint8_t>((u >> 63) << 2); // 0xcc.. -> 0xd0..
            if (u + 128 < 128 + 256) {
                p[0] = static_cast<std::uint8_t>(0xcc + neg);
                p[1] = static_cast<std::uint8_t>(u);
                return p + 2;
            }
            if (u + 32768 < 32768 + 65536) {
                p[0] = static_cast<std::uint8_t>(0xcd + neg);
                mpk__store16(p + 1, static_cast<std::uint16_t>(u));
                return p + 3;
            }
            if (u + 0x80000000u < 0x80000000u + std::uint64_t{0x100000000u}) {
                p[0] = static_cast<std::uint8_t>(0xce + neg);
                mpk__store32(p + 1, static_cast<std::uint32_t>(u));
                return p + 5;
            }
            p[0] = static_cast<std::uint8_t>(0xcf + neg);
            mpk__store64(p + 1, u);
            return p + 9;
        } else {
            std::uint64_t u = static_cast<std::uint64_t>(value);
            if (u < 0x80) {
                *p = static_cast<std::uint8_t>(u);
                return p + 1;
            }
            if (u <= 0xff) {
                p[0] = 0xcc;
                p[1] = static_cast<std::uint8_t>(u);
                return p + 2;
            }
            if (u <= 0xffff) {
                p[0] = 0xcd;
                mpk__store16(p + 1, static_cast<std::uint16_t>(u));
                return p + 3;
            }
            if (u <= 0xffffffffu) {
                p[0] = 0xce;
                mpk__store32(p + 1, static_cast<std::uint32_t>(u));
                return p + 5;
            }
            p[0] = 0xcf;
            mpk__store64(p + 1, u);
            return p + 9;
        }
    }
};

template <class E>
struct fast_field<E, std::enable_if_t<std::is_enum_v<E>>> {
    using U = std::underlying_type_t<E>;
    static constexpr bool dec = true, enc = true, venc = true;
    static constexpr std::size_t max_size = 9;
    static constexpr std::uint32_t depth = 0;
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, E &v, const fast_ctx &c) noexcept {
        U u{};
        if (!fast_field<U>::read(p, end, u, c)) return false;
        v = static_cast<E>(u);
        return true;
    }
    static std::uint8_t *write(std::uint8_t *p, E v) noexcept { return fast_field<U>::write(p, static_cast<U>(v)); }
};

template <>
struct fast_field<bool> {
    static constexpr bool dec = true, enc = true, venc = true;
    static constexpr std::size_t max_size = 1;
    static constexpr std::uint32_t depth = 0;
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, bool &v, const fast_ctx &) noexcept {
        if (p >= end || (*p | 1) != 0xc3) return false;
        v = *p++ == 0xc3;
        return true;
    }
    static std::uint8_t *write(std::uint8_t *p, bool v) noexcept {
        *p = v ? 0xc3 : 0xc2;
        return p + 1;
    }
};

/// float ↔ float 32 and double ↔ float 64 only (the other width and ints: the general path).
template <class F>
struct fast_field<F, std::enable_if_t<std::is_same_v<F, float> || std::is_same_v<F, double>>> {
    static constexpr bool dec = true, enc = true, venc = true;
    static constexpr std::size_t max_size = 1 + sizeof(F);
    static constexpr std::uint32_t depth = 0;
    static constexpr std::uint8_t head = sizeof(F) == 4 ? 0xca : 0xcb;
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, F &v, const fast_ctx &) noexcept {
        if (static_cast<std::size_t>(end - p) < 1 + sizeof(F) || *p != head) return false;
        if constexpr (sizeof(F) == 4) {
            std::uint32_t bits = mpk__load32(p + 1);
            std::memcpy(&v, &bits, 4);
        } else {
            std::uint64_t bits = mpk__load64(p + 1);
            std::memcpy(&v, &bits, 8);
        }
        p += 1 + sizeof(F);
        return true;
    }
    static std::uint8_t *write(std::uint8_t *p, F v) noexcept {
        p[0] = head;
        if constexpr (sizeof(F) == 4) {
            std::uint32_t bits;
            std::memcpy(&bits, &v, 4);
            mpk__store32(p + 1, bits);
        } else {
            std::uint64_t bits;
            std::memcpy(&bits, &v, 8);
            mpk__store64(p + 1, bits);
        }
        return p + 1 + sizeof(F);
    }
};

/// The longest str or bin body the fast path writes itself (sized encode, below): longer ones go
/// to the core, which copies bodies of 1 KiB and more with streaming stores far into a large output.
constexpr std::size_t fast_body_max = 1023;

/// A str (bin: `bin`) of at most fast_body_max bytes, head and body, in the shortest form; the room
/// was checked by the caller (fast_measure).
inline std::uint8_t *fast_write_body(std::uint8_t *p, bool bin, const void *data, std::size_t n) noexcept {
    if (!bin && n <= 31) {
        *p++ = static_cast<std::uint8_t>(0xa0 | n);
    } else if (n <= 0xff) {
        p[0] = bin ? 0xc4 : 0xd9;
        p[1] = static_cast<std::uint8_t>(n);
        p += 2;
    } else {
        p[0] = bin ? 0xc5 : 0xda;
        mpk__store16(p + 1, static_cast<std::uint16_t>(n));
        p += 3;
    }
    if (n) std::memcpy(p, data, n); // data may be null when n is 0
    return p + n;
}

/// Room for a body of n bytes (its head included, at most 3 bytes), or false over fast_body_max.
inline bool fast_measure_body(std::size_t n, std::size_t &need) noexcept {
    if (n > fast_body_max) return false;
    need += 3 + n;
    return true;
}

/// A str or bin body as a view into the input.
MPK_CPP_FAST_INLINE bool fast_body(const std::uint8_t *&p, const std::uint8_t *end, bool bin, std::uint32_t limit,
                      const std::uint8_t *&data, std::uint32_t &len) noexcept {
    if (p >= end) return false;
    std::uint8_t b = *p;
    std::size_t hl;
    std::uint32_t n;
    std::size_t left = static_cast<std::size_t>(end - p);
    if (!bin && b >= 0xa0 && b <= 0xbf) {
        hl = 1;
        n = b & 0x1fu;
    } else {
        std::uint8_t first = bin ? 0xc4 : 0xd9; // bin 8/16/32, str 8/16/32
        if (b < first || b > first + 2) return false;
        unsigned w = b - first;
        hl = std::size_t{1} + (std::size_t{1} << w); // 2, 3, 5
        if (left < hl) return false;
        n = w == 0 ? p[1] : w == 1 ? mpk__load16(p + 1) : mpk__load32(p + 1);
    }
    if (n > limit || n > left - hl) return false;
    data = p + hl;
    len = n;
    p += hl + n;
    return true;
}

template <>
struct fast_field<bytes_view> {
    static constexpr bool dec = true, enc = false, venc = true;
    static constexpr std::size_t max_size = 0;
    static constexpr std::uint32_t depth = 0;
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, bytes_view &v, const fast_ctx &c) noexcept {
        const std::uint8_t *data;
        std::uint32_t len;
        if (!fast_body(p, end, true, c.limits->bin, data, len)) return false;
        v = bytes_view(data, len);
        return true;
    }
    static bool measure(bytes_view v, std::size_t &need) noexcept { return fast_measure_body(v.size(), need); }
    static std::uint8_t *write(std::uint8_t *p, bytes_view v) noexcept { return fast_write_body(p, true, v.data(), v.size()); }
};

template <>
struct fast_field<std::string_view> {
    static constexpr bool dec = true, enc = false, venc = true;
    static constexpr std::size_t max_size = 0;
    static constexpr std::uint32_t depth = 0;
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, std::string_view &v, const fast_ctx &c) noexcept {
        if (c.flags & MPK_FLAG_STRICT_UTF8) return false; // the core checks the bytes
        const std::uint8_t *data;
        std::uint32_t len;
        if (!fast_body(p, end, false, c.limits->str, data, len)) return false;
        v = std::string_view(reinterpret_cast<const char *>(data), len);
        return true;
    }
    static bool measure(std::string_view v, std::size_t &need) noexcept { return fast_measure_body(v.size(), need); }
    static std::uint8_t *write(std::uint8_t *p, std::string_view v) noexcept { return fast_write_body(p, false, v.data(), v.size()); }
};

/// std::string: the str's body copied in, as the general path does. The one fast read that
/// allocates: std::bad_alloc passes through, with the reader unchanged.
template <>
struct fast_field<std::string> {
    static constexpr bool dec = true, enc = false, venc = true;
    static constexpr std::size_t max_size = 0;
    static constexpr std::uint32_t depth = 0;
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, std::string &v, const fast_ctx &c) {
        if (c.flags & MPK_FLAG_STRICT_UTF8) return false; // the core checks the bytes
        const std::uint8_t *data;
        std::uint32_t len;
        if (!fast_body(p, end, false, c.limits->str, data, len)) return false;
        v.assign(reinterpret_cast<const char *>(data), len);
        return true;
    }
    static bool measure(const std::string &v, std::size_t &need) noexcept { return fast_measure_body(v.size(), need); }
    static std::uint8_t *write(std::uint8_t *p, const std::string &v) noexcept { return fast_write_body(p, false, v.data(), v.size()); }
};

/// A std::array of 1 to 15 fast elements (not of bytes: that is a bin), as a fixarray of exactly N.
template <class T, std::size_t N>
struct fast_field<std::array<T, N>, std::enable_if_t<!std::is_same_v<T, std::byte> && !std::is_same_v<T, unsigned char> &&
                                                     (N >= 1 && N <= 15) && fast_field<T>::dec>> {
    using value_type = std::array<T, N>;
    static constexpr bool dec = true, enc = fast_field<T>::enc, venc = enc;
    static constexpr std::size_t max_size = enc ? 1 + N * fast_field<T>::max_size : 0;
    static constexpr std::uint32_t depth = 1 + fast_field<T>::depth;
    static bool read(const std::uint8_t *&p, const std::uint8_t *end, std::array<T, N> &v, const fast_ctx &c) {
        if (p >= end || *p != 0x90 + N || N > c.limits->array) return false;
        p++;
        for (T &e : v)
            if (!fast_field<T>::read(p, end, e, c)) return false;
        return true;
    }
    static std::uint8_t *write(std::uint8_t *p, const std::array<T, N> &v) noexcept {
        *p++ = static_cast<std::uint8_t>(0x90 + N);
        for (const T &e : v) p = fast_field<T>::write(p, e);
        return p;
    }
};

/// Sized encode: adds to `need` the room v takes at most; false when v must take the general path.
/// Types of a bounded encoding (enc) add their max_size; the others (venc only) measure themselves.
template <class T>
MPK_CPP_FAST_INLINE bool fast_measure(const T &v, std::size_t &need) noexcept {
    if constexpr (fast_field<T>::enc) {
        need += fast_field<T>::max_size;
        return true;
    } else {
        return fast_field<T>::measure(v, need);
    }
}

/// Element types of a vector the sized encode writes as a field: numbers, enums, strings and views.
/// Not structs: a struct may hold a vector of itself (a tree), and asking whether such a vector is
/// fast-writable would ask it of the struct again, before its answer is known.
template <class T>
inline constexpr bool fast_leaf_v = (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, unsigned char>) ||
                                    (std::is_enum_v<T> && !std::is_same_v<T, std::byte>) || std::is_same_v<T, std::string> ||
                                    std::is_same_v<T, std::string_view> || std::is_same_v<T, bytes_view>;

/// A std::vector of such elements (not of bytes: that is a bin; not of bool), as a field of a struct
/// written by the sized encode (encode only: vectors are read by their codec, codec.hpp).
template <class T, class A>
struct fast_field<std::vector<T, A>, std::enable_if_t<fast_leaf_v<T>>> {
    static constexpr bool dec = false, enc = false, venc = true;
    static constexpr std::size_t max_size = 0;
    static constexpr std::uint32_t depth = 0;
    static bool measure(const std::vector<T, A> &v, std::size_t &need) noexcept {
        if (v.size() > 0xffffffffu) return false;
        need += 5;
        if constexpr (fast_field<T>::enc) {
            need += v.size() * fast_field<T>::max_size;
            return true;
        } else {
            for (const T &e : v)
                if (!fast_field<T>::measure(e, need)) return false;
            return true;
        }
    }
    static std::uint8_t *write(std::uint8_t *p, const std::vector<T, A> &v) noexcept {
        const std::size_t n = v.size();
        if (n <= 15) {
            *p++ = static_cast<std::uint8_t>(0x90 | n);
        } else if (n <= 0xffff) {
            p[0] = 0xdc;
            mpk__store16(p + 1, static_cast<std::uint16_t>(n));
            p += 3;
        } else {
            p[0] = 0xdd;
            mpk__store32(p + 1, static_cast<std::uint32_t>(n));
            p += 5;
        }
        for (const T &e : v) p = fast_field<T>::write(p, e);
        return p;
    }
};

/// A described struct of at most 15 fields, every one fast itself (describe.hpp specializes
/// fast_field for described structs through fast_struct). Read: the array form (MPK_FIELDS /
/// MPK_DESCRIBE) only. Written: either form; the map form (MPK_FIELDS_MAP) as a fixmap whose keys
/// are fixstrs of the field names (names of at most 31 bytes), in the declared order, as the
/// general path writes them.
template <class T, class Fields, bool ArrayForm>
struct fast_struct {
    using value_type = T;
    using Tie = decltype(Fields::tie(std::declval<T &>()));
    using CTie = decltype(Fields::tie(std::declval<const T &>()));
    static constexpr std::size_t N = Fields::count;

    template <std::size_t... I>
    static constexpr bool all_dec(std::index_sequence<I...>) {
        return (fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::dec && ...);
    }
    template <std::size_t... I>
    static constexpr bool all_enc(std::index_sequence<I...>) {
        return (fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::enc && ...);
    }
    template <std::size_t... I>
    static constexpr bool all_venc(std::index_sequence<I...>) {
        return (fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::venc && ...);
    }
    /// The bytes of the head and the keys (map form: a fixstr per name; array form: none).
    static constexpr std::size_t keys_size() {
        std::size_t n = 1;
        if constexpr (!ArrayForm)
            for (std::string_view name : Fields::names()) n += 1 + name.size();
        return n;
    }
    static constexpr bool keys_ok() {
        if constexpr (!ArrayForm)
            for (std::string_view name : Fields::names())
                if (name.size() > 31) return false;
        return true;
    }
    template <std::size_t... I>
    static constexpr std::size_t sizes(std::index_sequence<I...>) {
        return (keys_size() + ... + fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::max_size);
    }
    template <std::size_t... I>
    static constexpr std::uint32_t inner_depth(std::index_sequence<I...>) {
        std::uint32_t d = 0;
        ((d = fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::depth > d
                  ? fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::depth
                  : d),
         ...);
        return d;
    }

    static constexpr bool shape_ok = ArrayForm && N >= 1 && N <= 15;
    static constexpr bool enc_shape_ok = N >= 1 && N <= 15 && keys_ok();
    static constexpr bool dec = shape_ok && all_dec(std::make_index_sequence<N>{});
    static constexpr bool enc = enc_shape_ok && all_enc(std::make_index_sequence<N>{});
    static constexpr bool venc = enc_shape_ok && all_venc(std::make_index_sequence<N>{});
    static constexpr std::size_t max_size = enc ? sizes(std::make_index_sequence<N>{}) : 0;
    static constexpr std::uint32_t depth = 1 + inner_depth(std::make_index_sequence<N>{});

    template <std::size_t... I>
    MPK_CPP_FAST_INLINE static bool read_fields(const std::uint8_t *&p, const std::uint8_t *end, Tie &t, const fast_ctx &c,
                            std::index_sequence<I...>) {
        return (fast_field<std::decay_t<std::tuple_element_t<I, Tie>>>::read(p, end, std::get<I>(t), c) && ...);
    }
    MPK_CPP_FAST_INLINE static bool read(const std::uint8_t *&p, const std::uint8_t *end, T &v, const fast_ctx &c) {
        if (p >= end || *p != 0x90 + N || N > c.limits->array) return false;
        p++;
        Tie t = Fields::tie(v);
        return read_fields(p, end, t, c, std::make_index_sequence<N>{});
    }

    /// Map form: the key of field I, a fixstr of its name (a constant: its copy is inlined).
    template <std::size_t I>
    static std::uint8_t *write_key(std::uint8_t *p) noexcept {
        if constexpr (!ArrayForm) {
            constexpr std::string_view name = Fields::names()[I];
            *p++ = static_cast<std::uint8_t>(0xa0 | name.size());
            std::memcpy(p, name.data(), name.size());
            p += name.size();
        }
        return p;
    }
    template <std::size_t... I>
    static std::uint8_t *write_fields(std::uint8_t *p, const CTie &t, std::index_sequence<I...>) noexcept {
        ((p = write_key<I>(p), p = fast_field<std::decay_t<std::tuple_element_t<I, CTie>>>::write(p, std::get<I>(t))), ...);
        return p;
    }
    static std::uint8_t *write(std::uint8_t *p, const T &v) noexcept {
        *p++ = static_cast<std::uint8_t>((ArrayForm ? 0x90 : 0x80) + N);
        if constexpr (ArrayForm && all_int(std::make_index_sequence<N>{})) {
            const CTie t = Fields::tie(v);
            if (fixint_lane(t, std::make_index_sequence<N>{})) return write_fixints(p, t, std::make_index_sequence<N>{});
        }
        return write_fields(p, Fields::tie(v), std::make_index_sequence<N>{});
    }

    /// fixint_lane: an array-form struct of integers whose every field is a fixint (0..127, or
    /// -32..-1 for a signed field) is written as its head and one byte per field, behind a single
    /// test: the fields are OR-ed together (unsigned ones as they are, which stays under 128 only if
    /// each is; signed ones offset by 32, which stays under 160 only if each is in -32..127). A miss
    /// (some field needs a longer form) takes write_fields, which picks each field's form.
    /// Why: Test1 {1, 2} took 25 instructions per message to encode, of which a compare, a branch
    /// and a register copy per field and a pointer step per field (callgrind, cpp/bench/
    /// callgrind.py); protobuf takes 99, and the bar is 5x protobuf's speed. Measured with
    /// encode_snapshot: 25 -> 20 (Test2: 30 -> 23). Tested against the general path on every
    /// integer boundary.
    template <std::size_t... I>
    static constexpr bool all_int(std::index_sequence<I...>) {
        return (int_field<std::decay_t<std::tuple_element_t<I, Tie>>>() && ...);
    }
    template <class V>
    static constexpr bool int_field() {
        return std::is_integral_v<V> && !std::is_same_v<V, bool>;
    }
    template <std::size_t... I>
    MPK_CPP_FAST_INLINE static bool fixint_lane(const CTie &t, std::index_sequence<I...>) noexcept {
        std::uint64_t u = 0, s = 0;
        auto add = [&](auto v) {
            if constexpr (std::is_signed_v<decltype(v)>) s |= static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) + 32;
            else u |= static_cast<std::uint64_t>(v);
        };
        (add(std::get<I>(t)), ...);
        return u < 128 && s < 160;
    }
    template <std::size_t... I>
    MPK_CPP_FAST_INLINE static std::uint8_t *write_fixints(std::uint8_t *p, const CTie &t, std::index_sequence<I...>) noexcept {
        ((p[I] = static_cast<std::uint8_t>(std::get<I>(t))), ...);
        return p + N;
    }
    template <std::size_t... I>
    static bool measure_fields(const CTie &t, std::size_t &need, std::index_sequence<I...>) noexcept {
        return (fast_measure(std::get<I>(t), need) && ...);
    }
    /// Sized encode (venc): the room v takes at most, added to `need`; false if a field is not fast
    /// (a body over fast_body_max, a vector over 2^32-1 elements).
    static bool measure(const T &v, std::size_t &need) noexcept {
        need += keys_size();
        return measure_fields(Fields::tie(v), need, std::make_index_sequence<N>{});
    }
};

/// After a fast struct of `size` bytes that ends at `next`: the core's stride prefetch
/// (mpk__prefetch_alike, c/include/mpk/common.h; a no-op but for GCC and Clang), which the core's
/// reader does after each long str/bin body and which the fast path, reading bodies itself, would
/// otherwise skip. Messages in a row are often alike (the seed's 8 KiB Test3/Test4 back to back):
/// the heads one, two and three sizes on are good guesses, and prefetching them overlaps the cache
/// and TLB miss each head would take; under 256 bytes it does nothing (the hardware prefetchers
/// cover that). Measured (cpp/bench, 2^15 Test3/Test4 of 8 KiB back to back, 268 MB, same process,
/// loaded 2-core machine, three runs each): decode 5.6-6.6 ms without, 2.9-4.3 ms with; 4.6-6.5x
/// protobuf's speed without, 8.0-9.3x with. Instructions: Test3 decode 57 -> 80 per message.
/// Out of line: inlined, its code made GCC 12 stop inlining the fast readers into the loop that
/// calls fast_decode (Test1 decode 38 -> 82 instructions); a call per struct of 256 bytes or more
/// costs nothing measurable. GCC's noipa, not noinline: GCC finds that the function has no effect
/// a program could observe (a prefetch has none) and drops the call unless told not to look.
#if defined(__clang__)
__attribute__((noinline))
#elif defined(__GNUC__)
__attribute__((noipa))
#endif
inline void prefetch_alike_out_of_line(const std::uint8_t *next, std::size_t size, const std::uint8_t *end) noexcept {
    mpk__prefetch_alike(next, size, end);
}
MPK_CPP_FAST_INLINE void prefetch_next_alike(const std::uint8_t *next, std::size_t size, const std::uint8_t *end) noexcept {
    if (size >= 256) prefetch_alike_out_of_line(next, size, end);
}

/// Decodes a whole fast struct at the reader's position, or changes nothing and returns false.
template <class F>
MPK_CPP_FAST_INLINE bool fast_decode(mpk_reader *r, typename F::value_type &v) {
    if (r->depth + F::depth > r->limits.depth) return false; // the general path reports it
    const std::uint8_t *start = r->pos, *p = start;
    if (!F::read(p, r->end, v, fast_ctx{&r->limits, r->flags})) return false;
    r->pos = p;
    mpk__reader_value_done(r); // the struct is one value of the enclosing container
    if constexpr (!(F::enc && F::max_size < 256)) // scalars only, and short: never 256 bytes
        prefetch_next_alike(p, static_cast<std::size_t>(p - start), r->end);
    return true;
}

/// Whether fast_encode copies the value into a local before writing it (encode_snapshot).
template <class T>
constexpr bool snapshot_fits_v = std::is_trivially_copyable_v<T> && sizeof(T) <= 64;

/// Encodes a fast struct when the buffer has room for its largest encoding; false otherwise.
///
/// encode_snapshot: a small trivially copyable value is first copied into a local, and written from
/// there. Why: the output is written through uint8_t *, which may alias anything, so after each byte
/// stored the compiler had to load the next field from the caller's object again (and the writer's
/// fields after the last one); a local whose address never escapes cannot be aliased, so every field
/// is loaded once, up front, into a register. With fixint_lane and the room check done on addresses
/// (callgrind, cpp/bench/callgrind.py, instructions per message): Test1 {1, 2} encode 25 -> 20,
/// Test2 {-1, -2} 30 -> 23. The portable path, for anything larger or not trivially copyable,
/// writes from the caller's object (the tests encode both kinds).
template <class F>
MPK_CPP_FAST_INLINE bool fast_encode(mpk_writer *w, const typename F::value_type &v) noexcept {
    using T = typename F::value_type;
    std::uint8_t *p = w->pos;
    // as addresses (pos + max_size > end): one instruction fewer than end - pos < max_size, and a
    // buffer never ends within max_size bytes of the top of the address space
    if (reinterpret_cast<std::uintptr_t>(p) + F::max_size > reinterpret_cast<std::uintptr_t>(w->end)) return false;
    if constexpr (snapshot_fits_v<T>) {
        const T snapshot = v; // encode_snapshot
        w->pos = F::write(p, snapshot);
    } else {
        w->pos = F::write(p, v);
    }
    return true;
}

/// Sized encode: a fast-writable value whose encoding is not bounded by its type (strs and bins of
/// at most fast_body_max bytes, vectors, structs holding them; venc), written here when the buffer
/// has room for what fast_measure finds it takes at most and the writer copies bodies (every output
/// but reference chunks, the only one that sets ref_threshold); false, with nothing written,
/// otherwise (the general path then writes it: longer bodies, growth, flushes, references, errors).
/// Why: the general path writes every field through the core with a room check each, and a str
/// field through a call when it is 128 bytes or more; table16's rows ([str, int, bool]) took 1,710
/// instructions to encode against msgpack-cxx's 1,355 (callgrind). Measured (callgrind,
/// cpp/bench/callgrind.py, instructions per message, with write_str_inline): table16 encode
/// 1,710 -> 1,076; c_strings 153,317 -> 111,866 (msgpack-cxx 121,198); the Go seed's Product (map
/// form) 459 -> 325; 100 Products 44,802 -> 29,255. encode_snapshot applies as in fast_encode
/// (structs of views are trivially copyable).
template <class F>
MPK_CPP_FAST_INLINE bool fast_encode_sized(mpk_writer *w, const typename F::value_type &v) noexcept {
    using T = typename F::value_type;
    if (w->ref_threshold != 0) return false;
    std::uint8_t *p = w->pos;
    if constexpr (snapshot_fits_v<T>) {
        const T snapshot = v; // encode_snapshot
        std::size_t need = 0;
        if (!F::measure(snapshot, need) || need > static_cast<std::size_t>(w->end - p)) return false;
        w->pos = F::write(p, snapshot);
    } else {
        std::size_t need = 0;
        if (!F::measure(v, need) || need > static_cast<std::size_t>(w->end - p)) return false;
        w->pos = F::write(p, v);
    }
    return true;
}

/// Elements from[0..count) of a container whose head was written, by the sized encode, one after
/// another for as long as each fits; returns how many were written (the caller writes the rest
/// through the general path).
template <class T>
std::size_t fast_encode_run_sized(mpk_writer *w, const T *from, std::size_t count) noexcept {
    using F = fast_field<T>;
    if (w->ref_threshold != 0) return 0;
    std::uint8_t *p = w->pos;
    const std::uint8_t *end = w->end;
    std::size_t k = 0;
    for (; k < count; k++) {
        std::size_t need = 0;
        if (!fast_measure(from[k], need) || need > static_cast<std::size_t>(end - p)) break;
        p = F::write(p, from[k]);
    }
    w->pos = p;
    return k;
}

/// One fast value (a scalar, a fast struct or std::array) at the reader's position, as one value of
/// the enclosing container; or nothing changed and false.
template <class T>
MPK_CPP_FAST_INLINE bool fast_decode_value(mpk_reader *r, T &v) {
    using F = fast_field<T>;
    if (F::depth && r->depth + F::depth > r->limits.depth) return false; // the general path reports it
    const std::uint8_t *p = r->pos;
    if (!F::read(p, r->end, v, fast_ctx{&r->limits, r->flags})) return false;
    r->pos = p;
    mpk__reader_value_done(r);
    return true;
}

/// Up to `count` elements of the array the reader is inside (its innermost open container, whose
/// head was read and which still owes at least `count` values) into out[0..count), one after
/// another, stopping at the first the fast path does not take. The position lives in a local
/// pointer and the container's count is settled once at the end. Returns how many were read; the
/// reader is where the first unread one starts (a general decode of it reports any error).
template <class T>
std::size_t fast_decode_run(mpk_reader *r, T *out, std::size_t count) {
    using F = fast_field<T>;
    if (F::depth && r->depth + F::depth > r->limits.depth) return 0;
    const std::uint8_t *p = r->pos, *end = r->end;
    const fast_ctx c{&r->limits, r->flags};
    std::size_t k = 0;
    for (; k < count; k++) {
        const std::uint8_t *q = p; // a read that gives up may have moved it: resume before that element
        if (!F::read(q, end, out[k], c)) break;
        p = q;
    }
    if (k) {
        r->pos = p;
        r->remaining -= k - 1; // the last one through value_done: it may close the array
        mpk__reader_value_done(r);
    }
    return k;
}

/// Elements from[0..count) of a container whose head was written, for as many as the buffer holds
/// at their largest encoding. Returns how many were written (the caller writes the rest through the
/// general path, which grows, flushes or fails).
template <class T>
std::size_t fast_encode_run(mpk_writer *w, const T *from, std::size_t count) noexcept {
    using F = fast_field<T>;
    std::size_t room = static_cast<std::size_t>(w->end - w->pos) / F::max_size;
    std::size_t k = count < room ? count : room;
    std::uint8_t *p = w->pos;
    for (std::size_t i = 0; i < k; i++) p = F::write(p, from[i]);
    w->pos = p;
    return k;
}

} // namespace detail
} // namespace mpk

#endif
