/* test_reader.c — tags, zero-copy payloads, skip, limits, and error kinds with their offsets. */
#include <string.h>

#include "check.h"
#include "mpk.h"

/* Reads every token of hex with the given limits/flags and finishes; returns the error. */
static mpk_error read_all(const char *hex, const mpk_limits *limits, unsigned flags) {
    static unsigned char buf[1 << 16];
    size_t n = hex_decode(hex, buf);
    mpk_reader r;
    mpk_reader_init(&r, buf, n);
    mpk_reader_set_limits(&r, limits);
    mpk_reader_set_flags(&r, flags);
    if (mpk_reader_skip(&r)) mpk_reader_finish(&r);
    mpk_error e = mpk_reader_error(&r);
    mpk_reader_destroy(&r);
    return e;
}

static void expect_error(const char *hex, const mpk_limits *limits, unsigned flags,
                         mpk_error_kind kind, size_t offset, int line) {
    mpk_error e = read_all(hex, limits, flags);
    char msg[160];
    snprintf(msg, sizeof msg, "%s: got %s at %zu, want %s at %zu", hex, mpk_error_name(e.kind),
             e.offset, mpk_error_name(kind), offset);
    check_one(e.kind == kind && e.offset == offset, "error kind and offset", __FILE__, line, msg);
}
#define ERR(hex, kind, off) expect_error(hex, NULL, 0, kind, off, __LINE__)

static void test_tags(void) {
    unsigned char buf[64];
    size_t n = hex_decode("93 01 a3616263 82 c0 c3 cd0100 ca3fc00000 d6ff00000001", buf);
    mpk_reader r;
    mpk_tag t;
    mpk_reader_init(&r, buf, n);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_ARRAY && t.len == 3);
    CHECK(mpk_reader_depth(&r) == 1);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_UINT && t.v.u == 1);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_STR && t.len == 3 && t.data == buf + 3 &&
          memcmp(t.data, "abc", 3) == 0);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_MAP && t.len == 2);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_NIL);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_BOOL && t.v.b == 1);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_UINT && t.v.u == 256);
    CHECK(mpk_reader_depth(&r) == 2);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_FLOAT32 && t.v.f32 == 1.5f);
    CHECK(mpk_reader_depth(&r) == 0); /* the float closed both containers */
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_TIMESTAMP && t.v.ts.sec == 1 && t.v.ts.nsec == 0);
    CHECK(mpk_reader_finish(&r).kind == MPK_OK);
    mpk_reader_destroy(&r);

    /* signed families holding non-negative values are uints; negative fixint */
    n = hex_decode("d0 05 d3 ffffffffffffffff e0", buf);
    mpk_reader_init(&r, buf, n);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_UINT && t.v.u == 5);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_INT && t.v.i == -1);
    CHECK(mpk_reader_next(&r, &t) && t.type == MPK_INT && t.v.i == -32);
    CHECK(mpk_reader_finish(&r).kind == MPK_OK);
}

static void test_expect_calls(void) {
    unsigned char buf[64];
    size_t n = hex_decode("92 a2 6869 c4 01 ff 05", buf);
    mpk_reader r;
    uint32_t count, len;
    const char *s;
    const uint8_t *b;
    uint64_t u;
    mpk_reader_init(&r, buf, n);
    CHECK(mpk_read_array(&r, &count) && count == 2);
    CHECK(mpk_read_str(&r, &s, &len) && len == 2 && memcmp(s, "hi", 2) == 0);
    CHECK(mpk_read_bin(&r, &b, &len) && len == 1 && b[0] == 0xff);
    CHECK(mpk_read_uint(&r, &u) && u == 5); /* a second top-level value */
    CHECK(mpk_reader_finish(&r).kind == MPK_OK);

    n = hex_decode("a1 61", buf);
    mpk_reader_init(&r, buf, n);
    CHECK(!mpk_read_uint(&r, &u));
    CHECK(mpk_reader_error(&r).kind == MPK_ERR_TYPE && mpk_reader_error(&r).offset == 0);
}

static void test_limits(void) {
    mpk_limits l = mpk_limits_default();
    l.str = 2;
    expect_error("a3616263", &l, 0, MPK_ERR_LENGTH_LIMIT, 0, __LINE__);
    expect_error("a26162", &l, 0, MPK_OK, 0, __LINE__);
    expect_error("dbffffffff", &l, 0, MPK_ERR_LENGTH_LIMIT, 0, __LINE__);
    l = mpk_limits_default();
    l.depth = 2;
    expect_error("91 91 c0", &l, 0, MPK_OK, 0, __LINE__);
    expect_error("91 91 91 c0", &l, 0, MPK_ERR_DEPTH_LIMIT, 2, __LINE__);
    expect_error("91 91 90", &l, 0, MPK_ERR_DEPTH_LIMIT, 2, __LINE__);
    l = mpk_limits_default();
    l.map = 1;
    expect_error("82 01 01 02 02", &l, 0, MPK_ERR_LENGTH_LIMIT, 0, __LINE__);
    l.array = 0;
    expect_error("91 c0", &l, 0, MPK_ERR_LENGTH_LIMIT, 0, __LINE__);
    expect_error("a2 c3 28", NULL, MPK_FLAG_STRICT_UTF8, MPK_ERR_INVALID_UTF8, 0, __LINE__);
    expect_error("a2 c3 28", NULL, 0, MPK_OK, 0, __LINE__);
    expect_error("a3 eda080", NULL, MPK_FLAG_STRICT_UTF8, MPK_ERR_INVALID_UTF8, 0, __LINE__);
    expect_error("a2 c3a9", NULL, MPK_FLAG_STRICT_UTF8, MPK_OK, 0, __LINE__);

    /* default depth: 1024 nested arrays pass, the 1025th head fails; deep stacks allocate */
    static char hex[3000 * 2 + 8];
    for (int depth = 1024; depth <= 1025; depth++) {
        char *p = hex;
        for (int i = 0; i < depth; i++) { *p++ = '9'; *p++ = '1'; }
        *p++ = 'c'; *p++ = '0'; *p = 0;
        expect_error(hex, NULL, 0, depth == 1024 ? MPK_OK : MPK_ERR_DEPTH_LIMIT,
                     depth == 1024 ? 0 : 1024, __LINE__);
    }
}

static void test_errors(void) {
    ERR("", MPK_ERR_TRUNCATED, 0);
    ERR("c1", MPK_ERR_INVALID_BYTE, 0);
    ERR("92 c1", MPK_ERR_TRUNCATED, 0);
    ERR("92 01 c1", MPK_ERR_INVALID_BYTE, 2);
    ERR("ddffffffff", MPK_ERR_TRUNCATED, 0);
    ERR("dbffffffff", MPK_ERR_TRUNCATED, 0);
    ERR("cd01", MPK_ERR_TRUNCATED, 0);
    ERR("92 01", MPK_ERR_TRUNCATED, 0);
    ERR("92 91 01", MPK_ERR_TRUNCATED, 3);
    ERR("93 91 01 01", MPK_ERR_TRUNCATED, 4);
    ERR("81 01", MPK_ERR_TRUNCATED, 0);
    ERR("c0 c0", MPK_ERR_TRAILING_BYTES, 1);
    ERR("91 c0 c0", MPK_ERR_TRAILING_BYTES, 2);
    ERR("c7 03 ff 000000", MPK_ERR_INVALID_TIMESTAMP, 0);
    ERR("d7ff ffffffff00000000", MPK_ERR_INVALID_TIMESTAMP, 0);
    ERR("c7 04 ff 00000001", MPK_OK, 0);
}

static void test_messages(void) {
    char buf[64];
    mpk_error e = read_all("92 01", NULL, 0);
    CHECK(mpk_error_format(e, buf, sizeof buf) == 19 && strcmp(buf, "truncated at byte 0") == 0);
    e = read_all("c0 c0", NULL, 0);
    mpk_error_format(e, buf, sizeof buf);
    CHECK(strcmp(buf, "trailing_bytes at byte 1") == 0);
    CHECK(mpk_error_format(e, buf, 5) == 24 && strcmp(buf, "trai") == 0);
}

int main(void) {
    test_messages();
    test_tags();
    test_expect_calls();
    test_errors();
    test_limits();
    return check_report("test_reader");
}
