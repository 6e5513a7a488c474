// mpk/codec.hpp — mpk::codec<T>: how a C++ type is written and read, for the standard types.
//
// A codec is a struct with two static functions:
//
//     static void encode(mpk::writer &w, const T &v);   // write exactly one value
//     static bool decode(mpk::decoder &d, T &v);        // read exactly one value into v
//
// encode reports a value with no MessagePack form with w.fail(kind, detail); decode returns false
// on error after reporting it (d.type_error / d.fail, or the core's own error from d.next()).
// Specialize mpk::codec<YourType> for anything the macros of describe.hpp cannot describe.
//
// Mapping (decode accepts exactly what encode writes, plus the widenings noted):
//   bool ↔ bool; every integer type ↔ int (any family; a value outside the target type is
//   errc::type, never truncated); enums ↔ their underlying integer; float ↔ float 32 and double ↔
//   float 64 (decode also takes an int or the other float width when the value is exact);
//   std::string, std::string_view ↔ str; mpk::bytes_view, std::vector<std::byte / unsigned char>,
//   std::array<std::byte / unsigned char, N> ↔ bin (the array needs exactly N bytes);
//   std::vector<T>, std::array<T, N> ↔ array (std::array needs exactly N); std::map,
//   std::unordered_map ↔ map (a repeated key: the last one wins); std::optional<T> ↔ nil or T;
//   std::tuple, std::pair ↔ array of exactly their size; std::variant ↔ [index, value];
//   mpk::timestamp, std::chrono::time_point<system_clock, D>, std::chrono::duration ↔ timestamp
//   (a duration as the time since the epoch; decoding into a type that cannot hold the value
//   exactly is errc::type); mpk::ext ↔ ext; mpk::raw ↔ any one value, kept as its bytes.
#ifndef MPK_CPP_CODEC_HPP
#define MPK_CPP_CODEC_HPP

#include "decoder.hpp"
#include "error.hpp"
#include "fast.hpp"
#include "types.hpp"
#include "writer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace mpk {

namespace detail {

template <class T>
inline constexpr bool is_byte_v = std::is_same_v<T, std::byte> || std::is_same_v<T, unsigned char>;

/// "std::int8_t", "std::uint64_t", ... for error details.
template <class I>
std::string int_name() {
    if constexpr (std::is_same_v<I, char>) return "char";
    std::string s = std::is_signed_v<I> ? "std::int" : "std::uint";
    s += std::to_string(sizeof(I) * 8);
    s += "_t";
    return s;
}

inline bool tag_header(decoder &d, mpk_tag &t, std::size_t &at) {
    at = d.offset();
    return d.next(t);
}

inline void write_len_checked(writer &w, std::size_t n, const char *what) {
    if (n > 0xffffffffu) w.fail(errc::invalid_argument, std::string(what) + " of " + std::to_string(n) + " is over 2^32-1");
}

/// A map key as a path segment: strings and numbers as themselves, anything else by position.
template <class K>
std::string key_text(const K &k, std::size_t i) {
    if constexpr (std::is_convertible_v<const K &, std::string_view>) return std::string(std::string_view(k));
    else if constexpr (std::is_integral_v<K>) return std::to_string(k);
    else if constexpr (std::is_enum_v<K>) return std::to_string(static_cast<std::underlying_type_t<K>>(k));
    else return "#" + std::to_string(i);
}

/// False for types whose encoding cannot fail (integers, bools, floats, enums): containers and
/// structs skip the after-element check of writer::unwinding() for them, a load and a branch per
/// field that the compiler must redo after every byte store (a store through uint8_t * may alias
/// the writer). Not measured on its own (the shared machine was too loaded to resolve it); every
/// other type takes the general, tested path with the check.
template <class T>
inline constexpr bool may_fail_v = !(std::is_arithmetic_v<T> || std::is_enum_v<T>);

/// The stack guard (mpk/stack.hpp) is asked only where the codecs can recurse. A type can only
/// recurse through a struct (described or plain aggregate) or a codec of the user's own: standard
/// containers alone cannot form a cycle. is_leaf: types that hold no struct or user type (numbers,
/// enums, strings, views, bins, timestamps, ext, raw, and standard containers, optionals, tuples
/// and variants of such); a struct whose fields are all leaves skips the guard. guards_itself:
/// leaves, structs (their codec asks the guard) and standard containers (theirs decide for their
/// elements); a container codec asks the guard only for elements of another type (a user codec
/// that may recurse through it). Why not a guard in every codec: each one costs a thread_local load
/// and a compare, and callgrind showed them on structs of leaves (cpp/README.md, "The stack guard").
template <class T>
struct is_leaf : std::bool_constant<std::is_arithmetic_v<T> || std::is_enum_v<T>> {};
template <class T, class = void>
struct guards_itself : is_leaf<T> {};
template <class T>
inline constexpr bool guards_itself_v = guards_itself<T>::value;
template <class T>
inline constexpr bool is_leaf_v = is_leaf<T>::value;
/// True when every one of Ts is a leaf.
template <class... Ts>
inline constexpr bool all_leaves_v = (is_leaf_v<Ts> && ...);
/// True when every element of a std::tie tuple (a struct's fields) is a leaf.
template <class Tie, std::size_t... I>
constexpr bool tie_leaves(std::index_sequence<I...>) {
    return all_leaves_v<std::decay_t<std::tuple_element_t<I, Tie>>...>;
}
} // namespace detail

namespace detail {
template <>
struct is_leaf<std::string> : std::true_type {};
template <>
struct is_leaf<std::string_view> : std::true_type {};
template <>
struct is_leaf<bytes_view> : std::true_type {};
template <>
struct is_leaf<timestamp> : std::true_type {};
template <>
struct is_leaf<ext> : std::true_type {};
template <>
struct is_leaf<raw> : std::true_type {};
template <class T, class A>
struct is_leaf<std::vector<T, A>> : is_leaf<T> {};
template <class T, std::size_t N>
struct is_leaf<std::array<T, N>> : is_leaf<T> {};
template <class T>
struct is_leaf<std::optional<T>> : is_leaf<T> {};
template <class K, class V, class C, class A>
struct is_leaf<std::map<K, V, C, A>> : std::bool_constant<is_leaf_v<K> && is_leaf_v<V>> {};
template <class K, class V, class H, class E, class A>
struct is_leaf<std::unordered_map<K, V, H, E, A>> : std::bool_constant<is_leaf_v<K> && is_leaf_v<V>> {};
template <class... T>
struct is_leaf<std::tuple<T...>> : std::bool_constant<all_leaves_v<T...>> {};
template <class A, class B>
struct is_leaf<std::pair<A, B>> : std::bool_constant<is_leaf_v<A> && is_leaf_v<B>> {};
template <class... T>
struct is_leaf<std::variant<T...>> : std::bool_constant<all_leaves_v<T...>> {};
template <class T, class A>
struct guards_itself<std::vector<T, A>> : std::true_type {};
template <class T, std::size_t N>
struct guards_itself<std::array<T, N>> : std::true_type {};
template <class T>
struct guards_itself<std::optional<T>> : std::true_type {};
template <class K, class V, class C, class A>
struct guards_itself<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A>
struct guards_itself<std::unordered_map<K, V, H, E, A>> : std::true_type {};
template <class... T>
struct guards_itself<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct guards_itself<std::pair<A, B>> : std::true_type {};
template <class... T>
struct guards_itself<std::variant<T...>> : std::true_type {};
/// True when every one of Ts guards itself.
template <class... Ts>
inline constexpr bool all_guard_themselves_v = (guards_itself_v<Ts> && ...);
} // namespace detail

// ---- bool -------------------------------------------------------------------------------------
template <>
struct codec<bool> {
    static void encode(writer &w, bool v) { mpk_write_bool(w.c(), v); }
    static bool decode(decoder &d, bool &v) {
        std::size_t at = 0;
        mpk_tag t;
        if (!detail::tag_header(d, t, at)) return false;
        if (t.type == MPK_BOOL) {
            v = t.v.b != 0;
            return true;
        }
        return d.type_error(at, describe_tag(t), "bool");
    }
};

// ---- integers -----------------------------------------------------------------------------------
template <class I>
struct codec<I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>> {
    static void encode(writer &w, I v) {
        if constexpr (std::is_signed_v<I>) mpk_write_int(w.c(), static_cast<std::int64_t>(v));
        else mpk_write_uint(w.c(), static_cast<std::uint64_t>(v));
    }
    static bool decode(decoder &d, I &v) {
        std::size_t at = 0;
        mpk_tag t;
        if (!detail::tag_header(d, t, at)) return false;
        if (t.type == MPK_UINT) {
            if (t.v.u <= static_cast<std::uint64_t>(std::numeric_limits<I>::max())) {
                v = static_cast<I>(t.v.u);
                return true;
            }
        } else if (t.type == MPK_INT) {
            if constexpr (std::is_signed_v<I>) {
                if (t.v.i >= static_cast<std::int64_t>(std::numeric_limits<I>::min())) {
                    v = static_cast<I>(t.v.i);
                    return true;
                }
            }
        }
        return d.type_error(at, describe_tag(t), detail::int_name<I>());
    }
};

// ---- enums --------------------------------------------------------------------------------------
template <class E>
struct codec<E, std::enable_if_t<std::is_enum_v<E>>> {
    using U = std::underlying_type_t<E>;
    static void encode(writer &w, E v) { codec<U>::encode(w, static_cast<U>(v)); }
    static bool decode(decoder &d, E &v) {
        U u{};
        if (!codec<U>::decode(d, u)) return false;
        v = static_cast<E>(u);
        return true;
    }
};

// ---- floats -------------------------------------------------------------------------------------
namespace detail {
/// An integer tag as F when the conversion is exact.
template <class F>
bool exact_from_int(const mpk_tag &t, F &out) {
    if (t.type == MPK_UINT) {
        F f = static_cast<F>(t.v.u);
        if (f < static_cast<F>(18446744073709551616.0) && static_cast<std::uint64_t>(f) == t.v.u) {
            out = f;
            return true;
        }
    } else {
        F f = static_cast<F>(t.v.i);
        if (static_cast<std::int64_t>(f) == t.v.i) { // every negative int64 converts inside range
            out = f;
            return true;
        }
    }
    return false;
}
} // namespace detail

template <>
struct codec<float> {
    static void encode(writer &w, float v) { mpk_write_float32(w.c(), v); }
    static bool decode(decoder &d, float &v) {
        std::size_t at = 0;
        mpk_tag t;
        if (!detail::tag_header(d, t, at)) return false;
        switch (t.type) {
        case MPK_FLOAT32: v = t.v.f32; return true;
        case MPK_FLOAT64:
            if (std::isnan(t.v.f64) || static_cast<double>(static_cast<float>(t.v.f64)) == t.v.f64) {
                v = static_cast<float>(t.v.f64);
                return true;
            }
            return d.type_error(at, "float64 " + std::to_string(t.v.f64), "float (not exact)");
        case MPK_UINT:
        case MPK_INT:
            if (detail::exact_from_int(t, v)) return true;
            break;
        default: break;
        }
        return d.type_error(at, describe_tag(t), "float");
    }
};

template <>
struct codec<double> {
    static void encode(writer &w, double v) { mpk_write_float64(w.c(), v); }
    static bool decode(decoder &d, double &v) {
        std::size_t at = 0;
        mpk_tag t;
        if (!detail::tag_header(d, t, at)) return false;
        switch (t.type) {
        case MPK_FLOAT64: v = t.v.f64; return true;
        case MPK_FLOAT32: v = static_cast<double>(t.v.f32); return true;
        case MPK_UINT:
        case MPK_INT:
            if (detail::exact_from_int(t, v)) return true;
            break;
        default: break;
        }
        return d.type_error(at, describe_tag(t), "double");
    }
};

// ---- strings ------------------------------------------------------------------------------------
namespace detail {
/// write_str_inline: a str of 128 to 1023 bytes (str 8, str 16) written here, head and body, when
/// the buffer has room for both and the writer copies bodies (every output but reference chunks,
/// the only one that sets ref_threshold). Returns false, having written nothing, otherwise.
/// Why: the core's inline mpk_write_str (shorter strs) stops at 127 bytes and calls out of line for
/// longer ones, where a call, a mode check and a length-class switch come before the same memcpy;
/// msgpack-cxx appends the same bytes to its sbuffer inline. Measured (callgrind,
/// cpp/bench/callgrind.py, instructions per message, with the sized encode of fast.hpp, which
/// writes the strs of vectors and structs itself): c_strings (strs of 0..1023 bytes) encode
/// 153,317 -> 111,866, msgpack-cxx's 121,198. Bodies of
/// 1 KiB and more stay with the core, which copies them with streaming stores far into a large
/// output. The portable path is the core's mpk_write_str (MPK_CPP_NO_FAST_PATH builds use it
/// alone; the tests compare both outputs byte for byte at every length class and in every mode).
MPK_CPP_FAST_INLINE bool write_str_inline(mpk_writer *w, const char *s, std::size_t n) noexcept {
    std::uint8_t *p = w->pos;
    if (n < 128 || n > 1023 || w->ref_threshold != 0 || static_cast<std::size_t>(w->end - p) < n + 3) return false;
    if (n <= 0xff) {
        p[0] = 0xd9;
        p[1] = static_cast<std::uint8_t>(n);
        p += 2;
    } else {
        p[0] = 0xda;
        mpk__store16(p + 1, static_cast<std::uint16_t>(n));
        p += 3;
    }
    std::memcpy(p, s, n);
    w->pos = p + n;
    return true;
}

/// A str (head16 0xda) or bin (0xc5) body of 1 KiB or more, 4 MiB or more into a growable, fixed,
/// flush or caller-grown output, head and body, through stream_body_avx2 (writer.hpp) when the CPU
/// has AVX2: where the core would copy it with SSE2 streaming stores (the same thresholds,
/// c/src/writer.c STREAM_MIN_BODY and STREAM_MIN_OFFSET), with the same bytes. False, having
/// written nothing, otherwise (reference chunks, no room, an error: the core decides).
MPK_CPP_FAST_INLINE bool write_body_streaming(mpk_writer *w, std::uint8_t head16, const void *data, std::size_t n) noexcept {
#ifdef MPK_CPP_STREAM_AVX2
    constexpr std::size_t min_body = 1024, min_offset = std::size_t{4} << 20;
    std::uint8_t *p = w->pos;
    if (n < min_body || n > 0xffffffffu || w->ref_threshold != 0 || static_cast<std::size_t>(w->end - p) < n + 5 ||
        static_cast<std::size_t>(p - w->buf) < min_offset || !cpu_has_avx2())
        return false;
    if (n <= 0xffff) {
        p[0] = head16;
        mpk__store16(p + 1, static_cast<std::uint16_t>(n));
        p += 3;
    } else {
        p[0] = static_cast<std::uint8_t>(head16 + 1); // str 32 / bin 32 follow str 16 / bin 16
        mpk__store32(p + 1, static_cast<std::uint32_t>(n));
        p += 5;
    }
    stream_body_avx2(p, static_cast<const std::uint8_t *>(data), n);
    w->pos = p + n;
    return true;
#else
    (void)w;
    (void)head16;
    (void)data;
    (void)n;
    return false;
#endif
}

inline void write_str(writer &w, std::string_view s) {
#ifndef MPK_CPP_NO_FAST_PATH
    if (write_str_inline(w.c(), s.data(), s.size())) return;
    if (write_body_streaming(w.c(), 0xda, s.data(), s.size())) return;
#endif
    if (s.size() > 0xffffffffu) return write_len_checked(w, s.size(), "string");
    mpk_write_str(w.c(), s.data(), s.size());
}
inline bool read_str(decoder &d, std::string_view &s, std::string_view wanted) {
    std::size_t at = 0;
    mpk_tag t;
    if (!tag_header(d, t, at)) return false;
    if (t.type != MPK_STR) return d.type_error(at, describe_tag(t), wanted);
    s = std::string_view(reinterpret_cast<const char *>(t.data), t.len);
    return true;
}
inline void write_bin(writer &w, const void *p, std::size_t n) {
#ifndef MPK_CPP_NO_FAST_PATH
    if (write_body_streaming(w.c(), 0xc5, p, n)) return;
#endif
    if (n > 0xffffffffu) return write_len_checked(w, n, "byte string");
    mpk_write_bin(w.c(), p, n);
}
inline bool read_bin(decoder &d, bytes_view &b, std::string_view wanted) {
    std::size_t at = 0;
    mpk_tag t;
    if (!tag_header(d, t, at)) return false;
    if (t.type != MPK_BIN) return d.type_error(at, describe_tag(t), wanted);
    b = bytes_view(t.data, t.len);
    return true;
}
} // namespace detail

template <>
struct codec<std::string> {
    static void encode(writer &w, const std::string &v) { detail::write_str(w, v); }
    static bool decode(decoder &d, std::string &v) {
        std::string_view s;
        if (!detail::read_str(d, s, "std::string")) return false;
        v.assign(s.data(), s.size());
        return true;
    }
};

/// Zero-copy: the view points into the input.
template <>
struct codec<std::string_view> {
    static void encode(writer &w, std::string_view v) { detail::write_str(w, v); }
    static bool decode(decoder &d, std::string_view &v) { return detail::read_str(d, v, "std::string_view"); }
};

/// Encode only: a NUL-terminated string as str (nullptr as nil).
template <>
struct codec<const char *> {
    static void encode(writer &w, const char *v) {
        if (v) detail::write_str(w, v);
        else mpk_write_nil(w.c());
    }
};

/// Encode only: a char array as the str of its characters up to the first NUL (a string literal).
template <std::size_t N>
struct codec<char[N]> {
    static void encode(writer &w, const char (&v)[N]) {
        std::size_t n = 0;
        while (n < N && v[n]) n++;
        detail::write_str(w, std::string_view(v, n));
    }
};

// ---- binary -------------------------------------------------------------------------------------
/// Zero-copy: the view points into the input.
template <>
struct codec<bytes_view> {
    static void encode(writer &w, bytes_view v) { detail::write_bin(w, v.data(), v.size()); }
    static bool decode(decoder &d, bytes_view &v) { return detail::read_bin(d, v, "mpk::bytes_view"); }
};

template <class B, class A>
struct codec<std::vector<B, A>, std::enable_if_t<detail::is_byte_v<B>>> {
    static void encode(writer &w, const std::vector<B, A> &v) { detail::write_bin(w, v.data(), v.size()); }
    static bool decode(decoder &d, std::vector<B, A> &v) {
        bytes_view b;
        if (!detail::read_bin(d, b, detail::type_name_v<std::vector<B, A>>)) return false;
        const B *p = reinterpret_cast<const B *>(b.data());
        v.assign(p, p + b.size());
        return true;
    }
};

template <class B, std::size_t N>
struct codec<std::array<B, N>, std::enable_if_t<detail::is_byte_v<B>>> {
    static void encode(writer &w, const std::array<B, N> &v) { detail::write_bin(w, v.data(), N); }
    static bool decode(decoder &d, std::array<B, N> &v) {
        std::size_t at = d.offset();
        bytes_view b;
        if (!detail::read_bin(d, b, "byte array")) return false;
        if (b.size() != N)
            return d.type_error(at, "bin of " + std::to_string(b.size()) + " bytes",
                                "std::array of " + std::to_string(N) + " bytes");
        if (N) std::memcpy(v.data(), b.data(), N);
        return true;
    }
};

// ---- arrays -------------------------------------------------------------------------------------
namespace detail {
inline bool read_array(decoder &d, std::uint32_t &n, std::size_t &at, std::string_view wanted) {
    mpk_tag t;
    if (!tag_header(d, t, at)) return false;
    if (t.type != MPK_ARRAY) return d.type_error(at, describe_tag(t), wanted);
    n = t.len;
    return true;
}
inline bool read_array_of(decoder &d, std::uint32_t want, std::string_view wanted) {
    std::uint32_t n = 0;
    std::size_t at = 0;
    if (!read_array(d, n, at, wanted)) return false;
    if (n != want) return d.type_error(at, "array of " + std::to_string(n), wanted);
    return true;
}
} // namespace detail

template <class T, class A>
struct codec<std::vector<T, A>, std::enable_if_t<!detail::is_byte_v<T>>> {
    /// Elements the fast path (fast.hpp) reads: in runs when they are plain data, one at a time
    /// (strings, structs holding strings) otherwise; and writes in runs when their encoding is bounded.
#ifndef MPK_CPP_NO_FAST_PATH
    static constexpr bool fast_dec = detail::fast_field<T>::dec && !std::is_same_v<T, bool>;
    static constexpr bool fast_enc = detail::fast_field<T>::enc && !std::is_same_v<T, bool>;
    /// Elements of an unbounded encoding (strs, structs holding strs) by the sized encode.
    static constexpr bool fast_venc = !fast_enc && detail::fast_field<T>::venc && !std::is_same_v<T, bool>;
#else
    static constexpr bool fast_dec = false, fast_enc = false, fast_venc = false;
#endif
    static constexpr bool run_dec = fast_dec && std::is_trivially_copyable_v<T>;

    static void encode(writer &w, const std::vector<T, A> &v) { encode_impl<fast_enc || fast_venc>(w, v); }
    /// The general path alone: every element through its codec (the tests compare both).
    static void encode_general(writer &w, const std::vector<T, A> &v) { encode_impl<false>(w, v); }

    /// Elements already in the vector are reused (first reset by copy-assigning a default T, which
    /// keeps the memory of their strings and vectors: a vector of 100 Products decoded again and
    /// again allocates nothing once warm); the result is the same as decoding into fresh elements.
    static constexpr bool reuse = std::is_class_v<T> && std::is_copy_assignable_v<T> &&
                                  std::is_default_constructible_v<T> && !std::is_trivially_copyable_v<T>;

    static bool decode(decoder &d, std::vector<T, A> &v) { return decode_impl<fast_dec>(d, v); }
    /// The general path alone (the elements' own codecs may still take theirs).
    static bool decode_general(decoder &d, std::vector<T, A> &v) { return decode_impl<false>(d, v); }

private:
    template <bool Fast>
    static void encode_impl(writer &w, const std::vector<T, A> &v) {
        if constexpr (!detail::guards_itself_v<T>)
            if (!w.enter()) return;
        if (v.size() > 0xffffffffu) return detail::write_len_checked(w, v.size(), "vector");
        mpk_write_array(w.c(), static_cast<std::uint32_t>(v.size()));
        for (std::size_t i = 0; i < v.size(); i++) {
            if constexpr (Fast && fast_enc) {
                i += detail::fast_encode_run(w.c(), v.data() + i, v.size() - i);
                if (i == v.size()) break;
            } else if constexpr (Fast && fast_venc) {
                i += detail::fast_encode_run_sized(w.c(), v.data() + i, v.size() - i);
                if (i == v.size()) break;
            }
            codec<T>::encode(w, v[i]);
            if constexpr (detail::may_fail_v<T>)
                if (w.unwinding()) return w.path().index(i);
        }
    }

    template <bool Fast>
    static bool decode_impl(decoder &d, std::vector<T, A> &v) {
        if constexpr (!detail::guards_itself_v<T>)
            if (!d.enter()) return false;
        std::uint32_t n = 0;
        std::size_t at = 0;
        if (!detail::read_array(d, n, at, "std::vector")) return false;
        std::uint32_t i = 0;
        [[maybe_unused]] const bool fast = Fast && !d.from_nodes(); // DOM nodes: no bytes to read
        if constexpr (reuse) {
            if (v.size() > n) v.erase(v.begin() + n, v.end());
            if (!v.empty()) {
                const T fresh{};
                for (; i < v.size(); i++) {
                    if (!d.charge(sizeof(T), at)) return false;
                    // a fast read writes every field of the element (or gives up): no reset first
                    if constexpr (Fast)
                        if (fast && detail::fast_decode_value(d.c(), v[i])) continue;
                    v[i] = fresh;
                    if (!codec<T>::decode(d, v[i])) return d.in_index(i);
                }
            }
        } else {
            v.clear();
        }
        if (i < n) v.reserve(i + d.reserve_count(n - i, sizeof(T)));
        [[maybe_unused]] bool runs = fast;
        for (; i < n; i++) {
            if constexpr (Fast && run_dec) {
                // A run into the room already reserved, within the allocation budget, charged for
                // what it read. The element after the room goes one at a time below (it grows the
                // vector), then runs go on; after an element the fast path did not take, the rest go
                // one at a time (a run that stops early costs the resize of its room).
                if (runs) {
                    std::size_t m = std::min<std::size_t>({n - i, v.capacity() - v.size(), d.affordable(sizeof(T))});
                    if (m) {
                        std::size_t base = v.size();
                        v.resize(base + m);
                        std::size_t k = detail::fast_decode_run(d.c(), v.data() + base, m);
                        v.resize(base + k);
                        d.charge(k * sizeof(T), at); // within the budget: affordable
                        i += static_cast<std::uint32_t>(k);
                        if (i == n) break;
                        if (k < m) runs = false;
                    }
                }
            }
            // every element is charged to the decode's allocation budget: a nil takes one input byte
            // but may fill an element of any size (std::optional<std::array<char, 4096>>)
            if (!d.charge(sizeof(T), at)) return false;
            if constexpr (std::is_same_v<T, bool>) {
                bool b = false;
                if (!codec<bool>::decode(d, b)) return d.in_index(i);
                v.push_back(b);
            } else {
                v.emplace_back();
                if constexpr (Fast)
                    if (fast && detail::fast_decode_value(d.c(), v.back())) continue;
                if (!codec<T>::decode(d, v.back())) return d.in_index(i);
            }
        }
        return true;
    }
};

template <class T, std::size_t N>
struct codec<std::array<T, N>, std::enable_if_t<!detail::is_byte_v<T>>> {
#ifndef MPK_CPP_NO_FAST_PATH
    static constexpr bool fast_dec = detail::fast_field<std::array<T, N>>::dec;
    static constexpr bool fast_enc = detail::fast_field<std::array<T, N>>::enc;
#else
    static constexpr bool fast_dec = false, fast_enc = false;
#endif
    static void encode(writer &w, const std::array<T, N> &v) {
        if constexpr (fast_enc)
            if (detail::fast_encode<detail::fast_field<std::array<T, N>>>(w.c(), v)) return;
        encode_general(w, v);
    }
    static void encode_general(writer &w, const std::array<T, N> &v) {
        if constexpr (!detail::guards_itself_v<T>)
            if (!w.enter()) return;
        mpk_write_array(w.c(), static_cast<std::uint32_t>(N));
        for (std::size_t i = 0; i < N; i++) {
            codec<T>::encode(w, v[i]);
            if constexpr (detail::may_fail_v<T>)
                if (w.unwinding()) return w.path().index(i);
        }
    }
    static bool decode(decoder &d, std::array<T, N> &v) {
        if constexpr (fast_dec)
            if (detail::fast_decode_value(d.c(), v)) return true;
        return decode_general(d, v);
    }
    static bool decode_general(decoder &d, std::array<T, N> &v) {
        if constexpr (!detail::guards_itself_v<T>)
            if (!d.enter()) return false;
        if (!detail::read_array_of(d, static_cast<std::uint32_t>(N), "std::array of " + std::to_string(N)))
            return false;
        for (std::size_t i = 0; i < N; i++)
            if (!codec<T>::decode(d, v[i])) return d.in_index(i);
        return true;
    }
};

// ---- maps ---------------------------------------------------------------------------------------
namespace detail {
template <class M>
struct map_codec {
    using K = typename M::key_type;
    using V = typename M::mapped_type;
    static void encode(writer &w, const M &m) {
        if constexpr (!all_guard_themselves_v<K, V>)
            if (!w.enter()) return;
        if (m.size() > 0xffffffffu) return write_len_checked(w, m.size(), "map");
        mpk_write_map(w.c(), static_cast<std::uint32_t>(m.size()));
        std::size_t i = 0;
        for (const auto &kv : m) {
            codec<K>::encode(w, kv.first);
            if (w.unwinding()) return w.path().index(i);
            codec<V>::encode(w, kv.second);
            if (w.unwinding()) return w.path().key(key_text(kv.first, i));
            i++;
        }
    }
    static bool decode(decoder &d, M &m) {
        if constexpr (!all_guard_themselves_v<K, V>)
            if (!d.enter()) return false;
        std::size_t at = 0;
        mpk_tag t;
        if (!tag_header(d, t, at)) return false;
        if (t.type != MPK_MAP) return d.type_error(at, describe_tag(t), "map");
        m.clear();
        for (std::uint32_t i = 0; i < t.len; i++) {
            if (!d.charge(sizeof(typename M::value_type) + 2 * sizeof(void *), at)) return false; // a node per pair
            K k{};
            if (!codec<K>::decode(d, k)) return d.in_index(i);
            V v{};
            if (!codec<V>::decode(d, v)) return d.in_key(key_text(k, i));
            m.insert_or_assign(std::move(k), std::move(v));
        }
        return true;
    }
};
} // namespace detail

template <class K, class V, class C, class A>
struct codec<std::map<K, V, C, A>> : detail::map_codec<std::map<K, V, C, A>> {};
template <class K, class V, class H, class E, class A>
struct codec<std::unordered_map<K, V, H, E, A>> : detail::map_codec<std::unordered_map<K, V, H, E, A>> {};

// ---- optional -----------------------------------------------------------------------------------
template <class T>
struct codec<std::optional<T>> {
    static void encode(writer &w, const std::optional<T> &v) {
        if (v) codec<T>::encode(w, *v);
        else mpk_write_nil(w.c());
    }
    static bool decode(decoder &d, std::optional<T> &v) {
        if (d.peek() == 0xc0) {
            mpk_tag t;
            if (!d.next(t)) return false;
            v.reset();
            return true;
        }
        if (!v) v.emplace();
        return codec<T>::decode(d, *v);
    }
};

// ---- tuple, pair --------------------------------------------------------------------------------
namespace detail {
template <class Tuple, std::size_t... I>
void encode_tuple(writer &w, const Tuple &t, std::index_sequence<I...>) {
    if constexpr (!all_guard_themselves_v<std::decay_t<std::tuple_element_t<I, Tuple>>...>)
        if (!w.enter()) return;
    mpk_write_array(w.c(), static_cast<std::uint32_t>(sizeof...(I)));
    (void)((codec<std::decay_t<std::tuple_element_t<I, Tuple>>>::encode(w, std::get<I>(t)),
            w.unwinding() ? (w.path().index(I), false) : true) && ...);
}
template <class Tuple, std::size_t... I>
bool decode_tuple(decoder &d, Tuple &t, std::index_sequence<I...>) {
    if constexpr (!all_guard_themselves_v<std::decay_t<std::tuple_element_t<I, Tuple>>...>)
        if (!d.enter()) return false;
    if (!read_array_of(d, static_cast<std::uint32_t>(sizeof...(I)),
                       "tuple of " + std::to_string(sizeof...(I))))
        return false;
    return ((codec<std::decay_t<std::tuple_element_t<I, Tuple>>>::decode(d, std::get<I>(t)) ||
             d.in_index(I)) && ...);
}
} // namespace detail

template <class... T>
struct codec<std::tuple<T...>> {
    static void encode(writer &w, const std::tuple<T...> &v) {
        detail::encode_tuple(w, v, std::index_sequence_for<T...>{});
    }
    static bool decode(decoder &d, std::tuple<T...> &v) {
        return detail::decode_tuple(d, v, std::index_sequence_for<T...>{});
    }
};

template <class A, class B>
struct codec<std::pair<A, B>> {
    static void encode(writer &w, const std::pair<A, B> &v) {
        detail::encode_tuple(w, v, std::make_index_sequence<2>{});
    }
    static bool decode(decoder &d, std::pair<A, B> &v) {
        return detail::decode_tuple(d, v, std::make_index_sequence<2>{});
    }
};

// ---- variant: [index, value] --------------------------------------------------------------------
template <class... T>
struct codec<std::variant<T...>> {
    using V = std::variant<T...>;
    static void encode(writer &w, const V &v) {
        if (v.valueless_by_exception()) return w.fail(errc::invalid_argument, "valueless std::variant");
        if constexpr (!detail::all_guard_themselves_v<T...>)
            if (!w.enter()) return;
        mpk_write_array(w.c(), 2);
        mpk_write_uint(w.c(), v.index());
        std::visit([&w](const auto &x) { codec<std::decay_t<decltype(x)>>::encode(w, x); }, v);
        if (w.unwinding()) w.path().index(1);
    }
    static bool decode(decoder &d, V &v) {
        if constexpr (!detail::all_guard_themselves_v<T...>)
            if (!d.enter()) return false;
        if (!detail::read_array_of(d, 2, "std::variant ([index, value])")) return false;
        std::size_t at = d.offset();
        std::uint64_t index = 0;
        if (!codec<std::uint64_t>::decode(d, index)) return d.in_index(0);
        if (index >= sizeof...(T)) {
            d.type_error(at, "index " + std::to_string(index),
                         "std::variant of " + std::to_string(sizeof...(T)) + " alternatives");
            return d.in_index(0);
        }
        return decode_at(d, v, static_cast<std::size_t>(index), std::index_sequence_for<T...>{}) || d.in_index(1);
    }

private:
    template <std::size_t I>
    static bool decode_one(decoder &d, V &v) {
        using A = std::variant_alternative_t<I, V>;
        A &a = v.template emplace<I>();
        return codec<A>::decode(d, a);
    }
    template <std::size_t... I>
    static bool decode_at(decoder &d, V &v, std::size_t index, std::index_sequence<I...>) {
        bool ok = false;
        (void)((index == I ? (ok = decode_one<I>(d, v), true) : false) || ...);
        return ok;
    }
};

// ---- timestamp, ext, raw ------------------------------------------------------------------------
template <>
struct codec<timestamp> {
    static void encode(writer &w, const timestamp &v) {
        if (v.nsec > 999999999u)
            return w.fail(errc::invalid_timestamp, "nsec " + std::to_string(v.nsec) + " is over 999999999");
        mpk_write_timestamp(w.c(), v.sec, v.nsec);
    }
    static bool decode(decoder &d, timestamp &v) {
        std::size_t at = 0;
        mpk_tag t;
        if (!detail::tag_header(d, t, at)) return false;
        if (t.type != MPK_TIMESTAMP) return d.type_error(at, describe_tag(t), "mpk::timestamp");
        v.sec = t.v.ts.sec;
        v.nsec = t.v.ts.nsec;
        return true;
    }
};

template <>
struct codec<ext> {
    static void encode(writer &w, const ext &v) {
        if (v.data.size() > 0xffffffffu) return detail::write_len_checked(w, v.data.size(), "ext payload");
        if (v.type == -1 && !valid_timestamp_payload(v.data))
            return w.fail(errc::invalid_timestamp, "ext -1 payload is not a valid timestamp");
        mpk_write_ext(w.c(), v.type, v.data.data(), v.data.size());
    }
    static bool decode(decoder &d, ext &v) {
        std::size_t at = 0;
        mpk_tag t;
        if (!detail::tag_header(d, t, at)) return false;
        if (t.type == MPK_EXT) v.type = t.ext_type;
        else if (t.type == MPK_TIMESTAMP && d.from_nodes()) return d.needs_bytes(at); // no payload bytes in a node
        else if (t.type == MPK_TIMESTAMP) v.type = -1;
        else return d.type_error(at, describe_tag(t), "mpk::ext");
        v.data = bytes_view(t.data, t.len);
        return true;
    }

private:
    static bool valid_timestamp_payload(bytes_view p) {
        if (p.size() == 4) return true;
        if (p.size() == 8) return (mpk__load64(p.udata()) >> 34) <= 999999999u;
        if (p.size() == 12) return mpk__load32(p.udata()) <= 999999999u;
        return false;
    }
};

/// Any one value, kept as its bytes (zero-copy).
template <>
struct codec<raw> {
    static void encode(writer &w, const raw &v) { mpk_write_bytes(w.c(), v.bytes.data(), v.bytes.size()); }
    static bool decode(decoder &d, raw &v) {
        std::size_t at = d.offset();
        if (d.from_nodes()) return d.needs_bytes(at);
        if (!d.skip()) return false;
        v.bytes = bytes_view(d.input() + at, d.offset() - at);
        return true;
    }
};

// ---- std::chrono --------------------------------------------------------------------------------
namespace detail {
/// A duration since the epoch as a timestamp. False when the seconds do not fit int64.
template <class Rep, class Period>
bool duration_to_timestamp(std::chrono::duration<Rep, Period> dur, timestamp &ts) {
    static_assert(std::is_integral_v<Rep>, "mpk: only integral std::chrono durations map to timestamps");
    using P = typename Period::type;
    constexpr std::int64_t num = P::num, den = P::den;
    Rep c = dur.count();
    if constexpr (std::is_unsigned_v<Rep>) {
        if (static_cast<std::uint64_t>(c) > static_cast<std::uint64_t>(INT64_MAX)) return false;
    }
    std::int64_t n = static_cast<std::int64_t>(c);
    if constexpr (den == 1) {
        if (n > INT64_MAX / num || n < INT64_MIN / num) return false;
        ts.sec = n * num;
        ts.nsec = 0;
        return true;
    } else {
        static_assert(num == 1 && 1000000000 % den == 0,
                      "mpk: a duration's period must be whole seconds or divide one second into a divisor of 10^9 ticks");
        std::int64_t sec = n / den, rem = n % den;
        if (rem < 0) {
            rem += den;
            sec -= 1;
        }
        ts.sec = sec;
        ts.nsec = static_cast<std::uint32_t>(rem * (1000000000 / den));
        return true;
    }
}

/// A timestamp as a duration since the epoch. False when it does not fit exactly.
template <class Rep, class Period>
bool timestamp_to_duration(const timestamp &ts, std::chrono::duration<Rep, Period> &dur) {
    static_assert(std::is_integral_v<Rep>, "mpk: only integral std::chrono durations map to timestamps");
    using P = typename Period::type;
    constexpr std::int64_t num = P::num, den = P::den;
    std::int64_t n;
    if constexpr (den == 1) {
        if (ts.nsec != 0 || ts.sec % num != 0) return false;
        n = ts.sec / num;
    } else {
        static_assert(num == 1 && 1000000000 % den == 0,
                      "mpk: a duration's period must be whole seconds or divide one second into a divisor of 10^9 ticks");
        constexpr std::int64_t unit = 1000000000 / den;
        if (ts.nsec % unit != 0) return false;
        if (ts.sec > (INT64_MAX - den) / den || ts.sec < INT64_MIN / den) return false;
        n = ts.sec * den + static_cast<std::int64_t>(ts.nsec / unit);
    }
    if constexpr (std::is_unsigned_v<Rep>) {
        if (n < 0 || static_cast<std::uint64_t>(n) > std::numeric_limits<Rep>::max()) return false;
    } else {
        if (n < static_cast<std::int64_t>(std::numeric_limits<Rep>::min()) ||
            n > static_cast<std::int64_t>(std::numeric_limits<Rep>::max()))
            return false;
    }
    dur = std::chrono::duration<Rep, Period>(static_cast<Rep>(n));
    return true;
}

template <class Rep, class Period>
void encode_duration(writer &w, std::chrono::duration<Rep, Period> dur) {
    timestamp ts;
    if (!duration_to_timestamp(dur, ts))
        return w.fail(errc::invalid_argument, "duration of " + std::to_string(dur.count()) +
                                                  " ticks is beyond a timestamp's int64 seconds");
    mpk_write_timestamp(w.c(), ts.sec, ts.nsec);
}

template <class Rep, class Period>
bool decode_duration(decoder &d, std::chrono::duration<Rep, Period> &dur, const char *wanted) {
    std::size_t at = d.offset();
    timestamp ts;
    if (!codec<timestamp>::decode(d, ts)) return false;
    if (!timestamp_to_duration(ts, dur))
        return d.type_error(at, "timestamp " + std::to_string(ts.sec) + "s " + std::to_string(ts.nsec) + "ns",
                            wanted);
    return true;
}
} // namespace detail

template <class Rep, class Period>
struct codec<std::chrono::duration<Rep, Period>> {
    static void encode(writer &w, std::chrono::duration<Rep, Period> v) { detail::encode_duration(w, v); }
    static bool decode(decoder &d, std::chrono::duration<Rep, Period> &v) {
        return detail::decode_duration(d, v, "std::chrono::duration");
    }
};

/// The system clock's epoch is 1970-01-01T00:00:00Z (guaranteed from C++20, true of every C++17
/// standard library), the timestamp's epoch.
template <class D>
struct codec<std::chrono::time_point<std::chrono::system_clock, D>> {
    using TP = std::chrono::time_point<std::chrono::system_clock, D>;
    static void encode(writer &w, const TP &v) { detail::encode_duration(w, v.time_since_epoch()); }
    static bool decode(decoder &d, TP &v) {
        D dur{};
        if (!detail::decode_duration(d, dur, "std::chrono::system_clock::time_point")) return false;
        v = TP(dur);
        return true;
    }
};

} // namespace mpk

#endif
