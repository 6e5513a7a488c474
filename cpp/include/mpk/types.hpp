// mpk/types.hpp — the vocabulary types: bytes_view, ext, timestamp, raw, options.
//
// Views (bytes_view, std::string_view, ext::data, raw::bytes) decoded from a buffer point into that
// buffer: they are valid as long as the buffer is alive and unchanged. Nothing is copied for them.
#ifndef MPK_CPP_TYPES_HPP
#define MPK_CPP_TYPES_HPP

#include <mpk.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace mpk {

/// A read-only view of bytes (pointer + size); never owns. Built from a pointer and a size, or
/// from any contiguous container of 1-byte elements (std::vector<std::byte>,
/// std::vector<std::uint8_t>, std::string, std::string_view, std::array, ...).
class bytes_view {
public:
    constexpr bytes_view() noexcept = default;
    bytes_view(const void *data, std::size_t size) noexcept
        : data_(static_cast<const std::byte *>(data)), size_(size) {}
    template <class C,
              class = std::enable_if_t<
                  !std::is_same_v<std::decay_t<C>, bytes_view> &&
                  sizeof(*std::declval<const C &>().data()) == 1 &&
                  std::is_convertible_v<decltype(std::declval<const C &>().size()), std::size_t>>>
    bytes_view(const C &c) noexcept : bytes_view(c.data(), c.size()) {}

    const std::byte *data() const noexcept { return data_; }
    const std::uint8_t *udata() const noexcept { return reinterpret_cast<const std::uint8_t *>(data_); }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const std::byte *begin() const noexcept { return data_; }
    const std::byte *end() const noexcept { return data_ + size_; }
    std::byte operator[](std::size_t i) const noexcept { return data_[i]; }
    /// The same bytes as characters.
    std::string_view chars() const noexcept {
        return {reinterpret_cast<const char *>(data_), size_};
    }
    friend bool operator==(bytes_view a, bytes_view b) noexcept {
        return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data_, b.data_, a.size_) == 0);
    }
    friend bool operator!=(bytes_view a, bytes_view b) noexcept { return !(a == b); }

private:
    const std::byte *data_ = nullptr;
    std::size_t size_ = 0;
};

/// An ext value: its type (-128..127) and its payload, a view into the input when decoded.
/// Decoding a timestamp (ext -1) into mpk::ext gives type -1 and the raw payload.
struct ext {
    std::int8_t type = 0;
    bytes_view data;
    friend bool operator==(const ext &a, const ext &b) noexcept {
        return a.type == b.type && a.data == b.data;
    }
    friend bool operator!=(const ext &a, const ext &b) noexcept { return !(a == b); }
};

/// A timestamp (ext -1): seconds since 1970-01-01T00:00:00Z and nanoseconds 0..999999999.
/// Encoding one with nsec > 999999999 is errc::invalid_timestamp.
struct timestamp {
    std::int64_t sec = 0;
    std::uint32_t nsec = 0;
    friend bool operator==(const timestamp &a, const timestamp &b) noexcept {
        return a.sec == b.sec && a.nsec == b.nsec;
    }
    friend bool operator!=(const timestamp &a, const timestamp &b) noexcept { return !(a == b); }
};

/// One whole MessagePack value kept undecoded, as its bytes (a view into the input). Decode it
/// later with mpk::unpack<T>(raw.bytes) — the RPC case: read [method, params] with params as raw,
/// convert params once the method is known. Encoding writes the bytes as they are; they must be
/// exactly one well-formed value (the encoder does not check them).
struct raw {
    bytes_view bytes;
    friend bool operator==(const raw &a, const raw &b) noexcept { return a.bytes == b.bytes; }
    friend bool operator!=(const raw &a, const raw &b) noexcept { return !(a == b); }
};

/// The dynamic type of a value: one-to-one with the core's mpk_type.
enum class type : int {
    nil = MPK_NIL,
    boolean = MPK_BOOL,
    uint = MPK_UINT,
    int_ = MPK_INT,
    float32 = MPK_FLOAT32,
    float64 = MPK_FLOAT64,
    str = MPK_STR,
    bin = MPK_BIN,
    array = MPK_ARRAY,
    map = MPK_MAP,
    ext = MPK_EXT,
    timestamp = MPK_TIMESTAMP
};

/// "nil", "bool", "uint", "int", "float32", "float64", "str", "bin", "array", "map", "ext",
/// "timestamp".
inline const char *name(type t) noexcept { return mpk_type_name(static_cast<mpk_type>(t)); }

/// Decoding settings: the core's limits (see c/README.md "Limits"; defaults: depth 1024, every
/// length the format's maximum), strict UTF-8 checking of every str, and whether a struct field
/// missing from the input is an error (errc::type) instead of keeping its default.
struct options {
    mpk_limits limits = mpk_limits_default();
    bool strict_utf8 = false;
    bool require_fields = false;
    /// Bytes one typed decode may allocate for container elements (see decoder::charge): 0 means
    /// 1 MiB plus 256 bytes per input byte; SIZE_MAX means no budget.
    std::size_t max_alloc = 0;
};

namespace detail {
/// The name of T as the compiler spells it ("Test4", "app::Order"), for error paths.
template <class T>
constexpr std::string_view type_name() noexcept {
#if defined(__clang__) || defined(__GNUC__)
    std::string_view f = __PRETTY_FUNCTION__;
    std::size_t start = f.find("T = ");
    if (start == std::string_view::npos) return "?";
    start += 4;
    std::size_t stop = f.find_first_of(";]", start);
    std::string_view name = f.substr(start, stop - start);
    for (std::string_view anon : {std::string_view("{anonymous}::"), std::string_view("(anonymous namespace)::")})
        if (name.substr(0, anon.size()) == anon) name.remove_prefix(anon.size());
    return name;
#else
    return "?";
#endif
}
/// type_name<T>(), computed at compile time: a call evaluated at run time searches the function
/// signature (about 450 instructions, measured on every std::vector<std::byte> decode).
template <class T>
inline constexpr std::string_view type_name_v = type_name<T>();
} // namespace detail

} // namespace mpk

#endif
