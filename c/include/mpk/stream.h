/* mpk/stream.h — the streaming unpacker: feed chunks of any size, take whole top-level values.
 *
 * The stream finds where each top-level value ends and hands out its bytes, ready for
 * mpk_reader_init() or mpk_doc_parse(). A value lying whole inside the fed chunk is handed out as a
 * pointer into that chunk (no copy). Only a value cut by a chunk boundary is gathered into the
 * stream's buffer, each byte copied once, as it arrives. So the memory held is one incomplete value
 * plus a stack bounded by the depth limit; lower limits.str/bin/ext for an untrusted peer.
 *
 * Errors (invalid_byte, length_limit, depth_limit, invalid_timestamp, invalid_utf8) are reported as
 * soon as the bytes that prove them arrive (an ext -1 of a length other than 4, 8 or 12 at its
 * complete head, before its payload); truncation only by mpk_stream_end(). Offsets count from
 * the first byte ever fed. Errors are sticky. Do not copy an initialised mpk_stream by value. */
#ifndef MPK_STREAM_H
#define MPK_STREAM_H

#include "common.h"
#include "dom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Private: one open container (its parent's owed values, where its head is, and the input length
 * a one-shot decoder would require for its declared count). */
typedef struct mpk__stream_frame {
    uint64_t saved;
    uint64_t head_at;
    uint64_t need_end;
} mpk__stream_frame;

typedef struct mpk_stream {
    /* the chunk being scanned */
    const uint8_t *chunk;
    size_t chunk_len, chunk_pos;
    uint64_t consumed;       /* stream offset of chunk[0] */
    /* the value in progress */
    int in_value;
    size_t value_start;      /* its first byte in the chunk, while not buffering */
    uint64_t value_base;     /* stream offset of its first byte */
    int buffering;           /* it crossed a chunk boundary and lives in buf */
    int release;             /* buf was handed out: empty it on the next call */
    uint8_t *buf;
    size_t buf_len, buf_cap;
    size_t head_off;         /* buffering: where the current head starts in buf */
    uint64_t payload_left;   /* buffering: str/bin/ext payload bytes still to come */
    size_t payload_at;       /* buffering: where that payload starts in buf */
    uint64_t payload_len;
    int check;               /* content check owed when the payload completes */
    uint64_t check_head;     /* stream offset of that payload's head */
    /* containers */
    uint64_t remaining;      /* values owed at the current level (the top level owes one) */
    mpk__stream_frame *stack;
    uint32_t depth, stack_cap;
    mpk_limits limits;
    unsigned flags;
    mpk_error error;
} mpk_stream;

/** An empty stream with the default limits. */
MPK_API void mpk_stream_init(mpk_stream *s);
/** Changes the limits (NULL: defaults). */
MPK_API void mpk_stream_set_limits(mpk_stream *s, const mpk_limits *limits);
/** Sets flags (MPK_FLAG_STRICT_UTF8). */
MPK_API void mpk_stream_set_flags(mpk_stream *s, unsigned flags);
/** Frees the stream's buffer and stack. */
MPK_API void mpk_stream_destroy(mpk_stream *s);

/** Hands the stream the next chunk. The chunk must stay valid and unchanged until mpk_stream_next()
 *  has returned 0 for it; feeding before that is MPK_ERR_INVALID_ARGUMENT. */
MPK_API void mpk_stream_feed(mpk_stream *s, const void *data, size_t len);

/** Takes the next complete top-level value: returns 1 and sets *value and *len (valid until the next
 *  call on the stream, and while the chunk is), 0 when the fed bytes are used up (feed more), -1 on
 *  error (see mpk_stream_error()). */
MPK_API int mpk_stream_next(mpk_stream *s, const uint8_t **value, size_t *len);

/** Like mpk_stream_next(), but parses the value into `doc` (replacing its tree) and sets *root.
 *  A value lying whole in the chunk is parsed straight from it, in one pass (the stream does not
 *  scan it first); a value cut by a chunk boundary is gathered as usual, then parsed. The value is
 *  checked with the stream's limits and MPK_FLAG_STRICT_UTF8, not the doc's (the doc keeps them,
 *  and its MPK_FLAG_COPY applies). Errors and their offsets are the stream's (see
 *  mpk_stream_error()), the same as from mpk_stream_next(). Zero-copy payloads point into the chunk
 *  or the stream's buffer, valid as mpk_stream_next()'s value would be; nodes live until the doc's
 *  next parse. */
MPK_API int mpk_stream_next_doc(mpk_stream *s, mpk_doc *doc, const mpk_node **root);

/** The input has ended: MPK_ERR_TRUNCATED if a value is incomplete (at the offset a one-shot
 *  decoder of everything fed would report), MPK_ERR_INVALID_ARGUMENT if mpk_stream_next() was not
 *  called until it returned 0. Returns the stream's error. */
MPK_API mpk_error mpk_stream_end(mpk_stream *s);

/** The first error ({MPK_OK, 0} while fine). */
MPK__INLINE mpk_error mpk_stream_error(const mpk_stream *s) { return s->error; }

/** Bytes of the incomplete value currently held in the stream's own buffer. */
MPK__INLINE size_t mpk_stream_buffered(const mpk_stream *s) { return s->buffering ? s->buf_len : 0; }

#ifdef __cplusplus
}
#endif
#endif
