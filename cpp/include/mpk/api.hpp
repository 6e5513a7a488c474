// mpk/api.hpp — the one-call API: pack / unpack, and mpk::reader for many messages in a row.
//
// Throwing calls (pack, unpack, reader::next<T>()) exist only when exceptions are enabled; the
// try_ calls return mpk::result and work with -fno-exceptions.
#ifndef MPK_CPP_API_HPP
#define MPK_CPP_API_HPP

#include "aggregate.hpp"
#include "codec.hpp"
#include "decoder.hpp"
#include "describe.hpp"
#include "error.hpp"
#include "writer.hpp"

#include <cstddef>
#include <vector>

namespace mpk {

namespace detail {
/// The root of an error path: a struct's name, nothing for other types.
template <class T>
constexpr std::string_view root_name() noexcept {
    if constexpr (is_described_v<T> || is_plain_aggregate_v<T>) return type_name<T>();
    else return {};
}
} // namespace detail

template <class T>
writer &writer::write(const T &v) {
    codec<T>::encode(*this, v);
    if constexpr (detail::may_fail_v<T> && !detail::fast_field<T>::enc) // scalars and structs of scalars never fail
        if (unwinding_) end_value(detail::root_name<T>());
    return *this;
}

// ---- encode -------------------------------------------------------------------------------------

/// v as MessagePack in a new byte vector (the writer grows the vector itself: no final copy).
template <class T>
result<std::vector<std::byte>> try_pack(const T &v);

/// v written into the caller's buffer; the byte count, or errc::buffer_full when it does not fit.
template <class T>
result<std::size_t> try_pack_into(void *buffer, std::size_t capacity, const T &v);

#if MPK_CPP_EXCEPTIONS
/// v as MessagePack; throws mpk::error for a value with no MessagePack form.
template <class T>
std::vector<std::byte> pack(const T &v) {
    return try_pack(v).value();
}
/// v into the caller's buffer; the byte count. Throws mpk::error (buffer_full, ...).
template <class T>
std::size_t pack_into(void *buffer, std::size_t capacity, const T &v) {
    return try_pack_into(buffer, capacity, v).value();
}
#endif

// ---- decode -------------------------------------------------------------------------------------

/// Exactly one value filling `input`, decoded straight into a T (no tree in between). Bytes after
/// it are errc::trailing_bytes. Views in T point into `input`.
template <class T>
result<T> try_unpack(bytes_view input, const options &opts = options{});

/// The same into an existing object: fields absent from the input keep their values. On error
/// `out` may be partly written.
template <class T>
result<void> try_unpack(bytes_view input, T &out, const options &opts = options{});

#if MPK_CPP_EXCEPTIONS
template <class T>
T unpack(bytes_view input, const options &opts = options{}) {
    return try_unpack<T>(input, opts).value();
}
template <class T>
void unpack(bytes_view input, T &out, const options &opts = options{}) {
    try_unpack(input, out, opts).value();
}
#endif

// ---- std::error_code overloads (no exceptions; they work with -fno-exceptions) ------------------
// On success `ec` is cleared; on error it holds the kind (mpk::error_category(), comparable with
// mpk::errc values) and the value returned is empty (a default T, an empty vector, 0). The offset,
// path and detail are only in the try_ calls' error_info.

template <class T>
std::vector<std::byte> pack(const T &v, std::error_code &ec) {
    auto r = try_pack(v);
    ec = r.error().code();
    return r.ok() ? std::move(*r) : std::vector<std::byte>{};
}
template <class T>
std::size_t pack_into(void *buffer, std::size_t capacity, const T &v, std::error_code &ec) {
    auto r = try_pack_into(buffer, capacity, v);
    ec = r.error().code();
    return r.ok() ? *r : 0;
}
template <class T>
T unpack(bytes_view input, std::error_code &ec, const options &opts = options{}) {
    auto r = try_unpack<T>(input, opts);
    ec = r.error().code();
    return r.ok() ? std::move(*r) : T{};
}
template <class T>
void unpack(bytes_view input, T &out, std::error_code &ec, const options &opts = options{}) {
    ec = try_unpack(input, out, opts).error().code();
}

/// Many values back to back in one buffer (the seed's loop), decoded one at a time into typed
/// objects. Errors are sticky: after one, every read fails with the same error; offsets count
/// from the start of the buffer.
class reader {
public:
    explicit reader(bytes_view input, const options &opts = options{}) noexcept : d_(input, opts) {}

    /// True when every byte was read (or after an error).
    bool done() const noexcept { return d_.at_end() || d_.failed(); }
    /// Reads the next value into `out`; false on error (see error()). Reading past the end is
    /// errc::truncated at the input length.
    template <class T>
    MPK_CPP_FAST_INLINE bool read(T &out) {
        if (codec<T>::decode(d_, out)) return true;
        return failed(detail::root_name<T>());
    }
    template <class T>
    result<T> try_next() {
        T v{};
        if (read(v)) return v;
        return error();
    }
    /// The next value, or a default T with `ec` set (see the std::error_code overloads).
    template <class T>
    T next(std::error_code &ec) {
        T v{};
        if (read(v)) {
            ec.clear();
            return v;
        }
        ec = error().code();
        return T{};
    }
#if MPK_CPP_EXCEPTIONS
    /// The next value as a T; throws mpk::error.
    template <class T>
    T next() {
        return try_next<T>().value();
    }
#endif
    /// Skips the next value.
    bool skip() noexcept { return d_.skip(); }
    /// Byte offset of the next value.
    std::size_t offset() const noexcept { return d_.offset(); }
    error_info error() const { return d_.error(root_); }
    decoder &get_decoder() noexcept { return d_; }

private:
    // Out of line: read() is inlined into the caller's loop (MPK_CPP_FAST_INLINE), and its error
    // path there cost the seed's Test1/Test2 loops one instruction per message (callgrind: 39 -> 38,
    // 45 -> 44; Test4 137 -> 133).
    MPK_CPP_NOINLINE bool failed(std::string_view root) noexcept {
        root_ = root;
        return false;
    }
    decoder d_;
    std::string_view root_;
};

// ---------------------------------------------------------------------------------------------
// Inline bodies
// ---------------------------------------------------------------------------------------------

namespace detail {
/// The core writer's growth callback on a std::vector<std::byte>: the vector is the buffer.
inline void *grow_vector(void *ctx, void *, std::size_t new_size) {
    auto *v = static_cast<std::vector<std::byte> *>(ctx);
#if MPK_CPP_EXCEPTIONS
    try {
        v->resize(new_size);
    } catch (...) { // never let an exception cross the C core
        return nullptr;
    }
#else
    v->resize(new_size);
#endif
    return v->data();
}
} // namespace detail

template <class T>
result<std::vector<std::byte>> try_pack(const T &v) {
    std::vector<std::byte> out;
    mpk_writer c;
    mpk_writer_init_alloc(&c, 256, detail::grow_vector, &out);
    {
        writer w = writer::wrap(&c);
        w.write(v);
        detail::order_streaming_stores();
        mpk_writer_finish(&c);
        if (!w.ok()) {
            error_info e = w.error();
            mpk_writer_destroy(&c);
            return e;
        }
    }
    out.resize(mpk_writer_size(&c));
    mpk_writer_destroy(&c);
    return out;
}

template <class T>
result<std::size_t> try_pack_into(void *buffer, std::size_t capacity, const T &v) {
    writer w = writer::fixed(buffer, capacity);
    w.write(v);
    if (auto r = w.finish(); !r) return r.error();
    return w.size();
}

template <class T>
result<void> try_unpack(bytes_view input, T &out, const options &opts) {
    decoder d(input, opts);
    if (codec<T>::decode(d, out) && d.finish()) return {};
    return d.error(detail::root_name<T>());
}

template <class T>
result<T> try_unpack(bytes_view input, const options &opts) {
    T v{};
    if (auto r = try_unpack(input, v, opts); !r) return r.error();
    return v;
}

} // namespace mpk

#endif
