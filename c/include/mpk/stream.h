/* mpk/stream.h — the streaming unpacker: feed chunks of any size, take whole top-level values.
 *
 * The stream finds where each top-level value ends and hands out its bytes, ready for
 * mpk_reader_init() or mpk_doc_parse(). A value lying whole inside the fed chunk is handed out as a
 * pointer into that chunk (no copy). Only a value cut by a chunk boundary is gathered into the
 * stream's buffer, each byte copied once, as it arrives. So the memory held is one incomplete value
 * plus a stack bounded by the depth limit; lower limits.str/bin/ext for an untrusted peer.
 *
 * Errors (invalid_byte, length_limit, depth_limit, invalid_timestamp, invalid_utf8) are reported as
 * soon as the bytes that show them arrive; truncation only by mpk_stream_end(). Offsets count from
 * the first byte ever fed. Errors are sticky. Do not copy an initialised mpk_stream by value. */
#ifndef MPK_STREAM_H
#define MPK_STREAM_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpk_stream {
    /* the chunk being scanned */
    const uint8_t *chunk;
    size_t chunk_len, chunk_pos;
    /* the value in progress, once it has crossed a chunk boundary */
    uint8_t *buf;
    size_t buf_len, buf_cap;
    int buffering;          /* the value in progress lives in buf */
    size_t value_start;     /* where the value in progress starts in the chunk (not buffering) */
    /* scanner state */
    uint64_t remaining;     /* values owed by the innermost container */
    uint64_t *stack;        /* saved `remaining` of outer containers */
    uint32_t depth, stack_cap;
    uint64_t payload_left;  /* bytes of str/bin/ext payload still to come */
    size_t payload_at;      /* where that payload starts, in buf (for the content check) */
    int check;              /* content check owed when the payload completes */
    uint32_t check_len;
    size_t head_at;         /* offset in the stream of the head being checked */
    uint64_t consumed;      /* bytes of the stream before the current chunk */
    size_t value_base;      /* stream offset of the value in progress */
    mpk_limits limits;
    unsigned flags;
    mpk_error error;
} mpk_stream;

/** An empty stream with the default limits. */
void mpk_stream_init(mpk_stream *s);
/** Changes the limits (NULL: defaults). */
void mpk_stream_set_limits(mpk_stream *s, const mpk_limits *limits);
/** Sets flags (MPK_FLAG_STRICT_UTF8). */
void mpk_stream_set_flags(mpk_stream *s, unsigned flags);
/** Frees the stream's buffer and stack. */
void mpk_stream_destroy(mpk_stream *s);

/** Hands the stream the next chunk. The chunk must stay valid and unchanged until mpk_stream_next()
 *  has returned 0 for it; feeding before that is MPK_ERR_INVALID_ARGUMENT. */
void mpk_stream_feed(mpk_stream *s, const void *data, size_t len);

/** Takes the next complete top-level value: returns 1 and sets *value/*len (valid until the next
 *  call on the stream, and while the chunk is), 0 when the fed bytes are used up (feed more), -1 on
 *  error (see mpk_stream_error()). */
int mpk_stream_next(mpk_stream *s, const uint8_t **value, size_t *len);

/** The input has ended: MPK_ERR_TRUNCATED (at the total length fed) if a value is incomplete.
 *  Returns the stream's error. */
mpk_error mpk_stream_end(mpk_stream *s);

/** The first error ({MPK_OK, 0} while fine). */
MPK__INLINE mpk_error mpk_stream_error(const mpk_stream *s) { return s->error; }

/** Bytes of the incomplete value currently held in the stream's own buffer. */
MPK__INLINE size_t mpk_stream_buffered(const mpk_stream *s) { return s->buffering ? s->buf_len : 0; }

#ifdef __cplusplus
}
#endif
#endif
