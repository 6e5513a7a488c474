/* mpk/reader.h — the pull reader: one contiguous buffer in, one tag at a time out.
 *
 * A tag is a value's type plus its scalar value, or its length (str/bin/ext, with a zero-copy
 * pointer to the payload) or its count (array/map, whose elements follow as further tags).
 * The reader tracks open containers, so it enforces the depth limit and knows when one value is
 * complete. Every check of spec/README.md runs in its order, with its offsets.
 *
 * Errors are sticky: after the first, every call returns 0 and mpk_reader_error() tells the kind
 * and the byte offset from the start of the buffer. Payload pointers point into the caller's buffer
 * and live as long as it does. Do not copy an initialised mpk_reader by value. */
#ifndef MPK_READER_H
#define MPK_READER_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One token. */
typedef struct mpk_tag {
    mpk_type type;
    int8_t ext_type;       /**< MPK_EXT: the ext type (never -1: that is MPK_TIMESTAMP) */
    uint32_t len;          /**< str/bin/ext: payload bytes; array: elements; map: pairs */
    const uint8_t *data;   /**< str/bin/ext: the payload, inside the input (zero-copy) */
    union {
        int b;             /**< MPK_BOOL */
        uint64_t u;        /**< MPK_UINT */
        int64_t i;         /**< MPK_INT (always negative) */
        float f32;         /**< MPK_FLOAT32 */
        double f64;        /**< MPK_FLOAT64 */
        mpk_timestamp ts;  /**< MPK_TIMESTAMP */
    } v;
} mpk_tag;

#define MPK__READER_SMALL_STACK 16

typedef struct mpk_reader {
    const uint8_t *pos;    /* next byte */
    const uint8_t *end;    /* end of input; pulled to pos on error */
    const uint8_t *start;  /* start of input (offsets count from here) */
    uint64_t remaining;    /* values still owed by the innermost open container */
    uint32_t depth;        /* open containers */
    unsigned flags;        /* MPK_FLAG_STRICT_UTF8 */
    mpk_limits limits;
    mpk_error error;
    uint64_t *big_stack;   /* saved `remaining` of outer containers once deeper than the small one */
    uint32_t big_cap;
    uint64_t small_stack[MPK__READER_SMALL_STACK];
} mpk_reader;

/** Reads `len` bytes at `data` with the default limits and no flags. Allocates nothing until a
 *  value nests deeper than 16 (then a stack bounded by the depth limit and the input length). */
MPK_API void mpk_reader_init(mpk_reader *r, const void *data, size_t len);
/** Changes the limits (NULL: the defaults). Call before reading. */
MPK_API void mpk_reader_set_limits(mpk_reader *r, const mpk_limits *limits);
/** Sets flags (MPK_FLAG_STRICT_UTF8). */
MPK_API void mpk_reader_set_flags(mpk_reader *r, unsigned flags);
/** Frees the deep-nesting stack, if any. */
MPK_API void mpk_reader_destroy(mpk_reader *r);

/** The first error ({MPK_OK, 0} while fine). */
MPK__INLINE mpk_error mpk_reader_error(const mpk_reader *r) { return r->error; }
/** Byte offset of the next token. */
MPK__INLINE size_t mpk_reader_offset(const mpk_reader *r) { return (size_t)(r->pos - r->start); }
/** Open containers around the next token (0 at top level). */
MPK__INLINE uint32_t mpk_reader_depth(const mpk_reader *r) { return r->depth; }
/** Sets the sticky error at `offset` (if none is set yet). */
MPK_API void mpk_reader_flag_error(mpk_reader *r, mpk_error_kind kind, size_t offset);

/** Ends one-shot decoding: MPK_ERR_TRUNCATED at the input length if a container still owes
 *  values, MPK_ERR_TRAILING_BYTES at the first unread byte if bytes remain. Returns the error. */
MPK_API mpk_error mpk_reader_finish(mpk_reader *r);

/* Private slow path and container bookkeeping, called by the inline code: exported from libmpk.so
 * under mpk_inline_* names (see writer.h); not API. */
#define mpk__reader_next_slow mpk_inline_reader_next_slow
#define mpk__reader_close mpk_inline_reader_close
MPK_API int mpk__reader_next_slow(mpk_reader *r, mpk_tag *tag);
MPK_API void mpk__reader_close(mpk_reader *r);

/* One value of the enclosing container is done: the innermost container that this completes is
 * popped inline (a call per container end cost about 20 instructions); a chain of them, or a
 * container deeper than the small stack, goes on in mpk__reader_close. */
MPK__INLINE void mpk__reader_value_done(mpk_reader *r) {
    if (r->depth && --r->remaining == 0) {
        uint32_t d = r->depth;
        if (MPK__LIKELY(d <= MPK__READER_SMALL_STACK)) {
            r->depth = d - 1;
            r->remaining = r->small_stack[d - 1];
            if (MPK__LIKELY(r->remaining != 0 || d == 1)) return;
        }
        mpk__reader_close(r);
    }
}

/** Reads the next tag into *tag. Returns 1, or 0 on error (then see mpk_reader_error()). Fixints,
 *  fixstr, str 8/16 (outside strict UTF-8 mode), bin 8/16 and fixarray/fixmap up to depth 16 are
 *  decoded inline, with the same checks in the same order as the out-of-line path, which takes
 *  everything else (and any of these that fails a check, to report it). */
MPK__INLINE int mpk_reader_next(mpk_reader *r, mpk_tag *tag) {
    const uint8_t *p = r->pos;
    if (MPK__LIKELY(p < r->end)) {
        uint8_t b = *p;
        if (b < 0x80) {
            tag->type = MPK_UINT;
            tag->v.u = b;
        } else if (b >= 0xe0) {
            tag->type = MPK_INT;
            tag->v.i = (int8_t)b;
        } else if (b < 0xa0) {
            uint32_t n = b & 0x0fu;
            int is_map = b < 0x90;
            uint32_t owed = is_map ? 2 * n : n;
            if (n > (is_map ? r->limits.map : r->limits.array) || r->depth >= r->limits.depth ||
                owed > (size_t)(r->end - p - 1) || r->depth >= MPK__READER_SMALL_STACK)
                return mpk__reader_next_slow(r, tag);
            tag->type = is_map ? MPK_MAP : MPK_ARRAY;
            tag->len = n;
            r->pos = p + 1;
            if (n) {
                if (r->depth) r->remaining--; /* one value of the parent, closed later */
                r->small_stack[r->depth++] = r->remaining;
                r->remaining = owed;
                return 1;
            }
            mpk__reader_value_done(r);
            return 1;
        } else if (b < 0xc0 && !(r->flags & MPK_FLAG_STRICT_UTF8)) {
            uint32_t n = b & 0x1fu;
            if (n > r->limits.str || n > (size_t)(r->end - p - 1)) return mpk__reader_next_slow(r, tag);
            tag->type = MPK_STR;
            tag->len = n;
            tag->data = p + 1;
            r->pos = p + 1 + n;
            mpk__reader_value_done(r);
            return 1;
        } else if (b == 0xc4 || b == 0xc5 ||
                   ((b == 0xd9 || b == 0xda) && !(r->flags & MPK_FLAG_STRICT_UTF8))) {
            /* bin 8/16, str 8/16: a slow-path call here cost 62-67 instructions per head (bins,
             * keys and texts over 31 bytes), 16 of them saving and restoring registers */
            size_t left = (size_t)(r->end - p);
            int is_bin = b < 0xd0, wide = b == 0xc5 || b == 0xda;
            size_t hl = wide ? 3 : 2;
            if (left < hl) return mpk__reader_next_slow(r, tag);
            uint32_t n = wide ? mpk__load16(p + 1) : p[1];
            if (n > (is_bin ? r->limits.bin : r->limits.str) || n > left - hl) return mpk__reader_next_slow(r, tag);
            tag->type = is_bin ? MPK_BIN : MPK_STR;
            tag->len = n;
            tag->data = p + hl;
            r->pos = p + hl + n;
            mpk__prefetch_alike(r->pos, hl + n, r->end);
            mpk__reader_value_done(r);
            return 1;
        } else {
            return mpk__reader_next_slow(r, tag);
        }
        r->pos = p + 1;
        mpk__reader_value_done(r);
        return 1;
    }
    return mpk__reader_next_slow(r, tag);
}

/** Skips one whole value (a container with everything in it) without building anything, and
 *  without recursion. Returns 1, or 0 on error. */
MPK_API int mpk_reader_skip(mpk_reader *r);

/* Expect-calls: read the next tag and require a type; another type is MPK_ERR_TYPE at its head. */
/** An array head; *count = elements. */
MPK_API int mpk_read_array(mpk_reader *r, uint32_t *count);
/** A map head; *count = pairs. */
MPK_API int mpk_read_map(mpk_reader *r, uint32_t *count);
/** A non-negative integer. */
MPK_API int mpk_read_uint(mpk_reader *r, uint64_t *value);
/** An integer that fits int64. */
MPK_API int mpk_read_int(mpk_reader *r, int64_t *value);
/** A str: *data points into the input (not NUL-terminated). */
MPK_API int mpk_read_str(mpk_reader *r, const char **data, uint32_t *len);
/** A bin: *data points into the input. */
MPK_API int mpk_read_bin(mpk_reader *r, const uint8_t **data, uint32_t *len);

#ifdef __cplusplus
}
#endif
#endif
