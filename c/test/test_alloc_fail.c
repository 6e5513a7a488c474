/* test_alloc_fail.c — every allocation the library makes is failed in turn (malloc and realloc are
 * wrapped at link time): each layer must report MPK_ERR_NO_MEMORY, never crash or leak (the
 * sanitizer run checks leaks), and succeed once the allocations do. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpk.h"

void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);

static long allow = -1; /* allocations left before failing; -1: never fail */
static long calls;

void *__wrap_malloc(size_t size) {
    calls++;
    if (allow == 0) return NULL;
    if (allow > 0) allow--;
    return __real_malloc(size);
}

void *__wrap_realloc(void *p, size_t size) {
    calls++;
    if (allow == 0) return NULL;
    if (allow > 0) allow--;
    return __real_realloc(p, size);
}

static uint8_t msg[1 << 16];
static size_t msg_len;

/* A value that needs every allocation: deep nesting (reader and stream stacks), many nodes, long
 * strings (copy arena, stream buffer). */
static void build(void) {
    mpk_writer w;
    mpk_writer_init_buf(&w, msg, sizeof msg);
    for (int i = 0; i < 40; i++) mpk_write_array(&w, 2);
    mpk_write_array(&w, 300);
    static char text[200];
    memset(text, 't', sizeof text);
    for (int i = 0; i < 300; i++) mpk_write_str(&w, text, (size_t)(i % 200));
    for (int i = 0; i < 40; i++) mpk_write_map(&w, 0);
    msg_len = mpk_writer_size(&w);
}

/* Runs `step` with 0, 1, 2, ... allocations allowed until it succeeds; each failing run must say
 * no_memory. */
static void each_failure(const char *name, int (*step)(void)) {
    int failures_ok = 1, succeeded = 0;
    for (long n = 0; n < 10000 && !succeeded; n++) {
        allow = n;
        int r = step();
        allow = -1;
        if (r == 1) succeeded = 1;
        else if (r != 0) failures_ok = 0;
    }
    CHECK_MSG(failures_ok, "%s: a failed allocation gave another error", name);
    CHECK_MSG(succeeded, "%s: never succeeded", name);
}

/* Each step returns 1 on success, 0 on a clean no_memory, -1 on anything else. */
static int step_doc(void) {
    mpk_doc d;
    mpk_doc_init(&d);
    mpk_doc_set_flags(&d, MPK_FLAG_COPY);
    const mpk_node *root = mpk_doc_parse(&d, msg, msg_len);
    int r = root ? (d.count == 1 + root->v.span ? 1 : -1) : mpk_doc_error(&d).kind == MPK_ERR_NO_MEMORY ? 0 : -1;
    mpk_doc_destroy(&d);
    return r;
}

static int step_reader(void) {
    mpk_reader r;
    mpk_reader_init(&r, msg, msg_len);
    int ok = mpk_reader_skip(&r) && mpk_reader_finish(&r).kind == MPK_OK;
    int res = ok ? 1 : mpk_reader_error(&r).kind == MPK_ERR_NO_MEMORY ? 0 : -1;
    mpk_reader_destroy(&r);
    return res;
}

static int step_stream(void) {
    mpk_stream s;
    mpk_stream_init(&s);
    int values = 0, res = 1;
    for (size_t i = 0; i < msg_len && res == 1; i++) {
        mpk_stream_feed(&s, msg + i, 1);
        const uint8_t *v;
        size_t len;
        int r;
        while ((r = mpk_stream_next(&s, &v, &len)) == 1) values += len == msg_len && memcmp(v, msg, len) == 0;
        if (r < 0) res = mpk_stream_error(&s).kind == MPK_ERR_NO_MEMORY ? 0 : -1;
    }
    if (res == 1) res = values == 1 && mpk_stream_end(&s).kind == MPK_OK ? 1 : -1;
    mpk_stream_destroy(&s);
    return res;
}

/* The stream into a doc: whole in one chunk (the doc's direct parse), then one byte at a time (the
 * scan's buffer, then the doc). */
static int step_stream_doc(void) {
    int res = 1;
    for (int bytewise = 0; bytewise < 2 && res == 1; bytewise++) {
        mpk_stream s;
        mpk_doc d;
        mpk_stream_init(&s);
        mpk_doc_init(&d);
        int values = 0;
        size_t step = bytewise ? 1 : msg_len;
        for (size_t i = 0; i < msg_len && res == 1; i += step) {
            mpk_stream_feed(&s, msg + i, step);
            const mpk_node *root;
            int r;
            while ((r = mpk_stream_next_doc(&s, &d, &root)) == 1) values += root && d.count == 1 + root->v.span;
            if (r < 0) res = mpk_stream_error(&s).kind == MPK_ERR_NO_MEMORY ? 0 : -1;
        }
        if (res == 1) res = values == 1 && mpk_stream_end(&s).kind == MPK_OK ? 1 : -1;
        mpk_doc_destroy(&d);
        mpk_stream_destroy(&s);
    }
    return res;
}

static int step_writer(void) {
    mpk_writer w;
    mpk_writer_init_growable(&w, 16);
    mpk_write_bytes(&w, msg, msg_len);
    for (int i = 0; i < 1000; i++) mpk_write_uint(&w, (uint64_t)i << 20);
    mpk_error_kind e = mpk_writer_finish(&w);
    int res = e == MPK_OK ? (mpk_writer_size(&w) > msg_len ? 1 : -1) : e == MPK_ERR_NO_MEMORY ? 0 : -1;
    mpk_writer_destroy(&w);
    return res;
}

static int step_chunks(void) {
    static char body[2000];
    mpk_writer w;
    mpk_writer_init_chunks(&w, 1000);
    for (int i = 0; i < 100; i++) mpk_write_bin(&w, body, sizeof body);
    const mpk_chunk *chunks;
    size_t n;
    int res;
    if (mpk_writer_finish(&w) == MPK_OK && mpk_writer_chunks(&w, &chunks, &n)) res = n == 200 ? 1 : -1;
    else res = mpk_writer_error(&w) == MPK_ERR_NO_MEMORY ? 0 : -1;
    mpk_writer_destroy(&w);
    return res;
}

static int step_json(void) {
    static char text[4000];
    size_t len = 0;
    for (int i = 0; i < 50; i++) text[len++] = '[';
    for (int i = 0; i < 200; i++) len += (size_t)sprintf(text + len, "\"s%d\",", i);
    text[len++] = '0';
    for (int i = 0; i < 50; i++) text[len++] = ']';
    mpk_doc d;
    mpk_doc_init(&d);
    const mpk_node *root = mpk_doc_parse_json(&d, text, len);
    int res = root ? 1 : mpk_doc_error(&d).kind == MPK_ERR_NO_MEMORY ? 0 : -1;
    mpk_doc_destroy(&d);
    return res;
}

int main(void) {
    build();
    each_failure("doc", step_doc);
    each_failure("reader", step_reader);
    each_failure("stream", step_stream);
    each_failure("stream into a doc", step_stream_doc);
    each_failure("writer", step_writer);
    each_failure("chunks", step_chunks);
    each_failure("json", step_json);
    CHECK(calls > 0); /* the wrappers were really linked in */
    return check_report("test_alloc_fail");
}
