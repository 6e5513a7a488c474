/* test_writer.c — shortest forms, every output mode, sticky errors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "check.h"
#include "mpk.h"

static mpk_writer w;

/* Compares the growable writer's output with hex, then empties it. */
static void expect_hex(const char *hex, int line) {
    unsigned char want[64];
    size_t n = hex_decode(hex, want);
    int ok = mpk_writer_error(&w) == MPK_OK && mpk_writer_size(&w) == n &&
             memcmp(mpk_writer_data(&w), want, n) == 0;
    check_one(ok, hex, __FILE__, line, NULL);
    mpk_writer_reset(&w);
}
#define EXPECT(hex) expect_hex(hex, __LINE__)

static void test_shortest_ints(void) {
    mpk_write_uint(&w, 0); EXPECT("00");
    mpk_write_uint(&w, 127); EXPECT("7f");
    mpk_write_uint(&w, 128); EXPECT("cc80");
    mpk_write_uint(&w, 255); EXPECT("ccff");
    mpk_write_uint(&w, 256); EXPECT("cd0100");
    mpk_write_uint(&w, 65535); EXPECT("cdffff");
    mpk_write_uint(&w, 65536); EXPECT("ce00010000");
    mpk_write_uint(&w, 4294967295u); EXPECT("ceffffffff");
    mpk_write_uint(&w, 4294967296ull); EXPECT("cf0000000100000000");
    mpk_write_uint(&w, UINT64_MAX); EXPECT("cfffffffffffffffff");
    mpk_write_int(&w, 5); EXPECT("05");
    mpk_write_int(&w, -1); EXPECT("ff");
    mpk_write_int(&w, -32); EXPECT("e0");
    mpk_write_int(&w, -33); EXPECT("d0df");
    mpk_write_int(&w, -128); EXPECT("d080");
    mpk_write_int(&w, -129); EXPECT("d1ff7f");
    mpk_write_int(&w, -32768); EXPECT("d18000");
    mpk_write_int(&w, -32769); EXPECT("d2ffff7fff");
    mpk_write_int(&w, INT32_MIN); EXPECT("d280000000");
    mpk_write_int(&w, (int64_t)INT32_MIN - 1); EXPECT("d3ffffffff7fffffff");
    mpk_write_int(&w, INT64_MIN); EXPECT("d38000000000000000");
}

/* mpk_write_int finds the width first and lets the sign pick the head (writer.h): checked against
 * the spec's rule written the plain way, sign first, at every width edge +-2 of both signs and at
 * random values of every width, and into fixed buffers of exactly its size and one byte less. */
static size_t ref_int(int64_t v, uint8_t *out) {
    uint64_t u = (uint64_t)v;
    int n;
    if (v >= 0) {
        if (u < 128) { out[0] = (uint8_t)u; return 1; }
        if (u <= 0xff) { out[0] = 0xcc; n = 1; }
        else if (u <= 0xffff) { out[0] = 0xcd; n = 2; }
        else if (u <= 0xffffffffu) { out[0] = 0xce; n = 4; }
        else { out[0] = 0xcf; n = 8; }
    } else {
        if (v >= -32) { out[0] = (uint8_t)u; return 1; }
        if (v >= -128) { out[0] = 0xd0; n = 1; }
        else if (v >= -32768) { out[0] = 0xd1; n = 2; }
        else if (v >= INT64_C(-2147483648)) { out[0] = 0xd2; n = 4; }
        else { out[0] = 0xd3; n = 8; }
    }
    for (int i = 0; i < n; i++) out[1 + i] = (uint8_t)(u >> (8 * (n - 1 - i)));
    return 1 + (size_t)n;
}

static int int_matches(int64_t v) {
    uint8_t want[9], got[9];
    size_t n = ref_int(v, want);
    mpk_writer f;
    mpk_writer_init_buf(&f, got, n); /* exactly its size */
    mpk_write_int(&f, v);
    int ok = mpk_writer_finish(&f) == MPK_OK && mpk_writer_size(&f) == n && memcmp(got, want, n) == 0;
    if (v >= 0) { /* and the same bytes as mpk_write_uint */
        mpk_writer_init_buf(&f, got, n);
        mpk_write_uint(&f, (uint64_t)v);
        ok &= mpk_writer_finish(&f) == MPK_OK && mpk_writer_size(&f) == n && memcmp(got, want, n) == 0;
    }
    mpk_writer_init_buf(&f, got, n - 1); /* one byte short: full, nothing written */
    mpk_write_int(&f, v);
    ok &= mpk_writer_finish(&f) == MPK_ERR_BUFFER_FULL && mpk_writer_size(&f) == 0;
    return ok;
}

static void test_int_widths(void) {
    static const int64_t edges[] = {0, 31, 32, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
                                    INT64_C(2147483647), INT64_C(2147483648), INT64_C(4294967295),
                                    INT64_C(4294967296), INT64_MAX, -1, -31, -32, -33, -127, -128, -129,
                                    -32767, -32768, -32769, INT64_C(-2147483647), INT64_C(-2147483648),
                                    INT64_C(-2147483649), INT64_MIN};
    int bad = 0;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (int d = -2; d <= 2; d++) {
            int64_t e = edges[i];
            if ((d > 0 && e > INT64_MAX - d) || (d < 0 && e < INT64_MIN - d)) continue;
            if (!int_matches(e + d)) {
                if (bad++ < 5) fprintf(stderr, "mpk_write_int(%lld) differs\n", (long long)(e + d));
            }
        }
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < 200000; i++) { /* random widths, random signs */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t m = (x >> (x % 64)) >> 1; /* 0 .. 2^63-1, of a random bit length */
        int64_t v = (x >> 63) ? -(int64_t)m - 1 : (int64_t)m;
        if (!int_matches(v) && bad++ < 5) fprintf(stderr, "mpk_write_int(%lld) differs\n", (long long)v);
    }
    CHECK(bad == 0);
    /* a fresh growable writer grows for each width */
    mpk_writer g;
    mpk_writer_init_growable(&g, 1);
    uint8_t want[9 * sizeof edges / sizeof edges[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        mpk_write_int(&g, edges[i]);
        n += ref_int(edges[i], want + n);
    }
    CHECK(mpk_writer_finish(&g) == MPK_OK && mpk_writer_size(&g) == n && memcmp(mpk_writer_data(&g), want, n) == 0);
    mpk_writer_destroy(&g);
}

static void test_other_values(void) {
    mpk_write_nil(&w); EXPECT("c0");
    mpk_write_bool(&w, 0); EXPECT("c2");
    mpk_write_bool(&w, 1); EXPECT("c3");
    mpk_write_float32(&w, 1.5f); EXPECT("ca3fc00000");
    mpk_write_float64(&w, 1.5); EXPECT("cb3ff8000000000000");
    mpk_write_float64(&w, -0.0); EXPECT("cb8000000000000000");
    mpk_write_str(&w, "", 0); EXPECT("a0");
    mpk_write_cstr(&w, "abc"); EXPECT("a3616263");
    mpk_write_array(&w, 0); EXPECT("90");
    mpk_write_array(&w, 15); EXPECT("9f");
    mpk_write_array(&w, 16); EXPECT("dc0010");
    mpk_write_array(&w, 65536); EXPECT("dd00010000");
    mpk_write_map(&w, 1); EXPECT("81");
    mpk_write_map(&w, 16); EXPECT("de0010");
    mpk_write_bin(&w, "\x01\x02", 2); EXPECT("c4020102");
    mpk_write_bin(&w, "", 0); EXPECT("c400");
    mpk_write_ext(&w, 5, "\xaa", 1); EXPECT("d405aa");
    mpk_write_ext(&w, 5, "\xaa\xbb\xcc", 3); EXPECT("c70305aabbcc");
    mpk_write_ext(&w, -2, "", 0); EXPECT("c700fe");
    mpk_write_timestamp(&w, 0, 0); EXPECT("d6ff00000000");
    mpk_write_timestamp(&w, 4294967295ll, 0); EXPECT("d6ffffffffff");
    mpk_write_timestamp(&w, 4294967296ll, 0); EXPECT("d7ff0000000100000000");
    mpk_write_timestamp(&w, 1, 1); EXPECT("d7ff0000000400000001");
    mpk_write_timestamp(&w, -1, 0); EXPECT("c70cff00000000ffffffffffffffff");
    mpk_write_timestamp(&w, 17179869184ll, 5); EXPECT("c70cff000000050000000400000000");
}

static void test_long_heads(void) {
    static char big[70000];
    memset(big, 'x', sizeof big);
    mpk_write_str(&w, big, 31);
    CHECK(mpk_writer_size(&w) == 32 && mpk_writer_data(&w)[0] == 0xbf);
    mpk_writer_reset(&w);
    mpk_write_str(&w, big, 32);
    CHECK(mpk_writer_size(&w) == 34 && mpk_writer_data(&w)[0] == 0xd9);
    mpk_writer_reset(&w);
    mpk_write_str(&w, big, 256);
    CHECK(mpk_writer_size(&w) == 259 && mpk_writer_data(&w)[0] == 0xda);
    mpk_writer_reset(&w);
    mpk_write_bin(&w, big, 65536);
    CHECK(mpk_writer_size(&w) == 65541 && mpk_writer_data(&w)[0] == 0xc6);
    CHECK(memcmp(mpk_writer_data(&w) + 5, big, 65536) == 0);
    mpk_writer_reset(&w);
}

static void test_fixed_buffer(void) {
    unsigned char buf[4];
    mpk_writer f;
    mpk_writer_init_buf(&f, buf, sizeof buf);
    mpk_write_uint(&f, 1);
    mpk_write_uint(&f, 300); /* exactly fills: 1 + 3 bytes */
    CHECK(mpk_writer_error(&f) == MPK_OK && mpk_writer_size(&f) == 4);
    mpk_write_nil(&f);
    CHECK(mpk_writer_finish(&f) == MPK_ERR_BUFFER_FULL);
    mpk_write_nil(&f); /* sticky: nothing more is written */
    CHECK(mpk_writer_size(&f) == 4 && buf[0] == 1 && buf[1] == 0xcd);
    mpk_writer_destroy(&f);

    /* a head that exactly fits is not refused */
    unsigned char b2[2];
    mpk_writer_init_buf(&f, b2, sizeof b2);
    mpk_writer_set_checks(&f, 0); /* a head without its body, on purpose */
    mpk_write_str_head(&f, 40);
    CHECK(mpk_writer_finish(&f) == MPK_OK && b2[0] == 0xd9 && b2[1] == 40);
    mpk_writer_destroy(&f);
}

typedef struct sink {
    unsigned char data[200000];
    size_t len;
    int calls, fail_after;
} sink;

static int sink_flush(void *ctx, const void *data, size_t len) {
    sink *s = (sink *)ctx;
    if (s->fail_after >= 0 && s->calls >= s->fail_after) return -1;
    s->calls++;
    memcpy(s->data + s->len, data, len);
    s->len += len;
    return 0;
}

static void test_flush(void) {
    static sink s;
    static char body[100000];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (char)(i * 7);
    s.fail_after = -1;
    unsigned char stage[64];
    mpk_writer f;
    mpk_writer_init_flush(&f, stage, sizeof stage, sink_flush, &s);
    mpk_writer g;
    mpk_writer_init_growable(&g, 0);
    for (int i = 0; i < 1000; i++) {
        mpk_write_uint(&f, (uint64_t)i * 977);
        mpk_write_uint(&g, (uint64_t)i * 977);
    }
    mpk_write_bin(&f, body, sizeof body);
    mpk_write_bin(&g, body, sizeof body);
    mpk_write_cstr(&f, "end");
    mpk_write_cstr(&g, "end");
    CHECK(mpk_writer_finish(&f) == MPK_OK);
    CHECK(s.len == mpk_writer_size(&g) && memcmp(s.data, mpk_writer_data(&g), s.len) == 0);
    CHECK(f.flushed == s.len);
    mpk_writer_destroy(&f);
    mpk_writer_destroy(&g);

    /* a failing callback is a sticky I/O error */
    memset(&s, 0, sizeof s);
    s.fail_after = 1;
    mpk_writer_init_flush(&f, NULL, 64, sink_flush, &s);
    for (int i = 0; i < 1000; i++) mpk_write_uint(&f, 1000);
    CHECK(mpk_writer_finish(&f) == MPK_ERR_IO);
    CHECK(s.calls == 1);
    mpk_writer_destroy(&f);
}

/* The ready-made callbacks: a stdio file and a file descriptor get the same bytes. */
static void test_flush_file_and_fd(void) {
    FILE *f = tmpfile();
    if (!CHECK(f != NULL)) return;
    unsigned char stage[64];
    mpk_writer fw;
    mpk_writer_init_flush(&fw, stage, sizeof stage, mpk_flush_file, f);
    for (int i = 0; i < 500; i++) mpk_write_int(&fw, -i * 1000);
    CHECK(mpk_writer_finish(&fw) == MPK_OK);
    long size = ftell(f);
    CHECK(size > 1000 && (uint64_t)size == fw.flushed);
    rewind(f);
    static unsigned char back[4096];
    size_t got = fread(back, 1, sizeof back, f);
    mpk_reader r;
    mpk_reader_init(&r, back, got);
    int64_t v;
    int ok = 1;
    for (int i = 0; i < 500; i++) ok &= mpk_read_int(&r, &v) && v == -i * 1000;
    CHECK(ok && mpk_reader_finish(&r).kind == MPK_OK);

    /* the same through the file's descriptor, straight from a big body */
    rewind(f);
    mpk_writer dw;
    mpk_writer_init_flush(&dw, NULL, 0, mpk_flush_fd, (void *)(intptr_t)fileno(f));
    static char body[200000];
    memset(body, 'z', sizeof body);
    mpk_write_str(&dw, body, sizeof body);
    CHECK(mpk_writer_finish(&dw) == MPK_OK && dw.flushed == sizeof body + 5);
    mpk_writer_destroy(&fw);
    mpk_writer_destroy(&dw);
    fclose(f);
}

static void test_chunks(void) {
    static char big1[5000], big2[3000];
    memset(big1, 'a', sizeof big1);
    memset(big2, 'b', sizeof big2);
    mpk_writer c, g;
    mpk_writer_init_chunks(&c, 1024);
    mpk_writer_init_growable(&g, 0);
    mpk_writer *both[2] = {&c, &g};
    for (int k = 0; k < 2; k++) {
        mpk_write_array(both[k], 4);
        mpk_write_str(both[k], big1, sizeof big1);
        mpk_write_bin(both[k], big2, sizeof big2);
        mpk_write_str(both[k], big1, 100);
        mpk_write_bin(both[k], big2, sizeof big2);
    }
    CHECK(mpk_writer_finish(&c) == MPK_OK);
    const mpk_chunk *chunks;
    size_t n;
    CHECK(mpk_writer_chunks(&c, &chunks, &n));
    /* the three big bodies are referenced, not copied */
    CHECK(n == 6 && chunks[1].data == big1 && chunks[3].data == big2 && chunks[5].data == big2);
    CHECK(mpk_writer_size(&c) < 200);
    size_t total = 0;
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        same &= memcmp((const char *)mpk_writer_data(&g) + total, chunks[i].data, chunks[i].len) == 0;
        total += chunks[i].len;
    }
    CHECK(same && total == mpk_writer_size(&g));
    mpk_writer_destroy(&c);
    mpk_writer_destroy(&g);
}

/* Bodies far into a big output take the streaming-store copy on x86-64 (writer.c): every length
 * and destination alignment around its line handling must give the same bytes as a plain copy. */
static void test_large_bodies(void) {
    static const size_t lengths[] = {1023, 1024, 1025, 1087, 1088, 1151, 4109, 70000};
    enum { NLEN = sizeof lengths / sizeof lengths[0], SHIFTS = 65 };
    static uint8_t source[70000 + 64];
    for (size_t i = 0; i < sizeof source; i++) source[i] = (uint8_t)(i * 7 + (i >> 8));
    size_t filler = (size_t)5 << 20;
    uint8_t *zeros = (uint8_t *)calloc(1, filler);
    CHECK(zeros != NULL);
    if (!zeros) return;
    mpk_writer g;
    mpk_writer_init_growable(&g, 0);
    mpk_write_bin(&g, zeros, filler); /* past the offset where streaming starts */
    for (int shift = 0; shift < SHIFTS; shift++) {
        for (size_t k = 0; k < NLEN; k++) {
            const uint8_t *body = source + (size_t)shift % 7; /* source alignments vary too */
            mpk_write_str(&g, "................................", (size_t)shift % 32); /* moves the destination */
            switch (k % 3) {
            case 0: mpk_write_bin(&g, body, lengths[k]); break;
            case 1: mpk_write_str(&g, body, lengths[k]); break;
            default: mpk_write_bin_head(&g, (uint32_t)lengths[k]); mpk_write_bytes(&g, body, lengths[k]); break;
            }
        }
    }
    CHECK(mpk_writer_finish(&g) == MPK_OK);
    mpk_reader r;
    mpk_tag tag;
    mpk_reader_init(&r, mpk_writer_data(&g), mpk_writer_size(&g));
    CHECK(mpk_reader_next(&r, &tag) && tag.len == filler && memcmp(tag.data, zeros, filler) == 0);
    int ok = 1;
    for (int shift = 0; shift < SHIFTS && ok; shift++) {
        for (size_t k = 0; k < NLEN && ok; k++) {
            ok &= mpk_reader_next(&r, &tag) && tag.type == MPK_STR && tag.len == (size_t)shift % 32;
            ok &= mpk_reader_next(&r, &tag) && tag.len == lengths[k] &&
                  tag.type == (k % 3 == 1 ? MPK_STR : MPK_BIN) &&
                  memcmp(tag.data, source + (size_t)shift % 7, lengths[k]) == 0;
        }
    }
    CHECK_MSG(ok, "a large body differs after %zu bytes", mpk_reader_offset(&r));
    CHECK(mpk_reader_offset(&r) == mpk_writer_size(&g));
    mpk_reader_destroy(&r);
    mpk_writer_destroy(&g);
    free(zeros);
}

/* Referenced bodies of every head width (str 8/16/32, bin 8/16/32), with a threshold low enough
 * for the 8-bit ones (the bin of 128 bytes and up; strs under 128 bytes are copied inline), give the copying writer's bytes once gathered. */
static void test_chunks_all_widths(void) {
    static char body[70001]; /* bins start one byte in */
    for (size_t i = 0; i < sizeof body; i++) body[i] = (char)(i % 251);
    static const size_t lengths[] = {128, 255, 256, 65535, 65536, 70000}; /* str under 128: always copied */
    mpk_writer c, g;
    mpk_writer_init_chunks(&c, 40);
    mpk_writer_init_growable(&g, 0);
    mpk_writer *both[2] = {&c, &g};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            mpk_write_str(both[k], body, lengths[i]);
            mpk_write_bin(both[k], body + 1, lengths[i]);
            mpk_write_nil(both[k]);
        }
    }
    const mpk_chunk *chunks;
    size_t n, total = 0;
    CHECK(mpk_writer_finish(&c) == MPK_OK && mpk_writer_chunks(&c, &chunks, &n));
    CHECK_MSG(n == 24 + 1, "%zu chunks", n); /* every body referenced, each after its buffer run, then the last nil */
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        same &= total + chunks[i].len <= mpk_writer_size(&g) &&
                memcmp((const char *)mpk_writer_data(&g) + total, chunks[i].data, chunks[i].len) == 0;
        total += chunks[i].len;
    }
    CHECK(same && total == mpk_writer_size(&g));
    mpk_writer_destroy(&c);
    mpk_writer_destroy(&g);
}

static void test_errors(void) {
    mpk_write_timestamp(&w, 0, 1000000000u);
    CHECK(mpk_writer_error(&w) == MPK_ERR_INVALID_TIMESTAMP);
    mpk_write_nil(&w);
    CHECK(mpk_writer_size(&w) == 0);
    mpk_writer_reset(&w);
    CHECK(mpk_writer_error(&w) == MPK_OK);
    mpk_write_nil(&w);
    size_t size;
    uint8_t *out = mpk_writer_release(&w, &size);
    CHECK(out && size == 1 && out[0] == 0xc0);
    free(out);
    mpk_writer_reset(&w); /* a new buffer after release */
    mpk_write_str(&w, NULL, 0);
    mpk_write_bytes(&w, NULL, 0);
    CHECK(mpk_writer_error(&w) == MPK_OK && mpk_writer_size(&w) == 1 && mpk_writer_data(&w)[0] == 0xa0);
    CHECK(strcmp(mpk_error_name(MPK_ERR_TRUNCATED), "truncated") == 0);
    CHECK(strcmp(mpk_error_name(MPK_ERR_TRAILING_BYTES), "trailing_bytes") == 0);
    CHECK(strcmp(mpk_error_name(MPK_ERR_INVALID_UTF8), "invalid_utf8") == 0);
}

/* A caller-owned buffer: the callback records its calls and fails once `fail_after` calls have
 * succeeded; like _PyBytes_Resize, a failure frees the old buffer. */
typedef struct grow_log {
    int calls, fail_after;
    size_t last_size;
    void *buf;
} grow_log;

static void *logged_grow(void *ctx, void *old, size_t new_size) {
    grow_log *g = (grow_log *)ctx;
    CHECK(old == g->buf); /* the writer always hands back the buffer it was given */
    if (g->calls == g->fail_after) {
        free(old);
        g->buf = NULL;
        return NULL;
    }
    g->calls++;
    g->last_size = new_size;
    g->buf = realloc(old, new_size);
    return g->buf;
}

static void test_caller_grown(void) {
    grow_log g = {0, -1, 0, NULL};
    mpk_writer a;
    mpk_writer_init_alloc(&a, 4, logged_grow, &g);
    CHECK(mpk_writer_error(&a) == MPK_OK && g.calls == 1 && g.last_size == 4);
    mpk_write_array(&a, 3);
    mpk_write_uint(&a, 1);
    mpk_write_str(&a, "hello", 5); /* past 4 bytes: grown */
    static uint8_t body[70000];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(i * 7);
    mpk_write_bin(&a, body, sizeof body); /* grown again, to at least the whole body */
    CHECK(mpk_writer_finish(&a) == MPK_OK);
    CHECK(g.calls >= 3 && g.last_size >= 1 + 1 + 6 + 5 + sizeof body);
    CHECK(mpk_writer_data(&a) == g.buf && mpk_writer_size(&a) == 8 + 5 + sizeof body);
    const uint8_t *out = mpk_writer_data(&a);
    CHECK(memcmp(out, "\x93\x01\xa5hello\xc6\x00\x01\x11\x70", 13) == 0);
    CHECK(memcmp(out + 13, body, sizeof body) == 0);
    mpk_writer_reset(&a); /* keeps the caller's buffer */
    mpk_write_nil(&a);
    CHECK(mpk_writer_error(&a) == MPK_OK && mpk_writer_data(&a) == g.buf && mpk_writer_size(&a) == 1);
    mpk_writer_destroy(&a); /* never frees the caller's buffer: it is ours (ASan would see a double free) */
    free(g.buf);

    /* the callback fails mid-write: sticky out-of-memory, nothing more is written, the old buffer
     * is forgotten (it was freed), and a reset does not bring it back */
    grow_log f = {0, 1, 0, NULL};
    mpk_writer_init_alloc(&a, 8, logged_grow, &f);
    mpk_write_str(&a, "0123456", 7); /* 8 bytes: fits */
    CHECK(mpk_writer_error(&a) == MPK_OK && f.calls == 1);
    mpk_write_str(&a, "more", 4);
    CHECK(mpk_writer_error(&a) == MPK_ERR_NO_MEMORY && f.buf == NULL);
    mpk_write_uint(&a, 1);
    mpk_write_bin(&a, body, 100);
    CHECK(mpk_writer_finish(&a) == MPK_ERR_NO_MEMORY && mpk_writer_size(&a) == 0 && f.calls == 1);
    mpk_writer_reset(&a);
    CHECK(mpk_writer_error(&a) == MPK_ERR_NO_MEMORY);
    mpk_write_nil(&a);
    CHECK(mpk_writer_size(&a) == 0);
    mpk_writer_destroy(&a);

    /* the first buffer already fails; no callback is an invalid argument */
    grow_log z = {0, 0, 0, NULL};
    mpk_writer_init_alloc(&a, 0, logged_grow, &z);
    CHECK(mpk_writer_error(&a) == MPK_ERR_NO_MEMORY && mpk_writer_size(&a) == 0);
    mpk_write_nil(&a);
    CHECK(mpk_writer_finish(&a) == MPK_ERR_NO_MEMORY);
    mpk_writer_destroy(&a);
    mpk_writer_init_alloc(&a, 0, NULL, NULL);
    CHECK(mpk_writer_error(&a) == MPK_ERR_INVALID_ARGUMENT);
    mpk_writer_destroy(&a);
}

/* ---- writer checks (mpk_writer_set_checks) ---- */

static void *test_grow(void *ctx, void *old, size_t size) {
    (void)ctx;
    return realloc(old, size);
}

/* Initialises `w` in output mode `mode` (0 growable, 1 fixed, 2 flush through `sk` with a 64-byte
 * stage, 3 chunks with a 40-byte threshold, 4 caller-grown) with the checks on. */
static void init_mode(mpk_writer *w, int mode, unsigned char *fixed, size_t cap, sink *sk) {
    switch (mode) {
    case 0: mpk_writer_init_growable(w, 0); break;
    case 1: mpk_writer_init_buf(w, fixed, cap); break;
    case 2: memset(sk, 0, sizeof *sk); sk->fail_after = -1; mpk_writer_init_flush(w, NULL, 64, sink_flush, sk); break;
    case 3: mpk_writer_init_chunks(w, 40); break;
    default: mpk_writer_init_alloc(w, 16, test_grow, NULL); break;
    }
    mpk_writer_set_checks(w, 1);
}

static void free_mode(mpk_writer *w, int mode) {
    if (mode == 4) free((void *)mpk_writer_data(w));
    mpk_writer_destroy(w);
}

/* The inits and destroy store only the fields their mode reads (writer.c, writer_clear), not the
 * whole struct. Every mode is initialised here over a struct full of a stale pattern (0xa5, as a
 * reused or uninitialised struct holds) and then used in every way it can be: a field a later call
 * reads and the init forgot shows up as wrong output, a wrong error, or a free of a stale pointer
 * (a crash here, a report under ASan). ref_threshold is 0 outside chunk mode: cpp/include/mpk
 * reads it to tell chunk mode apart. */
static void poison(mpk_writer *p) { memset(p, 0xa5, sizeof *p); }

/* Writes [1, <3000-byte bin>, [[[[[[[[[[]]]]]]]]]], "end"]: a referenced body in chunk mode, a flush
 * in flush mode, growth in the growable ones, and ten nested arrays (deeper than the writer
 * checks' 8 inline levels). */
static void write_sample(mpk_writer *p, const uint8_t *body) {
    mpk_write_array(p, 4);
    mpk_write_uint(p, 1);
    mpk_write_bin(p, body, 3000);
    for (int i = 0; i < 10; i++) mpk_write_array(p, i < 9 ? 1 : 0);
    mpk_write_cstr(p, "end");
}

static int sample_ok(const uint8_t *out, size_t n, const uint8_t *body) {
    static const uint8_t tail[] = {0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x90, 0xa3, 'e', 'n', 'd'};
    return n == 2 + 3 + 3000 + sizeof tail && out[0] == 0x94 && out[1] == 0x01 && out[2] == 0xc5 &&
           out[3] == 0x0b && out[4] == 0xb8 && memcmp(out + 5, body, 3000) == 0 &&
           memcmp(out + 3005, tail, sizeof tail) == 0;
}

static void test_init_over_stale(void) {
    static uint8_t body[3000], fixed[4000], out[4000];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(i * 13 + 1);
    mpk_writer p;
    for (int checks = 0; checks < 2; checks++) {
        /* growable: grows, finishes, rewinds, releases, resets */
        poison(&p);
        mpk_writer_init_growable(&p, 16);
        CHECK(p.ref_threshold == 0 && mpk_writer_error(&p) == MPK_OK && mpk_writer_size(&p) == 0);
        mpk_writer_set_checks(&p, checks);
        write_sample(&p, body);
        CHECK(mpk_writer_finish(&p) == MPK_OK && sample_ok(mpk_writer_data(&p), mpk_writer_size(&p), body));
        CHECK(mpk_writer_rewind(&p, 5) == MPK_OK && mpk_writer_size(&p) == 5);
        mpk_writer_reset(&p);
        write_sample(&p, body);
        size_t n = 0;
        uint8_t *taken = mpk_writer_release(&p, &n);
        CHECK(taken && sample_ok(taken, n, body));
        free(taken);
        mpk_writer_destroy(&p);
        mpk_writer_destroy(&p); /* holds nothing now: a second destroy frees nothing */
        CHECK(mpk_writer_data(&p) == NULL && mpk_writer_size(&p) == 0 && mpk_writer_error(&p) == MPK_OK);

        /* fixed: the caller's buffer, never freed; with no buffer, full at once */
        poison(&p);
        mpk_writer_init_buf(&p, fixed, sizeof fixed);
        CHECK(p.ref_threshold == 0);
        mpk_writer_set_checks(&p, checks);
        write_sample(&p, body);
        CHECK(mpk_writer_finish(&p) == MPK_OK && sample_ok(fixed, mpk_writer_size(&p), body));
        mpk_writer_destroy(&p);
        poison(&p);
        mpk_writer_init_buf(&p, NULL, 0);
        CHECK(p.ref_threshold == 0 && mpk_writer_data(&p) == NULL && mpk_writer_size(&p) == 0);
        mpk_write_nil(&p);
        CHECK(mpk_writer_finish(&p) == MPK_ERR_BUFFER_FULL);
        mpk_writer_destroy(&p);

        /* flush: a 64-byte stage, so the body goes straight to the callback */
        static sink s;
        memset(&s, 0, sizeof s);
        s.fail_after = -1;
        poison(&p);
        mpk_writer_init_flush(&p, NULL, 64, sink_flush, &s);
        CHECK(p.ref_threshold == 0 && p.flushed == 0);
        mpk_writer_set_checks(&p, checks);
        write_sample(&p, body);
        CHECK(mpk_writer_finish(&p) == MPK_OK && sample_ok(s.data, s.len, body) && p.flushed == s.len);
        mpk_writer_destroy(&p);

        /* chunks: the body referenced, the runs around it listed */
        poison(&p);
        mpk_writer_init_chunks(&p, 1024);
        mpk_writer_set_checks(&p, checks);
        write_sample(&p, body);
        const mpk_chunk *chunks;
        size_t count, at = 0;
        CHECK(mpk_writer_finish(&p) == MPK_OK && mpk_writer_chunks(&p, &chunks, &count));
        CHECK(count == 3 && chunks[1].data == body);
        for (size_t i = 0; i < count && at + chunks[i].len <= sizeof out; i++) {
            memcpy(out + at, chunks[i].data, chunks[i].len);
            at += chunks[i].len;
        }
        CHECK(sample_ok(out, at, body));
        mpk_writer_destroy(&p);

        /* caller-grown: the callback's buffer, never freed by the writer */
        grow_log g = {0, -1, 0, NULL};
        poison(&p);
        mpk_writer_init_alloc(&p, 8, logged_grow, &g);
        CHECK(p.ref_threshold == 0);
        mpk_writer_set_checks(&p, checks);
        write_sample(&p, body);
        CHECK(mpk_writer_finish(&p) == MPK_OK && mpk_writer_data(&p) == g.buf &&
              sample_ok(mpk_writer_data(&p), mpk_writer_size(&p), body));
        mpk_writer_destroy(&p);
        free(g.buf);

        /* a writer left short is still caught when the checks are on (their cursor was reset) */
        poison(&p);
        mpk_writer_init_growable(&p, 0);
        mpk_writer_set_checks(&p, checks);
        for (int i = 0; i < 12; i++) mpk_write_array(&p, 1);
        CHECK(mpk_writer_finish(&p) == (checks ? MPK_ERR_COUNT_MISMATCH : MPK_OK));
        mpk_writer_destroy(&p);
    }
    /* without set_checks: the build's default (on in a debug build) works from a stale struct too */
    poison(&p);
    mpk_writer_init_growable(&p, 0);
    write_sample(&p, body);
    CHECK(mpk_writer_finish(&p) == MPK_OK && sample_ok(mpk_writer_data(&p), mpk_writer_size(&p), body));
    mpk_writer_destroy(&p);
}

static void test_checks(void) {
    static unsigned char fixed[16384];
    static sink sk;
    static char body[300];
    memset(body, 'z', sizeof body);
    mpk_writer c;
#ifdef NDEBUG
    mpk_writer_init_growable(&c, 0);
    CHECK(c.checks == 0); /* a release build: off unless asked for */
#else
    mpk_writer_init_growable(&c, 0);
    CHECK(c.checks == 1); /* a debug build: on by default */
#endif
    mpk_writer_destroy(&c);
    for (int mode = 0; mode < 5; mode++) {
        /* too few elements: [1, 2] declared as 3 */
        init_mode(&c, mode, fixed, sizeof fixed, &sk);
        mpk_write_array(&c, 3);
        mpk_write_uint(&c, 1);
        mpk_write_uint(&c, 2);
        CHECK_MSG(mpk_writer_finish(&c) == MPK_ERR_COUNT_MISMATCH, "mode %d", mode);
        if (mode == 2) CHECK(sk.len == 0); /* the malformed tail is not flushed */
        mpk_write_nil(&c);                  /* sticky */
        CHECK(mpk_writer_error(&c) == MPK_ERR_COUNT_MISMATCH);
        free_mode(&c, mode);

        /* a map given a key and no value */
        init_mode(&c, mode, fixed, sizeof fixed, &sk);
        mpk_write_map(&c, 1);
        mpk_write_cstr(&c, "k");
        CHECK_MSG(mpk_writer_finish(&c) == MPK_ERR_COUNT_MISMATCH, "mode %d", mode);
        free_mode(&c, mode);

        /* a body shorter than its head said (str head, then 2 of 5 bytes) */
        init_mode(&c, mode, fixed, sizeof fixed, &sk);
        mpk_write_str_head(&c, 5);
        mpk_write_bytes(&c, "ab", 2);
        CHECK_MSG(mpk_writer_finish(&c) == MPK_ERR_COUNT_MISMATCH, "mode %d", mode);
        free_mode(&c, mode);

        /* the innermost container short, under one that has all its values */
        init_mode(&c, mode, fixed, sizeof fixed, &sk);
        mpk_write_array(&c, 1);
        mpk_write_map(&c, 2);
        mpk_write_uint(&c, 1);
        mpk_write_uint(&c, 2);
        mpk_write_uint(&c, 3);
        CHECK_MSG(mpk_writer_finish(&c) == MPK_ERR_COUNT_MISMATCH, "mode %d", mode);
        free_mode(&c, mode);

        /* well-formed output of every kind passes, byte for byte as without the checks: many
         * values (heads cut by the flushes of a 64-byte stage), raw MessagePack, bodies referenced
         * or sent straight from the caller's memory, bodies written after their heads, ends */
        init_mode(&c, mode, fixed, sizeof fixed, &sk);
        mpk_writer g;
        mpk_writer_init_growable(&g, 0);
        mpk_writer_set_checks(&g, 0);
        mpk_writer *both[2] = {&c, &g};
        for (int k = 0; k < 2; k++) {
            mpk_writer *x = both[k];
            for (int i = 0; i < 30; i++) {
                mpk_write_map(x, 2);
                mpk_write_cstr(x, "id");
                mpk_write_uint(x, (uint64_t)i * 100003);
                mpk_write_cstr(x, "v");
                mpk_write_array(x, 4);
                mpk_write_bin(x, body, (size_t)(i * 10) % sizeof body);
                mpk_write_str_head(x, 3);
                mpk_write_bytes(x, "abc", 3);
                mpk_write_bytes(x, "\x92\x01\xa1x", 4); /* [1, "x"], already encoded */
                mpk_write_array(x, 0);
                mpk_write_array_end(x);
                mpk_write_array_end(x);
                mpk_write_map_end(x);
            }
            mpk_write_timestamp(x, 1, 5);
            mpk_write_ext(x, 7, body, 200);
        }
        CHECK_MSG(mpk_writer_finish(&c) == MPK_OK && mpk_writer_finish(&g) == MPK_OK, "mode %d: %s", mode,
                  mpk_error_name(mpk_writer_error(&c)));
        size_t glen = mpk_writer_size(&g);
        const uint8_t *gd = mpk_writer_data(&g);
        if (mode == 2) {
            CHECK(sk.len == glen && memcmp(sk.data, gd, glen) == 0);
        } else if (mode == 3) {
            const mpk_chunk *ch;
            size_t n, total = 0;
            int same = 1;
            CHECK(mpk_writer_chunks(&c, &ch, &n));
            for (size_t i = 0; i < n; i++) {
                same &= total + ch[i].len <= glen && memcmp(gd + total, ch[i].data, ch[i].len) == 0;
                total += ch[i].len;
            }
            CHECK(same && total == glen);
        } else {
            CHECK(mpk_writer_size(&c) == glen && memcmp(mpk_writer_data(&c), gd, glen) == 0);
        }
        mpk_writer_destroy(&g);
        free_mode(&c, mode);
    }

    /* a value too many is seen by the end calls: [1] given 1 and 2 */
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 1);
    mpk_write_array(&c, 1);
    mpk_write_uint(&c, 1);
    mpk_write_uint(&c, 2);
    CHECK(mpk_writer_error(&c) == MPK_OK);
    mpk_write_array_end(&c);
    CHECK(mpk_writer_error(&c) == MPK_ERR_COUNT_MISMATCH);
    mpk_writer_destroy(&c);
    /* too many inside a map: {"a": [1, 2, 3]} declared as a 2-array, then both ends */
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 1);
    mpk_write_map(&c, 1);
    mpk_write_cstr(&c, "a");
    mpk_write_array(&c, 2);
    mpk_write_uint(&c, 1);
    mpk_write_uint(&c, 2);
    mpk_write_uint(&c, 3);
    mpk_write_array_end(&c);
    CHECK(mpk_writer_finish(&c) == MPK_ERR_COUNT_MISMATCH);
    mpk_writer_destroy(&c);
    /* an end too early, an end of the wrong kind, an end with nothing open */
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 1);
    mpk_write_array(&c, 2);
    mpk_write_uint(&c, 1);
    mpk_write_array_end(&c);
    CHECK(mpk_writer_error(&c) == MPK_ERR_COUNT_MISMATCH);
    mpk_writer_destroy(&c);
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 1);
    mpk_write_array(&c, 0);
    mpk_write_map_end(&c);
    CHECK(mpk_writer_error(&c) == MPK_ERR_COUNT_MISMATCH);
    mpk_writer_destroy(&c);
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 1);
    mpk_write_nil(&c);
    mpk_write_map_end(&c);
    CHECK(mpk_writer_error(&c) == MPK_ERR_COUNT_MISMATCH);
    mpk_writer_destroy(&c);
    /* without the checks the end calls write and check nothing */
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 0);
    mpk_write_array(&c, 1);
    mpk_write_uint(&c, 1);
    mpk_write_uint(&c, 2);
    mpk_write_array_end(&c);
    mpk_write_map_end(&c);
    CHECK(mpk_writer_finish(&c) == MPK_OK && mpk_writer_size(&c) == 3);
    mpk_writer_destroy(&c);

    /* 200 levels deep (past the writer's small stack): complete passes, one short fails, and
     * release hands out nothing for a short one */
    for (int shorted = 0; shorted < 2; shorted++) {
        mpk_writer_init_growable(&c, 0);
        mpk_writer_set_checks(&c, 1);
        for (int i = 0; i < 200; i++) mpk_write_array(&c, i == 100 && shorted ? 2 : 1);
        mpk_write_nil(&c);
        size_t size = 1;
        uint8_t *out = mpk_writer_release(&c, &size);
        CHECK(shorted ? out == NULL && size == 0 && mpk_writer_error(&c) == MPK_ERR_COUNT_MISMATCH
                      : out != NULL && size == 201);
        free(out);
        mpk_writer_destroy(&c);
    }
    /* reset starts the checks afresh; raw bytes that are no MessagePack are refused */
    mpk_writer_init_growable(&c, 0);
    mpk_writer_set_checks(&c, 1);
    mpk_write_array(&c, 2);
    mpk_writer_reset(&c);
    mpk_write_uint(&c, 1);
    CHECK(mpk_writer_finish(&c) == MPK_OK);
    mpk_writer_reset(&c);
    mpk_write_bytes(&c, "\xc1", 1);
    CHECK(mpk_writer_finish(&c) == MPK_ERR_INVALID_ARGUMENT);
    mpk_writer_destroy(&c);
    CHECK(strcmp(mpk_error_name(MPK_ERR_COUNT_MISMATCH), "count_mismatch") == 0);

    /* a fixed-buffer writer needs no destroy even with the checks on and deep nesting: finishing
     * frees their stack (the sanitizer run's leak check holds this test to it) */
    for (int shorted = 0; shorted < 2; shorted++) {
        mpk_writer_init_buf(&c, fixed, sizeof fixed);
        mpk_writer_set_checks(&c, 1);
        for (int i = 0; i < 40; i++) mpk_write_array(&c, 1);
        if (!shorted) mpk_write_nil(&c);
        CHECK(mpk_writer_finish(&c) == (shorted ? MPK_ERR_COUNT_MISMATCH : MPK_OK));
        CHECK(c.check_owed == NULL);
    }
}

/* mpk_writer_rewind drops a half-written value and its error, keeping what came before. */
static void test_rewind(void) {
    mpk_writer g;
    mpk_writer_init_growable(&g, 16);
    mpk_write_array(&g, 2);
    mpk_write_uint(&g, 1);
    mpk_write_uint(&g, 2);
    size_t mark = mpk_writer_size(&g);
    mpk_write_array(&g, 3);
    mpk_write_cstr(&g, "half");
    mpk_writer_flag_error(&g, MPK_ERR_INVALID_ARGUMENT);
    CHECK(mpk_writer_error(&g) == MPK_ERR_INVALID_ARGUMENT);
    CHECK(mpk_writer_rewind(&g, mark + 100) == MPK_ERR_INVALID_ARGUMENT);
    CHECK(mpk_writer_rewind(&g, mark) == MPK_OK);
    CHECK(mpk_writer_error(&g) == MPK_OK);
    CHECK(mpk_writer_size(&g) == 3 && memcmp(mpk_writer_data(&g), "\x92\x01\x02", 3) == 0);
    mpk_write_uint(&g, 7); /* writing goes on after the kept bytes, with the checks (if on) content */
    CHECK(mpk_writer_finish(&g) == MPK_OK);
    CHECK(mpk_writer_size(&g) == 4 && mpk_writer_data(&g)[3] == 7);
    CHECK(mpk_writer_rewind(&g, 0) == MPK_OK && mpk_writer_size(&g) == 0);
    mpk_writer_destroy(&g);

    uint8_t buf[4];
    mpk_writer f;
    mpk_writer_init_buf(&f, buf, sizeof buf);
    mpk_write_uint(&f, 5);
    mpk_write_cstr(&f, "too long for four bytes");
    CHECK(mpk_writer_error(&f) != MPK_OK);
    CHECK(mpk_writer_rewind(&f, 1) == MPK_OK && mpk_writer_size(&f) == 1 && buf[0] == 5);
    mpk_write_nil(&f);
    CHECK(mpk_writer_finish(&f) == MPK_OK && mpk_writer_size(&f) == 2 && buf[1] == 0xc0);
    mpk_writer_destroy(&f);

    mpk_writer c;
    mpk_writer_init_chunks(&c, 0);
    mpk_write_uint(&c, 5);
    CHECK(mpk_writer_rewind(&c, 0) == MPK_OK);
    mpk_write_uint(&c, 5);
    CHECK(mpk_writer_rewind(&c, 1) == MPK_ERR_INVALID_ARGUMENT); /* chunk mode cannot rewind */
    mpk_writer_destroy(&c);
}

int main(void) {
    mpk_writer_init_growable(&w, 1);
    test_caller_grown();
    test_shortest_ints();
    test_int_widths();
    test_other_values();
    test_long_heads();
    test_fixed_buffer();
    test_flush();
    test_chunks();
    test_chunks_all_widths();
    test_large_bodies();
    test_flush_file_and_fd();
    test_errors();
    test_checks();
    test_rewind();
    test_init_over_stale();
    mpk_writer_destroy(&w);
    return check_report("test_writer");
}
