/* check.h — the tests' tiny harness: CHECK counts passes and failures, and every test program
 * ends with check_report(), which prints "NAME: N passed, M failed" and appends the counts to the
 * file named by $MPK_TEST_COUNTS (c/test/run.sh adds them up). */
#ifndef MPK_TEST_CHECK_H
#define MPK_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long check_passed, check_failed;

#define CHECK(cond) check_one(!!(cond), #cond, __FILE__, __LINE__, NULL)
#define CHECK_MSG(cond, ...) check_msg(!!(cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

static int check_one(int ok, const char *what, const char *file, int line, const char *msg) {
    if (ok) {
        check_passed++;
        return 1;
    }
    check_failed++;
    if (check_failed <= 50)
        fprintf(stderr, "%s:%d: FAILED: %s%s%s\n", file, line, what, msg ? " — " : "", msg ? msg : "");
    return 0;
}

/* The message is only formatted when the check fails. */
static int check_msg(int ok, const char *what, const char *file, int line, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    if (ok) return check_one(1, what, file, line, NULL);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return check_one(0, what, file, line, msg);
}

static int check_report(const char *name) {
    printf("%s: %lu passed, %lu failed\n", name, check_passed, check_failed);
    const char *path = getenv("MPK_TEST_COUNTS");
    if (path) {
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "%lu %lu\n", check_passed, check_failed);
            fclose(f);
        }
    }
    return check_failed ? 1 : 0;
}

/* Hex helpers shared by the tests. */
static size_t hex_decode(const char *hex, unsigned char *out) {
    size_t n = 0;
    int hi = -1;
    for (; *hex; hex++) {
        int c = *hex, v;
        if (c >= '0' && c <= '9') v = c - '0';
        else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        else continue; /* separators */
        if (hi < 0) hi = v;
        else { out[n++] = (unsigned char)(hi << 4 | v); hi = -1; }
    }
    return n;
}

#endif
