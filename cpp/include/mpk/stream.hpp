// mpk/stream.hpp — mpk::stream: whole values out of chunks of any size (a socket, a pipe), typed
// or dynamic, on the core's mpk_stream.
//
//     mpk::stream s(opts);                    // lower opts.limits.str/bin/ext for a peer you
//     while (n = recv(...)) {                 // do not trust: the stream buffers one value
//         s.feed(mpk::bytes_view(buf, n));
//         Request req;
//         mpk::stream::status st;
//         while ((st = s.next(req)) == mpk::stream::status::value) handle(req);
//         if (st == mpk::stream::status::error) { log(s.error().message()); ... }
//     }
//     if (!s.end()) ...                       // truncated if the input ended inside a value
//
// A fed chunk must stay valid and unchanged until next() has returned need_more for it (values
// lying whole inside it are decoded in place). Format errors come as soon as the bytes showing
// them arrive, and are sticky; offsets count from the first byte ever fed. A value that is well
// formed but does not fit T (errc::type) fails only that call: the stream goes on with the next
// value. Views in a typed value point into the chunk or the stream's buffer and are valid until
// the next call on the stream.
#ifndef MPK_CPP_STREAM_HPP
#define MPK_CPP_STREAM_HPP

#include "api.hpp"
#include "value.hpp"

namespace mpk {

class stream {
public:
    enum class status { value, need_more, error };

    explicit stream(const options &opts = options{}) noexcept : opts_(opts) {
        mpk_stream_init(&s_);
        mpk_stream_set_limits(&s_, &opts_.limits);
        mpk_stream_set_flags(&s_, opts_.strict_utf8 ? unsigned{MPK_FLAG_STRICT_UTF8} : 0u);
    }
    stream(const stream &) = delete;
    stream &operator=(const stream &) = delete;
    ~stream() { mpk_stream_destroy(&s_); }

    /// Hands over the next chunk (see the header comment for its lifetime).
    void feed(bytes_view chunk) noexcept { mpk_stream_feed(&s_, chunk.data(), chunk.size()); }

    /// The next complete value decoded into `out` (status::value), or status::need_more (feed the
    /// next chunk), or status::error (see error()).
    template <class T>
    status next(T &out);
    /// The next complete value as a dynamic value in the stream's document (valid until the next
    /// call on the stream).
    status next(value &out);
    /// The next complete value's bytes, undecoded.
    status next(raw &out);

    /// The input has ended: an error if a value was left incomplete (errc::truncated, at the
    /// offset a one-shot decode of everything fed would give).
    result<void> end();
    error_info error() const { return error_; }
    /// Stream offset of the next value's first byte.
    std::uint64_t offset() const noexcept { return base_; }
    mpk_stream *c() noexcept { return &s_; }

private:
    status core_error() {
        mpk_error e = mpk_stream_error(&s_);
        error_ = error_info{};
        error_.kind = static_cast<errc>(e.kind);
        error_.offset = e.offset;
        return status::error;
    }
    mpk_stream s_;
    options opts_;
    document doc_;
    std::uint64_t base_ = 0;
    error_info error_;
};

// ---------------------------------------------------------------------------------------------
// Inline bodies
// ---------------------------------------------------------------------------------------------

inline stream::status stream::next(raw &out) {
    const std::uint8_t *p;
    std::size_t n;
    int r = mpk_stream_next(&s_, &p, &n);
    if (r == 0) return status::need_more;
    if (r < 0) return core_error();
    out.bytes = bytes_view(p, n);
    base_ += n;
    return status::value;
}

template <class T>
stream::status stream::next(T &out) {
    raw r;
    status st = next(r);
    if (st != status::value) return st;
    decoder d(r.bytes, opts_);
    if (codec<T>::decode(d, out) && d.finish()) return status::value;
    error_ = d.error(detail::root_name<T>());
    error_.offset += static_cast<std::size_t>(base_ - r.bytes.size());
    return status::error;
}

inline stream::status stream::next(value &out) {
    raw r;
    status st = next(r);
    if (st != status::value) return st;
    // the stream has checked the value already (same limits and flags): this parse succeeds
    auto v = doc_.try_parse(r.bytes, opts_);
    if (!v) {
        error_ = v.error();
        error_.offset += static_cast<std::size_t>(base_ - r.bytes.size());
        return status::error;
    }
    out = *v;
    return status::value;
}

inline result<void> stream::end() {
    mpk_error e = mpk_stream_end(&s_);
    if (e.kind == MPK_OK) return {};
    core_error();
    return error_;
}

} // namespace mpk

#endif
