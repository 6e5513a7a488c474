/* msgpack-c (Debian libmsgpack-dev, the C API) as a bench side.
 *
 * Its fastest documented paths: the inline packer over an sbuffer; msgpack_unpack into one
 * caller-owned zone for a whole buffer (so the one-shot stream reuses one zone, cleared per
 * message, rather than msgpack_unpack_next's zone per message); msgpack_unpacker fed in chunks
 * for the streaming mode. Strings and bins point into the input (msgpack-c is zero-copy there).
 * DOM decodes reuse one zone, cleared before each decode (inside the clock, as the one-shot stream
 * does per message): msgpack_zone_clear keeps the zone's first chunk and frees the others, so a
 * message larger than that chunk gets new memory each time, by msgpack-c's design. */
#include "side.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

typedef struct msgpackc_dom {
    msgpack_zone zone;
    msgpack_object root;
} msgpackc_dom;

/* The output buffer, kept from one pack to the next. */
static msgpack_sbuffer sbuf;
static msgpack_packer pk;

/* Zero-copy output: msgpack-c's own, the vrefbuffer (bodies of at least ref_size bytes are
 * referenced, the rest copied into its chunks; its iovec list grows as it writes). Kept and
 * cleared from one pack to the next, like the sbuffer. */
static msgpack_vrefbuffer vbuf;
static int vbuf_ready;
static msgpack_packer vpk;

/* The zone kept from one DOM decode to the next. */
static msgpackc_dom kept;
static int kept_ready;

static msgpack_packer *start(void)
{
    msgpack_sbuffer_clear(&sbuf);
    msgpack_packer_init(&pk, &sbuf, msgpack_sbuffer_write);
    return &pk;
}

static int hand_over(int rc, bench_buf *out)
{
    out->data = sbuf.data;
    out->len = sbuf.size;
    return rc;
}

static void release(void)
{
    msgpack_sbuffer_destroy(&sbuf);
    msgpack_sbuffer_init(&sbuf);
    if (vbuf_ready) msgpack_vrefbuffer_destroy(&vbuf);
    vbuf_ready = 0;
    if (kept_ready) msgpack_zone_destroy(&kept.zone);
    kept_ready = 0;
}

static int pack_ints(uint32_t count, bench_buf *out)
{
    msgpack_packer *p = start();
    int rc = msgpack_pack_array(p, count);
    for (uint32_t i = 0; i < count; i++) rc |= msgpack_pack_int64(p, i);
    return hand_over(rc, out);
}

static int write_strings(msgpack_packer *p, const bench_strings *s)
{
    int rc = msgpack_pack_array(p, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        rc |= msgpack_pack_str(p, s->lengths[i]);
        rc |= msgpack_pack_str_body(p, s->chars, s->lengths[i]);
    }
    return rc;
}

static int pack_strings(const bench_strings *s, bench_buf *out)
{
    return hand_over(write_strings(start(), s), out);
}

static int pack_bin(msgpack_packer *pk)
{
    return msgpack_pack_bin(pk, BENCH_BIN_SIZE) | msgpack_pack_bin_body(pk, bench_bin_payload, BENCH_BIN_SIZE);
}

static int write_messages(msgpack_packer *p, bench_message message, uint32_t count)
{
    int rc = 0;
    for (uint32_t i = 0; i < count; i++) {
        switch (message) {
        case MSG_PAIR_POSITIVE:
            rc |= msgpack_pack_array(p, 2) | msgpack_pack_int64(p, 1) | msgpack_pack_int64(p, 2);
            break;
        case MSG_PAIR_NEGATIVE:
            rc |= msgpack_pack_array(p, 2) | msgpack_pack_int64(p, -1) | msgpack_pack_int64(p, -2);
            break;
        case MSG_BIN:
            rc |= pack_bin(p);
            break;
        case MSG_NESTED:
            rc |= msgpack_pack_array(p, 3);
            rc |= msgpack_pack_array(p, 2) | msgpack_pack_int64(p, 1) | msgpack_pack_int64(p, 2);
            rc |= msgpack_pack_array(p, 2) | msgpack_pack_int64(p, -1) | msgpack_pack_int64(p, -2);
            rc |= pack_bin(p);
            break;
        }
    }
    return rc;
}

static int pack_messages(bench_message message, uint32_t count, bench_buf *out)
{
    return hand_over(write_messages(start(), message, count), out);
}


static int pack_chunks(const bench_strings *strings, bench_message message, uint32_t count)
{
    if (!vbuf_ready) {
        if (!msgpack_vrefbuffer_init(&vbuf, BENCH_REF_THRESHOLD, MSGPACK_VREFBUFFER_CHUNK_SIZE)) return -1;
        vbuf_ready = 1;
    }
    msgpack_vrefbuffer_clear(&vbuf);
    msgpack_packer_init(&vpk, &vbuf, msgpack_vrefbuffer_write);
    return strings ? write_strings(&vpk, strings) : write_messages(&vpk, message, count);
}

static long long gather_chunks(char *dst, size_t cap)
{
    const msgpack_iovec *vec = msgpack_vrefbuffer_vec(&vbuf);
    size_t n = msgpack_vrefbuffer_veclen(&vbuf), len = 0;
    for (size_t i = 0; i < n; i++) {
        if (vec[i].iov_len > cap - len) return -1;
        memcpy(dst + len, vec[i].iov_base, vec[i].iov_len);
        len += vec[i].iov_len;
    }
    return (long long)len;
}

static void walk(const msgpack_object *o, bench_check *c)
{
    c->nodes++;
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: c->int_sum += o->via.u64; break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: c->int_sum += (uint64_t)o->via.i64; break;
    case MSGPACK_OBJECT_STR: c->byte_sum += o->via.str.size; break;
    case MSGPACK_OBJECT_BIN: c->byte_sum += o->via.bin.size; break;
    case MSGPACK_OBJECT_ARRAY:
        for (uint32_t i = 0; i < o->via.array.size; i++) walk(&o->via.array.ptr[i], c);
        break;
    case MSGPACK_OBJECT_MAP:
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            walk(&o->via.map.ptr[i].key, c);
            walk(&o->via.map.ptr[i].val, c);
        }
        break;
    default: break;
    }
}

static void dom_free(void *dom)
{
    if (dom == &kept) return;
    msgpack_zone_destroy(&((msgpackc_dom *)dom)->zone);
    free(dom);
}

static void *dom_decode(const bench_buf *in, int fresh)
{
    msgpackc_dom *dom = &kept;
    if (fresh) {
        dom = malloc(sizeof *dom);
        if (!dom || !msgpack_zone_init(&dom->zone, MSGPACK_ZONE_CHUNK_SIZE)) {
            free(dom);
            return NULL;
        }
    } else if (kept_ready) {
        msgpack_zone_clear(&kept.zone);
    } else {
        if (!msgpack_zone_init(&kept.zone, MSGPACK_ZONE_CHUNK_SIZE)) return NULL;
        kept_ready = 1;
    }
    size_t off = 0;
    if (msgpack_unpack(in->data, in->len, &off, &dom->zone, &dom->root) != MSGPACK_UNPACK_SUCCESS) {
        dom_free(dom);
        return NULL;
    }
    return dom;
}

static void dom_check(const void *dom, bench_check *c)
{
    c->messages++;
    walk(&((const msgpackc_dom *)dom)->root, c);
}

static int dom_encode(const void *dom, bench_buf *out)
{
    msgpack_packer *p = start();
    int rc = msgpack_pack_object(p, ((const msgpackc_dom *)dom)->root);
    return hand_over(rc, out);
}

static int unpack_oneshot(const bench_buf *in, bench_check *c)
{
    msgpack_zone zone;
    if (!msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE)) return -1;
    size_t off = 0;
    int rc = 0;
    while (off < in->len) {
        msgpack_object o;
        msgpack_unpack_return r = msgpack_unpack(in->data, in->len, &off, &zone, &o);
        if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES) {
            rc = -1;
            break;
        }
        c->messages++;
        walk(&o, c);
        msgpack_zone_clear(&zone);
    }
    msgpack_zone_destroy(&zone);
    return rc;
}

static int unpack_stream(const bench_buf *in, bench_check *c)
{
    msgpack_unpacker unpacker;
    msgpack_unpacked result;
    if (!msgpack_unpacker_init(&unpacker, BENCH_CHUNK)) return -1;
    msgpack_unpacked_init(&result);
    int rc = 0;
    for (size_t fed = 0; fed < in->len && rc == 0;) {
        size_t n = in->len - fed < BENCH_CHUNK ? in->len - fed : BENCH_CHUNK;
        if (!msgpack_unpacker_reserve_buffer(&unpacker, n)) {
            rc = -1;
            break;
        }
        memcpy(msgpack_unpacker_buffer(&unpacker), in->data + fed, n);
        msgpack_unpacker_buffer_consumed(&unpacker, n);
        fed += n;
        msgpack_unpack_return r;
        while ((r = msgpack_unpacker_next(&unpacker, &result)) == MSGPACK_UNPACK_SUCCESS) {
            c->messages++;
            walk(&result.data, c);
        }
        if (r != MSGPACK_UNPACK_CONTINUE) rc = -1;
    }
    msgpack_unpacked_destroy(&result);
    msgpack_unpacker_destroy(&unpacker);
    return rc;
}

static int unpack_messages(const bench_buf *in, bench_unpack_mode mode, bench_check *c)
{
    return mode == UNPACK_STREAM ? unpack_stream(in, c) : unpack_oneshot(in, c);
}

const bench_side bench_side_msgpackc = {
    "msgpack-c", pack_ints, pack_strings, pack_messages, dom_decode, dom_check, dom_encode, dom_free,
    unpack_messages, release, pack_chunks, gather_chunks,
};
