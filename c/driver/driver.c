/* driver.c — the interop driver (spec/drivers/c): JSON Lines requests on stdin, one answer line
 * each on stdout, as spec/README.md "Drivers" defines. Requests are read with the DOM's JSON
 * parser; encodes go through mpk_writer, decodes through mpk_doc_parse, and stream requests
 * through the streaming unpacker (mpk_stream_feed / mpk_stream_next_doc / mpk_stream_end). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpk.h"

#include "typed.h"

#define OUT_TEXT(w, text) mpk_write_bytes((w), (text), sizeof(text) - 1)

static int key_is(const mpk_node *k, const char *name) {
    size_t n = strlen(name);
    return k->type == MPK_STR && k->len == n && memcmp(k->v.data, name, n) == 0;
}

/* {"stream": hex, "cuts": [...]}: feeds the bytes in chunks split at the cuts, then ends the
 * input; answers the values taken, in order, and the stream's error if any. 0 if malformed. */
static int stream_answer(const mpk_node *root, mpk_doc *decoded, mpk_writer *out) {
    const mpk_node *hex = mpk_node_map_get(root, "stream", 6);
    const mpk_node *cuts = mpk_node_map_get(root, "cuts", 4);
    const mpk_node *l = mpk_node_map_get(root, "limits", 6);
    const mpk_node *strict = mpk_node_map_get(root, "strict_utf8", 11);
    mpk_limits limits = mpk_limits_default();
    unsigned flags = 0;
    if (!hex || hex->type != MPK_STR || (cuts && cuts->type != MPK_ARRAY)) return 0;
    if (l && !typed_limits(l, &limits)) return 0;
    if (strict) {
        if (strict->type != MPK_BOOL) return 0;
        if (strict->v.b) flags |= MPK_FLAG_STRICT_UTF8;
    }
    uint8_t *bytes = (uint8_t *)malloc(hex->len / 2 + 1);
    if (!bytes) return 0;
    size_t n = typed_hex_decode(hex->v.data, hex->len, bytes);
    if (n == (size_t)-1) {
        free(bytes);
        return 0;
    }
    uint32_t ncuts = cuts ? cuts->len : 0;
    for (uint32_t i = 0; i < ncuts; i++) {
        const mpk_node *c = mpk_node_at(cuts, i);
        if (c->type != MPK_UINT || c->v.u > n) {
            free(bytes);
            return 0;
        }
    }
    mpk_stream s;
    mpk_stream_init(&s);
    mpk_stream_set_limits(&s, &limits);
    mpk_stream_set_flags(&s, flags);
    OUT_TEXT(out, "{\"values\":[");
    int first = 1, failed = 0;
    size_t at = 0;
    for (uint32_t i = 0; i <= ncuts && !failed; i++) {
        size_t end = i < ncuts ? (size_t)mpk_node_at(cuts, i)->v.u : n;
        if (end <= at) continue;
        mpk_stream_feed(&s, bytes + at, end - at);
        at = end;
        for (;;) {
            const mpk_node *value;
            int r = mpk_stream_next_doc(&s, decoded, &value);
            if (r == 0) break;
            if (r < 0) {
                failed = 1;
                break;
            }
            if (!first) OUT_TEXT(out, ",");
            first = 0;
            typed_emit(value, out);
        }
    }
    mpk_error e = failed ? mpk_stream_error(&s) : mpk_stream_end(&s);
    if (e.kind != MPK_OK) {
        char buf[96];
        mpk_write_bytes(out, buf, (size_t)snprintf(buf, sizeof buf, "],\"error\":\"%s\",\"offset\":%llu}",
                                                   mpk_error_name(e.kind), (unsigned long long)e.offset));
    } else {
        OUT_TEXT(out, "]}");
    }
    mpk_stream_destroy(&s);
    free(bytes);
    return 1;
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    mpk_doc request, decoded;
    mpk_writer out, packed;
    mpk_doc_init(&request);
    mpk_doc_init(&decoded);
    /* Typed values nest two JSON levels per MessagePack level (the corpus goes past 1024 of
     * those); typed_encode recurses once per level, so the bound also keeps the C stack small. */
    mpk_limits json_limits = mpk_limits_default();
    json_limits.depth = 20000;
    mpk_doc_set_limits(&request, &json_limits);
    mpk_writer_init_growable(&out, 4096);
    mpk_writer_set_checks(&out, 0); /* it holds the JSON answer: text, not MessagePack */
    mpk_writer_init_growable(&packed, 4096);
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
        if (n == 0) continue;
        mpk_writer_reset(&out);
        mpk_writer_reset(&packed);
        if (strstr(line, "\"stream\"")) {
            const mpk_node *root = mpk_doc_parse_json(&request, line, (size_t)n);
            if (!root || !mpk_node_map_get(root, "stream", 6)) {
                typed_answer(&request, &decoded, line, (size_t)n, &packed, &out);
            } else if (!stream_answer(root, &decoded, &out)) {
                mpk_writer_reset(&out);
                OUT_TEXT(&out, "{\"error\":\"bad_request\"}");
            }
        } else {
            typed_answer(&request, &decoded, line, (size_t)n, &packed, &out);
        }
        fwrite(mpk_writer_data(&out), 1, mpk_writer_size(&out), stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(line);
    mpk_doc_destroy(&request);
    mpk_doc_destroy(&decoded);
    mpk_writer_destroy(&out);
    mpk_writer_destroy(&packed);
    return 0;
}
