/* mpk/writer.h — the writer: values in, MessagePack bytes out, always in shortest form.
 *
 * Five outputs: a growable heap buffer, a growable buffer the caller owns (grown through the
 * caller's callback), a caller's fixed buffer, a flush callback (file, socket), and reference
 * chunks (large str/bin bodies kept by pointer, for writev).
 *
 * Errors are sticky: the first one is kept, every later call does nothing, and the caller checks
 * once with mpk_writer_finish() (or mpk_writer_error()). A writer is not thread-safe; distinct
 * writers are independent. Do not copy an initialised mpk_writer by value. */
#ifndef MPK_WRITER_H
#define MPK_WRITER_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Receives `len` bytes to send on; returns 0 on success, anything else is MPK_ERR_IO. The bytes
 *  are only valid during the call. */
typedef int (*mpk_flush_fn)(void *ctx, const void *data, size_t len);

/** Gives the writer a buffer of at least `new_size` bytes holding the first bytes of `old` (NULL
 *  for the first buffer), like realloc(old, new_size); returns NULL on failure, which is
 *  MPK_ERR_NO_MEMORY. After a NULL return the writer forgets `old` and never touches it again,
 *  so the callback may already have freed it. */
typedef void *(*mpk_grow_fn)(void *ctx, void *old, size_t new_size);

/** One piece of reference-chunk output: `len` bytes at `data`. Same members, in the same order, as
 *  POSIX struct iovec (base, then length), so filling an iovec array is a plain loop. */
typedef struct mpk_chunk {
    const void *data;
    size_t len;
} mpk_chunk;

typedef struct mpk_writer {
    uint8_t *pos;          /* next byte to write */
    uint8_t *end;          /* end of the space; set to pos on error so every fast path goes slow */
    uint8_t *buf;          /* start of the buffer */
    uint8_t *cap_end;      /* real end of the buffer (end may be pulled in on error) */
    int mode;              /* private: growable, fixed, flush or chunks */
    int owns_buf;          /* private: buf was malloc'd by the writer */
    mpk_error_kind error;  /* first error, MPK_OK while fine */
    mpk_flush_fn flush;
    void *flush_ctx;
    uint64_t flushed;      /* bytes already handed to the flush callback */
    size_t ref_threshold;  /* chunk mode: bodies of at least this many bytes are referenced */
    mpk_chunk *chunks;     /* chunk mode: the pieces so far (buffer runs and referenced bodies) */
    size_t nchunks, chunks_cap;
    size_t run_at;         /* chunk mode: buffer offset where the current, unlisted run starts */
    mpk_grow_fn grow;      /* caller-grown mode: the caller's reallocation callback */
    void *grow_ctx;
    /* private: the writer checks (mpk_writer_set_checks), which read the output back as it is
     * handed on: how far the buffer was read, the payload bytes still to pass, a head cut short,
     * and the values each open container still owes (the innermost last) */
    int checks;
    size_t check_at;
    uint64_t check_skip;
    uint8_t check_head[9];
    uint8_t check_have;
    uint32_t check_depth, check_cap;
    uint64_t *check_owed;  /* check_small, or the heap once deeper than 8 */
    uint64_t check_small[8];
} mpk_writer;

/* ------------------------------------------------------------------------------------------------
 * Lifecycle (Public)
 * ----------------------------------------------------------------------------------------------*/

/** Growable heap output starting at `initial_capacity` bytes (0 picks a default). Read the result
 *  with mpk_writer_data()/mpk_writer_size() or take it with mpk_writer_release(). */
MPK_API void mpk_writer_init_growable(mpk_writer *w, size_t initial_capacity);

/** Growable output in memory the caller owns: the first buffer is `grow(ctx, NULL, initial)` (0
 *  picks a default) and every growth is `grow(ctx, buf, bigger)`. The writer never frees the buffer
 *  and never gives the kernel advice about it (no huge-page madvise: the memory may be part of a
 *  larger object of the caller's). Read the result with mpk_writer_data()/mpk_writer_size(), after
 *  mpk_writer_finish(); the buffer stays the caller's whatever happens. A callback that fails,
 *  first or later, leaves the sticky MPK_ERR_NO_MEMORY. Lets a binding build its result object in
 *  place, with no final copy. mpk_writer_reset() keeps the buffer; after a failed callback the
 *  writer holds none and stays MPK_ERR_NO_MEMORY until initialised again. */
MPK_API void mpk_writer_init_alloc(mpk_writer *w, size_t initial, mpk_grow_fn grow, void *ctx);

/** Output into the caller's `buf` of `cap` bytes; running out is MPK_ERR_BUFFER_FULL. The writer
 *  never frees `buf`. */
MPK_API void mpk_writer_init_buf(mpk_writer *w, void *buf, size_t cap);

/** Buffered output through `fn(ctx, data, len)`, called whenever the buffer fills and by
 *  mpk_writer_finish(). `buf`/`cap` is the staging buffer; with buf == NULL the writer mallocs `cap`
 *  bytes (0 picks 64 KiB). Bodies larger than the staging buffer go straight to `fn`, uncopied. */
MPK_API void mpk_writer_init_flush(mpk_writer *w, void *buf, size_t cap, mpk_flush_fn fn, void *ctx);

/** Reference-chunk output: like growable, but a str/bin body of at least `ref_threshold` bytes
 *  (0 picks 1024; str bodies under 128 bytes are copied whatever the threshold) is not copied: the writer keeps its pointer, and the caller must keep that memory
 *  alive and unchanged until it has sent the chunks. Get them with mpk_writer_chunks(). */
MPK_API void mpk_writer_init_chunks(mpk_writer *w, size_t ref_threshold);

/** Ends the output: flush mode sends what is buffered. Returns the first error, or MPK_OK. The
 *  writer may be reset or destroyed afterwards. */
MPK_API mpk_error_kind mpk_writer_finish(mpk_writer *w);

/** Frees what the writer allocated (never a caller's buffer). Safe on a zeroed writer, and a second
 *  time: the writer is left holding nothing (mpk_writer_data() NULL, size 0, no error). */
MPK_API void mpk_writer_destroy(mpk_writer *w);

/** Empties the output and clears the error, keeping the buffer for reuse (one allocation for many
 *  messages). Flush mode: unflushed bytes are dropped. */
MPK_API void mpk_writer_reset(mpk_writer *w);

/** Drops every byte after the first `size` and the sticky error with them, keeping the buffer: a
 *  binding that failed halfway through a value rewinds to where the value began, and what was
 *  written before stays. Growable, caller-grown and fixed modes only, with `size` at most
 *  mpk_writer_size() and between two top-level values (the writer checks restart there); `size` 0
 *  is mpk_writer_reset(). Returns MPK_OK, or MPK_ERR_INVALID_ARGUMENT (another mode, no buffer, or
 *  `size` beyond the output) with nothing changed. */
MPK_API mpk_error_kind mpk_writer_rewind(mpk_writer *w, size_t size);

/** Writer checks: with `on`, the writer reads its own output back (each part once, when it is
 *  flushed, referenced or finished) and verifies that every array and map received as many values
 *  as its head declared. A container left short when the writer is finished (or a str/bin/ext
 *  body, or a head, left incomplete) is the sticky MPK_ERR_COUNT_MISMATCH: mpk_writer_finish()
 *  returns it and, in flush mode, does not send the malformed tail (parts flushed before were
 *  complete heads and bodies, but the value they begin is not). A value too many cannot be told
 *  from the next top-level value unless the container is closed with mpk_write_array_end() /
 *  mpk_write_map_end(). On by default when libmpk was compiled without NDEBUG (a debug build),
 *  off otherwise; call right after the init (turning them on later starts checking from there). */
MPK_API void mpk_writer_set_checks(mpk_writer *w, int on);

/** Optional container ends, for the writer checks: the innermost open array (map) must have
 *  received exactly its declared values, else MPK_ERR_COUNT_MISMATCH. Without checks they do
 *  nothing and write nothing. */
MPK_API void mpk_write_array_end(mpk_writer *w);
MPK_API void mpk_write_map_end(mpk_writer *w);

/** The first error, or MPK_OK. */
MPK__INLINE mpk_error_kind mpk_writer_error(const mpk_writer *w) { return w->error; }

/** Sets the sticky error (if none is set yet): later calls do nothing. */
MPK_API void mpk_writer_flag_error(mpk_writer *w, mpk_error_kind kind);

/** Bytes in the writer's buffer (growable/fixed: the whole output; flush: not yet flushed; chunks:
 *  only the copied bytes). Valid until the next write. */
MPK__INLINE const uint8_t *mpk_writer_data(const mpk_writer *w) { return w->buf; }
MPK__INLINE size_t mpk_writer_size(const mpk_writer *w) { return (size_t)(w->pos - w->buf); }

/** Growable mode: hands the buffer to the caller (free it with free()) and empties the writer; the
 *  next mpk_writer_reset() gives it a new buffer. Returns NULL on error or in another mode. */
MPK_API uint8_t *mpk_writer_release(mpk_writer *w, size_t *size);

/** Chunk mode, after mpk_writer_finish(): the output as `*count` pieces in order, pointing into the
 *  writer's buffer or at the referenced bodies. Valid until the next write, reset or destroy.
 *  Returns 0 on error. */
MPK_API int mpk_writer_chunks(mpk_writer *w, const mpk_chunk **chunks, size_t *count);

/** Flush callbacks for a stdio FILE* (ctx) and a POSIX file descriptor (ctx = (void*)(intptr_t)fd;
 *  retries short writes and EINTR). */
MPK_API int mpk_flush_file(void *ctx, const void *data, size_t len);
MPK_API int mpk_flush_fd(void *ctx, const void *data, size_t len);

/* ------------------------------------------------------------------------------------------------
 * Private slow paths
 * ----------------------------------------------------------------------------------------------*/
/* The out-of-line halves of the inline functions: libmpk.so exports them, since the inline code
 * compiled into a program calls them, under mpk_inline_* names (no mpk__ symbol leaves the
 * library). They are not API: call the inline functions. */
#define mpk__writer_make_room mpk_inline_writer_make_room
#define mpk__write_body mpk_inline_write_body
#define mpk__write_str_slow mpk_inline_write_str_slow
/* Makes room for n contiguous bytes (grow, flush) or sets the error; 1 if the room is there. */
MPK_API int mpk__writer_make_room(mpk_writer *w, size_t n);
MPK_API void mpk__write_body(mpk_writer *w, const void *data, size_t len);
MPK_API void mpk__write_str_slow(mpk_writer *w, const void *data, size_t len);

MPK__INLINE int mpk__writer_room(mpk_writer *w, size_t n) {
    if (MPK__LIKELY((size_t)(w->end - w->pos) >= n)) return 1;
    return mpk__writer_make_room(w, n);
}

/* ------------------------------------------------------------------------------------------------
 * Values (Public). Each checks capacity once and stores big-endian fields in place.
 * ----------------------------------------------------------------------------------------------*/

MPK__INLINE void mpk_write_nil(mpk_writer *w) {
    if (!mpk__writer_room(w, 1)) return;
    *w->pos++ = 0xc0;
}

MPK__INLINE void mpk_write_bool(mpk_writer *w, int value) {
    if (!mpk__writer_room(w, 1)) return;
    *w->pos++ = value ? 0xc3 : 0xc2;
}

/** Any non-negative integer, in the shortest of positive fixint, uint 8/16/32/64. */
MPK__INLINE void mpk_write_uint(mpk_writer *w, uint64_t v) {
    if (v < 0x80) {
        if (!mpk__writer_room(w, 1)) return;
        *w->pos++ = (uint8_t)v;
    } else if (v <= 0xff) {
        if (!mpk__writer_room(w, 2)) return;
        w->pos[0] = 0xcc; w->pos[1] = (uint8_t)v; w->pos += 2;
    } else if (v <= 0xffff) {
        if (!mpk__writer_room(w, 3)) return;
        w->pos[0] = 0xcd; mpk__store16(w->pos + 1, (uint16_t)v); w->pos += 3;
    } else if (v <= 0xffffffffu) {
        if (!mpk__writer_room(w, 5)) return;
        w->pos[0] = 0xce; mpk__store32(w->pos + 1, (uint32_t)v); w->pos += 5;
    } else {
        if (!mpk__writer_room(w, 9)) return;
        w->pos[0] = 0xcf; mpk__store64(w->pos + 1, v); w->pos += 9;
    }
}

/** Any integer, in the shortest of positive or negative fixint, uint 8/16/32/64 (v >= 0) or int
 *  8/16/32/64 (v < 0): the bytes mpk_write_uint writes for a non-negative v. */
MPK__INLINE void mpk_write_int(mpk_writer *w, int64_t v) {
    /* Speed trick (width first): the width is found by one unsigned range test per width, and the
     * sign only picks the head byte (0xcc..0xcf, or 0xd0..0xd3 for v < 0: 4 apart). Testing the sign
     * first put an unpredictable branch in front of every int of mixed-sign data (rb_integers,
     * 10000 ints within +-2^31: 0.50 -> 0.00 mispredicted branches per int under callgrind's
     * branch simulator, and about 3x faster in a same-process A/B; numbers in c/README.md). The
     * portable fallback is this code: plain integer arithmetic. */
    uint64_t u = (uint64_t)v;
    uint8_t *p;
    if (u + 32 < 32 + 128) { /* -32..127: positive or negative fixint */
        if (!mpk__writer_room(w, 1)) return;
        p = w->pos;
        *p = (uint8_t)u;
        w->pos = p + 1;
        return;
    }
    /* the stores go through p, not w->pos: a byte store may alias w->pos, which would be read
     * again after every store */
    uint8_t neg = (uint8_t)((u >> 63) << 2);
    if (u + 128 < 128 + 256) { /* -128..-33, 128..255 */
        if (!mpk__writer_room(w, 2)) return;
        p = w->pos;
        p[0] = (uint8_t)(0xcc + neg); p[1] = (uint8_t)u;
        w->pos = p + 2;
    } else if (u + 32768 < 32768 + 65536) { /* -32768..-129, 256..65535 */
        if (!mpk__writer_room(w, 3)) return;
        p = w->pos;
        p[0] = (uint8_t)(0xcd + neg); mpk__store16(p + 1, (uint16_t)u);
        w->pos = p + 3;
    } else if (u + 0x80000000u < 0x80000000u + (uint64_t)0x100000000u) { /* -2^31..-32769, 65536..2^32-1 */
        if (!mpk__writer_room(w, 5)) return;
        p = w->pos;
        p[0] = (uint8_t)(0xce + neg); mpk__store32(p + 1, (uint32_t)u);
        w->pos = p + 5;
    } else {
        if (!mpk__writer_room(w, 9)) return;
        p = w->pos;
        p[0] = (uint8_t)(0xcf + neg); mpk__store64(p + 1, u);
        w->pos = p + 9;
    }
}

/** float 32, exactly as given (never widened). */
MPK__INLINE void mpk_write_float32(mpk_writer *w, float v) {
    uint32_t bits;
    if (!mpk__writer_room(w, 5)) return;
    memcpy(&bits, &v, 4);
    w->pos[0] = 0xca; mpk__store32(w->pos + 1, bits); w->pos += 5;
}

/** float 64, exactly as given (never narrowed). */
MPK__INLINE void mpk_write_float64(mpk_writer *w, double v) {
    uint64_t bits;
    if (!mpk__writer_room(w, 9)) return;
    memcpy(&bits, &v, 8);
    w->pos[0] = 0xcb; mpk__store64(w->pos + 1, bits); w->pos += 9;
}

/** Array head of `count` elements (fixarray, array 16, array 32); the elements follow. */
MPK__INLINE void mpk_write_array(mpk_writer *w, uint32_t count) {
    if (count <= 15) {
        if (!mpk__writer_room(w, 1)) return;
        *w->pos++ = (uint8_t)(0x90 | count);
    } else if (count <= 0xffff) {
        if (!mpk__writer_room(w, 3)) return;
        w->pos[0] = 0xdc; mpk__store16(w->pos + 1, (uint16_t)count); w->pos += 3;
    } else {
        if (!mpk__writer_room(w, 5)) return;
        w->pos[0] = 0xdd; mpk__store32(w->pos + 1, count); w->pos += 5;
    }
}

/** Map head of `count` key/value pairs (fixmap, map 16, map 32); 2*count values follow. */
MPK__INLINE void mpk_write_map(mpk_writer *w, uint32_t count) {
    if (count <= 15) {
        if (!mpk__writer_room(w, 1)) return;
        *w->pos++ = (uint8_t)(0x80 | count);
    } else if (count <= 0xffff) {
        if (!mpk__writer_room(w, 3)) return;
        w->pos[0] = 0xde; mpk__store16(w->pos + 1, (uint16_t)count); w->pos += 3;
    } else {
        if (!mpk__writer_room(w, 5)) return;
        w->pos[0] = 0xdf; mpk__store32(w->pos + 1, count); w->pos += 5;
    }
}

/** str of `len` bytes (written as given; not checked for UTF-8). len > 2^32-1 is
 *  MPK_ERR_INVALID_ARGUMENT. */
MPK__INLINE void mpk_write_str(mpk_writer *w, const void *data, size_t len) {
    size_t room = (size_t)(w->end - w->pos);
    if (len <= 31 && room > len) {
        *w->pos = (uint8_t)(0xa0 | len);
        if (len) memcpy(w->pos + 1, data, len); /* data may be NULL when len is 0 */
        w->pos += 1 + len;
        return;
    }
    if (len <= 0xff && room >= len + 2 && len < 128) {
        /* str 8 up to 127 bytes stays inline (keys and short texts); longer bodies are copy-bound */
        w->pos[0] = 0xd9;
        w->pos[1] = (uint8_t)len;
        memcpy(w->pos + 2, data, len);
        w->pos += 2 + len;
        return;
    }
    mpk__write_str_slow(w, data, len);
}

/** NUL-terminated str. */
MPK__INLINE void mpk_write_cstr(mpk_writer *w, const char *s) { mpk_write_str(w, s, strlen(s)); }

/** str head only (fixstr, str 8/16/32); then write exactly `len` bytes with mpk_write_bytes(). */
MPK_API void mpk_write_str_head(mpk_writer *w, uint32_t len);
/** bin of `len` bytes (bin 8/16/32). */
MPK_API void mpk_write_bin(mpk_writer *w, const void *data, size_t len);
/** bin head only; then `len` bytes with mpk_write_bytes(). */
MPK_API void mpk_write_bin_head(mpk_writer *w, uint32_t len);
/** ext of `type` (-128..127) with a `len`-byte payload (fixext 1/2/4/8/16, ext 8/16/32). Type -1
 *  is the timestamp type: prefer mpk_write_timestamp(). */
MPK_API void mpk_write_ext(mpk_writer *w, int8_t type, const void *data, size_t len);
/** ext head only; then `len` payload bytes with mpk_write_bytes(). */
MPK_API void mpk_write_ext_head(mpk_writer *w, int8_t type, uint32_t len);
/** Timestamp in its shortest form (32, 64 or 96 bit); nsec > 999999999 is MPK_ERR_INVALID_TIMESTAMP. */
MPK_API void mpk_write_timestamp(mpk_writer *w, int64_t sec, uint32_t nsec);
/** Raw bytes, unframed: bodies after a *_head call, or already-encoded MessagePack. In chunk mode
 *  bodies of at least ref_threshold bytes are referenced, not copied. */
MPK__INLINE void mpk_write_bytes(mpk_writer *w, const void *data, size_t len) {
    if (len < 64 && (size_t)(w->end - w->pos) >= len) {
        if (len) memcpy(w->pos, data, len);
        w->pos += len;
        return;
    }
    mpk__write_body(w, data, len);
}

#ifdef __cplusplus
}
#endif
#endif
