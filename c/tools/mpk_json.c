/* mpk-json — MessagePack to JSON and back, on stdin/stdout, with mpk's DOM.
 *
 *   mpk-json [-d] [--strict-utf8]    MessagePack → JSON: every top-level value on stdin, one JSON
 *                                    text per line (read through mpk_stream, so any length works)
 *   mpk-json -e                      JSON → MessagePack: one JSON text on stdin
 *
 * The mapping is mpk_node_to_json / mpk_doc_parse_json (c/README.md, "JSON mapping"). Errors go to
 * stderr as "mpk-json: <kind> at byte N" and the exit status is 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpk.h"

static int fail(mpk_error e) {
    fprintf(stderr, "mpk-json: %s at byte %zu\n", mpk_error_name(e.kind), e.offset);
    return 1;
}

static int decode(unsigned flags) {
    static uint8_t chunk[1 << 16];
    mpk_stream s;
    mpk_doc doc;
    mpk_writer out;
    mpk_stream_init(&s);
    mpk_stream_set_flags(&s, flags);
    mpk_doc_init(&doc);
    mpk_doc_set_flags(&doc, flags);
    mpk_writer_init_flush(&out, NULL, 0, mpk_flush_file, stdout);
    int status = 0;
    size_t n;
    uint64_t base = 0; /* stream offset of the current value, for doc errors */
    while (status == 0 && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        mpk_stream_feed(&s, chunk, n);
        const uint8_t *value;
        size_t len;
        int r;
        while ((r = mpk_stream_next(&s, &value, &len)) == 1) {
            const mpk_node *root = mpk_doc_parse(&doc, value, len);
            if (!root) {
                mpk_error e = mpk_doc_error(&doc);
                e.offset += (size_t)base;
                status = fail(e);
                break;
            }
            base += len;
            mpk_node_to_json(root, &out);
            mpk_write_bytes(&out, "\n", 1);
        }
        if (r < 0) status = fail(mpk_stream_error(&s));
    }
    if (status == 0 && mpk_stream_end(&s).kind != MPK_OK) status = fail(mpk_stream_error(&s));
    if (mpk_writer_finish(&out) != MPK_OK && status == 0) {
        fprintf(stderr, "mpk-json: cannot write the output\n");
        status = 1;
    }
    mpk_writer_destroy(&out);
    mpk_doc_destroy(&doc);
    mpk_stream_destroy(&s);
    return status;
}

static int encode(void) {
    size_t len = 0, cap = 1 << 16;
    char *text = (char *)malloc(cap);
    size_t n;
    while (text && (n = fread(text + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap) {
            char *bigger = (char *)realloc(text, cap * 2);
            if (!bigger) { free(text); text = NULL; break; }
            text = bigger;
            cap *= 2;
        }
    }
    if (!text) {
        fprintf(stderr, "mpk-json: out of memory\n");
        return 1;
    }
    mpk_doc doc;
    mpk_doc_init(&doc);
    int status = 0;
    const mpk_node *root = mpk_doc_parse_json(&doc, text, len);
    if (!root) {
        status = fail(mpk_doc_error(&doc));
    } else {
        mpk_writer out;
        mpk_writer_init_flush(&out, NULL, 0, mpk_flush_file, stdout);
        mpk_node_write(root, &out);
        if (mpk_writer_finish(&out) != MPK_OK) {
            fprintf(stderr, "mpk-json: cannot write the output\n");
            status = 1;
        }
        mpk_writer_destroy(&out);
    }
    mpk_doc_destroy(&doc);
    free(text);
    return status;
}

int main(int argc, char **argv) {
    int to_msgpack = 0;
    unsigned flags = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-e") == 0) to_msgpack = 1;
        else if (strcmp(argv[i], "-d") == 0) to_msgpack = 0;
        else if (strcmp(argv[i], "--strict-utf8") == 0) flags |= MPK_FLAG_STRICT_UTF8;
        else {
            fprintf(stderr, "usage: mpk-json [-d | -e] [--strict-utf8] < input > output\n");
            return 2;
        }
    }
    return to_msgpack ? encode() : decode(flags);
}
