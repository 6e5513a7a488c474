/* libFuzzer target for mpk's reader, stream and DOM, asserting that they agree with each other.
 *
 * The input is plain MessagePack (the seeds are the corpus's hex). A hash of the input picks the
 * decode options (default or small limits, strict UTF-8 or not) and where the stream's input is
 * cut in two, so every input is a fixed test case and a crash reproduces from its file alone.
 *
 * Invariants (a failure aborts with a message, which libFuzzer reports as a crash):
 *  1. one-shot: the reader's skip (then finish), the reader's tag-by-tag walk (then finish) and the
 *     DOM agree on success, and on the error kind and offset;
 *  2. the DOM's nodes are the reader's tags, in order, with equal values; str/bin/ext payloads of
 *     both point at the same input bytes (zero-copy);
 *  3. encode(DOM) decodes to an equal DOM, encodes again to the same bytes, is never longer than
 *     the input, and is the input itself whenever the input is in shortest form;
 *  4. the stream fed the input in two chunks (and, up to 512 bytes, one byte at a time) hands out
 *     exactly the values that one-shot skipping finds one after another, byte for byte, and the
 *     same error (truncation: see check_stream);
 *  5. with MPK_FLAG_COPY the DOM is equal, and no payload points into the input;
 *  6. mpk_stream_next_doc, fed the same chunks, gives as many values as mpk_stream_next, each equal
 *     to one-shot's DOM of that value, and the same final error at the same byte. */
#include <mpk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shortest_form.h"

#define REQUIRE(cond, ...)                                                                        \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "fuzz_mpk: invariant failed: %s\n  ", #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            abort();                                                                              \
        }                                                                                         \
    } while (0)

typedef struct options {
    mpk_limits limits;
    unsigned flags;
    size_t split;
} options;

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static options pick_options(const uint8_t *data, size_t n)
{
    uint64_t h = fnv1a(data, n);
    options o;
    o.limits = mpk_limits_default();
    /* one input in four gets small limits, so that every limit check is reached */
    if ((h & 3) == 0) {
        o.limits.depth = 1 + (uint32_t)((h >> 8) % 8);
        o.limits.str = (uint32_t)((h >> 16) % 40);
        o.limits.bin = (uint32_t)((h >> 24) % 40);
        o.limits.ext = (uint32_t)((h >> 32) % 20);
        o.limits.array = (uint32_t)((h >> 40) % 20);
        o.limits.map = (uint32_t)((h >> 48) % 20);
    }
    o.flags = (h >> 2) & 1 ? MPK_FLAG_STRICT_UTF8 : 0;
    uint64_t g = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
    o.split = (size_t)((g ^ (g >> 32)) % (n + 1));
    return o;
}

static const char *kind(mpk_error e) { return mpk_error_name(e.kind); }

/* ---- one-shot decoders ---- */

static void reader_init(mpk_reader *r, const uint8_t *data, size_t n, const options *o)
{
    mpk_reader_init(r, data, n);
    mpk_reader_set_limits(r, &o->limits);
    mpk_reader_set_flags(r, o->flags);
}

/* One value by skip; *consumed is its length when it decoded. The error is what one-shot decoding
 * of exactly this input reports (trailing bytes included). */
static mpk_error oneshot_skip(const uint8_t *data, size_t n, const options *o, size_t *consumed)
{
    mpk_reader r;
    reader_init(&r, data, n, o);
    mpk_error e;
    *consumed = 0;
    if (mpk_reader_skip(&r)) {
        *consumed = mpk_reader_offset(&r);
        e = mpk_reader_finish(&r);
    } else {
        e = mpk_reader_error(&r);
    }
    mpk_reader_destroy(&r);
    return e;
}

static int same_float_bits32(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }
static int same_float_bits64(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Invariant 2: walk the tags alongside the DOM's nodes (when there is a DOM). Returns the error of
 * the tag walk as one-shot decoding (then finish). */
static mpk_error oneshot_tags(const uint8_t *data, size_t n, const options *o, const mpk_doc *doc)
{
    mpk_reader r;
    mpk_tag t;
    reader_init(&r, data, n, o);
    const mpk_node *node = mpk_doc_root(doc);
    size_t count = node ? mpk_node_next(node) - node : 0, i = 0;
    for (;;) {
        if (!mpk_reader_next(&r, &t)) break;
        if (node) {
            REQUIRE(i < count, "reader gave more tags than the DOM has nodes (%zu)", count);
            const mpk_node *m = node + i++;
            REQUIRE(mpk_node_type(m) == t.type, "node %zu: DOM type %s, reader type %s", i - 1,
                    mpk_type_name(mpk_node_type(m)), mpk_type_name(t.type));
            switch (t.type) {
            case MPK_BOOL: REQUIRE(!m->v.b == !t.v.b, "node %zu: bool differs", i - 1); break;
            case MPK_UINT: REQUIRE(m->v.u == t.v.u, "node %zu: uint differs", i - 1); break;
            case MPK_INT: REQUIRE(m->v.i == t.v.i, "node %zu: int differs", i - 1); break;
            case MPK_FLOAT32: REQUIRE(same_float_bits32(m->v.f32, t.v.f32), "node %zu: float32 differs", i - 1); break;
            case MPK_FLOAT64: REQUIRE(same_float_bits64(m->v.f64, t.v.f64), "node %zu: float64 differs", i - 1); break;
            case MPK_EXT:
                REQUIRE(m->ext_type == t.ext_type, "node %zu: ext type differs", i - 1);
                /* fall through */
            case MPK_STR:
            case MPK_BIN:
                REQUIRE(m->len == t.len && m->v.data == t.data,
                        "node %zu: payload differs (DOM %u bytes at %p, reader %u bytes at %p)", i - 1, m->len,
                        (const void *)m->v.data, t.len, (const void *)t.data);
                REQUIRE(t.data >= data && t.data + t.len <= data + n, "node %zu: payload outside the input", i - 1);
                break;
            case MPK_ARRAY:
            case MPK_MAP: REQUIRE(m->len == t.len, "node %zu: count differs", i - 1); break;
            case MPK_TIMESTAMP: {
                mpk_timestamp ts = mpk_node_timestamp(m);
                REQUIRE(ts.sec == t.v.ts.sec && ts.nsec == t.v.ts.nsec, "node %zu: timestamp differs", i - 1);
                REQUIRE(t.v.ts.nsec <= 999999999u, "node %zu: nsec %u out of range", i - 1, t.v.ts.nsec);
                break;
            }
            default: break;
            }
        }
        if (mpk_reader_depth(&r) == 0) break;
    }
    if (node) REQUIRE(i == count, "reader gave %zu tags, the DOM has %zu nodes", i, count);
    mpk_error e = mpk_reader_error(&r);
    if (e.kind == MPK_OK) e = mpk_reader_finish(&r);
    mpk_reader_destroy(&r);
    return e;
}

/* ---- invariant 3: encode(DOM) ---- */

static void check_encode(const uint8_t *data, size_t n, const options *o, const mpk_node *root)
{
    mpk_writer w;
    mpk_writer_init_growable(&w, 0);
    mpk_node_write(root, &w);
    REQUIRE(mpk_writer_finish(&w) == MPK_OK, "encoding the DOM failed: %s", mpk_error_name(mpk_writer_error(&w)));
    const uint8_t *enc = mpk_writer_data(&w);
    size_t enc_len = mpk_writer_size(&w);
    REQUIRE(enc_len <= n, "encode(DOM) is %zu bytes, longer than the %zu-byte input", enc_len, n);
    if (shortest_form(data, n))
        REQUIRE(enc_len == n && memcmp(enc, data, n) == 0,
                "the input is in shortest form but encode(DOM) differs from it (%zu vs %zu bytes)", enc_len, n);

    mpk_doc again;
    mpk_doc_init(&again);
    mpk_doc_set_limits(&again, &o->limits);
    mpk_doc_set_flags(&again, o->flags);
    const mpk_node *root2 = mpk_doc_parse(&again, enc, enc_len);
    REQUIRE(root2, "encode(DOM) does not decode: %s at %zu", kind(mpk_doc_error(&again)), mpk_doc_error(&again).offset);
    REQUIRE(mpk_node_equal(root, root2), "decode(encode(DOM)) differs from the DOM");
    REQUIRE(shortest_form(enc, enc_len), "encode(DOM) is not in shortest form");

    mpk_writer w2;
    mpk_writer_init_growable(&w2, 0);
    mpk_node_write(root2, &w2);
    REQUIRE(mpk_writer_finish(&w2) == MPK_OK && mpk_writer_size(&w2) == enc_len &&
                memcmp(mpk_writer_data(&w2), enc, enc_len) == 0,
            "encode(decode(encode(DOM))) differs from encode(DOM)");
    mpk_writer_destroy(&w2);
    mpk_doc_destroy(&again);
    mpk_writer_destroy(&w);
}

/* MPK_FLAG_COPY gives an equal DOM whose payloads live in the doc, not in the input. */
static void check_copy(const uint8_t *data, size_t n, const options *o, const mpk_node *root)
{
    mpk_doc copy;
    mpk_doc_init(&copy);
    mpk_doc_set_limits(&copy, &o->limits);
    mpk_doc_set_flags(&copy, o->flags | MPK_FLAG_COPY);
    const mpk_node *root2 = mpk_doc_parse(&copy, data, n);
    REQUIRE(root2, "MPK_FLAG_COPY parse failed: %s at %zu", kind(mpk_doc_error(&copy)), mpk_doc_error(&copy).offset);
    REQUIRE(mpk_node_equal(root, root2), "the MPK_FLAG_COPY DOM differs from the zero-copy DOM");
    for (const mpk_node *m = root2, *end = mpk_node_next(root2); m < end; m++) {
        mpk_type t = mpk_node_type(m);
        if ((t == MPK_STR || t == MPK_BIN || t == MPK_EXT) && m->len)
            REQUIRE(m->v.data + m->len <= data || m->v.data >= data + n,
                    "MPK_FLAG_COPY: node %zu still points into the input", (size_t)(m - root2));
    }
    mpk_doc_destroy(&copy);
}

/* ---- invariant 4: the stream in chunks against one-shot skipping ---- */

/* cuts[0] = 0 < cuts[1] < ... < cuts[ncuts-1] = n: the chunk boundaries */
static void check_stream(const uint8_t *data, size_t n, const options *o, const size_t *cuts, size_t ncuts)
{
    mpk_stream s;
    mpk_stream_init(&s);
    mpk_stream_set_limits(&s, &o->limits);
    mpk_stream_set_flags(&s, o->flags);

    /* what one-shot skipping finds, value after value */
    size_t at = 0;
    mpk_error expected = {MPK_OK, 0};
    size_t values = 0;

    int stream_failed = 0;
    for (size_t c = 0; c + 1 < ncuts && !stream_failed; c++) {
        mpk_stream_feed(&s, data + cuts[c], cuts[c + 1] - cuts[c]);
        const uint8_t *value;
        size_t len;
        int got;
        while ((got = mpk_stream_next(&s, &value, &len)) == 1) {
            /* one-shot must find the same value at the same place */
            size_t consumed;
            mpk_error e = oneshot_skip(data + at, n - at, o, &consumed);
            REQUIRE(consumed > 0 && (e.kind == MPK_OK || e.kind == MPK_ERR_TRAILING_BYTES),
                    "stream value %zu (%zu bytes at %zu) but one-shot there says %s at %zu", values, len, at, kind(e),
                    at + e.offset);
            REQUIRE(len == consumed && memcmp(value, data + at, len) == 0,
                    "stream value %zu: %zu bytes, one-shot: %zu bytes at %zu (split at %zu)", values, len, consumed,
                    at, o->split);
            at += consumed;
            values++;
        }
        if (got < 0) stream_failed = 1;
    }
    mpk_error got = mpk_stream_end(&s);
    mpk_stream_destroy(&s);

    /* the first value one-shot cannot decode, if any */
    if (at < n) {
        size_t consumed;
        expected = oneshot_skip(data + at, n - at, o, &consumed);
        if (expected.kind == MPK_ERR_TRAILING_BYTES) {
            /* one-shot decodes a further value that the stream did not hand out */
            REQUIRE(0, "one-shot decodes a value at %zu (%zu bytes) that the stream did not hand out (split at %zu, "
                       "stream says %s at %zu)",
                    at, consumed, o->split, kind(got), got.offset);
        }
        if (expected.kind == MPK_OK)
            REQUIRE(0, "one-shot decodes the last value at %zu, the stream did not (split at %zu; stream: %s at %zu)", at,
                    o->split, kind(got), got.offset);
        expected.offset += at;
    }
    if (expected.kind == MPK_OK) {
        REQUIRE(got.kind == MPK_OK, "stream: %s at %zu, one-shot: all %zu values fine (split at %zu)", kind(got),
                got.offset, values, o->split);
    } else if (expected.kind == MPK_ERR_TRUNCATED) {
        /* A stream cannot know that bytes will not come, so it reports truncation only at the end:
         * at one-shot's offset (what stream.c's mpk_stream_end does) or at the input length (what
         * stream.h says); or, since it cannot check declared sizes against an end it cannot see,
         * an error in bytes at or after the token one-shot found cut off. */
        if (got.kind == MPK_ERR_TRUNCATED)
            REQUIRE(got.offset == expected.offset || got.offset == n,
                    "stream: truncated at %zu, one-shot: truncated at %zu, input length %zu (split at %zu)",
                    got.offset, expected.offset, n, o->split);
        else
            REQUIRE(got.kind != MPK_OK && got.offset >= expected.offset,
                    "stream: %s at %zu, one-shot: truncated at %zu (split at %zu)", kind(got), got.offset,
                    expected.offset, o->split);
    } else {
        REQUIRE(got.kind == expected.kind && got.offset == expected.offset,
                "stream: %s at %zu, one-shot: %s at %zu (split at %zu)", kind(got), got.offset, kind(expected),
                expected.offset, o->split);
    }
}

/* ---- invariant 6: the stream into a doc against the stream's scan ---- */

/* mpk_stream_next_doc, fed the same chunks as mpk_stream_next, gives the same number of values,
 * each equal to the DOM of the bytes the scan handed out there (one-shot's value, by invariant 4),
 * and ends with the same error at the same byte. */
static void check_stream_doc(const uint8_t *data, size_t n, const options *o, const size_t *cuts, size_t ncuts)
{
    mpk_stream scan, into;
    mpk_stream_init(&scan);
    mpk_stream_init(&into);
    mpk_stream_set_limits(&scan, &o->limits);
    mpk_stream_set_flags(&scan, o->flags);
    mpk_stream_set_limits(&into, &o->limits);
    mpk_stream_set_flags(&into, o->flags);
    mpk_doc doc, want;
    mpk_doc_init(&doc);
    mpk_doc_init(&want);
    mpk_doc_set_limits(&want, &o->limits);
    mpk_doc_set_flags(&want, o->flags);
    size_t scan_values = 0, doc_values = 0, at = 0;
    int scan_failed = 0, doc_failed = 0;
    for (size_t c = 0; c + 1 < ncuts; c++) {
        if (!scan_failed) {
            mpk_stream_feed(&scan, data + cuts[c], cuts[c + 1] - cuts[c]);
            const uint8_t *value;
            size_t len;
            int got;
            while ((got = mpk_stream_next(&scan, &value, &len)) == 1) scan_values++;
            if (got < 0) scan_failed = 1;
        }
        if (!doc_failed) {
            mpk_stream_feed(&into, data + cuts[c], cuts[c + 1] - cuts[c]);
            const mpk_node *root;
            int got;
            while ((got = mpk_stream_next_doc(&into, &doc, &root)) == 1) {
                size_t consumed;
                mpk_error e = oneshot_skip(data + at, n - at, o, &consumed);
                REQUIRE(consumed > 0 && (e.kind == MPK_OK || e.kind == MPK_ERR_TRAILING_BYTES),
                        "stream into a doc: value %zu at %zu, but one-shot there says %s", doc_values, at, kind(e));
                const mpk_node *expected = mpk_doc_parse(&want, data + at, consumed);
                REQUIRE(root && expected && mpk_node_equal(root, expected),
                        "stream into a doc: value %zu at %zu differs from its one-shot DOM (split at %zu)", doc_values,
                        at, o->split);
                at += consumed;
                doc_values++;
            }
            if (got < 0) doc_failed = 1;
        }
    }
    mpk_error scan_end = mpk_stream_end(&scan), doc_end = mpk_stream_end(&into);
    REQUIRE(doc_values == scan_values && doc_end.kind == scan_end.kind && doc_end.offset == scan_end.offset,
            "stream into a doc: %zu values, then %s at %zu; the scan: %zu values, then %s at %zu (split at %zu)",
            doc_values, kind(doc_end), doc_end.offset, scan_values, kind(scan_end), scan_end.offset, o->split);
    mpk_doc_destroy(&doc);
    mpk_doc_destroy(&want);
    mpk_stream_destroy(&scan);
    mpk_stream_destroy(&into);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    options o = pick_options(data, n);

    mpk_doc doc;
    mpk_doc_init(&doc);
    mpk_doc_set_limits(&doc, &o.limits);
    mpk_doc_set_flags(&doc, o.flags);
    const mpk_node *root = mpk_doc_parse(&doc, data, n);
    mpk_error dom = root ? (mpk_error){MPK_OK, 0} : mpk_doc_error(&doc);

    /* invariant 1 */
    size_t consumed;
    mpk_error skip = oneshot_skip(data, n, &o, &consumed);
    REQUIRE(skip.kind == dom.kind && skip.offset == dom.offset, "skip: %s at %zu, DOM: %s at %zu", kind(skip),
            skip.offset, kind(dom), dom.offset);
    if (root) REQUIRE(consumed == n, "DOM took all %zu bytes, skip consumed %zu", n, consumed);
    mpk_error tags = oneshot_tags(data, n, &o, &doc);
    REQUIRE(tags.kind == dom.kind && tags.offset == dom.offset, "tags: %s at %zu, DOM: %s at %zu", kind(tags),
            tags.offset, kind(dom), dom.offset);

    if (root) {
        check_encode(data, n, &o, root);
        check_copy(data, n, &o, root);
    }
    mpk_doc_destroy(&doc);

    const size_t two[3] = {0, o.split, n};
    check_stream(data, n, &o, two, 3);
    check_stream_doc(data, n, &o, two, 3);
    /* small inputs also one byte at a time, which cuts at every boundary at once */
    if (n <= 512) {
        size_t every[513];
        for (size_t i = 0; i <= n; i++) every[i] = i;
        check_stream(data, n, &o, every, n + 1);
        check_stream_doc(data, n, &o, every, n + 1);
    }
    return 0;
}
