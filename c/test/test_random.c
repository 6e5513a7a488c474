/* test_random.c — seeded random values: writer → DOM → writer gives the same bytes; the pull
 * reader re-encodes them identically; the stream finds every value in random chunkings (and
 * parses each into a doc, mpk_stream_next_doc); every
 * prefix is truncated and every byte flip is handled the same way by the DOM and the reader. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "mpk.h"

static uint64_t rng;
static uint64_t next_rand(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static uint8_t pool[70000];

/* A random integer biased towards the family boundaries. */
static void random_int(mpk_writer *w) {
    static const uint64_t edges[] = {0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 4294967295ull,
                                     4294967296ull, 9007199254740991ull, UINT64_MAX};
    uint64_t v = edges[next_rand() % (sizeof edges / sizeof edges[0])];
    switch (next_rand() % 4) {
    case 0: mpk_write_uint(w, v); break;
    case 1: mpk_write_uint(w, next_rand() >> (next_rand() % 64)); break;
    case 2: mpk_write_int(w, -(int64_t)(v >> 1) - 1); break;
    default: mpk_write_int(w, (int64_t)next_rand() >> (next_rand() % 64)); break;
    }
}

static void random_value(mpk_writer *w, int depth) {
    unsigned kind = (unsigned)(next_rand() % (depth < 6 ? 14 : 11));
    size_t len;
    switch (kind) {
    case 0: mpk_write_nil(w); break;
    case 1: mpk_write_bool(w, (int)(next_rand() & 1)); break;
    case 2: case 3: random_int(w); break;
    case 4: {
        uint32_t bits = (uint32_t)next_rand();
        float f;
        memcpy(&f, &bits, 4);
        if (f != f) f = NAN; /* NaN payloads are not compared; keep the quiet one */
        mpk_write_float32(w, f);
        break;
    }
    case 5: {
        uint64_t bits = next_rand();
        double d;
        memcpy(&d, &bits, 8);
        if (d != d) d = NAN;
        mpk_write_float64(w, d);
        break;
    }
    case 6:
        len = next_rand() % 8 == 0 ? next_rand() % 70000 : next_rand() % 40;
        mpk_write_str(w, pool, len);
        break;
    case 7:
        len = next_rand() % 8 == 0 ? next_rand() % 70000 : next_rand() % 40;
        mpk_write_bin(w, pool, len);
        break;
    case 8: {
        static const size_t ext_lens[] = {0, 1, 2, 3, 4, 8, 16, 17, 255, 256, 65536};
        len = ext_lens[next_rand() % (sizeof ext_lens / sizeof ext_lens[0])];
        int8_t type = (int8_t)(next_rand() % 256);
        if (type == -1) type = 0;
        mpk_write_ext(w, type, pool, len);
        break;
    }
    case 9: {
        int64_t sec = (int64_t)next_rand() >> (next_rand() % 64);
        mpk_write_timestamp(w, sec, next_rand() % 2 ? 0 : (uint32_t)(next_rand() % 1000000000u));
        break;
    }
    case 10: mpk_write_str(w, "key", 3); break;
    case 11: case 12: {
        uint32_t n = (uint32_t)(next_rand() % 8 == 0 ? next_rand() % 40 : next_rand() % 5);
        mpk_write_array(w, n);
        for (uint32_t i = 0; i < n; i++) random_value(w, depth + 1);
        break;
    }
    default: {
        uint32_t n = (uint32_t)(next_rand() % 6);
        mpk_write_map(w, n);
        for (uint32_t i = 0; i < 2 * n; i++) random_value(w, depth + 1);
        break;
    }
    }
}

typedef struct sink {
    uint8_t *data;
    size_t len, cap;
} sink;

static int sink_flush(void *ctx, const void *data, size_t len) {
    sink *k = (sink *)ctx;
    if (k->len + len > k->cap) return -1;
    memcpy(k->data + k->len, data, len);
    k->len += len;
    return 0;
}

/* Replays the generator from `seed` into every other output and compares with `want`: a fixed
 * buffer of exactly the size (same bytes), one byte short (buffer_full), a flush writer with a
 * 64-byte stage, and reference chunks. */
static void check_outputs(uint64_t seed, const uint8_t *want, size_t len, int i) {
    static uint8_t fixed[400000], flushed[400000];
    mpk_writer w;
    uint64_t after;
    if (len > sizeof fixed) {
        /* too big for the scratch buffers: only move the generator past it */
        rng = seed;
        mpk_writer_init_growable(&w, 0);
        random_value(&w, 0);
        mpk_writer_destroy(&w);
        return;
    }
    rng = seed;
    mpk_writer_init_buf(&w, fixed, len);
    random_value(&w, 0);
    after = rng;
    CHECK_MSG(mpk_writer_finish(&w) == MPK_OK && mpk_writer_size(&w) == len && memcmp(fixed, want, len) == 0,
              "value %d: exact fixed buffer", i);
    rng = seed;
    mpk_writer_init_buf(&w, fixed, len - 1);
    random_value(&w, 0);
    CHECK_MSG(mpk_writer_finish(&w) == MPK_ERR_BUFFER_FULL, "value %d: one byte short", i);

    sink k = {flushed, 0, sizeof flushed};
    uint8_t stage[64];
    rng = seed;
    mpk_writer_init_flush(&w, stage, sizeof stage, sink_flush, &k);
    random_value(&w, 0);
    CHECK_MSG(mpk_writer_finish(&w) == MPK_OK && k.len == len && memcmp(flushed, want, len) == 0,
              "value %d: flush writer", i);
    mpk_writer_destroy(&w);

    rng = seed;
    mpk_writer_init_chunks(&w, 16);
    random_value(&w, 0);
    const mpk_chunk *chunks;
    size_t n, at = 0;
    int same = mpk_writer_finish(&w) == MPK_OK && mpk_writer_chunks(&w, &chunks, &n);
    for (size_t c = 0; same && c < n; c++) {
        same = at + chunks[c].len <= len && memcmp(want + at, chunks[c].data, chunks[c].len) == 0;
        at += chunks[c].len;
    }
    CHECK_MSG(same && at == len, "value %d: reference chunks", i);
    mpk_writer_destroy(&w);
    rng = after;
}

/* Re-encodes a buffer token by token through the pull reader. */
static int reencode_with_reader(const uint8_t *data, size_t len, mpk_writer *out) {
    mpk_reader r;
    mpk_tag t;
    mpk_reader_init(&r, data, len);
    do {
        if (!mpk_reader_next(&r, &t)) break;
        switch (t.type) {
        case MPK_NIL: mpk_write_nil(out); break;
        case MPK_BOOL: mpk_write_bool(out, t.v.b); break;
        case MPK_UINT: mpk_write_uint(out, t.v.u); break;
        case MPK_INT: mpk_write_int(out, t.v.i); break;
        case MPK_FLOAT32: mpk_write_float32(out, t.v.f32); break;
        case MPK_FLOAT64: mpk_write_float64(out, t.v.f64); break;
        case MPK_STR: mpk_write_str(out, t.data, t.len); break;
        case MPK_BIN: mpk_write_bin(out, t.data, t.len); break;
        case MPK_ARRAY: mpk_write_array(out, t.len); break;
        case MPK_MAP: mpk_write_map(out, t.len); break;
        case MPK_EXT: mpk_write_ext(out, t.ext_type, t.data, t.len); break;
        case MPK_TIMESTAMP: mpk_write_timestamp(out, t.v.ts.sec, t.v.ts.nsec); break;
        }
    } while (mpk_reader_depth(&r) > 0);
    int ok = mpk_reader_finish(&r).kind == MPK_OK;
    mpk_reader_destroy(&r);
    return ok;
}

int main(void) {
    enum { VALUES = 400 };
    for (size_t i = 0; i < sizeof pool; i++) pool[i] = (uint8_t)('a' + i % 26);
    rng = 20261122;
    mpk_writer all, one, again;
    mpk_doc doc, copy;
    static size_t starts[VALUES + 1];
    mpk_writer_init_growable(&all, 0);
    mpk_writer_init_growable(&one, 0);
    mpk_writer_init_growable(&again, 0);
    mpk_doc_init(&doc);
    mpk_doc_init(&copy);
    mpk_doc_set_flags(&copy, MPK_FLAG_COPY);

    for (int i = 0; i < VALUES; i++) {
        mpk_writer_reset(&one);
        uint64_t seed = rng;
        random_value(&one, 0);
        check_outputs(seed, mpk_writer_data(&one), mpk_writer_size(&one), i);
        const uint8_t *bytes = mpk_writer_data(&one);
        size_t len = mpk_writer_size(&one);
        starts[i] = mpk_writer_size(&all);
        mpk_write_bytes(&all, bytes, len);

        const mpk_node *root = mpk_doc_parse(&doc, bytes, len);
        CHECK_MSG(root != NULL, "value %d: %s at %zu", i, mpk_error_name(mpk_doc_error(&doc).kind),
                  mpk_doc_error(&doc).offset);
        if (!root) continue;
        mpk_writer_reset(&again);
        mpk_node_write(root, &again);
        CHECK_MSG(mpk_writer_size(&again) == len && memcmp(mpk_writer_data(&again), bytes, len) == 0,
                  "value %d: DOM round trip", i);
        const mpk_node *croot = mpk_doc_parse(&copy, bytes, len);
        CHECK(croot && mpk_node_equal(root, croot));

        mpk_writer_reset(&again);
        CHECK(reencode_with_reader(bytes, len, &again));
        CHECK_MSG(mpk_writer_size(&again) == len && memcmp(mpk_writer_data(&again), bytes, len) == 0,
                  "value %d: reader round trip", i);

        /* every proper prefix is truncated, and the DOM and the reader agree on where */
        if (len < 2000) {
            int agree = 1;
            for (size_t k = 0; k < len; k++) {
                mpk_reader r;
                mpk_reader_init(&r, bytes, k);
                if (mpk_reader_skip(&r)) mpk_reader_finish(&r);
                mpk_error a = mpk_reader_error(&r);
                mpk_reader_destroy(&r);
                mpk_doc_parse(&doc, bytes, k);
                mpk_error b = mpk_doc_error(&doc);
                agree &= a.kind == MPK_ERR_TRUNCATED && b.kind == a.kind && b.offset == a.offset;
            }
            CHECK_MSG(agree, "value %d: prefixes", i);
        }
        /* flipped bytes: both one-shot decoders give the same verdict */
        static uint8_t mutated[200000];
        if (len <= sizeof mutated) {
            int agree = 1;
            for (int m = 0; m < 20; m++) {
                memcpy(mutated, bytes, len);
                mutated[next_rand() % len] = (uint8_t)next_rand();
                mpk_reader r;
                mpk_reader_init(&r, mutated, len);
                if (mpk_reader_skip(&r)) mpk_reader_finish(&r);
                mpk_error a = mpk_reader_error(&r);
                mpk_reader_destroy(&r);
                mpk_doc_parse(&doc, mutated, len);
                mpk_error b = mpk_doc_error(&doc);
                agree &= a.kind == b.kind && a.offset == b.offset;
            }
            CHECK_MSG(agree, "value %d: mutations", i);
        }
    }
    starts[VALUES] = mpk_writer_size(&all);

    /* the whole sequence through the stream in random chunks, taken as bytes (mpk_stream_next:
     * each value equal to its own slice) and then straight into a doc (mpk_stream_next_doc: each
     * value equal to its own parse) */
    const uint8_t *data = mpk_writer_data(&all);
    size_t total = mpk_writer_size(&all);
    mpk_doc want;
    mpk_doc_init(&want);
    for (int via_doc = 0; via_doc < 2; via_doc++) {
        for (int round = 0; round < 5; round++) {
            mpk_stream s;
            mpk_stream_init(&s);
            size_t pos = 0, got = 0;
            int ok = 1;
            while (pos < total) {
                size_t n = 1 + (size_t)(next_rand() % (round == 0 ? 7 : 20000));
                if (n > total - pos) n = total - pos;
                mpk_stream_feed(&s, data + pos, n);
                int r;
                for (;;) {
                    if (via_doc) {
                        const mpk_node *root;
                        if ((r = mpk_stream_next_doc(&s, &doc, &root)) != 1) break;
                        const mpk_node *expected =
                            got < VALUES ? mpk_doc_parse(&want, data + starts[got], starts[got + 1] - starts[got]) : NULL;
                        ok &= expected && root && mpk_node_equal(root, expected);
                    } else {
                        const uint8_t *v;
                        size_t vlen;
                        if ((r = mpk_stream_next(&s, &v, &vlen)) != 1) break;
                        ok &= got < VALUES && vlen == starts[got + 1] - starts[got] &&
                              memcmp(v, data + starts[got], vlen) == 0;
                    }
                    got++;
                }
                ok &= r == 0;
                pos += n;
            }
            CHECK_MSG(ok && got == VALUES && mpk_stream_end(&s).kind == MPK_OK, "stream%s, round %d",
                      via_doc ? " into a doc" : "", round);
            mpk_stream_destroy(&s);
        }
    }
    mpk_doc_destroy(&want);

    mpk_writer_destroy(&all);
    mpk_writer_destroy(&one);
    mpk_writer_destroy(&again);
    mpk_doc_destroy(&doc);
    mpk_doc_destroy(&copy);
    return check_report("test_random");
}
