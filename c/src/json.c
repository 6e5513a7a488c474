/* json.c — JSON text into a doc (no recursion), and a node out as JSON text. The mapping is
 * documented in mpk/dom.h and c/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpk/dom.h"

int mpk__doc_reserve_nodes(mpk_doc *d, size_t need);
int mpk__doc_reserve_bytes(mpk_doc *d, size_t need);
int mpk__doc_reserve_stack(mpk_doc *d, size_t frames, size_t frame_size);

/* ================================================================================================
 * JSON in (Public)
 * ==============================================================================================*/

typedef struct jframe {
    size_t index; /* the container's node */
    uint32_t count;
} jframe;

typedef struct jparser {
    mpk_doc *d;
    const char *s, *p, *end;
} jparser;

static void skip_ws(jparser *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int hex4(const char *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* A string at j->p (on the opening quote) into the doc's byte store; fills node. 0 on error, with
 * j->p at the offending byte. */
static int parse_string(jparser *j, mpk_node *n) {
    mpk_doc *d = j->d;
    uint8_t *out = d->bytes + d->bytes_len, *o = out;
    const char *p = j->p + 1, *end = j->end;
    for (;;) {
        /* plain runs first */
        const char *run = p;
        while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
        memcpy(o, run, (size_t)(p - run));
        o += p - run;
        if (p >= end || (unsigned char)*p < 0x20) { j->p = p; return 0; }
        if (*p == '"') break;
        /* an escape */
        if (end - p < 2) { j->p = p; return 0; }
        char e = p[1];
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (end - p < 6 || !hex4(p + 2, &cp)) { j->p = p; return 0; }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || !hex4(p + 8, &lo) || lo < 0xdc00 ||
                    lo > 0xdfff) {
                    j->p = p;
                    return 0;
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                j->p = p;
                return 0;
            }
            /* 6 source bytes (12 for a pair) always cover the at most 4 bytes written */
            if (cp < 0x80) {
                *o++ = (uint8_t)cp;
            } else if (cp < 0x800) {
                *o++ = (uint8_t)(0xc0 | cp >> 6);
                *o++ = (uint8_t)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                *o++ = (uint8_t)(0xe0 | cp >> 12);
                *o++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
                *o++ = (uint8_t)(0x80 | (cp & 0x3f));
            } else {
                *o++ = (uint8_t)(0xf0 | cp >> 18);
                *o++ = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
                *o++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
                *o++ = (uint8_t)(0x80 | (cp & 0x3f));
            }
            p += 4;
            break;
        }
        default: j->p = p; return 0;
        }
        p += 2;
    }
    size_t len = (size_t)(o - out);
    if (!mpk_utf8_valid(out, len) || len > 0xffffffffu) return 0;
    n->type = MPK_STR;
    n->len = (uint32_t)len;
    n->v.data = out;
    d->bytes_len += len;
    j->p = p + 1;
    return 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_number(jparser *j, mpk_node *n) {
    const char *p = j->p, *end = j->end, *start = p;
    int neg = 0, integral = 1;
    if (p < end && *p == '-') { neg = 1; p++; }
    if (p >= end || !is_digit(*p)) { j->p = p; return 0; }
    if (*p == '0') p++;
    else while (p < end && is_digit(*p)) p++;
    if (p < end && *p == '.') {
        integral = 0;
        p++;
        if (p >= end || !is_digit(*p)) { j->p = p; return 0; }
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integral = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) { j->p = p; return 0; }
        while (p < end && is_digit(*p)) p++;
    }
    j->p = p;
    if (integral) {
        uint64_t v = 0;
        int overflow = 0;
        for (const char *q = start + neg; q < p; q++) {
            unsigned digit = (unsigned)(*q - '0');
            if (v > (UINT64_MAX - digit) / 10) { overflow = 1; break; }
            v = v * 10 + digit;
        }
        if (!overflow && !neg) {
            n->type = MPK_UINT; n->len = 0; n->v.u = v;
            return 1;
        }
        if (!overflow && neg && v <= (uint64_t)INT64_MAX + 1) {
            n->type = v ? MPK_INT : MPK_UINT; /* -0 without a fraction is the integer 0 */
            n->len = 0;
            n->v.i = v ? (int64_t)(0 - v) : 0;
            return 1;
        }
    }
    /* strtod needs a terminated copy; numbers are short, so a stack buffer nearly always does */
    char small[128], *buf = small;
    size_t len = (size_t)(p - start);
    if (len >= sizeof small && !(buf = (char *)malloc(len + 1))) return -1;
    memcpy(buf, start, len);
    buf[len] = 0;
    n->type = MPK_FLOAT64;
    n->len = 0;
    n->v.f64 = strtod(buf, NULL);
    if (buf != small) free(buf);
    return 1;
}

static int match(jparser *j, const char *word, size_t len) {
    if ((size_t)(j->end - j->p) < len || memcmp(j->p, word, len) != 0) return 0;
    j->p += len;
    return 1;
}

const mpk_node *mpk_doc_parse_json(mpk_doc *d, const char *json, size_t len) {
    jparser j;
    mpk_error_kind kind = MPK_ERR_JSON;
    size_t used = 0;
    uint32_t depth = 0;
    jframe *stack = NULL;

    j.d = d;
    j.s = j.p = json;
    j.end = json + (json ? len : 0);
    d->count = 0;
    d->bytes_len = 0;
    d->error.kind = MPK_OK;
    /* unescaped strings never outgrow their source, so the store never moves */
    if (!mpk__doc_reserve_bytes(d, len ? len : 1)) goto no_memory;
    stack = (jframe *)d->stack;

    for (;;) {
        /* a value */
        skip_ws(&j);
        if (j.p >= j.end) goto fail;
        if (used == d->cap && !mpk__doc_reserve_nodes(d, used + 1)) goto no_memory;
        mpk_node *n = &d->nodes[used++];
        char c = *j.p;
        if (c == '{' || c == '[') {
            if (depth >= d->limits.depth) { kind = MPK_ERR_DEPTH_LIMIT; goto fail; }
            if (depth >= d->stack_cap) {
                if (!mpk__doc_reserve_stack(d, (size_t)depth + 1, sizeof(jframe))) goto no_memory;
                stack = (jframe *)d->stack;
            }
            n->type = c == '{' ? MPK_MAP : MPK_ARRAY;
            n->len = 0;
            n->v.span = 0;
            stack[depth].index = used - 1;
            stack[depth].count = 0;
            depth++;
            j.p++;
            skip_ws(&j);
            if (j.p < j.end && *j.p == (c == '{' ? '}' : ']')) {
                j.p++;
                depth--;
                goto value_done;
            }
            if (c == '[') continue;
            goto key;
        } else if (c == '"') {
            if (!parse_string(&j, n)) goto fail;
        } else if (c == '-' || is_digit(c)) {
            int r = parse_number(&j, n);
            if (r < 0) goto no_memory;
            if (!r) goto fail;
        } else if (match(&j, "null", 4)) {
            n->type = MPK_NIL; n->len = 0; n->v.u = 0;
        } else if (match(&j, "true", 4)) {
            n->type = MPK_BOOL; n->len = 0; n->v.u = 0; n->v.b = 1;
        } else if (match(&j, "false", 5)) {
            n->type = MPK_BOOL; n->len = 0; n->v.u = 0; n->v.b = 0;
        } else {
            goto fail;
        }

    value_done:
        /* after a value: a separator, or the end of its container (and maybe of more) */
        if (depth == 0) goto finished;
        {
            jframe *f = &stack[depth - 1];
            mpk_node *cn = &d->nodes[f->index];
            skip_ws(&j);
            if (j.p >= j.end) goto fail;
            if (++f->count == 0) goto fail; /* over 2^32-1 elements */
            if (*j.p == ',') {
                j.p++;
                if (cn->type == MPK_ARRAY) continue;
                goto key;
            }
            if (*j.p != (cn->type == MPK_ARRAY ? ']' : '}')) goto fail;
            j.p++;
            cn->len = f->count;
            cn->v.span = used - f->index - 1;
            depth--;
            goto value_done;
        }

    key:
        /* an object member: "key" : value */
        skip_ws(&j);
        if (j.p >= j.end || *j.p != '"') goto fail;
        if (used == d->cap && !mpk__doc_reserve_nodes(d, used + 1)) goto no_memory;
        if (!parse_string(&j, &d->nodes[used])) goto fail;
        used++;
        skip_ws(&j);
        if (j.p >= j.end || *j.p != ':') goto fail;
        j.p++;
    }

finished:
    skip_ws(&j);
    if (j.p != j.end) goto fail;
    d->count = used;
    return d->nodes;

no_memory:
    kind = MPK_ERR_NO_MEMORY;
fail:
    d->count = 0;
    d->error.kind = kind;
    d->error.offset = (size_t)(j.p - j.s);
    return NULL;
}

/* ================================================================================================
 * JSON out (Public)
 * ==============================================================================================*/

/* Out of line on purpose: inlining mpk_write_bytes for every literal made gcc 12 warn about
 * bounds on paths that cannot happen (-Warray-bounds false positives). */
static MPK__NOINLINE void out_raw(mpk_writer *w, const char *s, size_t n) { mpk_write_bytes(w, s, n); }
#define OUT(w, s) out_raw(w, "" s, sizeof(s) - 1) /* literals only */

static void out_string(mpk_writer *w, const uint8_t *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = s, *end = s + len;
    OUT(w, "\"");
    while (p < end) {
        const uint8_t *run = p;
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        mpk_write_bytes(w, run, (size_t)(p - run));
        if (p >= end) break;
        uint8_t c = *p;
        if (c >= 0x80) {
            /* a valid sequence is copied as it is; any invalid byte becomes U+FFFD */
            size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if ((size_t)(end - p) >= k && mpk_utf8_valid(p, k)) {
                mpk_write_bytes(w, p, k);
                p += k;
            } else {
                OUT(w, "\xef\xbf\xbd");
                p++;
            }
            continue;
        }
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        switch (c) {
        case '"': OUT(w, "\\\""); break;
        case '\\': OUT(w, "\\\\"); break;
        case '\n': OUT(w, "\\n"); break;
        case '\r': OUT(w, "\\r"); break;
        case '\t': OUT(w, "\\t"); break;
        case '\b': OUT(w, "\\b"); break;
        case '\f': OUT(w, "\\f"); break;
        default: mpk_write_bytes(w, esc, 6); break;
        }
        p++;
    }
    OUT(w, "\"");
}

/* The shortest "%.*g" text that reads back as the same double. */
int mpk__format_double(char *buf, size_t size, double v) {
    int n = 0;
    for (int prec = 1; prec <= 17; prec++) {
        n = snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    /* keep it a float in JSON readers that care: 1 → 1.0 */
    if (!strpbrk(buf, ".eEn") && (size_t)n + 2 < size) {
        buf[n++] = '.';
        buf[n++] = '0';
        buf[n] = 0;
    }
    return n;
}

static void out_double(mpk_writer *w, double v) {
    char buf[40];
    if (v != v || v == HUGE_VAL || v == -HUGE_VAL) {
        OUT(w, "null");
        return;
    }
    mpk_write_bytes(w, buf, (size_t)mpk__format_double(buf, sizeof buf, v));
}

static void out_base64(mpk_writer *w, const uint8_t *p, size_t len) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    OUT(w, "\"");
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len) v |= p[i + 2];
        q[0] = abc[v >> 18];
        q[1] = abc[(v >> 12) & 63];
        q[2] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
        q[3] = i + 2 < len ? abc[v & 63] : '=';
        mpk_write_bytes(w, q, 4);
    }
    OUT(w, "\"");
}

/* Days since 1970-01-01 to a proleptic Gregorian date, in 400-year eras of 146097 days. */
static void civil_date(int64_t days, int64_t *year, unsigned *month, unsigned *day) {
    days += 719468; /* shift the epoch to 0000-03-01 */
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    unsigned doe = (unsigned)(days - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *day = doy - (153 * mp + 2) / 5 + 1;
    *month = mp < 10 ? mp + 3 : mp - 9;
    *year = (int64_t)yoe + era * 400 + (*month <= 2);
}

static void out_timestamp(mpk_writer *w, int64_t sec, uint32_t nsec) {
    int64_t days = sec / 86400, rem = sec % 86400;
    if (rem < 0) { rem += 86400; days--; }
    int64_t year;
    unsigned month, day;
    civil_date(days, &year, &month, &day);
    char buf[80];
    int n = snprintf(buf, sizeof buf, "\"%04lld-%02u-%02uT%02u:%02u:%02u", (long long)year, month,
                     day, (unsigned)(rem / 3600), (unsigned)(rem / 60 % 60), (unsigned)(rem % 60));
    if (nsec) {
        char frac[16];
        int k = snprintf(frac, sizeof frac, ".%09u", (unsigned)nsec);
        while (frac[k - 1] == '0') k--;
        frac[k] = 0;
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s", frac);
    }
    n += snprintf(buf + n, sizeof buf - (size_t)n, "Z\"");
    mpk_write_bytes(w, buf, (size_t)n);
}

/* One scalar node (or the opening bracket of a container). */
static void out_node(mpk_writer *w, const mpk_node *n) {
    char buf[48];
    switch ((mpk_type)n->type) {
    case MPK_NIL: OUT(w, "null"); break;
    case MPK_BOOL: if (n->v.b) OUT(w, "true"); else OUT(w, "false"); break;
    case MPK_UINT: mpk_write_bytes(w, buf, (size_t)snprintf(buf, sizeof buf, "%llu", (unsigned long long)n->v.u)); break;
    case MPK_INT: mpk_write_bytes(w, buf, (size_t)snprintf(buf, sizeof buf, "%lld", (long long)n->v.i)); break;
    case MPK_FLOAT32: out_double(w, (double)n->v.f32); break;
    case MPK_FLOAT64: out_double(w, n->v.f64); break;
    case MPK_STR: out_string(w, n->v.data, n->len); break;
    case MPK_BIN: out_base64(w, n->v.data, n->len); break;
    case MPK_EXT:
        mpk_write_bytes(w, buf, (size_t)snprintf(buf, sizeof buf, "{\"ext\":%d,\"data\":", n->ext_type));
        out_base64(w, n->v.data, n->len);
        OUT(w, "}");
        break;
    case MPK_TIMESTAMP: out_timestamp(w, n->v.i, n->len); break;
    case MPK_ARRAY: OUT(w, "["); break;
    case MPK_MAP: OUT(w, "{"); break;
    }
}

typedef struct oframe {
    uint64_t left;  /* values still to write (maps: keys and values) */
    int is_map;
} oframe;

void mpk_node_to_json(const mpk_node *n, mpk_writer *w) {
    /* the writer now holds text, which its MessagePack checks cannot read */
    if (w->checks) mpk_writer_set_checks(w, 0);
    oframe small[32], *stack = small;
    size_t depth = 0, cap = 32;
    size_t count = 1 + (mpk_node_is_container(n) ? n->v.span : 0);
    const mpk_node *end = n + count;
    while (n < end) {
        oframe *top = depth ? &stack[depth - 1] : NULL;
        int is_key = top && top->is_map && (top->left & 1) == 0;
        if (is_key && n->type != MPK_STR) {
            /* a key that is not a str: its JSON text, as a string */
            mpk_writer tmp;
            mpk_writer_init_growable(&tmp, 64);
            mpk_node_to_json(n, &tmp);
            if (mpk_writer_error(&tmp) != MPK_OK) mpk_writer_flag_error(w, mpk_writer_error(&tmp));
            else if (mpk_writer_size(&tmp) && mpk_writer_data(&tmp)[0] == '"')
                mpk_write_bytes(w, mpk_writer_data(&tmp), mpk_writer_size(&tmp)); /* already a string */
            else
                out_string(w, mpk_writer_data(&tmp), mpk_writer_size(&tmp));
            mpk_writer_destroy(&tmp);
            n = mpk_node_next(n);
        } else {
            out_node(w, n);
            if (mpk_node_is_container(n) && n->len) {
                if (depth == cap) {
                    oframe *bigger = (oframe *)malloc(cap * 2 * sizeof *bigger);
                    if (!bigger) {
                        mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
                        break;
                    }
                    memcpy(bigger, stack, depth * sizeof *stack);
                    if (stack != small) free(stack);
                    stack = bigger;
                    cap *= 2;
                }
                stack[depth].left = n->type == MPK_MAP ? 2 * (uint64_t)n->len : n->len;
                stack[depth].is_map = n->type == MPK_MAP;
                depth++;
                n++;
                continue;
            }
            if (n->type == MPK_MAP) OUT(w, "}");
            else if (n->type == MPK_ARRAY) OUT(w, "]");
            n++;
        }
        /* this value is done: separators and closing brackets */
        while (depth) {
            oframe *f = &stack[depth - 1];
            f->left--;
            if (f->left) {
                if (f->is_map && (f->left & 1)) OUT(w, ":");
                else OUT(w, ",");
                break;
            }
            if (f->is_map) OUT(w, "}"); else OUT(w, "]");
            depth--;
        }
    }
    if (stack != small) free(stack);
}
