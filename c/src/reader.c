/* reader.c — the pull reader's slow path: every head byte, the checks in spec order, containers. */
#include "mpk/reader.h"

#include "internal.h"

#include <stdlib.h>

/* ================================================================================================
 * Lifecycle (Public)
 * ==============================================================================================*/

void mpk_reader_init(mpk_reader *r, const void *data, size_t len) {
    r->start = r->pos = (const uint8_t *)data;
    r->end = r->start + (data ? len : 0);
    r->remaining = 0;
    r->depth = 0;
    r->flags = 0;
    r->limits = mpk_limits_default();
    r->error.kind = MPK_OK;
    r->error.offset = 0;
    r->big_stack = NULL;
    r->big_cap = 0;
}

void mpk_reader_set_limits(mpk_reader *r, const mpk_limits *limits) {
    r->limits = limits ? *limits : mpk_limits_default();
}

void mpk_reader_set_flags(mpk_reader *r, unsigned flags) { r->flags = flags; }

void mpk_reader_destroy(mpk_reader *r) {
    free(r->big_stack);
    r->big_stack = NULL;
    r->big_cap = 0;
}

void mpk_reader_flag_error(mpk_reader *r, mpk_error_kind kind, size_t offset) {
    if (r->error.kind == MPK_OK) {
        r->error.kind = kind;
        r->error.offset = offset;
    }
    r->end = r->pos; /* the inline fast path now always falls through to the slow path */
}

mpk_error mpk_reader_finish(mpk_reader *r) {
    if (r->error.kind == MPK_OK) {
        if (r->depth > 0)
            mpk_reader_flag_error(r, MPK_ERR_TRUNCATED, (size_t)(r->end - r->start));
        else if (r->pos < r->end)
            mpk_reader_flag_error(r, MPK_ERR_TRAILING_BYTES, (size_t)(r->pos - r->start));
    }
    return r->error;
}

/* ================================================================================================
 * Container bookkeeping (Private)
 * ==============================================================================================*/

static int fail(mpk_reader *r, mpk_error_kind kind, const uint8_t *at) {
    mpk_reader_flag_error(r, kind, (size_t)(at - r->start));
    return 0;
}

/* Saves the current `remaining` and opens a container owing `count` values. The depth limit was
 * checked by the caller, and every level consumed a head byte, so the stack stays within both the
 * limit and the input length. */
static int push(mpk_reader *r, uint64_t count, const uint8_t *head) {
    uint32_t d = r->depth;
    if (d < MPK__READER_SMALL_STACK) {
        r->small_stack[d] = r->remaining;
    } else {
        uint32_t i = d - MPK__READER_SMALL_STACK;
        if (i >= r->big_cap) {
            uint32_t cap = r->big_cap ? r->big_cap * 2 : 64;
            uint64_t *s = (uint64_t *)realloc(r->big_stack, (size_t)cap * sizeof *s);
            if (!s) return fail(r, MPK_ERR_NO_MEMORY, head);
            r->big_stack = s;
            r->big_cap = cap;
        }
        r->big_stack[i] = r->remaining;
    }
    r->depth = d + 1;
    r->remaining = count;
    return 1;
}

void mpk__reader_close(mpk_reader *r) {
    while (r->depth && r->remaining == 0) {
        uint32_t d = --r->depth;
        r->remaining = d < MPK__READER_SMALL_STACK ? r->small_stack[d]
                                                   : r->big_stack[d - MPK__READER_SMALL_STACK];
    }
}

/* One value of the enclosing container is done. */
static inline void count_value(mpk_reader *r) { mpk__reader_value_done(r); }

/* ================================================================================================
 * Next tag (Private slow path)
 * ==============================================================================================*/

MPK__NOINLINE int mpk__reader_next_slow(mpk_reader *r, mpk_tag *t) {
    const uint8_t *p = r->pos;
    if (r->error.kind != MPK_OK) return 0;
    size_t left = (size_t)(r->end - p);
    if (left == 0) return fail(r, MPK_ERR_TRUNCATED, p);
    uint8_t b = *p;
    size_t hl;    /* head length: head byte plus length field plus ext type */
    uint64_t n;   /* declared length or count */

#define NEED(k) do { if (left < (k)) return fail(r, MPK_ERR_TRUNCATED, p); } while (0)
    if (b <= 0x7f) {
        t->type = MPK_UINT; t->v.u = b; hl = 1; goto scalar;
    } else if (b <= 0x8f) {
        n = b & 0x0f; hl = 1; goto map;
    } else if (b <= 0x9f) {
        n = b & 0x0f; hl = 1; goto array;
    } else if (b <= 0xbf) {
        n = b & 0x1f; hl = 1; goto str;
    } else if (b >= 0xe0) {
        t->type = MPK_INT; t->v.i = (int8_t)b; hl = 1; goto scalar;
    }
    switch (b) {
    case 0xc0: t->type = MPK_NIL; hl = 1; goto scalar;
    case 0xc1: return fail(r, MPK_ERR_INVALID_BYTE, p);
    case 0xc2: case 0xc3: t->type = MPK_BOOL; t->v.b = b & 1; hl = 1; goto scalar;
    case 0xc4: NEED(2); n = p[1]; hl = 2; goto bin;
    case 0xc5: NEED(3); n = mpk__load16(p + 1); hl = 3; goto bin;
    case 0xc6: NEED(5); n = mpk__load32(p + 1); hl = 5; goto bin;
    case 0xc7: NEED(3); n = p[1]; hl = 3; goto ext;
    case 0xc8: NEED(4); n = mpk__load16(p + 1); hl = 4; goto ext;
    case 0xc9: NEED(6); n = mpk__load32(p + 1); hl = 6; goto ext;
    case 0xca: {
        NEED(5);
        uint32_t bits = mpk__load32(p + 1);
        t->type = MPK_FLOAT32; memcpy(&t->v.f32, &bits, 4); hl = 5; goto scalar;
    }
    case 0xcb: {
        NEED(9);
        uint64_t bits = mpk__load64(p + 1);
        t->type = MPK_FLOAT64; memcpy(&t->v.f64, &bits, 8); hl = 9; goto scalar;
    }
    case 0xcc: NEED(2); t->type = MPK_UINT; t->v.u = p[1]; hl = 2; goto scalar;
    case 0xcd: NEED(3); t->type = MPK_UINT; t->v.u = mpk__load16(p + 1); hl = 3; goto scalar;
    case 0xce: NEED(5); t->type = MPK_UINT; t->v.u = mpk__load32(p + 1); hl = 5; goto scalar;
    case 0xcf: NEED(9); t->type = MPK_UINT; t->v.u = mpk__load64(p + 1); hl = 9; goto scalar;
    case 0xd0: NEED(2); t->v.i = (int8_t)p[1]; hl = 2; goto signed_int;
    case 0xd1: NEED(3); t->v.i = (int16_t)mpk__load16(p + 1); hl = 3; goto signed_int;
    case 0xd2: NEED(5); t->v.i = (int32_t)mpk__load32(p + 1); hl = 5; goto signed_int;
    case 0xd3: NEED(9); t->v.i = (int64_t)mpk__load64(p + 1); hl = 9; goto signed_int;
    case 0xd4: NEED(2); n = 1; hl = 2; goto ext;
    case 0xd5: NEED(2); n = 2; hl = 2; goto ext;
    case 0xd6: NEED(2); n = 4; hl = 2; goto ext;
    case 0xd7: NEED(2); n = 8; hl = 2; goto ext;
    case 0xd8: NEED(2); n = 16; hl = 2; goto ext;
    case 0xd9: NEED(2); n = p[1]; hl = 2; goto str;
    case 0xda: NEED(3); n = mpk__load16(p + 1); hl = 3; goto str;
    case 0xdb: NEED(5); n = mpk__load32(p + 1); hl = 5; goto str;
    case 0xdc: NEED(3); n = mpk__load16(p + 1); hl = 3; goto array;
    case 0xdd: NEED(5); n = mpk__load32(p + 1); hl = 5; goto array;
    case 0xde: NEED(3); n = mpk__load16(p + 1); hl = 3; goto map;
    default:   NEED(5); n = mpk__load32(p + 1); hl = 5; goto map; /* 0xdf */
    }
#undef NEED

signed_int:
    /* A signed family may hold a non-negative value: it is a uint like any other. */
    t->type = t->v.i < 0 ? MPK_INT : MPK_UINT;
scalar:
    r->pos = p + hl;
    count_value(r);
    return 1;

str:
    if (n > r->limits.str) return fail(r, MPK_ERR_LENGTH_LIMIT, p);
    if (n > left - hl) return fail(r, MPK_ERR_TRUNCATED, p);
    if ((r->flags & MPK_FLAG_STRICT_UTF8) && !mpk_utf8_valid(p + hl, (size_t)n))
        return fail(r, MPK_ERR_INVALID_UTF8, p);
    t->type = MPK_STR;
    goto payload;
bin:
    if (n > r->limits.bin) return fail(r, MPK_ERR_LENGTH_LIMIT, p);
    if (n > left - hl) return fail(r, MPK_ERR_TRUNCATED, p);
    t->type = MPK_BIN;
    goto payload;
ext:
    if (n > r->limits.ext) return fail(r, MPK_ERR_LENGTH_LIMIT, p);
    if (n > left - hl) return fail(r, MPK_ERR_TRUNCATED, p);
    t->ext_type = (int8_t)p[hl - 1];
    if (t->ext_type == -1) {
        if (!mpk__decode_timestamp(p + hl, (uint32_t)n, &t->v.ts))
            return fail(r, MPK_ERR_INVALID_TIMESTAMP, p);
        t->type = MPK_TIMESTAMP;
    } else {
        t->type = MPK_EXT;
    }
payload:
    t->len = (uint32_t)n;
    t->data = p + hl;
    r->pos = p + hl + n;
    mpk__prefetch_alike(r->pos, (size_t)(hl + n), r->end);
    count_value(r);
    return 1;

array:
    if (n > r->limits.array) return fail(r, MPK_ERR_LENGTH_LIMIT, p);
    if (r->depth >= r->limits.depth) return fail(r, MPK_ERR_DEPTH_LIMIT, p);
    if (n > left - hl) return fail(r, MPK_ERR_TRUNCATED, p);
    t->type = MPK_ARRAY;
    goto container;
map:
    if (n > r->limits.map) return fail(r, MPK_ERR_LENGTH_LIMIT, p);
    if (r->depth >= r->limits.depth) return fail(r, MPK_ERR_DEPTH_LIMIT, p);
    if (2 * n > left - hl) return fail(r, MPK_ERR_TRUNCATED, p); /* n < 2^32: no overflow */
    t->type = MPK_MAP;
container:
    t->len = (uint32_t)n;
    r->pos = p + hl;
    if (n == 0) {
        count_value(r);
        return 1;
    }
    if (r->depth) r->remaining--; /* the container is one value of its parent; it closes later */
    return push(r, t->type == MPK_MAP ? 2 * n : n, p);
}

/* ================================================================================================
 * Skip and expect-calls (Public)
 * ==============================================================================================*/

int mpk_reader_skip(mpk_reader *r) {
    uint32_t depth = r->depth;
    mpk_tag t;
    if (!mpk_reader_next(r, &t)) return 0;
    while (r->depth > depth)
        if (!mpk_reader_next(r, &t)) return 0;
    return 1;
}

static int expect(mpk_reader *r, mpk_tag *t, mpk_type type) {
    const uint8_t *head = r->pos;
    if (!mpk_reader_next(r, t)) return 0;
    if (t->type != type) return fail(r, MPK_ERR_TYPE, head);
    return 1;
}

int mpk_read_array(mpk_reader *r, uint32_t *count) {
    mpk_tag t;
    if (!expect(r, &t, MPK_ARRAY)) return 0;
    *count = t.len;
    return 1;
}

int mpk_read_map(mpk_reader *r, uint32_t *count) {
    mpk_tag t;
    if (!expect(r, &t, MPK_MAP)) return 0;
    *count = t.len;
    return 1;
}

int mpk_read_uint(mpk_reader *r, uint64_t *value) {
    mpk_tag t;
    if (!expect(r, &t, MPK_UINT)) return 0;
    *value = t.v.u;
    return 1;
}

int mpk_read_int(mpk_reader *r, int64_t *value) {
    const uint8_t *head = r->pos;
    mpk_tag t;
    if (!mpk_reader_next(r, &t)) return 0;
    if (t.type == MPK_INT) {
        *value = t.v.i;
        return 1;
    }
    if (t.type == MPK_UINT && t.v.u <= (uint64_t)INT64_MAX) {
        *value = (int64_t)t.v.u;
        return 1;
    }
    return fail(r, MPK_ERR_TYPE, head);
}

int mpk_read_str(mpk_reader *r, const char **data, uint32_t *len) {
    mpk_tag t;
    if (!expect(r, &t, MPK_STR)) return 0;
    *data = (const char *)t.data;
    *len = t.len;
    return 1;
}

int mpk_read_bin(mpk_reader *r, const uint8_t **data, uint32_t *len) {
    mpk_tag t;
    if (!expect(r, &t, MPK_BIN)) return 0;
    *data = t.data;
    *len = t.len;
    return 1;
}
