// mpk/writer.hpp — mpk::writer: the core's mpk_writer with typed values on top.
//
// Outputs: a growable heap buffer (the default), a caller's fixed buffer (writer::fixed; running
// out is errc::buffer_full), or any mpk_writer the caller set up (writer::wrap: flush callback,
// reference chunks, caller-grown memory). write(v) appends one value, so many messages go into one
// buffer back to back. Errors are sticky, as in the core: after the first, nothing more is
// written, and error() / finish() report it. A value with no MessagePack form (a string over
// 2^32-1 bytes, a timestamp with nsec > 999999999, a valueless variant...) is reported with the
// path to it, like a decode error (offset 0).
#ifndef MPK_CPP_WRITER_HPP
#define MPK_CPP_WRITER_HPP

#include "error.hpp"
#include "types.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace mpk {

template <class T, class Enable = void>
struct codec;

namespace detail {
/// Path segments collected innermost first while an error unwinds through the codecs; joined
/// outermost first by str().
class path_builder {
public:
    void field(std::string_view name) { push(".", name, ""); }
    void index(std::size_t i) { segs_.push_back("[" + std::to_string(i) + "]"); }
    void key(std::string_view k) { push("[", k, "]"); }
    void clear() { segs_.clear(); }
    /// root + segments ("Test4.test3"); empty when there are no segments (the error is at the
    /// top-level value itself); a leading "." is dropped when there is no root.
    std::string str(std::string_view root) const {
        if (segs_.empty()) return {};
        std::string s(root);
        for (auto it = segs_.rbegin(); it != segs_.rend(); ++it) s += *it;
        if (root.empty() && !s.empty() && s[0] == '.') s.erase(0, 1);
        return s;
    }

private:
    void push(const char *a, std::string_view b, const char *c) {
        std::string s(a);
        s += b;
        s += c;
        segs_.push_back(std::move(s));
    }
    std::vector<std::string> segs_;
};
} // namespace detail

class writer {
public:
    /// Growable heap output (initial_capacity 0 picks the core's default).
    explicit writer(std::size_t initial_capacity = 0);
    /// Output into the caller's buffer of `capacity` bytes; the writer never frees it.
    static writer fixed(void *buffer, std::size_t capacity);
    /// Typed values on top of a writer the caller initialised and still owns (any core output);
    /// the mpk::writer does not destroy it.
    static writer wrap(mpk_writer *w);

    writer(writer &&other) noexcept;
    writer &operator=(writer &&other) noexcept;
    writer(const writer &) = delete;
    writer &operator=(const writer &) = delete;
    ~writer();

    /// Appends v (through mpk::codec<T>). Returns *this; check error() or finish() once at the end.
    template <class T>
    writer &write(const T &v);

    /// Heads for values built by hand: an array of n elements or a map of n pairs follows.
    writer &array(std::uint32_t n) noexcept { mpk_write_array(w_, n); return *this; }
    writer &map(std::uint32_t n) noexcept { mpk_write_map(w_, n); return *this; }
    writer &nil() noexcept { mpk_write_nil(w_); return *this; }

    /// Ends the output (flush mode sends what is buffered); the first error, if any.
    result<void> finish();
    /// The first error (kind errc::ok while fine), with the path for a value error.
    error_info error() const;
    bool ok() const noexcept { return mpk_writer_error(w_) == MPK_OK; }

    /// The bytes written so far (growable and fixed outputs); valid until the next write.
    const std::byte *data() const noexcept { return reinterpret_cast<const std::byte *>(mpk_writer_data(w_)); }
    std::size_t size() const noexcept { return mpk_writer_size(w_); }
    bytes_view bytes() const noexcept { return {data(), size()}; }
    /// A copy of the bytes written so far.
    std::vector<std::byte> to_vector() const { return {data(), data() + size()}; }
    /// Empties the output and clears the error, keeping the buffer.
    void reset() noexcept;

    /// The core writer, for mpk_write_* calls of one's own (e.g. in a codec).
    mpk_writer *c() noexcept { return w_; }

    // ---- for codecs -----------------------------------------------------------------------
    /// Refuses the value being written: the first such error is kept with `detail`, the core
    /// writer is stopped (nothing more is written) and enclosing codecs add their path segments.
    void fail(errc kind, std::string detail);
    /// True while a value error raised by fail() unwinds: a codec that writes elements checks it
    /// after each one and, when set, adds its segment (path()) and returns.
    bool unwinding() const noexcept { return unwinding_; }
    detail::path_builder &path() noexcept { return path_; }
    /// Sets the path's root (the top-level type's name) and ends the unwinding.
    void end_value(std::string_view root);

private:
    writer(mpk_writer *external, int) noexcept : w_(external), external_(true) {}
    mpk_writer own_{};
    mpk_writer *w_ = &own_;
    bool external_ = false;
    bool unwinding_ = false;
    error_info value_error_;
    detail::path_builder path_;
};

// ---------------------------------------------------------------------------------------------
// Inline bodies
// ---------------------------------------------------------------------------------------------

inline writer::writer(std::size_t initial_capacity) { mpk_writer_init_growable(&own_, initial_capacity); }

inline writer writer::fixed(void *buffer, std::size_t capacity) {
    writer w(nullptr, 0);
    w.external_ = false;
    w.w_ = &w.own_;
    mpk_writer_init_buf(&w.own_, buffer, capacity);
    return w;
}

inline writer writer::wrap(mpk_writer *c) { return writer(c, 0); }

inline writer::writer(writer &&o) noexcept
    : own_(o.own_), w_(o.external_ ? o.w_ : &own_), external_(o.external_), unwinding_(o.unwinding_),
      value_error_(std::move(o.value_error_)), path_(std::move(o.path_)) {
    std::memset(&o.own_, 0, sizeof o.own_); // a zeroed writer owns nothing (destroy is safe)
    o.w_ = &o.own_;
    o.external_ = false;
    mpk_writer_flag_error(&o.own_, MPK_ERR_INVALID_ARGUMENT); // a moved-from writer writes nothing
}

inline writer &writer::operator=(writer &&o) noexcept {
    if (this != &o) {
        this->~writer();
        new (this) writer(std::move(o));
    }
    return *this;
}

inline writer::~writer() {
    if (!external_) mpk_writer_destroy(&own_);
}

inline result<void> writer::finish() {
    mpk_writer_finish(w_);
    error_info e = error();
    if (e) return e;
    return {};
}

inline error_info writer::error() const {
    if (value_error_) return value_error_;
    error_info e;
    e.kind = static_cast<errc>(mpk_writer_error(w_));
    return e;
}

inline void writer::reset() noexcept {
    mpk_writer_reset(w_);
    if (value_error_) value_error_ = error_info{}; // only fail() sets it (and its strings)
    unwinding_ = false;
    path_.clear();
}

inline void writer::fail(errc kind, std::string detail) {
    if (mpk_writer_error(w_) != MPK_OK) return; // an earlier error wins
    value_error_.kind = kind;
    value_error_.detail = std::move(detail);
    unwinding_ = true;
    path_.clear();
    mpk_writer_flag_error(w_, static_cast<mpk_error_kind>(kind));
}

inline void writer::end_value(std::string_view root) {
    if (!unwinding_) return;
    value_error_.path = path_.str(root);
    unwinding_ = false;
}

} // namespace mpk

#endif
