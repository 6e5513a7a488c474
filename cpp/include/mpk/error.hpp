// mpk/error.hpp — error kinds, mpk::error_info, the mpk::error exception and mpk::result<T>.
//
// Every error carries the core's kind (one-to-one with mpk_error_kind, spelled as spec/README.md),
// the byte offset from the start of the input (decoding) and, for typed values, the path to the
// field ("Test4.test3", "Order.items[2].sku"). The throwing API (mpk::pack, mpk::unpack, ...)
// exists only when exceptions are enabled; the try_ API returns mpk::result<T> and works with
// -fno-exceptions.
#ifndef MPK_CPP_ERROR_HPP
#define MPK_CPP_ERROR_HPP

#include <mpk.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define MPK_CPP_EXCEPTIONS 1
#include <stdexcept>
#else
#define MPK_CPP_EXCEPTIONS 0
#endif

namespace mpk {

/// The error kinds of the C core, value for value (mpk::errc::truncated == MPK_ERR_TRUNCATED).
/// A typed decode adds no kind of its own: a value of the wrong type, an integer that does not fit
/// the target type (never truncated) and a required field that is missing are all `type`.
enum class errc : int {
    ok = MPK_OK,
    truncated = MPK_ERR_TRUNCATED,
    invalid_byte = MPK_ERR_INVALID_BYTE,
    depth_limit = MPK_ERR_DEPTH_LIMIT,
    length_limit = MPK_ERR_LENGTH_LIMIT,
    invalid_timestamp = MPK_ERR_INVALID_TIMESTAMP,
    invalid_utf8 = MPK_ERR_INVALID_UTF8,
    trailing_bytes = MPK_ERR_TRAILING_BYTES,
    no_memory = MPK_ERR_NO_MEMORY,
    io = MPK_ERR_IO,
    buffer_full = MPK_ERR_BUFFER_FULL,
    invalid_argument = MPK_ERR_INVALID_ARGUMENT,
    type = MPK_ERR_TYPE,
    json = MPK_ERR_JSON
};

/// The spec's spelling of a kind: "truncated", "type", ...; "ok" for errc::ok.
inline const char *name(errc kind) noexcept { return mpk_error_name(static_cast<mpk_error_kind>(kind)); }

/// The std::error_category of mpk's kinds: name() "mpk", message(k) the spec's spelling of kind k.
/// std::error_code{mpk::errc::truncated} (or make_error_code) compares equal to mpk::errc::truncated.
class error_category_impl final : public std::error_category {
public:
    const char *name() const noexcept override { return "mpk"; }
    std::string message(int kind) const override { return mpk::name(static_cast<errc>(kind)); }
};

inline const std::error_category &error_category() noexcept {
    static const error_category_impl cat;
    return cat;
}

/// Found by ADL: lets an mpk::errc convert to std::error_code.
inline std::error_code make_error_code(errc kind) noexcept { return {static_cast<int>(kind), error_category()}; }

/// What went wrong and where. `offset` is the byte offset from the start of the input for decode
/// errors (0 for encode errors); `path` leads from the top-level value to the failing one:
/// "Test4.test3" (struct fields by name), "[3]" (array elements), "[key]" (map values);
/// it is empty when the failing value is the top-level one or no path applies. `detail` says
/// what was found and what was expected ("int 300 does not fit std::int8_t").
struct error_info {
    errc kind = errc::ok;
    std::size_t offset = 0;
    std::string path;
    std::string detail;

    explicit operator bool() const noexcept { return kind != errc::ok; }
    /// "type at byte 3 in Test4.test1.a: int 300 does not fit std::int8_t".
    std::string message() const;
    /// The kind as a std::error_code (an empty one for errc::ok); offset, path and detail are not in it.
    std::error_code code() const noexcept { return kind == errc::ok ? std::error_code() : make_error_code(kind); }
};

#if MPK_CPP_EXCEPTIONS
/// Thrown by the throwing API. what() is error_info::message().
class error : public std::runtime_error {
public:
    explicit error(error_info info) : std::runtime_error(info.message()), info_(std::move(info)) {}
    errc kind() const noexcept { return info_.kind; }
    std::size_t offset() const noexcept { return info_.offset; }
    const std::string &path() const noexcept { return info_.path; }
    const std::string &detail() const noexcept { return info_.detail; }
    const error_info &info() const noexcept { return info_; }

private:
    error_info info_;
};
#endif

/// A T or an error_info. Never throws by itself: value() on an error throws mpk::error when
/// exceptions are enabled and aborts (after printing the message to stderr) when they are not,
/// so check ok() first in -fno-exceptions code.
template <class T>
class result {
public:
    result(T value) : value_(std::move(value)) {}
    result(error_info err) : error_(std::move(err)) {}

    bool ok() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    /// The error (kind errc::ok when there is none).
    const error_info &error() const noexcept { return error_; }

    T &value() & { check(); return *value_; }
    const T &value() const & { check(); return *value_; }
    T &&value() && { check(); return std::move(*value_); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }

private:
    void check() const;
    std::optional<T> value_;
    error_info error_;
};

/// Success or an error_info, for calls that fill an object the caller owns.
template <>
class result<void> {
public:
    result() = default;
    result(error_info err) : error_(std::move(err)) {}
    bool ok() const noexcept { return error_.kind == errc::ok; }
    explicit operator bool() const noexcept { return ok(); }
    const error_info &error() const noexcept { return error_; }
    /// Throws (or aborts without exceptions) on an error; nothing otherwise.
    void value() const;

private:
    error_info error_;
};

namespace detail {
/// The error path: throw mpk::error, or print and abort when exceptions are off.
[[noreturn]] inline void raise(const error_info &e) {
#if MPK_CPP_EXCEPTIONS
    throw error(e);
#else
    std::fprintf(stderr, "mpk: %s\n", e.message().c_str());
    std::abort();
#endif
}
} // namespace detail

// ---------------------------------------------------------------------------------------------
// Inline bodies
// ---------------------------------------------------------------------------------------------

inline std::string error_info::message() const {
    std::string m = name(kind);
    if (kind != errc::ok) {
        m += " at byte ";
        m += std::to_string(offset);
    }
    if (!path.empty()) {
        m += " in ";
        m += path;
    }
    if (!detail.empty()) {
        m += ": ";
        m += detail;
    }
    return m;
}

template <class T>
void result<T>::check() const {
    if (!value_) detail::raise(error_);
}

inline void result<void>::value() const {
    if (!ok()) detail::raise(error_);
}

} // namespace mpk

namespace std {
template <>
struct is_error_code_enum<mpk::errc> : true_type {};
} // namespace std

#endif
