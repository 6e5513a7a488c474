/* typed.c — see typed.h. */
#include "typed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT(w, s) mpk_write_bytes(w, "" s, sizeof(s) - 1) /* literals only */

static int key_is(const mpk_node *k, const char *name) {
    size_t n = strlen(name);
    return k->type == MPK_STR && k->len == n && memcmp(k->v.data, name, n) == 0;
}

static int str_is(const mpk_node *n, const char *text) { return key_is(n, text); }

size_t typed_hex_decode(const uint8_t *hex, size_t len, uint8_t *out) {
    size_t n = 0;
    int hi = -1;
    for (size_t i = 0; i < len; i++) {
        int c = hex[i], v;
        if (c >= '0' && c <= '9') v = c - '0';
        else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        else if (c == '-' && hi < 0) continue;
        else return (size_t)-1;
        if (hi < 0) hi = v;
        else { out[n++] = (uint8_t)(hi << 4 | v); hi = -1; }
    }
    return hi < 0 ? n : (size_t)-1;
}

/* An integer node, or a decimal string, as sign and magnitude. 0 if neither or out of range. */
static int integer_of(const mpk_node *n, int *neg, uint64_t *mag) {
    if (n->type == MPK_UINT) { *neg = 0; *mag = n->v.u; return 1; }
    if (n->type == MPK_INT) { *neg = 1; *mag = 0 - (uint64_t)n->v.i; return 1; }
    if (n->type != MPK_STR || n->len == 0) return 0;
    const uint8_t *s = n->v.data, *end = s + n->len;
    *neg = 0;
    if (*s == '-') { *neg = 1; s++; }
    if (s == end) return 0;
    uint64_t v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (*neg && v > (uint64_t)INT64_MAX + 1) return 0;
    if (*neg && v == 0) *neg = 0;
    *mag = v;
    return 1;
}

static void write_integer(mpk_writer *w, int neg, uint64_t mag) {
    if (neg) mpk_write_int(w, (int64_t)(0 - mag));
    else mpk_write_uint(w, mag);
}

/* A float member: a JSON number or "NaN" / "Infinity" / "-Infinity". */
static int float_of(const mpk_node *n, double *out) {
    switch (n->type) {
    case MPK_UINT: *out = (double)n->v.u; return 1;
    case MPK_INT: *out = (double)n->v.i; return 1;
    case MPK_FLOAT64: *out = n->v.f64; return 1;
    case MPK_STR:
        if (str_is(n, "NaN")) { *out = NAN; return 1; }
        if (str_is(n, "Infinity")) { *out = HUGE_VAL; return 1; }
        if (str_is(n, "-Infinity")) { *out = -HUGE_VAL; return 1; }
        return 0;
    default: return 0;
    }
}

/* Hex member into a scratch buffer; returns the length or -1. *buf is malloc'd (free it). */
static long hex_member(const mpk_node *n, uint8_t **buf) {
    *buf = NULL;
    if (n->type != MPK_STR) return -1;
    *buf = (uint8_t *)malloc(n->len / 2 + 1);
    if (!*buf) return -1;
    size_t len = typed_hex_decode(n->v.data, n->len, *buf);
    return len == (size_t)-1 ? -1 : (long)len;
}

/* Plain JSON (members of `array` and `map`): the JSON DOM already has the notation's mapping. */
static int encode_plain(const mpk_node *n, mpk_writer *w) {
    mpk_node_write(n, w);
    return 1;
}

int typed_encode(const mpk_node *tv, mpk_writer *w) {
    if (tv->type != MPK_MAP || tv->len != 1) return 0;
    return typed_encode_kv(tv + 1, mpk_node_next(tv + 1), w);
}

int typed_encode_kv(const mpk_node *k, const mpk_node *v, mpk_writer *w) {
    int neg;
    uint64_t mag;
    double f;

    if (key_is(k, "nil")) {
        if (v->type != MPK_NIL) return 0;
        mpk_write_nil(w);
    } else if (key_is(k, "bool")) {
        if (v->type != MPK_BOOL) return 0;
        mpk_write_bool(w, v->v.b);
    } else if (key_is(k, "number")) {
        if (v->type != MPK_UINT && v->type != MPK_INT && v->type != MPK_FLOAT64) return 0;
        mpk_node_write(v, w);
    } else if (key_is(k, "int") || key_is(k, "bignum")) {
        if (!integer_of(v, &neg, &mag)) return 0;
        write_integer(w, neg, mag);
    } else if (key_is(k, "float32")) {
        if (!float_of(v, &f)) return 0;
        mpk_write_float32(w, (float)f);
    } else if (key_is(k, "float64")) {
        if (!float_of(v, &f)) return 0;
        mpk_write_float64(w, f);
    } else if (key_is(k, "string")) {
        if (v->type != MPK_STR) return 0;
        mpk_write_str(w, v->v.data, v->len);
    } else if (key_is(k, "string_hex") || key_is(k, "binary")) {
        uint8_t *buf;
        long len = hex_member(v, &buf);
        if (len >= 0) {
            if (key_is(k, "binary")) mpk_write_bin(w, buf, (size_t)len);
            else mpk_write_str(w, buf, (size_t)len);
        }
        free(buf);
        if (len < 0) return 0;
    } else if (key_is(k, "array")) {
        if (v->type != MPK_ARRAY) return 0;
        return encode_plain(v, w);
    } else if (key_is(k, "map")) {
        if (v->type != MPK_MAP) return 0;
        return encode_plain(v, w);
    } else if (key_is(k, "ext")) {
        if (v->type != MPK_ARRAY || v->len != 2) return 0;
        const mpk_node *type = v + 1, *hex = mpk_node_next(type);
        if (!integer_of(type, &neg, &mag)) return 0; /* any integer may come as a decimal string */
        if (neg ? mag > 128 : mag > 127) return 0;
        uint8_t *buf;
        long len = hex_member(hex, &buf);
        if (len >= 0) mpk_write_ext(w, (int8_t)(neg ? -(int)mag : (int)mag), buf, (size_t)len);
        free(buf);
        if (len < 0) return 0;
    } else if (key_is(k, "timestamp")) {
        if (v->type != MPK_ARRAY || v->len != 2) return 0;
        const mpk_node *sec = v + 1, *nsec = mpk_node_next(sec);
        if (!integer_of(sec, &neg, &mag)) return 0;
        if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX) return 0;
        int nsec_neg;
        uint64_t nsec_value;
        if (!integer_of(nsec, &nsec_neg, &nsec_value)) return 0;
        if (nsec_neg || nsec_value > UINT32_MAX) {
            /* a well-formed request for a timestamp that cannot exist, and whose nsec the writer's
             * uint32_t cannot even take; up to UINT32_MAX the writer itself refuses it */
            mpk_writer_flag_error(w, MPK_ERR_INVALID_TIMESTAMP);
            return 1;
        }
        mpk_write_timestamp(w, neg ? (int64_t)(0 - mag) : (int64_t)mag, (uint32_t)nsec_value);
    } else if (key_is(k, "typed_array")) {
        if (v->type != MPK_ARRAY) return 0;
        mpk_write_array(w, v->len);
        for (const mpk_node *e = mpk_node_first(v); e; ) {
            if (!typed_encode(e, w)) return 0;
            e = mpk_node_next(e);
            if (e >= mpk_node_next(v)) break;
        }
    } else if (key_is(k, "typed_map")) {
        if (v->type != MPK_ARRAY) return 0;
        mpk_write_map(w, v->len);
        const mpk_node *end = mpk_node_next(v);
        for (const mpk_node *pair = v + 1; pair < end; pair = mpk_node_next(pair)) {
            if (pair->type != MPK_ARRAY || pair->len != 2) return 0;
            const mpk_node *key = pair + 1, *val = mpk_node_next(key);
            if (!typed_encode(key, w) || !typed_encode(val, w)) return 0;
        }
    } else {
        return 0;
    }
    return 1;
}

/* ================================================================================================
 * Canonical output
 * ==============================================================================================*/

static void emit_hex(mpk_writer *out, const uint8_t *p, size_t len) {
    static const char digits[] = "0123456789abcdef";
    char pair[2];
    OUT(out, "\"");
    for (size_t i = 0; i < len; i++) {
        pair[0] = digits[p[i] >> 4];
        pair[1] = digits[p[i] & 15];
        mpk_write_bytes(out, pair, 2);
    }
    OUT(out, "\"");
}

/* A JSON string of valid UTF-8. */
static void emit_string(mpk_writer *out, const uint8_t *s, size_t len) {
    static const char digits[] = "0123456789abcdef";
    OUT(out, "\"");
    for (size_t i = 0; i < len; i++) {
        uint8_t c = s[i];
        if (c == '"') OUT(out, "\\\"");
        else if (c == '\\') OUT(out, "\\\\");
        else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', digits[c >> 4], digits[c & 15]};
            mpk_write_bytes(out, esc, 6);
        } else {
            mpk_write_bytes(out, &s[i], 1);
        }
    }
    OUT(out, "\"");
}

static void emit_integer(mpk_writer *out, int neg, uint64_t mag) {
    char buf[32];
    int quoted = mag > 9007199254740991ull;
    int n = snprintf(buf, sizeof buf, "%s%s%llu%s", quoted ? "\"" : "", neg ? "-" : "",
                     (unsigned long long)mag, quoted ? "\"" : "");
    mpk_write_bytes(out, buf, (size_t)n);
}

static void emit_double(mpk_writer *out, double v) {
    char buf[40];
    if (v != v) { OUT(out, "\"NaN\""); return; }
    if (v == HUGE_VAL) { OUT(out, "\"Infinity\""); return; }
    if (v == -HUGE_VAL) { OUT(out, "\"-Infinity\""); return; }
    int n = 0;
    for (int prec = 1; prec <= 17; prec++) {
        n = snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eE")) { buf[n++] = '.'; buf[n++] = '0'; }
    mpk_write_bytes(out, buf, (size_t)n);
}

static void emit_scalar(const mpk_node *n, mpk_writer *out) {
    char buf[32];
    switch ((mpk_type)n->type) {
    case MPK_NIL: OUT(out, "{\"nil\":null}"); break;
    case MPK_BOOL: if (n->v.b) OUT(out, "{\"bool\":true}"); else OUT(out, "{\"bool\":false}"); break;
    case MPK_UINT: OUT(out, "{\"int\":"); emit_integer(out, 0, n->v.u); OUT(out, "}"); break;
    case MPK_INT: OUT(out, "{\"int\":"); emit_integer(out, 1, 0 - (uint64_t)n->v.i); OUT(out, "}"); break;
    case MPK_FLOAT32: OUT(out, "{\"float32\":"); emit_double(out, (double)n->v.f32); OUT(out, "}"); break;
    case MPK_FLOAT64: OUT(out, "{\"float64\":"); emit_double(out, n->v.f64); OUT(out, "}"); break;
    case MPK_STR:
        if (mpk_utf8_valid(n->v.data, n->len)) {
            OUT(out, "{\"string\":");
            emit_string(out, n->v.data, n->len);
        } else {
            OUT(out, "{\"string_hex\":");
            emit_hex(out, n->v.data, n->len);
        }
        OUT(out, "}");
        break;
    case MPK_BIN: OUT(out, "{\"binary\":"); emit_hex(out, n->v.data, n->len); OUT(out, "}"); break;
    case MPK_EXT:
        mpk_write_bytes(out, buf, (size_t)snprintf(buf, sizeof buf, "{\"ext\":[%d,", n->ext_type));
        emit_hex(out, n->v.data, n->len);
        OUT(out, "]}");
        break;
    case MPK_TIMESTAMP: {
        int64_t sec = n->v.i;
        OUT(out, "{\"timestamp\":[");
        emit_integer(out, sec < 0, sec < 0 ? 0 - (uint64_t)sec : (uint64_t)sec);
        mpk_write_bytes(out, buf, (size_t)snprintf(buf, sizeof buf, ",%u]}", (unsigned)n->len));
        break;
    }
    case MPK_ARRAY: OUT(out, "{\"typed_array\":["); break;
    case MPK_MAP: OUT(out, "{\"typed_map\":["); break;
    }
}

typedef struct eframe {
    uint64_t left;
    int is_map;
} eframe;

void typed_emit(const mpk_node *n, mpk_writer *out) {
    /* Iterative, so a deeply nested value cannot exhaust the C stack. */
    size_t count = 1 + (mpk_node_is_container(n) ? n->v.span : 0), depth = 0, cap = 0;
    eframe *stack = NULL;
    for (const mpk_node *end = n + count; n < end; n++) {
        if (depth && stack[depth - 1].is_map && (stack[depth - 1].left & 1) == 0) OUT(out, "[");
        emit_scalar(n, out);
        if (mpk_node_is_container(n)) {
            if (n->len) {
                if (depth == cap) {
                    cap = cap ? cap * 2 : 64;
                    eframe *s = (eframe *)realloc(stack, cap * sizeof *s);
                    if (!s) { mpk_writer_flag_error(out, MPK_ERR_NO_MEMORY); break; }
                    stack = s;
                }
                stack[depth].left = n->type == MPK_MAP ? 2 * (uint64_t)n->len : n->len;
                stack[depth].is_map = n->type == MPK_MAP;
                depth++;
                continue;
            }
            OUT(out, "]}");
        }
        while (depth) {
            eframe *f = &stack[depth - 1];
            f->left--;
            if (f->is_map && (f->left & 1) == 0) OUT(out, "]"); /* a pair ends */
            if (f->left) { OUT(out, ","); break; }
            OUT(out, "]}");
            depth--;
        }
    }
    free(stack);
}

/* ================================================================================================
 * Comparison (tests)
 * ==============================================================================================*/

/* A decoded number against a JSON number, by numeric value whatever the family. */
static int number_match(const mpk_node *json, const mpk_node *v) {
    if (json->type == MPK_UINT || json->type == MPK_INT) {
        if (v->type == MPK_UINT || v->type == MPK_INT) return v->type == json->type && v->v.u == json->v.u;
        double d = v->type == MPK_FLOAT32 ? (double)v->v.f32 : v->type == MPK_FLOAT64 ? v->v.f64 : NAN;
        double want = json->type == MPK_UINT ? (double)json->v.u : (double)json->v.i;
        /* exact only when the integer converts exactly */
        return d == want && (json->type == MPK_UINT ? (uint64_t)want == json->v.u : (int64_t)want == json->v.i);
    }
    if (json->type != MPK_FLOAT64) return 0;
    double want = json->v.f64;
    switch (v->type) {
    case MPK_FLOAT32: return (double)v->v.f32 == want && signbit((double)v->v.f32) == signbit(want);
    case MPK_FLOAT64: return v->v.f64 == want && signbit(v->v.f64) == signbit(want);
    case MPK_UINT: return (double)v->v.u == want && (uint64_t)want == v->v.u && !signbit(want);
    case MPK_INT: return (double)v->v.i == want && (int64_t)want == v->v.i;
    default: return 0;
    }
}

static int plain_match(const mpk_node *json, const mpk_node *v) {
    switch (json->type) {
    case MPK_NIL: return v->type == MPK_NIL;
    case MPK_BOOL: return v->type == MPK_BOOL && v->v.b == json->v.b;
    case MPK_UINT: case MPK_INT: case MPK_FLOAT64: return number_match(json, v);
    case MPK_STR: return v->type == MPK_STR && v->len == json->len && (!v->len || memcmp(v->v.data, json->v.data, v->len) == 0);
    case MPK_ARRAY: {
        if (v->type != MPK_ARRAY || v->len != json->len) return 0;
        const mpk_node *a = json + 1, *b = v + 1;
        for (uint32_t i = 0; i < json->len; i++, a = mpk_node_next(a), b = mpk_node_next(b))
            if (!plain_match(a, b)) return 0;
        return 1;
    }
    case MPK_MAP: {
        if (v->type != MPK_MAP || v->len != json->len) return 0;
        const mpk_node *a = json + 1, *b = v + 1;
        for (uint64_t i = 0; i < 2 * (uint64_t)json->len; i++, a = mpk_node_next(a), b = mpk_node_next(b))
            if (!plain_match(a, b)) return 0;
        return 1;
    }
    default: return 0;
    }
}

int typed_match(const mpk_node *tv, const mpk_node *value) {
    if (tv->type != MPK_MAP || tv->len != 1) return 0;
    return typed_match_kv(tv + 1, mpk_node_next(tv + 1), value);
}

int typed_match_kv(const mpk_node *k, const mpk_node *v, const mpk_node *value) {
    if (key_is(k, "number")) return number_match(v, value);
    if (key_is(k, "array") || key_is(k, "map")) return plain_match(v, value);
    if (key_is(k, "typed_array")) {
        if (value->type != MPK_ARRAY || value->len != v->len) return 0;
        const mpk_node *a = v + 1, *b = value + 1;
        for (uint32_t i = 0; i < v->len; i++, a = mpk_node_next(a), b = mpk_node_next(b))
            if (!typed_match(a, b)) return 0;
        return 1;
    }
    if (key_is(k, "typed_map")) {
        if (value->type != MPK_MAP || value->len != v->len) return 0;
        const mpk_node *pair = v + 1, *b = value + 1;
        for (uint32_t i = 0; i < v->len; i++, pair = mpk_node_next(pair)) {
            if (pair->type != MPK_ARRAY || pair->len != 2) return 0;
            const mpk_node *key = pair + 1, *val = mpk_node_next(key);
            if (!typed_match(key, b)) return 0;
            b = mpk_node_next(b);
            if (!typed_match(val, b)) return 0;
            b = mpk_node_next(b);
        }
        return 1;
    }
    /* a scalar: encode it and compare node by node (no recursion from here, so one scratch
     * writer and doc serve every call) */
    static mpk_writer w;
    static mpk_doc d;
    static int ready;
    if (!ready) {
        mpk_writer_init_growable(&w, 64);
        mpk_doc_init(&d);
        ready = 1;
    }
    mpk_writer_reset(&w);
    if (!typed_encode_kv(k, v, &w) || mpk_writer_error(&w) != MPK_OK) return 0;
    const mpk_node *want = mpk_doc_parse(&d, mpk_writer_data(&w), mpk_writer_size(&w));
    return want && mpk_node_equal(want, value);
}

/* ================================================================================================
 * Driver requests
 * ==============================================================================================*/

int typed_limits(const mpk_node *obj, mpk_limits *l) {
    if (obj->type != MPK_MAP) return 0;
    const mpk_node *k = obj + 1;
    for (uint32_t i = 0; i < obj->len; i++) {
        const mpk_node *v = mpk_node_next(k);
        if (v->type != MPK_UINT || v->v.u > 0xffffffffu) return 0;
        uint32_t n = (uint32_t)v->v.u;
        if (key_is(k, "depth")) l->depth = n;
        else if (key_is(k, "str")) l->str = n;
        else if (key_is(k, "bin")) l->bin = n;
        else if (key_is(k, "ext")) l->ext = n;
        else if (key_is(k, "array")) l->array = n;
        else if (key_is(k, "map")) l->map = n;
        else return 0;
        k = mpk_node_next(v);
    }
    return 1;
}

void typed_answer(mpk_doc *request, mpk_doc *decoded, const char *line, size_t len,
                  mpk_writer *packed, mpk_writer *out) {
    const mpk_node *root = mpk_doc_parse_json(request, line, len);
    const mpk_node *enc = root ? mpk_node_map_get(root, "encode", 6) : NULL;
    const mpk_node *dec = root ? mpk_node_map_get(root, "decode", 6) : NULL;
    if (enc) {
        if (!typed_encode(enc, packed)) goto bad_request;
        if (mpk_writer_error(packed) != MPK_OK) {
            char buf[64];
            mpk_write_bytes(out, buf, (size_t)snprintf(buf, sizeof buf, "{\"error\":\"%s\"}",
                                                       mpk_error_name(mpk_writer_error(packed))));
            return;
        }
        OUT(out, "{\"hex\":");
        emit_hex(out, mpk_writer_data(packed), mpk_writer_size(packed));
        OUT(out, "}");
        return;
    }
    if (dec && dec->type == MPK_STR) {
        mpk_limits limits = mpk_limits_default();
        unsigned flags = 0;
        const mpk_node *l = mpk_node_map_get(root, "limits", 6);
        const mpk_node *strict = mpk_node_map_get(root, "strict_utf8", 11);
        if (l && !typed_limits(l, &limits)) goto bad_request;
        if (strict) {
            if (strict->type != MPK_BOOL) goto bad_request;
            if (strict->v.b) flags |= MPK_FLAG_STRICT_UTF8;
        }
        /* the hex bytes go into the packed writer's buffer: it is scratch space here */
        mpk_write_bytes(packed, "", 0);
        uint8_t *bytes = (uint8_t *)malloc(dec->len / 2 + 1);
        if (!bytes) goto bad_request;
        size_t n = typed_hex_decode(dec->v.data, dec->len, bytes);
        if (n == (size_t)-1) {
            free(bytes);
            goto bad_request;
        }
        mpk_doc_set_limits(decoded, &limits);
        mpk_doc_set_flags(decoded, flags);
        const mpk_node *value = mpk_doc_parse(decoded, bytes, n);
        if (value) {
            OUT(out, "{\"value\":");
            typed_emit(value, out);
            OUT(out, "}");
        } else {
            char buf[96];
            mpk_error e = mpk_doc_error(decoded);
            mpk_write_bytes(out, buf, (size_t)snprintf(buf, sizeof buf, "{\"error\":\"%s\",\"offset\":%zu}",
                                                       mpk_error_name(e.kind), e.offset));
        }
        free(bytes);
        return;
    }
bad_request:
    OUT(out, "{\"error\":\"bad_request\"}");
}
