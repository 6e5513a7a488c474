/* test_corpus.c — every case of spec/vectors/*.json (run from the repo root): decode of every
 * listed form (DOM and pull reader), encode to msgpack[0] (or any form for `number`), re-encode of
 * the shortest form, every negative case's kind and offset, every encode-error case refused with
 * its kind (and so answered by the driver), and every valid form through the stream one byte at a
 * time and, up to 4 KiB, as two chunks split at every position. The case files are read with
 * mpk's own JSON parser. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpk.h"
#include "typed.h"

static mpk_doc scratch;
static unsigned long cases_positive, cases_negative, cases_encode_error, stream_runs;

static const mpk_node *get(const mpk_node *map, const char *key) {
    return mpk_node_map_get(map, key, strlen(key));
}

/* The case's typed-value key: the one that is not name/msgpack/error/offset/limits/strict_utf8/
 * encode_error. */
static const mpk_node *typed_key(const mpk_node *c) {
    const mpk_node *k = c + 1;
    for (uint32_t i = 0; i < c->len; i++) {
        const mpk_node *v = mpk_node_next(k);
        static const char *const meta[] = {"name",   "msgpack",     "error",       "offset",
                                           "limits", "strict_utf8", "encode_error"};
        int is_meta = 0;
        for (size_t m = 0; m < sizeof meta / sizeof meta[0]; m++)
            if (k->len == strlen(meta[m]) && memcmp(k->v.data, meta[m], k->len) == 0) is_meta = 1;
        if (!is_meta) return k;
        k = mpk_node_next(v);
    }
    return NULL;
}

static uint8_t *hex_bytes(const mpk_node *hex, size_t *len) {
    uint8_t *out = (uint8_t *)malloc(hex->len / 2 + 1);
    *len = typed_hex_decode(hex->v.data, hex->len, out);
    return out;
}

/* Feeds `bytes` to a stream in chunks (one byte at a time, or two chunks split at `split`) and
 * takes its values with mpk_stream_next (each checked byte for byte, then parsed) or, with
 * `via_doc`, with mpk_stream_next_doc: there must be exactly one, equal to `expected` (the input's
 * DOM, already checked against the typed value). Each chunk is a fresh heap copy, freed once
 * drained, so a pointer kept past its chunk is caught by the sanitizer run. */
static int stream_run(const uint8_t *bytes, size_t len, size_t split, int one_byte, int via_doc,
                      const mpk_node *expected) {
    mpk_stream s;
    mpk_stream_init(&s);
    int values = 0, ok = 1;
    size_t cuts = one_byte ? len : 2, pos = 0;
    for (size_t c = 0; c < cuts; c++) {
        size_t n = one_byte ? 1 : (c == 0 ? split : len - split);
        uint8_t *chunk = (uint8_t *)malloc(n ? n : 1);
        if (n) memcpy(chunk, bytes + pos, n);
        mpk_stream_feed(&s, chunk, n);
        int r;
        for (;;) {
            const mpk_node *root = NULL;
            if (via_doc) {
                r = mpk_stream_next_doc(&s, &scratch, &root);
            } else {
                const uint8_t *v;
                size_t vlen;
                r = mpk_stream_next(&s, &v, &vlen);
                if (r == 1) {
                    if (vlen != len || memcmp(v, bytes, len) != 0) ok = 0;
                    root = mpk_doc_parse(&scratch, v, vlen);
                }
            }
            if (r != 1) break;
            values++;
            if (!root || !mpk_node_equal(root, expected)) ok = 0;
        }
        if (r < 0) ok = 0;
        free(chunk);
        pos += n;
    }
    if (mpk_stream_end(&s).kind != MPK_OK) ok = 0;
    mpk_stream_destroy(&s);
    return ok && values == 1;
}

/* The stream check of one valid case, through mpk_stream_next_doc and then mpk_stream_next. */
static int stream_check(const uint8_t *bytes, size_t len, size_t split, int one_byte,
                        const mpk_node *expected) {
    if (!stream_run(bytes, len, split, one_byte, 1, expected)) return 0;
    int ok = stream_run(bytes, len, split, one_byte, 0, expected);
    stream_runs++;
    return ok;
}

static void positive(const char *file, const mpk_node *c, const mpk_node *name) {
    const mpk_node *key = typed_key(c), *forms = get(c, "msgpack");
    char label[256];
    snprintf(label, sizeof label, "%s: %.*s", file, name ? (int)name->len : 4,
             name ? (const char *)name->v.data : "case");
    if (!CHECK_MSG(key && forms && forms->type == MPK_ARRAY && forms->len > 0, "%s: malformed case", label))
        return;
    const mpk_node *member = mpk_node_next(key);
    int loose = key->len == 6 && memcmp(key->v.data, "number", 6) == 0;
    cases_positive++;

    /* encode */
    mpk_writer w;
    mpk_writer_init_growable(&w, 64);
    int encoded = typed_encode_kv(key, member, &w) && mpk_writer_error(&w) == MPK_OK;
    int encode_ok = 0;
    const mpk_node *form = forms + 1;
    for (uint32_t i = 0; i < forms->len; i++, form = mpk_node_next(form)) {
        size_t len;
        uint8_t *bytes = hex_bytes(form, &len);
        if (encoded && (i == 0 || loose) && len == mpk_writer_size(&w) &&
            memcmp(bytes, mpk_writer_data(&w), len) == 0)
            encode_ok = 1;

        /* decode: DOM */
        const mpk_node *root = mpk_doc_parse(&scratch, bytes, len);
        CHECK_MSG(root && typed_match_kv(key, member, root), "%s: decode form %u (%s)", label, i,
                  root ? "wrong value" : mpk_error_name(mpk_doc_error(&scratch).kind));
        /* the shortest form re-encodes to itself */
        if (root && i == 0 && !loose) {
            mpk_writer again;
            mpk_writer_init_growable(&again, 64);
            mpk_node_write(root, &again);
            CHECK_MSG(mpk_writer_size(&again) == len && memcmp(mpk_writer_data(&again), bytes, len) == 0,
                      "%s: re-encode of the shortest form", label);
            mpk_writer_destroy(&again);
        }
        /* decode: pull reader walks exactly one value */
        mpk_reader r;
        mpk_reader_init(&r, bytes, len);
        mpk_reader_skip(&r);
        CHECK_MSG(mpk_reader_finish(&r).kind == MPK_OK, "%s: reader form %u: %s", label, i,
                  mpk_error_name(mpk_reader_error(&r).kind));
        mpk_reader_destroy(&r);

        /* stream: one byte at a time, and two chunks at every split */
        if (root) {
            mpk_doc expected;
            mpk_doc_init(&expected);
            const mpk_node *want = mpk_doc_parse(&expected, bytes, len);
            CHECK_MSG(stream_check(bytes, len, 0, 1, want), "%s: stream one byte at a time, form %u", label, i);
            if (len <= 4096) {
                int all = 1;
                for (size_t k = 0; k <= len; k++) all &= stream_check(bytes, len, k, 0, want);
                CHECK_MSG(all, "%s: stream two-chunk splits, form %u", label, i);
            }
            mpk_doc_destroy(&expected);
        }
        free(bytes);
    }
    CHECK_MSG(encode_ok, "%s: encode gave %s", label, encoded ? "other bytes" : "an error");
    mpk_writer_destroy(&w);
}

static void negative(const char *file, const mpk_node *c, const mpk_node *name) {
    const mpk_node *hex = get(c, "msgpack"), *err = get(c, "error"), *off = get(c, "offset");
    const mpk_node *lim = get(c, "limits"), *strict = get(c, "strict_utf8");
    char label[256];
    snprintf(label, sizeof label, "%s: %.*s", file, name ? (int)name->len : 4,
             name ? (const char *)name->v.data : "case");
    if (!CHECK_MSG(hex && hex->type == MPK_STR && err && err->type == MPK_STR && off && off->type == MPK_UINT,
                   "%s: malformed negative case", label))
        return;
    cases_negative++;
    mpk_limits limits = mpk_limits_default();
    if (lim) {
        const mpk_node *k = lim + 1;
        for (uint32_t i = 0; i < lim->len; i++) {
            const mpk_node *v = mpk_node_next(k);
            uint32_t n = (uint32_t)v->v.u;
            if (k->len == 5 && !memcmp(k->v.data, "depth", 5)) limits.depth = n;
            else if (k->len == 3 && !memcmp(k->v.data, "str", 3)) limits.str = n;
            else if (k->len == 3 && !memcmp(k->v.data, "bin", 3)) limits.bin = n;
            else if (k->len == 3 && !memcmp(k->v.data, "ext", 3)) limits.ext = n;
            else if (k->len == 5 && !memcmp(k->v.data, "array", 5)) limits.array = n;
            else if (k->len == 3 && !memcmp(k->v.data, "map", 3)) limits.map = n;
            k = mpk_node_next(v);
        }
    }
    unsigned flags = strict && strict->type == MPK_BOOL && strict->v.b ? MPK_FLAG_STRICT_UTF8 : 0;
    size_t len;
    uint8_t *bytes = hex_bytes(hex, &len);
    char want[64];
    snprintf(want, sizeof want, "%.*s", (int)err->len, (const char *)err->v.data);

    /* DOM */
    mpk_doc d;
    mpk_doc_init(&d);
    mpk_doc_set_limits(&d, &limits);
    mpk_doc_set_flags(&d, flags);
    const mpk_node *root = mpk_doc_parse(&d, bytes, len);
    mpk_error e = mpk_doc_error(&d);
    CHECK_MSG(!root && strcmp(mpk_error_name(e.kind), want) == 0 && e.offset == off->v.u,
              "%s: DOM gave %s at %zu, want %s at %llu", label, mpk_error_name(e.kind), e.offset, want,
              (unsigned long long)off->v.u);
    mpk_doc_destroy(&d);

    /* pull reader */
    mpk_reader r;
    mpk_reader_init(&r, bytes, len);
    mpk_reader_set_limits(&r, &limits);
    mpk_reader_set_flags(&r, flags);
    if (mpk_reader_skip(&r)) mpk_reader_finish(&r);
    e = mpk_reader_error(&r);
    CHECK_MSG(strcmp(mpk_error_name(e.kind), want) == 0 && e.offset == off->v.u,
              "%s: reader gave %s at %zu, want %s at %llu", label, mpk_error_name(e.kind), e.offset, want,
              (unsigned long long)off->v.u);
    mpk_reader_destroy(&r);

    /* stream, whole input then end: it must fail too (its offsets follow the bytes as they
     * arrive, which for a whole input is where the one-shot decoders stop, except that a stream
     * cannot know a declared size will not fit until the input ends, and that it reports what the
     * bytes already prove: "c7 05 ff 00 00" is truncated at 0 one-shot, invalid_timestamp at 0
     * from a stream, spec/README.md; test_stream checks that at every chunk split) */
    mpk_stream s;
    mpk_stream_init(&s);
    mpk_stream_set_limits(&s, &limits);
    mpk_stream_set_flags(&s, flags);
    mpk_stream_feed(&s, bytes, len);
    const uint8_t *v;
    size_t vlen;
    int values = 0, rc;
    while ((rc = mpk_stream_next(&s, &v, &vlen)) == 1) values++;
    e = rc < 0 ? mpk_stream_error(&s) : mpk_stream_end(&s);
    int stream_ok;
    if (len == 0) stream_ok = e.kind == MPK_OK && values == 0; /* an empty stream holds no value */
    else if (strcmp(want, "trailing_bytes") == 0) stream_ok = values >= 1;
    else stream_ok = e.kind != MPK_OK;
    /* when the stream finds the same kind, it finds it at the same byte */
    if (e.kind != MPK_OK && strcmp(mpk_error_name(e.kind), want) == 0) stream_ok &= e.offset == off->v.u;
    CHECK_MSG(stream_ok, "%s: stream gave %s at %zu after %d values", label, mpk_error_name(e.kind), e.offset, values);
    mpk_stream_destroy(&s);

    /* mpk_stream_next_doc: the same values and the same error at the same byte */
    mpk_stream_init(&s);
    mpk_stream_set_limits(&s, &limits);
    mpk_stream_set_flags(&s, flags);
    mpk_stream_feed(&s, bytes, len);
    const mpk_node *root2;
    int values2 = 0;
    while ((rc = mpk_stream_next_doc(&s, &scratch, &root2)) == 1) values2++;
    mpk_error e2 = rc < 0 ? mpk_stream_error(&s) : mpk_stream_end(&s);
    CHECK_MSG(values2 == values && e2.kind == e.kind && e2.offset == e.offset,
              "%s: stream into a doc gave %s at %zu after %d values, the scan %s at %zu after %d", label,
              mpk_error_name(e2.kind), e2.offset, values2, mpk_error_name(e.kind), e.offset, values);
    mpk_stream_destroy(&s);
    free(bytes);
}

/* An encode-error case: a value MessagePack cannot carry. invalid_timestamp: the writer refuses it
 * (mpk_write_timestamp's own check whenever nsec fits its uint32_t; the typed layer for a negative
 * or wider nsec, which the writer cannot be given). bad_request: an int beyond 64 bits or an ext
 * type outside -128..127 cannot be held by the writer's parameters (uint64_t/int64_t, int8_t), so
 * the typed layer must refuse to build it rather than wrap it. Either way the driver's answer,
 * computed by the driver's own code, must be exactly {"error":"<kind>"}. */
static void encode_refused(const char *file, const mpk_node *c, const mpk_node *name) {
    const mpk_node *kind = get(c, "encode_error"), *key = typed_key(c);
    char label[256], want[64];
    snprintf(label, sizeof label, "%s: %.*s", file, name ? (int)name->len : 4,
             name ? (const char *)name->v.data : "case");
    if (!CHECK_MSG(kind && kind->type == MPK_STR && key && !get(c, "msgpack"), "%s: malformed encode-error case",
                   label))
        return;
    cases_encode_error++;
    snprintf(want, sizeof want, "%.*s", (int)kind->len, (const char *)kind->v.data);
    const mpk_node *member = mpk_node_next(key);

    mpk_writer w;
    mpk_writer_init_growable(&w, 64);
    int built = typed_encode_kv(key, member, &w);
    if (strcmp(want, "invalid_timestamp") == 0) {
        CHECK_MSG(built && mpk_writer_error(&w) == MPK_ERR_INVALID_TIMESTAMP, "%s: encode gave %s", label,
                  built ? mpk_error_name(mpk_writer_error(&w)) : "a refusal to build");
        /* a top-level timestamp whose nsec fits uint32_t: the writer's own check */
        const mpk_node *sec = member->type == MPK_ARRAY && member->len == 2 ? member + 1 : NULL;
        const mpk_node *nsec = sec ? mpk_node_next(sec) : NULL;
        if (key->len == 9 && memcmp(key->v.data, "timestamp", 9) == 0 && nsec && nsec->type == MPK_UINT &&
            nsec->v.u <= UINT32_MAX && (sec->type == MPK_UINT || sec->type == MPK_INT)) {
            mpk_writer direct;
            mpk_writer_init_growable(&direct, 64);
            mpk_write_timestamp(&direct, sec->v.i, (uint32_t)nsec->v.u);
            CHECK_MSG(mpk_writer_error(&direct) == MPK_ERR_INVALID_TIMESTAMP && mpk_writer_size(&direct) == 0,
                      "%s: mpk_write_timestamp gave %s", label, mpk_error_name(mpk_writer_error(&direct)));
            mpk_writer_destroy(&direct);
        }
    } else if (strcmp(want, "bad_request") == 0) {
        CHECK_MSG(!built, "%s: the typed layer built a value C cannot hold (%s, %zu bytes)", label,
                  mpk_error_name(mpk_writer_error(&w)), mpk_writer_size(&w));
    } else {
        CHECK_MSG(0, "%s: unknown encode_error kind %s", label, want);
    }
    mpk_writer_destroy(&w);

    /* the driver's answer to {"encode": {<key>: <member>}} */
    mpk_writer line, packed, out;
    mpk_writer_init_growable(&line, 256);
    mpk_writer_init_growable(&packed, 64);
    mpk_writer_init_growable(&out, 64);
    mpk_write_bytes(&line, "{\"encode\":{\"", 12);
    mpk_write_bytes(&line, key->v.data, key->len);
    mpk_write_bytes(&line, "\":", 2);
    mpk_node_to_json(member, &line);
    mpk_write_bytes(&line, "}}", 2);
    mpk_doc request, decoded;
    mpk_doc_init(&request);
    mpk_doc_init(&decoded);
    typed_answer(&request, &decoded, (const char *)mpk_writer_data(&line), mpk_writer_size(&line), &packed, &out);
    char expect[96];
    int n = snprintf(expect, sizeof expect, "{\"error\":\"%s\"}", want);
    CHECK_MSG(mpk_writer_error(&out) == MPK_OK && mpk_writer_size(&out) == (size_t)n &&
                  memcmp(mpk_writer_data(&out), expect, (size_t)n) == 0,
              "%s: driver answered %.*s to %.*s", label, (int)mpk_writer_size(&out),
              (const char *)mpk_writer_data(&out), (int)mpk_writer_size(&line), (const char *)mpk_writer_data(&line));
    mpk_doc_destroy(&request);
    mpk_doc_destroy(&decoded);
    mpk_writer_destroy(&line);
    mpk_writer_destroy(&packed);
    mpk_writer_destroy(&out);
}

static int run_file(const char *dir, const char *file) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = (char *)malloc((size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    mpk_doc doc;
    mpk_doc_init(&doc);
    mpk_limits l = mpk_limits_default();
    l.depth = 1u << 20; /* deep-nesting cases nest JSON twice as deep as their MessagePack */
    mpk_doc_set_limits(&doc, &l);
    const mpk_node *root = mpk_doc_parse_json(&doc, text, got);
    CHECK_MSG(root && root->type == MPK_ARRAY, "%s: not a JSON array of cases (%s at %zu)", file,
              mpk_error_name(mpk_doc_error(&doc).kind), mpk_doc_error(&doc).offset);
    if (root && root->type == MPK_ARRAY) {
        const mpk_node *end = mpk_node_next(root);
        for (const mpk_node *c = root + 1; c < end; c = mpk_node_next(c)) {
            if (!CHECK_MSG(c->type == MPK_MAP, "%s: a case is not an object", file)) continue;
            const mpk_node *name = get(c, "name");
            if (get(c, "error")) negative(file, c, name);
            else if (get(c, "encode_error")) encode_refused(file, c, name);
            else positive(file, c, name);
        }
    }
    mpk_doc_destroy(&doc);
    free(text);
    return 1;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    const char *dir = "spec/vectors";
    DIR *dp = opendir(dir);
    mpk_doc_init(&scratch);
    if (!CHECK_MSG(dp != NULL, "cannot open %s (run from the repo root)", dir)) return check_report("test_corpus");
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    qsort(names, n, sizeof names[0], by_name);
    CHECK_MSG(n > 0, "no case files in %s", dir);
    for (size_t i = 0; i < n; i++) {
        run_file(dir, names[i]);
        free(names[i]);
    }
    printf("corpus: %zu files, %lu positive cases, %lu negative cases, %lu encode-error cases, %lu stream runs\n",
           n, cases_positive, cases_negative, cases_encode_error, stream_runs);
    mpk_doc_destroy(&scratch);
    return check_report("test_corpus");
}
