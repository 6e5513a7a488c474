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
#include "stack.hpp"
#include "types.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// The speed tricks of the writer (see stream_body_avx2 and advise_huge_pages below): x86-64 with
// GCC or Clang, unless MPK_CPP_NO_FAST_PATH or MPK_NO_STREAMING_STORES (the core's own switch) is
// defined; Linux for the huge-page advice, unless MPK_NO_HUGE_PAGES is defined.
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && !defined(MPK_CPP_NO_FAST_PATH) && \
    !defined(MPK_NO_STREAMING_STORES)
#define MPK_CPP_STREAM_AVX2 1
#include <immintrin.h>
#endif
#if defined(__linux__) && !defined(MPK_NO_HUGE_PAGES) && !defined(MPK_CPP_NO_FAST_PATH)
#include <sys/mman.h>
#if defined(MADV_HUGEPAGE)
#define MPK_CPP_HUGE_PAGES 1
#endif
#endif

namespace mpk {

template <class T, class Enable = void>
struct codec;

namespace detail {

#ifdef MPK_CPP_STREAM_AVX2
/// stream_body_avx2: copies a large str/bin body into the output with 32-byte streaming
/// (non-temporal) stores. The bytes up to the first 64-byte line boundary and the last partial line
/// are copied plainly (a line written partly by plain and partly by streaming stores is slow, as
/// the core measured). Why: the core already copies bodies of 1 KiB and more, 4 MiB or more into the
/// output, with streaming stores (c/src/writer.c: a plain copy first reads every line it overwrites),
/// but with 16-byte SSE2 stores, the only ones every x86-64 has; the seed's Test3/Test4 serialization
/// (2^15 bodies of 8 KiB, 268 MB, one copy each) was 1.16x / 1.31x msgpack-cxx's (its glibc memcpy)
/// in the 14:36 quiet run, the bar being 1.5x. Measured (same process, /tmp copy probe, 2^15
/// bodies of 8 KiB back to back into 268 MB, medians of 7 alternating runs, loaded 2-core Xeon with
/// AVX-512): SSE2 streaming 11.3 GB/s, 32-byte AVX2 streaming 14.4 GB/s, 64-byte AVX-512 15.5 GB/s,
/// glibc memcpy 5.9 GB/s, msgpack-cxx's sbuffer 6.5 GB/s (with huge pages: 14.6, 18.1, 17.5, 6.4,
/// 6.2). AVX2 rather than AVX-512: as fast here, and wider-spread (no frequency drop on older
/// parts). Taken only when the CPU has AVX2 (cpu_has_avx2, asked once); the portable path is the
/// core's writer (SSE2 streaming on x86-64, memcpy elsewhere), which MPK_CPP_NO_FAST_PATH builds
/// use alone and which the tests compare byte for byte.
__attribute__((target("avx2"))) inline void stream_body_avx2(std::uint8_t *dst, const std::uint8_t *src, std::size_t len) noexcept {
    const std::size_t lead = static_cast<std::size_t>(-reinterpret_cast<std::uintptr_t>(dst) & 63);
    std::memcpy(dst, src, lead);
    dst += lead;
    src += lead;
    len -= lead;
    for (; len >= 64; len -= 64, dst += 64, src += 64) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + 32));
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst), a);
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + 32), b);
    }
    std::memcpy(dst, src, len);
}

inline bool cpu_has_avx2() noexcept {
    static const bool yes = __builtin_cpu_supports("avx2") != 0;
    return yes;
}
#endif

/// Streaming stores are ordered only for the thread that made them: before the output is handed on
/// (finish), a fence orders them for every other thread too, as the core does for its own.
inline void order_streaming_stores() noexcept {
#ifdef MPK_CPP_STREAM_AVX2
    _mm_sfence();
#endif
}

/// advise_huge_pages: a growable writer created with an initial capacity of 8 MiB or more asks
/// the kernel for huge pages over it (madvise MADV_HUGEPAGE on its 2 MiB-aligned interior), as the
/// core does for every growable buffer it grows to that size (c/src/internal.h, mpk__advise_huge)
/// but not for the first one. Why: a large output written once is bound by memory, and with 4 KiB
/// pages every 4 KiB of it is also a TLB miss. Measured (same process, the copy probe above):
/// streaming copies of 2^15 8 KiB bodies 11.3 -> 14.6 GB/s (SSE2) and 14.4 -> 18.1 GB/s (AVX2)
/// with the advice. Linux only (elsewhere, and with MPK_NO_HUGE_PAGES, nothing is done); the advice
/// changes no byte and needs no fallback.
inline void advise_huge_pages(void *p, std::size_t size) noexcept {
#ifdef MPK_CPP_HUGE_PAGES
    const std::uintptr_t huge = std::uintptr_t{2} << 20;
    if (!p || size < 4 * huge) return;
    const std::uintptr_t start = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
    const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + size) & ~(huge - 1);
    if (end > start) (void)madvise(reinterpret_cast<void *>(start), end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}

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
    /// Before a codec writes a container whose elements may recurse: true while the thread's stack
    /// has more than mpk::stack_margin bytes left; otherwise fails the value (errc::depth_limit,
    /// unwinding with its path) and returns false (mpk/stack.hpp).
    MPK__STACK_INLINE bool enter() {
        if (MPK__LIKELY(detail::stack_has_room())) return true;
        out_of_stack();
        return false;
    }
    /// Sets the path's root (the top-level type's name) and ends the unwinding.
    void end_value(std::string_view root);

private:
    MPK__STACK_NOINLINE void out_of_stack() {
        fail(errc::depth_limit, "less than " + std::to_string(stack_margin / 1024) + " KiB of the thread's stack left");
    }
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

inline writer::writer(std::size_t initial_capacity) {
    mpk_writer_init_growable(&own_, initial_capacity);
    detail::advise_huge_pages(own_.buf, initial_capacity);
}

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
    detail::order_streaming_stores();
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
