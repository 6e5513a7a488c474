/* mpk as a bench side: the growable writer, the DOM (mpk_doc), the stream and the pull reader.
 *
 * DOM decodes reuse one mpk_doc (mpk_doc_parse keeps its node array for the next parse), unless
 * asked for a fresh one; the stream rows reuse one doc for all their messages. */
#include "side.h"

#include <mpk.h>
#include <stdlib.h>
#include <string.h>

/* The output buffer, kept from one pack to the next (mpk_writer_reset keeps the allocation). */
static mpk_writer writer;
static int writer_ready;

/* Zero-copy output: a chunk-mode writer, kept and reset like the copying one; the pieces for
 * writev are its buffer's runs and the referenced bodies (mpk_writer_chunks, inside the clock). */
static mpk_writer chunk_writer;
static int chunk_writer_ready;
static const mpk_chunk *chunks;
static size_t chunk_count;

/* The doc kept from one DOM decode to the next. */
static mpk_doc kept_doc;
static int kept_doc_ready;

static mpk_writer *start(void)
{
    if (!writer_ready) {
        mpk_writer_init_growable(&writer, 0);
        writer_ready = 1;
    }
    mpk_writer_reset(&writer);
    return &writer;
}

static int hand_over(mpk_writer *w, bench_buf *out)
{
    if (mpk_writer_finish(w) != MPK_OK) return -1;
    out->data = (char *)mpk_writer_data(w);
    out->len = mpk_writer_size(w);
    return 0;
}

static void release(void)
{
    if (writer_ready) mpk_writer_destroy(&writer);
    writer_ready = 0;
    if (chunk_writer_ready) mpk_writer_destroy(&chunk_writer);
    chunk_writer_ready = 0;
    chunks = NULL;
    chunk_count = 0;
    if (kept_doc_ready) mpk_doc_destroy(&kept_doc);
    kept_doc_ready = 0;
}

static int pack_ints(uint32_t count, bench_buf *out)
{
    mpk_writer *w = start();
    mpk_write_array(w, count);
    for (uint32_t i = 0; i < count; i++) mpk_write_int(w, i);
    return hand_over(w, out);
}

static void write_strings(mpk_writer *w, const bench_strings *s)
{
    mpk_write_array(w, s->count);
    for (uint32_t i = 0; i < s->count; i++) mpk_write_str(w, s->chars, s->lengths[i]);
}

static int pack_strings(const bench_strings *s, bench_buf *out)
{
    mpk_writer *w = start();
    write_strings(w, s);
    return hand_over(w, out);
}

static void write_pair(mpk_writer *w, int64_t a, int64_t b)
{
    mpk_write_array(w, 2);
    mpk_write_int(w, a);
    mpk_write_int(w, b);
}

static void write_messages(mpk_writer *w, bench_message message, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        switch (message) {
        case MSG_PAIR_POSITIVE: write_pair(w, 1, 2); break;
        case MSG_PAIR_NEGATIVE: write_pair(w, -1, -2); break;
        case MSG_BIN: mpk_write_bin(w, bench_bin_payload, BENCH_BIN_SIZE); break;
        case MSG_NESTED:
            mpk_write_array(w, 3);
            write_pair(w, 1, 2);
            write_pair(w, -1, -2);
            mpk_write_bin(w, bench_bin_payload, BENCH_BIN_SIZE);
            break;
        }
    }
}

static int pack_messages(bench_message message, uint32_t count, bench_buf *out)
{
    mpk_writer *w = start();
    write_messages(w, message, count);
    return hand_over(w, out);
}


static int pack_chunks(const bench_strings *strings, bench_message message, uint32_t count)
{
    if (!chunk_writer_ready) {
        mpk_writer_init_chunks(&chunk_writer, BENCH_REF_THRESHOLD);
        chunk_writer_ready = 1;
    }
    mpk_writer *w = &chunk_writer;
    mpk_writer_reset(w);
    if (strings) write_strings(w, strings);
    else write_messages(w, message, count);
    if (mpk_writer_finish(w) != MPK_OK) return -1;
    return mpk_writer_chunks(w, &chunks, &chunk_count) ? 0 : -1;
}

static long long gather_chunks(char *dst, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < chunk_count; i++) {
        if (chunks[i].len > cap - len) return -1;
        memcpy(dst + len, chunks[i].data, chunks[i].len);
        len += chunks[i].len;
    }
    return (long long)len;
}

/* The nodes are in pre-order in one array, so a walk is a loop. */
static void walk(const mpk_node *root, bench_check *c)
{
    const mpk_node *end = mpk_node_next(root);
    for (const mpk_node *n = root; n < end; n++) {
        c->nodes++;
        switch (mpk_node_type(n)) {
        case MPK_UINT: c->int_sum += n->v.u; break;
        case MPK_INT: c->int_sum += (uint64_t)n->v.i; break;
        case MPK_STR:
        case MPK_BIN: c->byte_sum += n->len; break;
        default: break;
        }
    }
}

static void dom_free(void *dom)
{
    if (dom == &kept_doc) return;
    mpk_doc_destroy(dom);
    free(dom);
}

static void *dom_decode(const bench_buf *in, int fresh)
{
    mpk_doc *doc = &kept_doc;
    if (fresh) {
        doc = malloc(sizeof *doc);
        if (!doc) return NULL;
        mpk_doc_init(doc);
    } else if (!kept_doc_ready) {
        mpk_doc_init(doc);
        kept_doc_ready = 1;
    }
    if (!mpk_doc_parse(doc, in->data, in->len)) {
        dom_free(doc);
        return NULL;
    }
    return doc;
}

static void dom_check(const void *dom, bench_check *c)
{
    c->messages++;
    walk(mpk_doc_root(dom), c);
}

static int dom_encode(const void *dom, bench_buf *out)
{
    mpk_writer *w = start();
    mpk_node_write(mpk_doc_root(dom), w);
    return hand_over(w, out);
}

/* The stream parses each message into the doc (reused), straight from the chunk when the message
 * lies whole in it (mpk_stream_next_doc). */
static int unpack_stream(const bench_buf *in, bench_check *c)
{
    mpk_stream s;
    mpk_doc doc;
    mpk_stream_init(&s);
    mpk_doc_init(&doc);
    int rc = 0;
    for (size_t fed = 0; fed < in->len && rc == 0;) {
        size_t n = in->len - fed < BENCH_CHUNK ? in->len - fed : BENCH_CHUNK;
        mpk_stream_feed(&s, in->data + fed, n);
        fed += n;
        const mpk_node *root;
        int got;
        while ((got = mpk_stream_next_doc(&s, &doc, &root)) == 1) {
            c->messages++;
            walk(root, c);
        }
        if (got < 0) rc = -1;
    }
    if (mpk_stream_end(&s).kind != MPK_OK) rc = -1;
    mpk_doc_destroy(&doc);
    mpk_stream_destroy(&s);
    return rc;
}

/* The pull reader over the whole buffer: a message is complete when the reader is back at depth 0. */
static int unpack_oneshot(const bench_buf *in, bench_check *c)
{
    mpk_reader r;
    mpk_tag tag;
    mpk_reader_init(&r, in->data, in->len);
    while (mpk_reader_offset(&r) < in->len) {
        if (!mpk_reader_next(&r, &tag)) break;
        c->nodes++;
        switch (tag.type) {
        case MPK_UINT: c->int_sum += tag.v.u; break;
        case MPK_INT: c->int_sum += (uint64_t)tag.v.i; break;
        case MPK_STR:
        case MPK_BIN: c->byte_sum += tag.len; break;
        default: break;
        }
        if (mpk_reader_depth(&r) == 0) c->messages++;
    }
    int rc = mpk_reader_error(&r).kind == MPK_OK ? 0 : -1;
    mpk_reader_destroy(&r);
    return rc;
}

static int unpack_messages(const bench_buf *in, bench_unpack_mode mode, bench_check *c)
{
    return mode == UNPACK_STREAM ? unpack_stream(in, c) : unpack_oneshot(in, c);
}

const bench_side bench_side_mpk = {
    "mpk", pack_ints, pack_strings, pack_messages, dom_decode, dom_check, dom_encode, dom_free,
    unpack_messages, release, pack_chunks, gather_chunks,
};
