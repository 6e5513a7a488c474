// mpk/aggregate.hpp — plain aggregates with no macro: a struct whose fields the compiler can
// enumerate (an aggregate with no base classes, no C-array members, at most 32 fields) is written
// as the array of its fields in declaration order, like MPK_FIELDS. Its fields have no names, so
// an error path shows them by position: "Point[1]". Describe the type (MPK_FIELDS, MPK_DESCRIBE)
// to get names, the map form, or to choose the fields.
#ifndef MPK_CPP_AGGREGATE_HPP
#define MPK_CPP_AGGREGATE_HPP

#include "codec.hpp"
#include "describe.hpp"

#include <array>
#include <tuple>
#include <type_traits>
#include <utility>

namespace mpk {
namespace detail {

/// Converts to anything: T{any_field{}, ...} compiles for as many fields as T has.
struct any_field {
    template <class U>
    operator U() const;
};

template <class T, class Seq, class = void>
struct braces_with : std::false_type {};
template <class T, std::size_t... I>
struct braces_with<T, std::index_sequence<I...>,
                   std::void_t<decltype(T{(void(I), any_field{})...})>> : std::true_type {};

/// The number of fields of an aggregate: the largest n with T{n x any_field} valid.
template <class T, std::size_t N = 32>
constexpr std::size_t field_count() {
    if constexpr (N == 0) return 0;
    else if constexpr (braces_with<T, std::make_index_sequence<N>>::value) return N;
    else return field_count<T, N - 1>();
}

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

template <class T>
inline constexpr bool is_plain_aggregate_v =
    std::is_class_v<T> && std::is_aggregate_v<T> && !is_described_v<T> && !is_std_array<T>::value &&
    std::is_default_constructible_v<T>;

/// References to an aggregate's fields, by structured binding.
template <class T>
auto aggregate_tie(T &v) {
    constexpr std::size_t N = field_count<std::remove_const_t<T>>();
    static_assert(N > 0, "mpk: an empty aggregate has no fields to write");
    if constexpr (false) {
    }
    else if constexpr (N == 1) {
        auto &[f0] = v;
        return std::tie(f0);
    }
    else if constexpr (N == 2) {
        auto &[f0, f1] = v;
        return std::tie(f0, f1);
    }
    else if constexpr (N == 3) {
        auto &[f0, f1, f2] = v;
        return std::tie(f0, f1, f2);
    }
    else if constexpr (N == 4) {
        auto &[f0, f1, f2, f3] = v;
        return std::tie(f0, f1, f2, f3);
    }
    else if constexpr (N == 5) {
        auto &[f0, f1, f2, f3, f4] = v;
        return std::tie(f0, f1, f2, f3, f4);
    }
    else if constexpr (N == 6) {
        auto &[f0, f1, f2, f3, f4, f5] = v;
        return std::tie(f0, f1, f2, f3, f4, f5);
    }
    else if constexpr (N == 7) {
        auto &[f0, f1, f2, f3, f4, f5, f6] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6);
    }
    else if constexpr (N == 8) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7);
    }
    else if constexpr (N == 9) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8);
    }
    else if constexpr (N == 10) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9);
    }
    else if constexpr (N == 11) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10);
    }
    else if constexpr (N == 12) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11);
    }
    else if constexpr (N == 13) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12);
    }
    else if constexpr (N == 14) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13);
    }
    else if constexpr (N == 15) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14);
    }
    else if constexpr (N == 16) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15);
    }
    else if constexpr (N == 17) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16);
    }
    else if constexpr (N == 18) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17);
    }
    else if constexpr (N == 19) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18);
    }
    else if constexpr (N == 20) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19);
    }
    else if constexpr (N == 21) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20);
    }
    else if constexpr (N == 22) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21);
    }
    else if constexpr (N == 23) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22);
    }
    else if constexpr (N == 24) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23);
    }
    else if constexpr (N == 25) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24);
    }
    else if constexpr (N == 26) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25);
    }
    else if constexpr (N == 27) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26);
    }
    else if constexpr (N == 28) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27);
    }
    else if constexpr (N == 29) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28);
    }
    else if constexpr (N == 30) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29);
    }
    else if constexpr (N == 31) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30);
    }
    else if constexpr (N == 32) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31] = v;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31);
    }
    else static_assert(N <= 32, "mpk: an aggregate of more than 32 fields needs MPK_FIELDS or MPK_DESCRIBE");
}

/// A plain aggregate's codec asks the stack guard itself (aggregate_codec).
template <class T>
struct guards_itself<T, std::enable_if_t<is_plain_aggregate_v<T>>> : std::true_type {};

template <class T>
struct aggregate_codec {
    using Fields = decltype(aggregate_tie(std::declval<T &>()));
    /// Fields that may recurse (a std::vector<T>): ask the stack guard first (decoder::enter).
    static constexpr bool leaves = tie_leaves<Fields>(std::make_index_sequence<std::tuple_size_v<Fields>>{});
    static void encode(writer &w, const T &v) {
        if constexpr (!leaves)
            if (!w.enter()) return;
        auto t = aggregate_tie(v);
        constexpr std::size_t N = std::tuple_size_v<decltype(t)>;
        mpk_write_array(w.c(), static_cast<std::uint32_t>(N));
        encode_fields(w, t, std::make_index_sequence<N>{});
    }
    static bool decode(decoder &d, T &v) {
        if constexpr (!leaves)
            if (!d.enter()) return false;
        auto t = aggregate_tie(v);
        constexpr std::size_t N = std::tuple_size_v<decltype(t)>;
        std::size_t at = 0;
        mpk_tag tag;
        if (!tag_header(d, tag, at)) return false;
        if (tag.type != MPK_ARRAY) return d.type_error(at, describe_tag(tag), type_name<T>());
        std::uint32_t n = tag.len;
        if (n < N && d.opts().require_fields) {
            d.type_error(at, describe_tag(tag), std::string(type_name<T>()) + " of " + std::to_string(N) + " fields");
            return d.in_index(n);
        }
        if (!decode_prefix(d, t, n, std::make_index_sequence<N>{})) return false;
        for (std::uint32_t i = N; i < n; i++)
            if (!d.skip()) return false;
        return true;
    }

private:
    template <class Tie, std::size_t... I>
    static void encode_fields(writer &w, const Tie &t, std::index_sequence<I...>) {
        (void)((encode_one<I>(w, std::get<I>(t))) && ...);
    }
    template <std::size_t I, class V>
    static bool encode_one(writer &w, const V &value) {
        codec<std::decay_t<V>>::encode(w, value);
        if constexpr (may_fail_v<std::decay_t<V>>) {
            if (w.unwinding()) {
                w.path().index(I);
                return false;
            }
        }
        return true;
    }
    template <class Tie, std::size_t... I>
    static bool decode_prefix(decoder &d, Tie &t, std::uint32_t n, std::index_sequence<I...>) {
        return ((I >= n || codec<std::decay_t<std::tuple_element_t<I, Tie>>>::decode(d, std::get<I>(t)) ||
                 d.in_index(I)) && ...);
    }
};

} // namespace detail

template <class T>
struct codec<T, std::enable_if_t<detail::is_plain_aggregate_v<T>>> : detail::aggregate_codec<T> {};

} // namespace mpk

#endif
