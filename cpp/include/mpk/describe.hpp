// mpk/describe.hpp — describing your structs: field lists in code, no IDL, no generator.
//
//     struct Test1 {
//         unsigned a = 1, b = 2;
//         MPK_FIELDS(a, b)                 // written as the array [a, b]
//     };
//     struct Config {
//         std::string host; int port = 80;
//         MPK_FIELDS_MAP(host, port)       // written as the map {"host": ..., "port": ...}
//     };
//     namespace app { struct Point { int x, y; }; MPK_DESCRIBE(Point, x, y) }  // non-intrusive,
//                                         // in the type's own namespace (found by ADL)
//
// Up to 64 fields; the listed members must be public for the non-intrusive forms. Decoding is
// forward compatible: array form — missing trailing fields keep their values (the defaults of a
// fresh object), extra trailing elements are skipped; map form — keys may come in any order,
// unknown keys (and keys that are not str) are skipped with their values, missing fields keep
// their values, a repeated key is decoded again (the last one wins). options::require_fields
// makes a missing field errc::type.
#ifndef MPK_CPP_DESCRIBE_HPP
#define MPK_CPP_DESCRIBE_HPP

#include "codec.hpp"
#include "fast.hpp"
#include "foreach.hpp"

#include <array>
#include <bitset>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace mpk {

/// How a described struct is written: as an array of its fields in order, or as a map keyed by
/// the field names.
enum class layout { array, map };

template <class T>
struct tag_t {};

#define MPK__NAME(X, f) std::string_view(#f)
#define MPK__MEMBER(obj, f) obj.f

/// Inside a struct: its fields, written as an array in this order.
#define MPK_FIELDS(...) MPK__FIELDS(::mpk::layout::array, __VA_ARGS__)
/// Inside a struct: its fields, written as a map keyed by the field names.
#define MPK_FIELDS_MAP(...) MPK__FIELDS(::mpk::layout::map, __VA_ARGS__)

#define MPK__FIELDS(LAYOUT, ...)                                                                   \
    auto mpk_tie() noexcept { return std::tie(__VA_ARGS__); }                                     \
    auto mpk_tie() const noexcept { return std::tie(__VA_ARGS__); }                               \
    static constexpr ::mpk::layout mpk_layout() noexcept { return LAYOUT; }                       \
    static constexpr std::array<std::string_view, MPK__NARGS(__VA_ARGS__)> mpk_names() noexcept { \
        return {{MPK__FOR_EACH(MPK__NAME, _, __VA_ARGS__)}};                                      \
    }

/// At namespace scope, in TYPE's namespace: TYPE's public fields, written as an array.
#define MPK_DESCRIBE(TYPE, ...) MPK__DESCRIBE(TYPE, ::mpk::layout::array, __VA_ARGS__)
/// At namespace scope, in TYPE's namespace: TYPE's public fields, written as a map.
#define MPK_DESCRIBE_MAP(TYPE, ...) MPK__DESCRIBE(TYPE, ::mpk::layout::map, __VA_ARGS__)

#define MPK__DESCRIBE(TYPE, LAYOUT, ...)                                                           \
    [[maybe_unused]] inline auto mpk_tie(TYPE &mpk__v) noexcept {                                  \
        return std::tie(MPK__FOR_EACH(MPK__MEMBER, mpk__v, __VA_ARGS__));                          \
    }                                                                                              \
    [[maybe_unused]] inline auto mpk_tie(const TYPE &mpk__v) noexcept {                            \
        return std::tie(MPK__FOR_EACH(MPK__MEMBER, mpk__v, __VA_ARGS__));                          \
    }                                                                                              \
    [[maybe_unused]] constexpr ::mpk::layout mpk_layout(::mpk::tag_t<TYPE>) noexcept { return LAYOUT; } \
    [[maybe_unused]] constexpr std::array<std::string_view, MPK__NARGS(__VA_ARGS__)> mpk_names(   \
        ::mpk::tag_t<TYPE>) noexcept {                                                             \
        return {{MPK__FOR_EACH(MPK__NAME, _, __VA_ARGS__)}};                                       \
    }

namespace detail {

template <class T, class = void>
struct intrusive : std::false_type {};
template <class T>
struct intrusive<T, std::void_t<decltype(std::declval<T &>().mpk_tie()), decltype(T::mpk_names())>>
    : std::true_type {};

template <class T, class = void>
struct adl_described : std::false_type {};
template <class T>
struct adl_described<T, std::void_t<decltype(mpk_tie(std::declval<T &>())),
                                    decltype(mpk_names(::mpk::tag_t<T>{}))>> : std::true_type {};

} // namespace detail

/// True for a type described by MPK_FIELDS(_MAP) or MPK_DESCRIBE(_MAP).
template <class T>
inline constexpr bool is_described_v = detail::intrusive<T>::value || detail::adl_described<T>::value;

namespace detail {

/// Uniform access to a described type's fields.
template <class T>
struct fields {
    static auto tie(T &v) noexcept {
        if constexpr (intrusive<T>::value) return v.mpk_tie();
        else return mpk_tie(v);
    }
    static auto tie(const T &v) noexcept {
        if constexpr (intrusive<T>::value) return v.mpk_tie();
        else return mpk_tie(v);
    }
    static constexpr auto names() noexcept {
        if constexpr (intrusive<T>::value) return T::mpk_names();
        else return mpk_names(tag_t<T>{});
    }
    static constexpr layout form() noexcept {
        if constexpr (intrusive<T>::value) return T::mpk_layout();
        else return mpk_layout(tag_t<T>{});
    }
    static constexpr std::size_t count = std::tuple_size_v<decltype(names())>;
};

/// A described struct's codec asks the stack guard itself (struct_codec).
template <class T>
struct guards_itself<T, std::enable_if_t<is_described_v<T>>> : std::true_type {};

/// The fast path's view of a described struct (fast.hpp).
template <class T>
struct fast_field<T, std::enable_if_t<is_described_v<T>>>
    : fast_struct<T, fields<T>, fields<T>::form() == layout::array> {};

template <class Tie, std::size_t I>
using field_t = std::decay_t<std::tuple_element_t<I, Tie>>;

template <class T>
struct struct_codec {
    using F = fields<T>;
    static constexpr std::size_t N = F::count;
    using Tie = decltype(F::tie(std::declval<T &>()));
    /// Fields that may recurse: the general paths ask the stack guard first (decoder::enter).
    static constexpr bool leaves = tie_leaves<Tie>(std::make_index_sequence<N>{});

    static void encode(writer &w, const T &v) {
#ifndef MPK_CPP_NO_FAST_PATH
        if constexpr (fast_field<T>::enc) {
            if (fast_encode<fast_field<T>>(w.c(), v)) return;
        } else if constexpr (fast_field<T>::venc) {
            if (fast_encode_sized<fast_field<T>>(w.c(), v)) return;
        }
#endif
        encode_general(w, v);
    }

    MPK_CPP_FAST_INLINE static bool decode(decoder &d, T &v) {
#ifndef MPK_CPP_NO_FAST_PATH
        if constexpr (fast_field<T>::dec)
            if (fast_decode<fast_field<T>>(d.c(), v)) return true;
        return decode_as<true>(d, v);
#else
        return decode_general(d, v);
#endif
    }

    /// The general path: every field through its codec, with errors' paths.
    static void encode_general(writer &w, const T &v) {
        if constexpr (!leaves)
            if (!w.enter()) return;
        auto t = F::tie(v);
        if constexpr (F::form() == layout::array) {
            mpk_write_array(w.c(), static_cast<std::uint32_t>(N));
            encode_fields(w, t, std::make_index_sequence<N>{});
        } else {
            mpk_write_map(w.c(), static_cast<std::uint32_t>(N));
            encode_fields(w, t, std::make_index_sequence<N>{});
        }
    }

    static bool decode_general(decoder &d, T &v) { return decode_as<false>(d, v); }

private:
    /// InOrder: maps first try their keys in the declared order (decode_in_order).
    template <bool InOrder>
    static bool decode_as(decoder &d, T &v) {
        if constexpr (!leaves)
            if (!d.enter()) return false;
        std::size_t at = 0;
        mpk_tag tag;
        if (!tag_header(d, tag, at)) return false;
        Tie t = F::tie(v);
        if constexpr (F::form() == layout::array) {
            if (tag.type != MPK_ARRAY) return d.type_error(at, describe_tag(tag), type_name<T>());
            std::uint32_t n = tag.len;
            if (n < N && d.opts().require_fields) {
                d.type_error(at, describe_tag(tag), std::string(type_name<T>()) + " of " + std::to_string(N) + " fields");
                return d.in_field(F::names()[n]);
            }
            if (!decode_prefix(d, t, n, std::make_index_sequence<N>{})) return false;
            for (std::uint32_t i = N; i < n; i++)
                if (!d.skip()) return false;
            return true;
        } else {
            if (tag.type != MPK_MAP) return d.type_error(at, describe_tag(tag), type_name<T>());
            return decode_map<InOrder>(d, t, tag.len, at);
        }
    }

    template <std::size_t... I>
    static void encode_fields(writer &w, const decltype(F::tie(std::declval<const T &>())) &t,
                              std::index_sequence<I...>) {
        (void)((encode_field<I>(w, std::get<I>(t))) && ...);
    }
    template <std::size_t I, class V>
    static bool encode_field(writer &w, const V &value) {
        constexpr std::string_view name = F::names()[I];
        if constexpr (F::form() == layout::map) mpk_write_str(w.c(), name.data(), name.size());
        codec<std::decay_t<V>>::encode(w, value);
        if constexpr (may_fail_v<std::decay_t<V>> && !fast_field<std::decay_t<V>>::enc) { // a struct of scalars never fails
            if (w.unwinding()) {
                w.path().field(name);
                return false;
            }
        }
        return true;
    }

    template <std::size_t... I>
    static bool decode_prefix(decoder &d, Tie &t, std::uint32_t n, std::index_sequence<I...>) {
        return ((I >= n || codec<field_t<Tie, I>>::decode(d, std::get<I>(t)) || d.in_field(F::names()[I])) && ...);
    }

    template <std::size_t... I>
    static bool decode_index(decoder &d, Tie &t, std::size_t index, std::index_sequence<I...>) {
        bool ok = false;
        (void)((index == I ? (ok = codec<field_t<Tie, I>>::decode(d, std::get<I>(t)) || d.in_field(F::names()[I]), true)
                           : false) || ...);
        return ok;
    }

    /// The field named `key`, or N. Fields usually come in order, so the search starts at `hint`.
    static std::size_t find(std::string_view key, std::size_t hint) noexcept {
        constexpr auto names = F::names();
        for (std::size_t k = 0; k < N; k++) {
            std::size_t i = hint + k < N ? hint + k : hint + k - N;
            if (names[i] == key) return i;
        }
        return N;
    }

    /// map_keys_in_order: the key at the reader's position, read and passed over when it is the
    /// fixstr `name` (compared as bytes); otherwise nothing changes and false. Under strict UTF-8,
    /// a limit on strs below the name's length, too few bytes or an earlier error (the core pulls
    /// the end to the position), it always steps aside and the general loop below reads the key.
    template <std::size_t I>
    MPK_CPP_FAST_INLINE static bool key_is(mpk_reader *r) noexcept {
        constexpr std::string_view name = F::names()[I]; // a constant: memcmp becomes integer compares
        const std::uint8_t *p = r->pos;
        constexpr std::size_t n = name.size();
        if (n > 31 || static_cast<std::size_t>(r->end - p) <= n || *p != static_cast<std::uint8_t>(0xa0 | n) || n > r->limits.str ||
            (r->flags & MPK_FLAG_STRICT_UTF8) || std::memcmp(p + 1, name.data(), n) != 0)
            return false;
        r->pos = p + 1 + n;
        mpk__reader_value_done(r); // the key is one value of the map, whose pair's value is still owed
        return true;
    }

    /// map_keys_in_order: a speed trick. Writers (mpk's own included) put a struct's keys in its
    /// declared order, so the pairs are first matched against the fields in that order, each key
    /// compared with a name known at compile time (an integer compare, no call) and the value
    /// decoded straight into its field; the first pair that is not the next field (another order, an
    /// unknown or repeated key, a key that is not a fixstr) leaves the rest to the general loop,
    /// which finds keys by name. Why: the general loop reads every key as a tag, searches the names
    /// and dispatches on the index it found. Measured (callgrind, cpp/bench/callgrind.py,
    /// instructions per message): the Go seed's Product decode 1,953 -> 1,690 (protobuf 2,257),
    /// 100 Products 209,986 -> 182,226 (protobuf 169,121); with each key compared as a constant
    /// and each value read by the fast path's reader first (decode_value), 1,299 and 143,058.
    /// Returns false on a decode error;
    /// `done` counts the pairs it decoded.
    template <std::size_t... I>
    static bool decode_in_order(decoder &d, Tie &t, std::uint32_t pairs, std::uint32_t &done, std::index_sequence<I...>) {
        bool ok = true;
        (void)((I < pairs && key_is<I>(d.c()) && (ok = decode_value<I>(d, std::get<I>(t))) && (++done, true)) && ...);
        return ok;
    }

    /// Field I's value, through the fast path's reader first when its type has one (a number, a
    /// string, a view, an array-form struct: as in a vector, decode_in_order's reads are not
    /// from DOM nodes), else through its codec; false, with its path segment, on error.
    template <std::size_t I>
    MPK_CPP_FAST_INLINE static bool decode_value(decoder &d, field_t<Tie, I> &v) {
        if constexpr (fast_field<field_t<Tie, I>>::dec)
            if (fast_decode_value(d.c(), v)) return true;
        return codec<field_t<Tie, I>>::decode(d, v) || d.in_field(F::names()[I]);
    }

    template <bool InOrder>
    static bool decode_map(decoder &d, Tie &t, std::uint32_t pairs, std::size_t at) {
        std::bitset<N> seen;
        std::size_t hint = 0;
        std::uint32_t first = 0;
#ifndef MPK_CPP_NO_FAST_PATH
        if constexpr (InOrder && N > 0) {
            if (!decode_in_order(d, t, pairs, first, std::make_index_sequence<N>{})) return false;
            for (std::uint32_t k = 0; k < first; k++) seen.set(k);
            hint = first < N ? first : 0;
        }
#endif
        for (std::uint32_t p = first; p < pairs; p++) {
            int head = d.peek();
            bool is_str = (head >= 0xa0 && head <= 0xbf) || (head >= 0xd9 && head <= 0xdb);
            if (!is_str) { // a key that is not a str names no field: skip it and its value
                if (!d.skip() || !d.skip()) return false;
                continue;
            }
            mpk_tag k;
            if (!d.next(k)) return false;
            std::size_t i = find(std::string_view(reinterpret_cast<const char *>(k.data), k.len), hint);
            if (i == N) {
                if (!d.skip()) return false;
                continue;
            }
            if (!decode_index(d, t, i, std::make_index_sequence<N>{})) return false;
            seen.set(i);
            hint = i + 1 < N ? i + 1 : 0;
        }
        if (d.opts().require_fields && !seen.all()) {
            std::size_t missing = 0;
            while (seen.test(missing)) missing++;
            d.fail(errc::type, at, "missing field of " + std::string(type_name<T>()));
            return d.in_field(F::names()[missing]);
        }
        return true;
    }
};

} // namespace detail

template <class T>
struct codec<T, std::enable_if_t<is_described_v<T>>> : detail::struct_codec<T> {};

} // namespace mpk

#endif
