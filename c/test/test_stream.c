/* test_stream.c — many values across arbitrary chunkings, zero-copy inside a chunk, one bounded
 * buffer across boundaries, errors as bytes arrive, truncation at the end, feed misuse. */
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
    return check_report("test_stream");
}
