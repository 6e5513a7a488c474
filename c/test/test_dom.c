/* test_dom.c — the node tree: layout, lookup, equality, copy mode, arena reuse, errors, and the
 * JSON mapping both ways. */
#include <string.h>

#include "check.h"
#include "mpk.h"

static size_t to_json(const mpk_node *n, char *out, size_t cap) {
    mpk_writer w;
    mpk_writer_init_buf(&w, out, cap - 1);
    mpk_node_to_json(n, &w);
    size_t len = mpk_writer_error(&w) == MPK_OK ? mpk_writer_size(&w) : 0;
    out[len] = 0;
    return len;
}

static void test_tree(void) {
    unsigned char buf[128];
    /* {"a": [1, -2, "x"], "b": {"c": nil}, 3: true} */
    size_t n = hex_decode("83 a161 93 01 fe a178 a162 81 a163 c0 03 c3", buf);
    mpk_doc d;
    mpk_doc_init(&d);
    const mpk_node *root = mpk_doc_parse(&d, buf, n);
    CHECK(root && mpk_node_type(root) == MPK_MAP && mpk_node_len(root) == 3);
    CHECK(root->v.span == 11 && d.count == 12);
    const mpk_node *a = mpk_node_map_get(root, "a", 1);
    CHECK(a && mpk_node_type(a) == MPK_ARRAY && mpk_node_len(a) == 3);
    CHECK(mpk_node_at(a, 0)->v.u == 1 && mpk_node_at(a, 1)->v.i == -2);
    const mpk_node *x = mpk_node_at(a, 2);
    CHECK(x && x->type == MPK_STR && x->len == 1 && x->v.data == buf + 7); /* zero-copy */
    CHECK(mpk_node_at(a, 3) == NULL);
    const mpk_node *b = mpk_node_map_get(root, "b", 1);
    CHECK(b && mpk_node_map_get(b, "c", 1)->type == MPK_NIL);
    CHECK(mpk_node_map_get(root, "zz", 2) == NULL);
    mpk_node key3 = {MPK_UINT, 0, 0, 0, {0}};
    key3.v.u = 3;
    const mpk_node *t = mpk_node_map_find(root, &key3);
    CHECK(t && t->type == MPK_BOOL && t->v.b == 1);

    /* writing the tree back gives the same bytes */
    mpk_writer w;
    mpk_writer_init_growable(&w, 0);
    mpk_node_write(root, &w);
    CHECK(mpk_writer_size(&w) == n && memcmp(mpk_writer_data(&w), buf, n) == 0);

    /* equality: same value in another family is equal; order of pairs matters */
    unsigned char buf2[128];
    size_t n2 = hex_decode("83 a161 93 cd0001 d0fe d9 01 78 a162 81 a163 c0 03 c3", buf2);
    mpk_doc d2;
    mpk_doc_init(&d2);
    const mpk_node *root2 = mpk_doc_parse(&d2, buf2, n2);
    CHECK(root2 && mpk_node_equal(root, root2));
    n2 = hex_decode("83 a162 81 a163 c0 a161 93 01 fe a178 03 c3", buf2);
    root2 = mpk_doc_parse(&d2, buf2, n2);
    CHECK(root2 && !mpk_node_equal(root, root2));
    n2 = hex_decode("cb 7ff8000000000001", buf2);
    root2 = mpk_doc_parse(&d2, buf2, n2);
    mpk_doc d3;
    mpk_doc_init(&d3);
    unsigned char nan[9];
    hex_decode("cb 7ff8000000000000", nan);
    CHECK(mpk_node_equal(root2, mpk_doc_parse(&d3, nan, 9))); /* every NaN equals every NaN */
    hex_decode("cb 8000000000000000", nan);
    unsigned char zero[9];
    hex_decode("cb 0000000000000000", zero);
    mpk_doc d4;
    mpk_doc_init(&d4);
    CHECK(!mpk_node_equal(mpk_doc_parse(&d3, nan, 9), mpk_doc_parse(&d4, zero, 9))); /* -0.0 != 0.0 */
    mpk_doc_destroy(&d3);
    mpk_doc_destroy(&d4);

    /* JSON out */
    char json[512];
    to_json(root, json, sizeof json);
    CHECK_MSG(strcmp(json, "{\"a\":[1,-2,\"x\"],\"b\":{\"c\":null},\"3\":true}") == 0, "%s", json);
    mpk_writer_destroy(&w);
    mpk_doc_destroy(&d);
    mpk_doc_destroy(&d2);
}

static void test_copy_and_reuse(void) {
    unsigned char buf[64];
    size_t n = hex_decode("92 a3616263 c4 02 0102", buf);
    mpk_doc d;
    mpk_doc_init(&d);
    mpk_doc_set_flags(&d, MPK_FLAG_COPY);
    const mpk_node *root = mpk_doc_parse(&d, buf, n);
    CHECK(root);
    memset(buf, 0, sizeof buf); /* the input may go away */
    CHECK(memcmp(mpk_node_at(root, 0)->v.data, "abc", 3) == 0);
    CHECK(mpk_node_at(root, 1)->v.data[1] == 2);

    /* a second, smaller message reuses the arena: no new allocation */
    mpk_node *nodes = d.nodes;
    uint8_t *bytes = d.bytes;
    for (int i = 0; i < 100; i++) {
        n = hex_decode("91 a2 6869", buf);
        root = mpk_doc_parse(&d, buf, n);
        CHECK(root && d.nodes == nodes && d.bytes == bytes);
    }
    mpk_doc_destroy(&d);
}

static void test_errors_and_bounds(void) {
    unsigned char buf[64];
    mpk_doc d;
    mpk_doc_init(&d);
    size_t n = hex_decode("dd ffffffff 01 02 03", buf);
    CHECK(!mpk_doc_parse(&d, buf, n));
    CHECK(mpk_doc_error(&d).kind == MPK_ERR_TRUNCATED && mpk_doc_error(&d).offset == 0);
    CHECK(d.cap < 1000); /* nothing was reserved for the declared count */

    /* many nested big declarations: reservations stay within what the input can hold */
    static unsigned char nest[30000];
    size_t len = 0;
    while (len + 3 <= sizeof nest) {
        nest[len++] = 0xdc;
        nest[len++] = 0x27;
        nest[len++] = 0x10; /* 10000 elements each */
    }
    CHECK(!mpk_doc_parse(&d, nest, len));
    CHECK(d.cap <= 2 * len + 64);
    mpk_doc_destroy(&d);

    n = hex_decode("92 01", buf);
    mpk_doc_init(&d);
    CHECK(!mpk_doc_parse(&d, buf, n) && mpk_doc_error(&d).kind == MPK_ERR_TRUNCATED);
    n = hex_decode("c0 c0", buf);
    CHECK(!mpk_doc_parse(&d, buf, n) && mpk_doc_error(&d).kind == MPK_ERR_TRAILING_BYTES &&
          mpk_doc_error(&d).offset == 1);
    CHECK(mpk_doc_root(&d) == NULL);
    mpk_doc_destroy(&d);
}

static void test_json(void) {
    mpk_doc d;
    mpk_doc_init(&d);
    const char *text = " {\"n\": [0, -0, 1.5, -1e3, 18446744073709551615, -9223372036854775808, 1e400],"
                       " \"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\", \"t\": true, \"f\": false,"
                       " \"z\": null, \"e\": {}, \"a\": []} ";
    const mpk_node *root = mpk_doc_parse_json(&d, text, strlen(text));
    CHECK_MSG(root != NULL, "%s at %zu", mpk_error_name(mpk_doc_error(&d).kind), mpk_doc_error(&d).offset);
    if (!root) return;
    const mpk_node *nums = mpk_node_map_get(root, "n", 1);
    CHECK(mpk_node_at(nums, 0)->type == MPK_UINT && mpk_node_at(nums, 0)->v.u == 0);
    CHECK(mpk_node_at(nums, 1)->type == MPK_UINT); /* -0 without a fraction is the integer 0 */
    CHECK(mpk_node_at(nums, 2)->type == MPK_FLOAT64 && mpk_node_at(nums, 2)->v.f64 == 1.5);
    CHECK(mpk_node_at(nums, 3)->type == MPK_FLOAT64 && mpk_node_at(nums, 3)->v.f64 == -1000.0);
    CHECK(mpk_node_at(nums, 4)->type == MPK_UINT && mpk_node_at(nums, 4)->v.u == UINT64_MAX);
    CHECK(mpk_node_at(nums, 5)->type == MPK_INT && mpk_node_at(nums, 5)->v.i == INT64_MIN);
    const mpk_node *s = mpk_node_map_get(root, "s", 1);
    const char want[] = "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80";
    CHECK(s && s->len == sizeof want - 1 && memcmp(s->v.data, want, s->len) == 0);
    CHECK(mpk_node_map_get(root, "e", 1)->type == MPK_MAP && mpk_node_map_get(root, "a", 1)->len == 0);

    char out[512];
    to_json(root, out, sizeof out);

    CHECK_MSG(strcmp(out, "{\"n\":[0,0,1.5,-1e+03,18446744073709551615,-9223372036854775808,null],"
                          "\"s\":\"a\\\"\\\\/\\b\\f\\n\\r\\t\xc3\xa9\xf0\x9f\x98\x80\",\"t\":true,\"f\":false,"
                          "\"z\":null,\"e\":{},\"a\":[]}") == 0, "%s", out);

    /* malformed JSON: kind json at the byte */
    static const struct { const char *text; size_t offset; } bad[] = {
        {"", 0}, {"[1,]", 3}, {"{\"a\" 1}", 5}, {"[1 2]", 3}, {"\"\\ud800\"", 1}, {"01", 1},
        {"[1]x", 3}, {"\"a\x01\"", 2}, {"tru", 0}, {"{1:2}", 1}, {"-", 1}, {"1.", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(!mpk_doc_parse_json(&d, bad[i].text, strlen(bad[i].text)) &&
                      mpk_doc_error(&d).kind == MPK_ERR_JSON && mpk_doc_error(&d).offset == bad[i].offset,
                  "%s: got %s at %zu", bad[i].text, mpk_error_name(mpk_doc_error(&d).kind), mpk_doc_error(&d).offset);
    }
    /* depth */
    mpk_limits l = mpk_limits_default();
    l.depth = 2;
    mpk_doc_set_limits(&d, &l);
    CHECK(mpk_doc_parse_json(&d, "[[1]]", 5));
    CHECK(!mpk_doc_parse_json(&d, "[[[1]]]", 7) && mpk_doc_error(&d).kind == MPK_ERR_DEPTH_LIMIT &&
          mpk_doc_error(&d).offset == 2);
    mpk_doc_destroy(&d);

    /* bin, ext, timestamp, NaN, non-string keys, invalid UTF-8 */
    unsigned char buf[96];
    size_t n = hex_decode("86 c4 03 666f6f c0 01 d4 05 ff 92 01 02 cb 7ff8000000000000"
                          "a1 74 d7ff 00000004 00000001 a1 75 c7 0c ff 00000000 ffffffffffffffff a1 76 a2 ff 41",
                          buf);
    mpk_doc_init(&d);
    root = mpk_doc_parse(&d, buf, n);
    CHECK(root != NULL);
    if (root) {
        to_json(root, out, sizeof out);
        CHECK_MSG(strcmp(out, "{\"Zm9v\":null,\"1\":{\"ext\":5,\"data\":\"/w==\"},\"[1,2]\":null,"
                              "\"t\":\"1970-01-01T00:00:01.000000001Z\",\"u\":\"1969-12-31T23:59:59Z\","
                              "\"v\":\"\xef\xbf\xbd" "A\"}") == 0, "%s", out);
    }
    mpk_doc_destroy(&d);
}

/* A map holding a key more than once: lookups give the LAST pair's value, as JS, Python and Go do
 * (spec/README.md, Maps with duplicate keys). */
static void test_duplicate_keys(void) {
    unsigned char buf[128];
    /* {"a": 1, [1, 2]: "p", "b": 7, "a": [2], 5: "x", [1, 2]: "q", 5: "y", "a": 3} */
    size_t n = hex_decode("88 a161 01 920102 a170 a162 07 a161 9102 05 a178 920102 a171 05 a179 a161 03", buf);
    mpk_doc d;
    mpk_doc_init(&d);
    const mpk_node *root = mpk_doc_parse(&d, buf, n);
    CHECK(root && root->len == 8);
    const mpk_node *a = mpk_node_map_get(root, "a", 1);
    CHECK(a && a->type == MPK_UINT && a->v.u == 3);
    const mpk_node *b = mpk_node_map_get(root, "b", 1);
    CHECK(b && b->v.u == 7); /* a key seen once is still found */
    mpk_node five = {MPK_UINT, 0, 0, 0, {0}};
    five.v.u = 5;
    const mpk_node *y = mpk_node_map_find(root, &five);
    CHECK(y && y->type == MPK_STR && y->len == 1 && y->v.data[0] == 'y');
    /* a container key, deep-equal to the second one */
    const mpk_node *arr_key = mpk_node_next(mpk_node_next(mpk_node_first(root))); /* 2nd key */
    CHECK(arr_key && arr_key->type == MPK_ARRAY && arr_key->len == 2);
    const mpk_node *q = arr_key ? mpk_node_map_find(root, arr_key) : NULL;
    CHECK(q && q->type == MPK_STR && q->v.data[0] == 'q');
    mpk_doc_destroy(&d);

    /* the same from JSON text, whose duplicates are kept too */
    mpk_doc_init(&d);
    const char *json = "{\"k\": 1, \"k\": \"two\"}";
    root = mpk_doc_parse_json(&d, json, strlen(json));
    const mpk_node *k = root ? mpk_node_map_get(root, "k", 1) : NULL;
    CHECK(root && root->len == 2 && k && k->type == MPK_STR && k->len == 3);
    mpk_doc_destroy(&d);
}

/* JSON text into a writer whose MessagePack checks are on: the text is not read as MessagePack
 * (a UTF-8 lead byte would be a str head) and the writer finishes fine. */
static void test_json_into_checked_writer(void) {
    unsigned char buf[32];
    size_t n = hex_decode("91 a2 c3a9", buf); /* ["é"]: as MessagePack, a9 would be a str of 9 */
    mpk_doc d;
    mpk_doc_init(&d);
    const mpk_node *root = mpk_doc_parse(&d, buf, n);
    mpk_writer w;
    mpk_writer_init_growable(&w, 0);
    mpk_writer_set_checks(&w, 1);
    mpk_node_to_json(root, &w);
    CHECK(mpk_writer_finish(&w) == MPK_OK && mpk_writer_size(&w) == 6 &&
          memcmp(mpk_writer_data(&w), "[\"\xc3\xa9\"]", 6) == 0);
    mpk_writer_destroy(&w);
    mpk_doc_destroy(&d);
}

int main(void) {
    test_json_into_checked_writer();
    test_duplicate_keys();
    test_tree();
    test_copy_and_reuse();
    test_errors_and_bounds();
    test_json();
    return check_report("test_dom");
}
