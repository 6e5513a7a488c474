/* test_stream.c — many values across arbitrary chunkings, zero-copy inside a chunk, one bounded
 * buffer across boundaries, errors as bytes arrive, truncation at the end, feed misuse. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "mpk.h"

/* A deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

/* A message stream: [i, "s..."], {"k": bin}, plain ints, in a growable writer. Records where each
 * message starts. */
static size_t build_messages(mpk_writer *w, size_t *starts, size_t count) {
    static uint8_t body[3000];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(i * 31);
    for (size_t i = 0; i < count; i++) {
        starts[i] = mpk_writer_size(w);
        switch (i % 4) {
        case 0: mpk_write_array(w, 2); mpk_write_uint(w, i); mpk_write_str(w, "hello", 5); break;
        case 1: mpk_write_map(w, 1); mpk_write_cstr(w, "k"); mpk_write_bin(w, body, i % 3000); break;
        case 2: mpk_write_int(w, -(int64_t)i * 1000003); break;
        default: mpk_write_array(w, 0); break;
        }
    }
    starts[count] = mpk_writer_size(w);
    return mpk_writer_size(w);
}

static void test_random_chunkings(void) {
    enum { COUNT = 400 };
    static size_t starts[COUNT + 1];
    mpk_writer w;
    mpk_writer_init_growable(&w, 0);
    size_t total = build_messages(&w, starts, COUNT);
    const uint8_t *data = mpk_writer_data(&w);
    for (int round = 0; round < 60; round++) {
        mpk_stream s;
        mpk_stream_init(&s);
        size_t pos = 0, got = 0, max_buffered = 0;
        int ok = 1, zero_copy = 1;
        size_t max_chunk = round < 20 ? 3 : round < 40 ? 64 : 5000;
        while (pos < total) {
            size_t n = 1 + (size_t)(next_rand() % max_chunk);
            if (n > total - pos) n = total - pos;
            const uint8_t *chunk = data + pos;
            mpk_stream_feed(&s, chunk, n);
            const uint8_t *v;
            size_t len;
            int r;
            while ((r = mpk_stream_next(&s, &v, &len)) == 1) {
                if (got >= COUNT || len != starts[got + 1] - starts[got] ||
                    memcmp(v, data + starts[got], len) != 0)
                    ok = 0;
                /* a value that lies whole inside this chunk is handed out in place */
                if (starts[got] >= pos && starts[got + 1] <= pos + n && v != data + starts[got]) zero_copy = 0;
                got++;
            }
            if (r < 0) ok = 0;
            if (mpk_stream_buffered(&s) > max_buffered) max_buffered = mpk_stream_buffered(&s);
            pos += n;
        }
        CHECK_MSG(ok && got == COUNT, "round %d: %zu values", round, got);
        CHECK(zero_copy);
        /* the buffer only ever holds one incomplete message (the largest is ~3 KiB) */
        CHECK_MSG(max_buffered < 3100, "buffered %zu", max_buffered);
        CHECK(mpk_stream_end(&s).kind == MPK_OK);
        mpk_stream_destroy(&s);
    }
    mpk_writer_destroy(&w);
}

static void test_errors(void) {
    unsigned char buf[64];
    mpk_stream s;
    const uint8_t *v;
    size_t len;

    /* errors are reported as the bytes arrive, with stream offsets */
    size_t n = hex_decode("c0 92 01 c1", buf);
    mpk_stream_init(&s);
    mpk_stream_feed(&s, buf, 2);
    CHECK(mpk_stream_next(&s, &v, &len) == 1 && len == 1);
    CHECK(mpk_stream_next(&s, &v, &len) == 0);
    mpk_stream_feed(&s, buf + 2, n - 2);
    CHECK(mpk_stream_next(&s, &v, &len) == -1);
    CHECK(mpk_stream_error(&s).kind == MPK_ERR_INVALID_BYTE && mpk_stream_error(&s).offset == 3);
    CHECK(mpk_stream_next(&s, &v, &len) == -1); /* sticky */
    mpk_stream_destroy(&s);

    /* limits: a str over the limit fails at its head, before its body arrives */
    mpk_limits l = mpk_limits_default();
    l.str = 10;
    n = hex_decode("c0 db 00100000", buf);
    mpk_stream_init(&s);
    mpk_stream_set_limits(&s, &l);
    mpk_stream_feed(&s, buf, n);
    CHECK(mpk_stream_next(&s, &v, &len) == 1);
    CHECK(mpk_stream_next(&s, &v, &len) == -1);
    CHECK(mpk_stream_error(&s).kind == MPK_ERR_LENGTH_LIMIT && mpk_stream_error(&s).offset == 1);
    CHECK(mpk_stream_buffered(&s) == 0);
    mpk_stream_destroy(&s);

    /* truncation only at the end, at the one-shot offsets */
    n = hex_decode("92 01", buf);
    mpk_stream_init(&s);
    mpk_stream_feed(&s, buf, n);
    CHECK(mpk_stream_next(&s, &v, &len) == 0);
    CHECK(mpk_stream_error(&s).kind == MPK_OK);
    CHECK(mpk_stream_end(&s).kind == MPK_ERR_TRUNCATED && mpk_stream_error(&s).offset == 0);
    mpk_stream_destroy(&s);

    n = hex_decode("c0 a5 6162", buf);
    mpk_stream_init(&s);
    mpk_stream_feed(&s, buf, n);
    CHECK(mpk_stream_next(&s, &v, &len) == 1);
    CHECK(mpk_stream_next(&s, &v, &len) == 0);
    CHECK(mpk_stream_end(&s).kind == MPK_ERR_TRUNCATED && mpk_stream_error(&s).offset == 1);
    mpk_stream_destroy(&s);

    /* feeding before the previous chunk is used up is a caller error */
    n = hex_decode("01 02", buf);
    mpk_stream_init(&s);
    mpk_stream_feed(&s, buf, n);
    CHECK(mpk_stream_next(&s, &v, &len) == 1);
    mpk_stream_feed(&s, buf, n);
    CHECK(mpk_stream_error(&s).kind == MPK_ERR_INVALID_ARGUMENT);
    mpk_stream_destroy(&s);

    /* ending with values still unread in the chunk is reported, not silently dropped */
    mpk_stream_init(&s);
    mpk_stream_feed(&s, buf, n);
    CHECK(mpk_stream_next(&s, &v, &len) == 1);
    CHECK(mpk_stream_end(&s).kind == MPK_ERR_INVALID_ARGUMENT && mpk_stream_error(&s).offset == 1);
    mpk_stream_destroy(&s);

    /* a timestamp split in the middle of its payload is still checked */
    n = hex_decode("d7ff ffffffff00000000", buf);
    mpk_stream_init(&s);
    mpk_stream_feed(&s, buf, 4);
    CHECK(mpk_stream_next(&s, &v, &len) == 0);
    mpk_stream_feed(&s, buf + 4, n - 4);
    CHECK(mpk_stream_next(&s, &v, &len) == -1 && mpk_stream_error(&s).kind == MPK_ERR_INVALID_TIMESTAMP &&
          mpk_stream_error(&s).offset == 0);
    mpk_stream_destroy(&s);
}

/* Feeds `n` bytes as two chunks split at `k` (one byte at a time when k == SIZE_MAX), through
 * mpk_stream_next or mpk_stream_next_doc, never calling mpk_stream_end; returns the stream's error
 * and counts the values taken. */
static mpk_error feed_split(const uint8_t *bytes, size_t n, size_t k, int via_doc, int *values) {
    mpk_stream s;
    mpk_doc d;
    mpk_stream_init(&s);
    mpk_doc_init(&d);
    *values = 0;
    size_t pos = 0;
    for (int chunk = 0; pos < n && mpk_stream_error(&s).kind == MPK_OK; chunk++) {
        size_t len = k == SIZE_MAX ? 1 : chunk == 0 ? k : n - pos;
        mpk_stream_feed(&s, bytes + pos, len);
        pos += len;
        int r;
        const uint8_t *v;
        size_t vlen;
        const mpk_node *root;
        while ((r = via_doc ? mpk_stream_next_doc(&s, &d, &root) : mpk_stream_next(&s, &v, &vlen)) == 1) (*values)++;
    }
    mpk_error e = mpk_stream_error(&s);
    mpk_doc_destroy(&d);
    mpk_stream_destroy(&s);
    return e;
}

/* An ext -1 whose length no timestamp has (4, 8 and 12 are the only ones) is invalid_timestamp at
 * its head as soon as the head is complete: the stream does not wait for (nor buffer) a body that
 * can only be rejected. The inputs below stop right after the head, so a stream that waited for
 * the payload would report nothing. Checked at every chunk split, one byte at a time, and through
 * both ways of taking values; the values before it are delivered. */
static void test_timestamp_length_at_head(void) {
    static const struct { const char *hex; size_t at; int values; } cases[] = {
        {"c9 ff ff ff ff ff", 0, 0},          /* ext 32, 2^32-1 bytes declared */
        {"c7 05 ff", 0, 0},                   /* ext 8, 5 bytes */
        {"c7 00 ff", 0, 0},                   /* ext 8, 0 bytes: no payload at all */
        {"c8 00 03 ff", 0, 0},                /* ext 16, 3 bytes */
        {"d4 ff", 0, 0},                      /* fixext 1 */
        {"d5 ff", 0, 0},                      /* fixext 2 */
        {"d8 ff", 0, 0},                      /* fixext 16 */
        {"01 a1 61 c9 00 01 00 00 ff", 3, 2}, /* after two whole values */
        {"92 c0 c7 0d ff", 2, 0},             /* inside an array */
        {"81 a1 6b c9 7f ff ff ff ff", 3, 0}, /* a map's value */
    };
    uint8_t buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = hex_decode(cases[i].hex, buf);
        for (int via_doc = 0; via_doc < 2; via_doc++)
            for (size_t k = 0; k <= n + 1; k++) {
                size_t split = k == n + 1 ? SIZE_MAX : k;
                int values;
                mpk_error e = feed_split(buf, n, split, via_doc, &values);
                CHECK_MSG(e.kind == MPK_ERR_INVALID_TIMESTAMP && e.offset == cases[i].at && values == cases[i].values,
                          "%s split %zu doc %d: %s at %zu after %d values", cases[i].hex, k, via_doc,
                          mpk_error_name(e.kind), e.offset, values);
            }
    }
    /* the lengths a timestamp has still wait for their payload, and are checked when it is there */
    static const char *const waiting[] = {"d6 ff", "d7 ff 00", "c7 0c ff 00 00", "c8 00 04 ff", "c9 00 00 00 08 ff"};
    for (size_t i = 0; i < sizeof waiting / sizeof waiting[0]; i++) {
        size_t n = hex_decode(waiting[i], buf);
        for (size_t k = 0; k <= n; k++) {
            int values;
            mpk_error e = feed_split(buf, n, k, 0, &values);
            CHECK_MSG(e.kind == MPK_OK && values == 0, "%s split %zu: %s", waiting[i], k, mpk_error_name(e.kind));
        }
    }
    /* a length limit below the declared length still wins: it is checked first, at the same head */
    size_t n = hex_decode("c7 05 ff", buf);
    mpk_stream s;
    mpk_stream_init(&s);
    mpk_limits lim = mpk_limits_default();
    lim.ext = 4;
    mpk_stream_set_limits(&s, &lim);
    mpk_stream_feed(&s, buf, n);
    const uint8_t *v;
    size_t vlen;
    CHECK(mpk_stream_next(&s, &v, &vlen) == -1 && mpk_stream_error(&s).kind == MPK_ERR_LENGTH_LIMIT);
    mpk_stream_destroy(&s);
}

/* A big bin crossing many chunks is copied once: the buffer ends up exactly the value's size
 * rounded to a power of two, and the bytes are right. */
static void test_big_payload(void) {
    static uint8_t msg[100005];
    mpk_writer w;
    mpk_writer_init_buf(&w, msg, sizeof msg);
    static uint8_t body[100000];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(i ^ (i >> 8));
    mpk_write_bin(&w, body, sizeof body);
    size_t total = mpk_writer_size(&w);
    CHECK(mpk_writer_finish(&w) == MPK_OK && total == 100005);
    mpk_stream s;
    mpk_stream_init(&s);
    const uint8_t *v = NULL;
    size_t len = 0;
    int values = 0;
    for (size_t pos = 0; pos < total; pos += 1000) {
        size_t n = total - pos < 1000 ? total - pos : 1000;
        mpk_stream_feed(&s, msg + pos, n);
        while (mpk_stream_next(&s, &v, &len) == 1) {
            values++;
            CHECK(len == total && memcmp(v, msg, total) == 0);
        }
    }
    CHECK(values == 1);
    CHECK(s.buf_cap <= 2 * total);
    mpk_stream_destroy(&s);
}

int main(void) {
    test_random_chunkings();
    test_errors();
    test_big_payload();
    test_timestamp_length_at_head();
    return check_report("test_stream");
}
