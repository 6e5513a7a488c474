/* dom.c — MessagePack into a pre-order node array, without recursion; node lookups, equality,
 * and writing a node back out. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise, for mpk__advise_huge (internal.h) */
#endif
#include "mpk/dom.h"

#include <stdlib.h>

#include "internal.h"

/* One open container while parsing: its node, and the values its parent still owed when it opened
 * (this container included). */
typedef struct frame {
    size_t index;
    uint64_t saved;
} frame;

/* ================================================================================================
 * Lifecycle (Public)
 * ==============================================================================================*/

void mpk_doc_init(mpk_doc *d) {
    memset(d, 0, sizeof *d);
    d->limits = mpk_limits_default();
}

void mpk_doc_set_limits(mpk_doc *d, const mpk_limits *limits) {
    d->limits = limits ? *limits : mpk_limits_default();
}

void mpk_doc_set_flags(mpk_doc *d, unsigned flags) { d->flags = flags; }

void mpk_doc_destroy(mpk_doc *d) {
    free(d->nodes);
    free(d->bytes);
    free(d->stack);
    memset(d, 0, sizeof *d);
}

/* ================================================================================================
 * Arena (Private, shared with json.c)
 * ==============================================================================================*/

/* Grows the node array to at least `need` nodes; the caller bounds `need` by the input. */
int mpk__doc_reserve_nodes(mpk_doc *d, size_t need) {
    if (need <= d->cap) return 1;
    size_t cap = d->cap * 2 > need ? d->cap * 2 : need;
    if (cap < 64) cap = 64;
    if (cap > SIZE_MAX / sizeof(mpk_node)) return 0;
    mpk_node *nodes = (mpk_node *)realloc(d->nodes, cap * sizeof *nodes);
    if (!nodes) return 0;
    d->nodes = nodes;
    d->cap = cap;
    mpk__advise_huge(nodes, cap * sizeof *nodes);
    return 1;
}

int mpk__doc_reserve_bytes(mpk_doc *d, size_t need) {
    if (need <= d->bytes_cap) return 1;
    uint8_t *bytes = (uint8_t *)realloc(d->bytes, need);
    if (!bytes) return 0;
    d->bytes = bytes;
    d->bytes_cap = need;
    mpk__advise_huge(bytes, need);
    return 1;
}

int mpk__doc_reserve_stack(mpk_doc *d, size_t frames, size_t frame_size) {
    if (frames <= d->stack_cap) return 1;
    size_t cap = d->stack_cap * 2 > frames ? d->stack_cap * 2 : frames;
    if (cap < 32) cap = 32;
    if (cap > SIZE_MAX / frame_size) return 0;
    void *stack = realloc(d->stack, cap * frame_size);
    if (!stack) return 0;
    d->stack = stack;
    d->stack_cap = cap;
    return 1;
}

/* ================================================================================================
 * Parse (Public)
 * ==============================================================================================*/

/* Node-array growth inside the parse loop: doubles, up to `most` (the bytes left bound the nodes
 * left). Out of line to keep the loop small. */
static MPK__NOINLINE int grow_nodes(mpk_doc *d, size_t most) {
    size_t grow = d->cap * 2 < most ? d->cap * 2 : most;
    return mpk__doc_reserve_nodes(d, grow);
}

/* Sixteen consecutive case labels (C99 has no case ranges). */
#define CASE4(x) case (x): case (x) + 1: case (x) + 2: case (x) + 3
#define CASE16(x) CASE4(x): CASE4((x) + 4): CASE4((x) + 8): CASE4((x) + 12)

const mpk_node *mpk_doc_parse(mpk_doc *d, const void *data, size_t len) {
    return mpk__doc_parse_value(d, data, len, NULL);
}

/* With `consumed` NULL, the value must fill `len` bytes (else trailing_bytes); otherwise the
 * parse stops after one value and stores how many bytes it took (mpk_stream_next_doc). */
const mpk_node *mpk__doc_parse_value(mpk_doc *d, const void *data, size_t len, size_t *consumed) {
    const uint8_t *const start = (const uint8_t *)data;
    const uint8_t *p = start, *const end = start + (data ? len : 0);
    /* Read in place, not copied: a copy cost 12 of the ~190 fixed instructions of a small parse
     * (a [1, 2] message from the stream, callgrind); the checks take it as a memory operand. */
    const mpk_limits *const lim = &d->limits;
    const int copy = (d->flags & MPK_FLAG_COPY) != 0;
    const int strict = (d->flags & MPK_FLAG_STRICT_UTF8) != 0;
    mpk_error_kind kind = MPK_OK;
    const uint8_t *at = p;
    size_t used = 0;
    uint32_t depth = 0;
    uint64_t remaining = 1; /* values owed at the current level; the top level owes one */

    d->count = 0;
    d->bytes_len = 0;
    d->error.kind = MPK_OK;
    d->error.offset = 0;
    /* Copied payloads never exceed the input, so one reservation keeps every pointer stable. */
    if (copy && !mpk__doc_reserve_bytes(d, len)) goto no_memory;
    if (MPK__UNLIKELY(d->cap == 0) && !mpk__doc_reserve_nodes(d, 1)) goto no_memory;

    mpk_node *nodes = d->nodes;
    size_t cap = d->cap;
    frame *stack = (frame *)d->stack;

    for (;;) {
        at = p;
        if (MPK__UNLIKELY(p >= end)) { kind = MPK_ERR_TRUNCATED; goto fail; }
        if (MPK__UNLIKELY(used == cap)) {
            /* every further node needs one more byte: the input bounds the growth */
            if (!grow_nodes(d, used + (size_t)(end - p))) goto no_memory;
            nodes = d->nodes;
            cap = d->cap;
        }
        mpk_node *n = &nodes[used++];
        const uint8_t b = *p;
        size_t left = (size_t)(end - p), hl;
        uint64_t count;

        if (b <= 0x7f) {
            n->type = MPK_UINT; n->len = 0; n->v.u = b; p++;
            goto done;
        }
        if (b >= 0xe0) {
            n->type = MPK_INT; n->len = 0; n->v.i = (int8_t)b; p++;
            goto done;
        }
#define NEED(k) do { if (left < (k)) { kind = MPK_ERR_TRUNCATED; goto fail; } } while (0)
        /* One switch over 0x80..0xdf, one jump table: the chain of range tests before it cost
         * about 8 instructions per non-fixint node (canada.json unpack, callgrind). */
        switch (b) {
        CASE16(0x80): count = b & 0x0f; hl = 1; goto map;
        CASE16(0x90): count = b & 0x0f; hl = 1; goto array;
        CASE16(0xa0): CASE16(0xb0): count = b & 0x1f; hl = 1; goto str;
        case 0xc0: n->type = MPK_NIL; n->len = 0; n->v.u = 0; p++; goto done;
        case 0xc1: kind = MPK_ERR_INVALID_BYTE; goto fail;
        case 0xc2: case 0xc3: n->type = MPK_BOOL; n->len = 0; n->v.u = 0; n->v.b = b & 1; p++; goto done;
        case 0xc4: NEED(2); count = p[1]; hl = 2; goto bin;
        case 0xc5: NEED(3); count = mpk__load16(p + 1); hl = 3; goto bin;
        case 0xc6: NEED(5); count = mpk__load32(p + 1); hl = 5; goto bin;
        case 0xc7: NEED(3); count = p[1]; hl = 3; goto ext;
        case 0xc8: NEED(4); count = mpk__load16(p + 1); hl = 4; goto ext;
        case 0xc9: NEED(6); count = mpk__load32(p + 1); hl = 6; goto ext;
        case 0xca: {
            NEED(5);
            uint32_t bits = mpk__load32(p + 1);
            n->type = MPK_FLOAT32; n->len = 0; n->v.u = 0; memcpy(&n->v.f32, &bits, 4);
            p += 5; goto done;
        }
        case 0xcb: NEED(9); n->type = MPK_FLOAT64; n->len = 0; n->v.u = mpk__load64(p + 1); p += 9; goto done;
        case 0xcc: NEED(2); n->type = MPK_UINT; n->len = 0; n->v.u = p[1]; p += 2; goto done;
        case 0xcd: NEED(3); n->type = MPK_UINT; n->len = 0; n->v.u = mpk__load16(p + 1); p += 3; goto done;
        case 0xce: NEED(5); n->type = MPK_UINT; n->len = 0; n->v.u = mpk__load32(p + 1); p += 5; goto done;
        case 0xcf: NEED(9); n->type = MPK_UINT; n->len = 0; n->v.u = mpk__load64(p + 1); p += 9; goto done;
        case 0xd0: NEED(2); n->v.i = (int8_t)p[1]; p += 2; goto signed_int;
        case 0xd1: NEED(3); n->v.i = (int16_t)mpk__load16(p + 1); p += 3; goto signed_int;
        case 0xd2: NEED(5); n->v.i = (int32_t)mpk__load32(p + 1); p += 5; goto signed_int;
        case 0xd3: NEED(9); n->v.i = (int64_t)mpk__load64(p + 1); p += 9; goto signed_int;
        case 0xd4: NEED(2); count = 1; hl = 2; goto ext;
        case 0xd5: NEED(2); count = 2; hl = 2; goto ext;
        case 0xd6: NEED(2); count = 4; hl = 2; goto ext;
        case 0xd7: NEED(2); count = 8; hl = 2; goto ext;
        case 0xd8: NEED(2); count = 16; hl = 2; goto ext;
        case 0xd9: NEED(2); count = p[1]; hl = 2; goto str;
        case 0xda: NEED(3); count = mpk__load16(p + 1); hl = 3; goto str;
        case 0xdb: NEED(5); count = mpk__load32(p + 1); hl = 5; goto str;
        case 0xdc: NEED(3); count = mpk__load16(p + 1); hl = 3; goto array;
        case 0xdd: NEED(5); count = mpk__load32(p + 1); hl = 5; goto array;
        case 0xde: NEED(3); count = mpk__load16(p + 1); hl = 3; goto map;
        default:   NEED(5); count = mpk__load32(p + 1); hl = 5; goto map;
        }
#undef NEED

    signed_int:
        n->type = n->v.i < 0 ? MPK_INT : MPK_UINT;
        n->len = 0;
        goto done;

    str:
        if (count > lim->str) { kind = MPK_ERR_LENGTH_LIMIT; goto fail; }
        if (count > left - hl) { kind = MPK_ERR_TRUNCATED; goto fail; }
        if (strict && !mpk_utf8_valid(p + hl, (size_t)count)) { kind = MPK_ERR_INVALID_UTF8; goto fail; }
        n->type = MPK_STR;
        goto payload;
    bin:
        if (count > lim->bin) { kind = MPK_ERR_LENGTH_LIMIT; goto fail; }
        if (count > left - hl) { kind = MPK_ERR_TRUNCATED; goto fail; }
        n->type = MPK_BIN;
        goto payload;
    ext:
        if (count > lim->ext) { kind = MPK_ERR_LENGTH_LIMIT; goto fail; }
        if (count > left - hl) { kind = MPK_ERR_TRUNCATED; goto fail; }
        n->ext_type = (int8_t)p[hl - 1];
        if (n->ext_type == -1) {
            mpk_timestamp ts;
            if (!mpk__decode_timestamp(p + hl, (uint32_t)count, &ts)) {
                kind = MPK_ERR_INVALID_TIMESTAMP;
                goto fail;
            }
            n->type = MPK_TIMESTAMP;
            n->v.i = ts.sec;
            n->len = ts.nsec;
            p += hl + count;
            goto done;
        }
        n->type = MPK_EXT;
    payload:
        n->len = (uint32_t)count;
        if (copy) {
            uint8_t *dst = d->bytes + d->bytes_len;
            if (count) memcpy(dst, p + hl, (size_t)count);
            d->bytes_len += (size_t)count;
            n->v.data = dst;
        } else {
            n->v.data = p + hl;
        }
        p += hl + count;
        mpk__prefetch_alike(p, (size_t)(hl + count), end);
        goto done;

    array:
        if (count > lim->array) { kind = MPK_ERR_LENGTH_LIMIT; goto fail; }
        if (depth >= lim->depth) { kind = MPK_ERR_DEPTH_LIMIT; goto fail; }
        if (count > left - hl) { kind = MPK_ERR_TRUNCATED; goto fail; }
        n->type = MPK_ARRAY;
        n->len = (uint32_t)count;
        goto container;
    map:
        if (count > lim->map) { kind = MPK_ERR_LENGTH_LIMIT; goto fail; }
        if (depth >= lim->depth) { kind = MPK_ERR_DEPTH_LIMIT; goto fail; }
        if (2 * count > left - hl) { kind = MPK_ERR_TRUNCATED; goto fail; }
        n->type = MPK_MAP;
        n->len = (uint32_t)count;
        count *= 2;
    container:
        n->v.span = 0;
        p += hl;
        if (count == 0) goto done;
        /* count <= bytes left (checked above), so this reservation is paid for by the input */
        if (used + count > cap) {
            if (!mpk__doc_reserve_nodes(d, used + (size_t)count)) goto no_memory;
            nodes = d->nodes;
            cap = d->cap;
        }
        if (depth >= d->stack_cap) {
            if (!mpk__doc_reserve_stack(d, (size_t)depth + 1, sizeof(frame))) goto no_memory;
            stack = (frame *)d->stack;
        }
        stack[depth].index = used - 1;
        stack[depth].saved = remaining;
        depth++;
        remaining = count;
        continue;

    done:
        while (--remaining == 0) {
            if (depth == 0) goto finished;
            frame *f = &stack[--depth];
            nodes[f->index].v.span = used - f->index - 1;
            remaining = f->saved;
        }
    }

finished:
    d->count = used;
    if (consumed) {
        *consumed = (size_t)(p - start);
        return d->nodes;
    }
    if (p < end) {
        at = p;
        kind = MPK_ERR_TRAILING_BYTES;
        goto fail;
    }
    return d->nodes;

no_memory:
    kind = MPK_ERR_NO_MEMORY;
fail:
    d->count = 0;
    d->error.kind = kind;
    d->error.offset = (size_t)(at - start);
    return NULL;
}

/* ================================================================================================
 * Nodes (Public)
 * ==============================================================================================*/

const mpk_node *mpk_node_at(const mpk_node *array, uint32_t i) {
    if (!array || array->type != MPK_ARRAY || i >= array->len) return NULL;
    const mpk_node *n = array + 1;
    while (i--) n = mpk_node_next(n);
    return n;
}

const mpk_node *mpk_node_map_get(const mpk_node *map, const char *key, size_t len) {
    if (!map || map->type != MPK_MAP) return NULL;
    /* duplicate keys: the last pair wins, as in every implementation (spec/README.md, Maps) */
    const mpk_node *k = map + 1, *found = NULL;
    for (uint32_t i = 0; i < map->len; i++) {
        const mpk_node *v = mpk_node_next(k);
        if (k->type == MPK_STR && k->len == len && (len == 0 || memcmp(k->v.data, key, len) == 0))
            found = v;
        k = mpk_node_next(v);
    }
    return found;
}

const mpk_node *mpk_node_map_find(const mpk_node *map, const mpk_node *key) {
    if (!map || !key || map->type != MPK_MAP) return NULL;
    const mpk_node *k = map + 1, *found = NULL;
    for (uint32_t i = 0; i < map->len; i++) {
        const mpk_node *v = mpk_node_next(k);
        if (mpk_node_equal(k, key)) found = v; /* the last equal key wins, as in mpk_node_map_get */
        k = mpk_node_next(v);
    }
    return found;
}

/* One node against another, ignoring what they contain. */
static int node_same(const mpk_node *a, const mpk_node *b) {
    if (a->type != b->type) return 0;
    switch ((mpk_type)a->type) {
    case MPK_NIL: return 1;
    case MPK_BOOL: return a->v.b == b->v.b;
    case MPK_UINT: case MPK_INT: return a->v.u == b->v.u;
    case MPK_FLOAT32: {
        if (a->v.f32 != a->v.f32) return b->v.f32 != b->v.f32;
        uint32_t x, y;
        memcpy(&x, &a->v.f32, 4);
        memcpy(&y, &b->v.f32, 4);
        return x == y;
    }
    case MPK_FLOAT64:
        if (a->v.f64 != a->v.f64) return b->v.f64 != b->v.f64;
        return a->v.u == b->v.u;
    case MPK_EXT:
        if (a->ext_type != b->ext_type) return 0;
        /* fall through */
    case MPK_STR: case MPK_BIN:
        return a->len == b->len && (a->len == 0 || memcmp(a->v.data, b->v.data, a->len) == 0);
    case MPK_ARRAY: case MPK_MAP:
        return a->len == b->len && a->v.span == b->v.span;
    case MPK_TIMESTAMP:
        return a->v.i == b->v.i && a->len == b->len;
    }
    return 0;
}

int mpk_node_equal(const mpk_node *a, const mpk_node *b) {
    /* Pre-order layout: two values are equal when their node runs are equal node by node. */
    if (!a || !b) return a == b;
    size_t n = 1 + (mpk_node_is_container(a) ? a->v.span : 0);
    if (!node_same(a, b)) return 0;
    for (size_t i = 1; i < n; i++)
        if (!node_same(a + i, b + i)) return 0;
    return 1;
}

void mpk_node_write(const mpk_node *n, mpk_writer *w) {
    size_t count = 1 + (mpk_node_is_container(n) ? n->v.span : 0);
    for (const mpk_node *end = n + count; n < end; n++) {
        switch ((mpk_type)n->type) {
        case MPK_NIL: mpk_write_nil(w); break;
        case MPK_BOOL: mpk_write_bool(w, n->v.b); break;
        case MPK_UINT: mpk_write_uint(w, n->v.u); break;
        case MPK_INT: mpk_write_int(w, n->v.i); break;
        case MPK_FLOAT32: mpk_write_float32(w, n->v.f32); break;
        case MPK_FLOAT64: mpk_write_float64(w, n->v.f64); break;
        case MPK_STR: mpk_write_str(w, n->v.data, n->len); break;
        case MPK_BIN: mpk_write_bin(w, n->v.data, n->len); break;
        case MPK_ARRAY: mpk_write_array(w, n->len); break;
        case MPK_MAP: mpk_write_map(w, n->len); break;
        case MPK_EXT: mpk_write_ext(w, n->ext_type, n->v.data, n->len); break;
        case MPK_TIMESTAMP: mpk_write_timestamp(w, n->v.i, n->len); break;
        }
    }
}
