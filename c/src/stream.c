/* stream.c — the streaming unpacker. Scans tokens straight from the fed chunk; only a value cut by
 * the chunk's end is gathered into the stream's buffer, each byte copied once as it arrives. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise, for mpk__advise_huge (internal.h) */
#endif
#include "mpk/stream.h"

#include <stdlib.h>

#include "internal.h"

enum { CHECK_NONE, CHECK_UTF8, CHECK_TIMESTAMP };

/* What one complete head says. */
typedef struct token {
    uint64_t payload; /* str/bin/ext payload bytes that follow */
    uint64_t count;   /* container: values that follow (maps: 2 per pair) */
    int container;
    int check;
} token;

/* ================================================================================================
 * Lifecycle (Public)
 * ==============================================================================================*/

void mpk_stream_init(mpk_stream *s) {
    memset(s, 0, sizeof *s);
    s->limits = mpk_limits_default();
}

void mpk_stream_set_limits(mpk_stream *s, const mpk_limits *limits) {
    s->limits = limits ? *limits : mpk_limits_default();
}

void mpk_stream_set_flags(mpk_stream *s, unsigned flags) { s->flags = flags; }

void mpk_stream_destroy(mpk_stream *s) {
    free(s->buf);
    free(s->stack);
    s->buf = NULL;
    s->stack = NULL;
    s->buf_cap = s->stack_cap = 0;
}

static int fail(mpk_stream *s, mpk_error_kind kind, uint64_t at) {
    if (s->error.kind == MPK_OK) {
        s->error.kind = kind;
        s->error.offset = (size_t)at;
    }
    return -1;
}

void mpk_stream_feed(mpk_stream *s, const void *data, size_t len) {
    if (s->error.kind != MPK_OK) return;
    if (s->chunk_pos < s->chunk_len) {
        fail(s, MPK_ERR_INVALID_ARGUMENT, s->consumed + s->chunk_pos);
        return;
    }
    s->consumed += s->chunk_len;
    s->chunk = (const uint8_t *)data;
    s->chunk_len = data ? len : 0;
    s->chunk_pos = 0;
}

mpk_error mpk_stream_end(mpk_stream *s) {
    if (s->error.kind != MPK_OK) return s->error;
    if (!s->in_value && s->chunk_pos < s->chunk_len) {
        /* values were left unread in the last chunk: say so rather than drop them silently */
        fail(s, MPK_ERR_INVALID_ARGUMENT, s->consumed + s->chunk_pos);
        return s->error;
    }
    if (!s->in_value) return s->error;
    /* Report what a one-shot decoder of everything fed would: the first open container whose
     * declared count cannot fit, else the token cut short, else the end of the input. */
    uint64_t total = s->consumed + s->chunk_len;
    for (uint32_t i = 0; i < s->depth; i++)
        if (s->stack[i].need_end > total) {
            fail(s, MPK_ERR_TRUNCATED, s->stack[i].head_at);
            return s->error;
        }
    if (s->buffering && s->payload_left) fail(s, MPK_ERR_TRUNCATED, s->check_head);
    else if (s->buffering && s->buf_len > s->head_off) fail(s, MPK_ERR_TRUNCATED, s->value_base + s->head_off);
    else fail(s, MPK_ERR_TRUNCATED, total);
    return s->error;
}

/* ================================================================================================
 * Scanning (Private)
 * ==============================================================================================*/

static int append(mpk_stream *s, const uint8_t *data, size_t len) {
    if (len > s->buf_cap - s->buf_len) {
        /* grows with the bytes that arrived, never with a declared length */
        size_t cap = s->buf_cap ? s->buf_cap : 256;
        while (cap - s->buf_len < len) {
            if (cap > SIZE_MAX / 2) return 0;
            cap *= 2;
        }
        uint8_t *buf = (uint8_t *)realloc(s->buf, cap);
        if (!buf) return 0;
        s->buf = buf;
        s->buf_cap = cap;
        mpk__advise_huge(buf, cap);
    }
    if (len) memcpy(s->buf + s->buf_len, data, len);
    s->buf_len += len;
    return 1;
}

/* Decodes a complete head at stream offset `at`: limits, depth, and what follows it. */
static int take_head(mpk_stream *s, const uint8_t *h, uint64_t at, token *t) {
    uint8_t b = h[0];
    uint64_t n = 0;
    t->payload = t->count = 0;
    t->container = 0;
    t->check = CHECK_NONE;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3 || (b >= 0xca && b <= 0xd3))
        return 1; /* fixed-size scalars: the head is the whole value */
    if (b <= 0x8f) { n = b & 0x0f; goto map; }
    if (b <= 0x9f) { n = b & 0x0f; goto array; }
    if (b <= 0xbf) { n = b & 0x1f; goto str; }
    switch (b) {
    case 0xc4: n = h[1]; goto bin;
    case 0xc5: n = mpk__load16(h + 1); goto bin;
    case 0xc6: n = mpk__load32(h + 1); goto bin;
    case 0xc7: n = h[1]; goto ext;
    case 0xc8: n = mpk__load16(h + 1); goto ext;
    case 0xc9: n = mpk__load32(h + 1); goto ext;
    case 0xd4: n = 1; goto ext;
    case 0xd5: n = 2; goto ext;
    case 0xd6: n = 4; goto ext;
    case 0xd7: n = 8; goto ext;
    case 0xd8: n = 16; goto ext;
    case 0xd9: n = h[1]; goto str;
    case 0xda: n = mpk__load16(h + 1); goto str;
    case 0xdb: n = mpk__load32(h + 1); goto str;
    case 0xdc: n = mpk__load16(h + 1); goto array;
    case 0xdd: n = mpk__load32(h + 1); goto array;
    case 0xde: n = mpk__load16(h + 1); goto map;
    default: n = mpk__load32(h + 1); goto map; /* 0xdf */
    }
str:
    if (n > s->limits.str) return fail(s, MPK_ERR_LENGTH_LIMIT, at);
    t->payload = n;
    t->check = (s->flags & MPK_FLAG_STRICT_UTF8) ? CHECK_UTF8 : CHECK_NONE;
    return 1;
bin:
    if (n > s->limits.bin) return fail(s, MPK_ERR_LENGTH_LIMIT, at);
    t->payload = n;
    return 1;
ext:
    if (n > s->limits.ext) return fail(s, MPK_ERR_LENGTH_LIMIT, at);
    t->payload = n;
    if ((int8_t)h[mpk__head_size(b) - 1] == -1) {
        /* A timestamp's length is proven wrong by the head alone: say so now, not after gathering
         * a body of up to 4 GiB that can only be rejected (spec/README.md, Streaming errors). */
        if (n != 4 && n != 8 && n != 12) return fail(s, MPK_ERR_INVALID_TIMESTAMP, at);
        t->check = CHECK_TIMESTAMP;
    }
    return 1;
array:
    if (n > s->limits.array) return fail(s, MPK_ERR_LENGTH_LIMIT, at);
    if (s->depth >= s->limits.depth) return fail(s, MPK_ERR_DEPTH_LIMIT, at);
    t->container = 1;
    t->count = n;
    return 1;
map:
    if (n > s->limits.map) return fail(s, MPK_ERR_LENGTH_LIMIT, at);
    if (s->depth >= s->limits.depth) return fail(s, MPK_ERR_DEPTH_LIMIT, at);
    t->container = 1;
    t->count = 2 * n;
    return 1;
}

static int check_content(mpk_stream *s, int check, const uint8_t *p, uint64_t len, uint64_t at) {
    if (check == CHECK_UTF8 && !mpk_utf8_valid(p, (size_t)len)) return fail(s, MPK_ERR_INVALID_UTF8, at);
    if (check == CHECK_TIMESTAMP) {
        mpk_timestamp ts;
        if (!mpk__decode_timestamp(p, (uint32_t)len, &ts)) return fail(s, MPK_ERR_INVALID_TIMESTAMP, at);
    }
    return 1;
}

/* Opens a container (head at `at`, `hs` bytes, `count` values). The depth limit was checked, and
 * each level took a head byte, so the stack is bounded by both. */
static int push(mpk_stream *s, uint64_t at, unsigned hs, uint64_t count) {
    if (s->depth == s->stack_cap) {
        uint32_t cap = s->stack_cap ? s->stack_cap * 2 : 16;
        mpk__stream_frame *st = (mpk__stream_frame *)realloc(s->stack, (size_t)cap * sizeof *st);
        if (!st) return fail(s, MPK_ERR_NO_MEMORY, at);
        s->stack = st;
        s->stack_cap = cap;
    }
    mpk__stream_frame *f = &s->stack[s->depth++];
    f->saved = s->remaining;
    f->head_at = at;
    f->need_end = at + hs + count;
    s->remaining = count;
    return 1;
}

/* One value is complete; 1 when that completes the top-level value. */
static int element_done(mpk_stream *s) {
    while (--s->remaining == 0) {
        if (s->depth == 0) return 1;
        s->remaining = s->stack[--s->depth].saved;
    }
    return 0;
}

/* Moves the value in progress [value_start, chunk end) into the buffer. */
static int start_buffering(mpk_stream *s) {
    s->buf_len = 0;
    if (!append(s, s->chunk + s->value_start, s->chunk_len - s->value_start))
        return fail(s, MPK_ERR_NO_MEMORY, s->value_base);
    s->buffering = 1;
    s->chunk_pos = s->chunk_len;
    return 0;
}

/* Scans in the chunk; returns 1 with a value, 0 when the chunk ran out, -1 on error. */
static int scan_chunk(mpk_stream *s, const uint8_t **value, size_t *len) {
    const uint8_t *const chunk = s->chunk, *const end = chunk + s->chunk_len;
    const uint8_t *p = chunk + s->chunk_pos;
    token t;
    for (;;) {
        if (p == end) {
            s->head_off = (size_t)(p - chunk) - s->value_start;
            return start_buffering(s);
        }
        const uint8_t b = *p;
        /* Fixints and fixarray/fixmap that fit the limits and the stack are taken here: through
         * take_head and push they cost about 20 and 33 instructions each, most of the 170 per
         * [1, 2] message (callgrind). Anything else, or a check that fails, takes the full path. */
        if (b <= 0x7f || b >= 0xe0) {
            p++;
            goto element;
        }
        uint64_t at = s->consumed + (uint64_t)(p - chunk);
        if (b <= 0x9f && (b & 0x0f) != 0) {
            uint64_t n = b & 0x0f;
            int is_map = b <= 0x8f;
            if (n <= (is_map ? s->limits.map : s->limits.array) && s->depth < s->limits.depth &&
                s->depth < s->stack_cap) {
                uint64_t count = is_map ? 2 * n : n;
                mpk__stream_frame *f = &s->stack[s->depth++];
                f->saved = s->remaining;
                f->head_at = at;
                f->need_end = at + 1 + count;
                s->remaining = count;
                p++;
                continue;
            }
        }
        if (b == 0xc1) return fail(s, MPK_ERR_INVALID_BYTE, at);
        unsigned hs = mpk__head_size(b);
        if ((size_t)(end - p) < hs) {
            s->head_off = (size_t)(p - chunk) - s->value_start;
            return start_buffering(s);
        }
        if (take_head(s, p, at, &t) < 0) return -1;
        p += hs;
        if (t.container && t.count) {
            if (push(s, at, hs, t.count) < 0) return -1;
            continue;
        }
        if (t.payload > (uint64_t)(end - p)) {
            s->payload_at = (size_t)(p - chunk) - s->value_start;
            s->payload_len = t.payload;
            s->payload_left = t.payload - (uint64_t)(end - p);
            s->check = t.check;
            s->check_head = at;
            return start_buffering(s);
        }
        if (t.check && check_content(s, t.check, p, t.payload, at) < 0) return -1;
        p += t.payload;
    element:
        if (element_done(s)) {
            *value = chunk + s->value_start;
            *len = (size_t)(p - chunk) - s->value_start;
            s->chunk_pos = (size_t)(p - chunk);
            s->in_value = 0;
            return 1;
        }
    }
}

/* Continues a buffered value with the chunk's bytes; same returns as scan_chunk. */
static int scan_buffered(mpk_stream *s, const uint8_t **value, size_t *len) {
    token t;
    for (;;) {
        const uint8_t *c = s->chunk + s->chunk_pos;
        size_t avail = s->chunk_len - s->chunk_pos;
        if (s->payload_left) {
            size_t k = s->payload_left < avail ? (size_t)s->payload_left : avail;
            if (!append(s, c, k)) return fail(s, MPK_ERR_NO_MEMORY, s->consumed + s->chunk_pos);
            s->chunk_pos += k;
            s->payload_left -= k;
            if (s->payload_left) return 0;
            if (s->check && check_content(s, s->check, s->buf + s->payload_at, s->payload_len, s->check_head) < 0)
                return -1;
            goto element;
        }
        size_t have = s->buf_len - s->head_off;
        if (have == 0) {
            if (avail == 0) return 0;
            uint64_t at = s->consumed + s->chunk_pos;
            if (*c == 0xc1) return fail(s, MPK_ERR_INVALID_BYTE, at);
        } else if (s->buf[s->head_off] == 0xc1) {
            return fail(s, MPK_ERR_INVALID_BYTE, s->value_base + s->head_off);
        }
        unsigned hs = mpk__head_size(have ? s->buf[s->head_off] : *c);
        size_t k = hs - have < avail ? hs - have : avail;
        if (!append(s, c, k)) return fail(s, MPK_ERR_NO_MEMORY, s->consumed + s->chunk_pos);
        s->chunk_pos += k;
        if (have + k < hs) return 0;
        uint64_t at = s->value_base + s->head_off;
        if (take_head(s, s->buf + s->head_off, at, &t) < 0) return -1;
        if (t.container && t.count) {
            if (push(s, at, hs, t.count) < 0) return -1;
            s->head_off = s->buf_len;
            continue;
        }
        if (t.payload) {
            s->payload_at = s->buf_len;
            s->payload_len = t.payload;
            s->payload_left = t.payload;
            s->check = t.check;
            s->check_head = at;
            continue;
        }
        if (t.check && check_content(s, t.check, s->buf + s->buf_len, 0, at) < 0) return -1;
    element:
        s->head_off = s->buf_len;
        if (element_done(s)) {
            *value = s->buf;
            *len = s->buf_len;
            s->release = 1;
            s->in_value = 0;
            return 1;
        }
    }
}

/* ================================================================================================
 * Next value (Public)
 * ==============================================================================================*/

/* The buffer handed out by the last call is emptied by the next. */
static void release_value(mpk_stream *s) {
    if (s->release) {
        s->release = 0;
        s->buffering = 0;
        s->buf_len = 0;
    }
}

int mpk_stream_next(mpk_stream *s, const uint8_t **value, size_t *len) {
    if (s->error.kind != MPK_OK) return -1;
    release_value(s);
    if (s->buffering) return scan_buffered(s, value, len);
    if (!s->in_value) {
        if (s->chunk_pos == s->chunk_len) return 0;
        s->in_value = 1;
        s->value_start = s->chunk_pos;
        s->value_base = s->consumed + s->chunk_pos;
        s->remaining = 1;
        s->depth = 0;
    }
    return scan_chunk(s, value, len);
}

/* Between values, the next one is parsed straight from the chunk. If that fails (the value is cut
 * by the chunk's end, or it is bad), the scan takes the same bytes again and decides, so the
 * stream's error semantics hold; a value cut by a chunk's end costs that chunk's tail one extra
 * pass, once per chunk. Through mpk_stream_next and mpk_doc_parse, a [1, 2] message took two
 * passes (the scan, about 250 instructions, then the parse). */
int mpk_stream_next_doc(mpk_stream *s, mpk_doc *doc, const mpk_node **root) {
    *root = NULL;
    if (s->error.kind != MPK_OK) return -1;
    release_value(s);
    const mpk_limits doc_limits = doc->limits;
    const unsigned doc_flags = doc->flags;
    doc->limits = s->limits;
    doc->flags = (doc_flags & MPK_FLAG_COPY) | (s->flags & MPK_FLAG_STRICT_UTF8);
    int rc;
    if (!s->buffering && !s->in_value && s->chunk_pos < s->chunk_len) {
        size_t used;
        const mpk_node *n = mpk__doc_parse_value(doc, s->chunk + s->chunk_pos, s->chunk_len - s->chunk_pos, &used);
        if (n) {
            s->chunk_pos += used;
            *root = n;
            rc = 1;
            goto done;
        }
    }
    const uint8_t *value;
    size_t len;
    rc = mpk_stream_next(s, &value, &len);
    if (rc == 1) {
        /* the scan accepted it under the same limits and flags: only no_memory is left */
        *root = mpk_doc_parse(doc, value, len);
        if (!*root) rc = fail(s, mpk_doc_error(doc).kind, s->value_base + mpk_doc_error(doc).offset);
    }
done:
    doc->limits = doc_limits;
    doc->flags = doc_flags;
    return rc;
}
