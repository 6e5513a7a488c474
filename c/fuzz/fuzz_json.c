/* fuzz_json.c — libFuzzer target for the JSON layer: JSON text → DOM → MessagePack → DOM → JSON.
 *
 * The input is JSON text (any bytes). Checked:
 * 1. mpk_doc_parse_json either fails with `json` or `depth_limit` at an offset inside the input,
 *    or gives a tree whose map keys are all strs.
 * 2. MessagePack is lossless: the tree written with mpk_node_write parses back (same limits) to a
 *    deep-equal tree, and rewriting that tree gives the same bytes.
 * 3. JSON output is stable: the tree's JSON text T1 is valid UTF-8, parses, and printing that parse
 *    gives T1 again (the first printing may lose what JSON cannot hold — an infinite float becomes
 *    null — but a second round loses nothing). The MessagePack round trip prints T1 too.
 * A hash of the input picks a depth limit (the default, or 1..8) so both depth paths are fuzzed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpk.h"

#define REQUIRE(cond)                                                                 \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "fuzz_json: %s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

static uint32_t hash(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Every map key of the tree is a str (JSON objects have string keys only). */
static int keys_are_strs(const mpk_node *root) {
    const mpk_node *end = mpk_node_next(root);
    for (const mpk_node *n = root; n < end; n++) {
        if (mpk_node_type(n) != MPK_MAP) continue;
        const mpk_node *k = mpk_node_first(n);
        for (uint32_t i = 0; i < n->len; i++) {
            if (mpk_node_type(k) != MPK_STR) return 0;
            k = mpk_node_next(mpk_node_next(k));
        }
    }
    return 1;
}

static void to_json(const mpk_node *n, mpk_writer *w) {
    mpk_writer_reset(w);
    mpk_node_to_json(n, w);
    REQUIRE(mpk_writer_finish(w) == MPK_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint32_t h = hash(data, size);
    mpk_limits limits = mpk_limits_default();
    if (h % 4 == 0) limits.depth = 1 + (h >> 8) % 8;

    mpk_doc json, back, again;
    mpk_doc_init(&json);
    mpk_doc_init(&back);
    mpk_doc_init(&again);
    mpk_doc_set_limits(&json, &limits);
    mpk_doc_set_limits(&back, &limits);
    mpk_doc_set_limits(&again, &limits);
    mpk_writer packed, repacked, text1, text2;
    mpk_writer_init_growable(&packed, 0);
    mpk_writer_init_growable(&repacked, 0);
    mpk_writer_init_growable(&text1, 0);
    mpk_writer_init_growable(&text2, 0);

    const mpk_node *root = mpk_doc_parse_json(&json, (const char *)data, size);
    if (!root) {
        mpk_error e = mpk_doc_error(&json);
        REQUIRE(e.kind == MPK_ERR_JSON || e.kind == MPK_ERR_DEPTH_LIMIT || e.kind == MPK_ERR_NO_MEMORY);
        REQUIRE(e.offset <= size);
        goto done;
    }
    REQUIRE(keys_are_strs(root));

    /* 2: through MessagePack and back, exactly */
    mpk_node_write(root, &packed);
    REQUIRE(mpk_writer_finish(&packed) == MPK_OK);
    const mpk_node *decoded = mpk_doc_parse(&back, mpk_writer_data(&packed), mpk_writer_size(&packed));
    REQUIRE(decoded != NULL);
    REQUIRE(mpk_node_equal(decoded, root));
    mpk_node_write(decoded, &repacked);
    REQUIRE(mpk_writer_finish(&repacked) == MPK_OK);
    REQUIRE(mpk_writer_size(&repacked) == mpk_writer_size(&packed));
    REQUIRE(memcmp(mpk_writer_data(&repacked), mpk_writer_data(&packed), mpk_writer_size(&packed)) == 0);

    /* 3: JSON text, stable after one round */
    to_json(root, &text1);
    REQUIRE(mpk_utf8_valid(mpk_writer_data(&text1), mpk_writer_size(&text1)));
    to_json(decoded, &text2);
    REQUIRE(mpk_writer_size(&text2) == mpk_writer_size(&text1));
    REQUIRE(memcmp(mpk_writer_data(&text2), mpk_writer_data(&text1), mpk_writer_size(&text1)) == 0);
    const mpk_node *reparsed =
        mpk_doc_parse_json(&again, (const char *)mpk_writer_data(&text1), mpk_writer_size(&text1));
    REQUIRE(reparsed != NULL);
    to_json(reparsed, &text2);
    REQUIRE(mpk_writer_size(&text2) == mpk_writer_size(&text1));
    REQUIRE(memcmp(mpk_writer_data(&text2), mpk_writer_data(&text1), mpk_writer_size(&text1)) == 0);

done:
    mpk_writer_destroy(&packed);
    mpk_writer_destroy(&repacked);
    mpk_writer_destroy(&text1);
    mpk_writer_destroy(&text2);
    mpk_doc_destroy(&json);
    mpk_doc_destroy(&back);
    mpk_doc_destroy(&again);
    return 0;
}
