/* mpk — the command-line tool: MessagePack to JSON and back, a typed dump, validation, statistics.
 * Built on libmpk's stream (every input is read in 64 KiB chunks and taken one top-level value at a
 * time, so memory follows the largest value, not the input). See c/README.md, "The mpk tool", for
 * the JSON notation and the exit codes. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpk.h"

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <unistd.h>
#define HAVE_ISATTY 1
#define HAVE_PTHREAD 1
#endif

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_IO = 3 };
enum { ENC_RAW, ENC_HEX, ENC_BASE64 };
enum { CMD_TO_JSON, CMD_FROM_JSON, CMD_DUMP, CMD_VALIDATE, CMD_STATS };
#define MAX_DEPTH_CAP 10000u /* the JSON writer and reader recurse: this bounds the C stack */

static const char *const usage_text =
    "usage: mpk COMMAND [OPTIONS] [FILE...]\n"
    "\n"
    "Reads each FILE (or stdin when there is none, or for '-') as a stream of MessagePack values\n"
    "(from-json: of JSON texts) and writes to stdout.\n"
    "\n"
    "commands:\n"
    "  to-json     every value as JSON in mpk's lossless notation (JSON Lines by default)\n"
    "                --pretty       indented, one document after another\n"
    "                --array        all values as one JSON array\n"
    "                --plain        for people: timestamps as RFC 3339 strings, bin as strings\n"
    "                               (--bin=base64|hex), ext as {\"ext\":T,\"data\":...}, NaN and\n"
    "                               infinities as null, other keys as their JSON text (lossy)\n"
    "  from-json   JSON, JSON Lines or concatenated JSON texts to MessagePack, shortest forms;\n"
    "              reads the lossless notation back\n"
    "                --float32      numbers with a fraction or exponent as float 32\n"
    "                --array        the input is one JSON array whose elements are the values\n"
    "                --hex, --base64  write the output as text instead of raw bytes\n"
    "  dump        one line per token: offset, head byte, format, lengths, payload excerpt, value;\n"
    "              nesting by indentation\n"
    "                --json         one JSON object per token instead\n"
    "                --depth N      show tokens down to depth N only (top level is 0)\n"
    "                --max-bytes N  payload excerpt of at most N bytes (default 16)\n"
    "  validate    exit 0 if the input is well-formed, else 1 with the first error's kind, offset\n"
    "              and a hex excerpt on stderr\n"
    "                --one          exactly one value\n"
    "  stats       counts and bytes by type and by depth, the largest values and their offsets\n"
    "\n"
    "input (all commands but from-json): raw bytes, or --hex / --base64 text (whitespace ignored)\n"
    "limits (all reading commands): --max-depth N (default 1024, at most 10000), --max-len N (every\n"
    "  length and count), --max-str/--max-bin/--max-ext/--max-array/--max-map N, --strict-utf8\n"
    "\n"
    "  -h, --help     this text      -V, --version   the version\n"
    "\n"
    "A progress line goes to stderr every 256 MiB of input when stderr is a terminal.\n"
    "exit status: 0 success; 1 invalid input (MessagePack or JSON), reported on stderr as\n"
    "'mpk: KIND at byte N' (JSON: 'at line L, column C'); 2 usage error; 3 I/O error.\n";

/* ================================================================================================
 * Options
 * ==============================================================================================*/

typedef struct opts {
    int cmd;
    int pretty, array, plain, bin_hex, float32, json, one;
    int in_enc, out_enc;
    unsigned long depth_show;
    size_t max_bytes;
    mpk_limits limits;
    unsigned flags;
    char **files;
    int nfiles;
} opts;

static const char *cmd_name = "mpk";

static int usage_error(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "mpk: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'mpk --help'.\n");
    return EXIT_USAGE;
}

static int parse_count(const char *s, unsigned long long max, unsigned long long *out) {
    char *end;
    if (!s || !*s || *s == '-') return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return 0;
    *out = v;
    return 1;
}

/* ================================================================================================
 * Output: a buffer in front of stdout
 * ==============================================================================================*/

static char obuf[1 << 16];
static size_t olen;
static int out_failed;

static void oflush(void) {
    if (olen && !out_failed && fwrite(obuf, 1, olen, stdout) != olen) out_failed = 1;
    olen = 0;
}
static void oput(const void *p, size_t n) {
    const char *c = (const char *)p;
    while (n) {
        if (olen == sizeof obuf) oflush();
        size_t k = sizeof obuf - olen < n ? sizeof obuf - olen : n;
        memcpy(obuf + olen, c, k);
        olen += k;
        c += k;
        n -= k;
    }
}
static void oc(char c) {
    if (olen == sizeof obuf) oflush();
    obuf[olen++] = c;
}
static void os(const char *s) { oput(s, strlen(s)); }
static void of(const char *fmt, ...) {
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n > 0) oput(b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

static const char hexd[] = "0123456789abcdef";
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void ohex(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        oc(hexd[p[i] >> 4]);
        oc(hexd[p[i] & 15]);
    }
}

static void ob64(const uint8_t *p, size_t n) {
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        oc(b64[v >> 18]); oc(b64[(v >> 12) & 63]); oc(b64[(v >> 6) & 63]); oc(b64[v & 63]);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        oc(b64[v >> 18]); oc(b64[(v >> 12) & 63]); os("==");
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        oc(b64[v >> 18]); oc(b64[(v >> 12) & 63]); oc(b64[(v >> 6) & 63]); oc('=');
    }
}

/* A JSON string of bytes that are valid UTF-8 (or, with lossy, any bytes: each invalid byte
 * becomes U+FFFD). */
static void ostr(const uint8_t *p, size_t n) {
    oc('"');
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') { oc('\\'); oc((char)c); i++; }
        else if (c < 0x20) {
            switch (c) {
            case '\n': os("\\n"); break;
            case '\r': os("\\r"); break;
            case '\t': os("\\t"); break;
            case '\b': os("\\b"); break;
            case '\f': os("\\f"); break;
            default: of("\\u%04x", c);
            }
            i++;
        } else if (c < 0x80) { oc((char)c); i++; }
        else {
            size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if (k <= n - i && c >= 0xc2 && mpk_utf8_valid(p + i, k)) {
                oput(p + i, k);
                i += k;
            } else {
                os("\xef\xbf\xbd"); /* U+FFFD: only reached in --plain (lossless mode tags the str) */
                i++;
            }
        }
    }
    oc('"');
}

/* The shortest decimal that reads back as the same double (or, for float32, whose double read
 * back converts to the same float); always with a '.' or an exponent, so it reads as a float. */
static void fmt_float(char *b, size_t size, double v, int is32) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(b, size, "%.*g", prec, v);
        double back = strtod(b, NULL);
        if (is32 ? (float)back == (float)v : back == v) break;
    }
    if (!strpbrk(b, ".eEn")) strncat(b, ".0", size - strlen(b) - 1);
}

/* RFC 3339 for sec/nsec when the year is 0000..9999; 0 otherwise. */
static int fmt_rfc3339(char *b, size_t size, int64_t sec, uint32_t nsec) {
    if (sec < -62167219200ll || sec > 253402300799ll) return 0;
    int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
    int64_t rem = sec - days * 86400;
    /* civil from days (Howard Hinnant's public-domain algorithm, re-derived) */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2) y++;
    int n = snprintf(b, size, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, (int)m, (int)d, (int)(rem / 3600),
                     (int)(rem / 60 % 60), (int)(rem % 60));
    if (nsec) {
        char f[16];
        snprintf(f, sizeof f, ".%09u", (unsigned)nsec);
        size_t fl = strlen(f);
        while (fl > 2 && f[fl - 1] == '0') f[--fl] = 0;
        n += snprintf(b + n, size - (size_t)n, "%s", f);
    }
    snprintf(b + n, size - (size_t)n, "Z");
    return 1;
}

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Reads "YYYY-MM-DDTHH:MM:SS[.fraction]Z" (up to 9 fraction digits); 1 on success. */
static int parse_rfc3339(const char *s, size_t n, int64_t *sec, uint32_t *nsec) {
    int y, mo, d, h, mi, se, used = 0;
    char buf[64];
    if (n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &used) != 6 || used != 19) return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59 || y < 0) return 0;
    const char *p = buf + 19;
    uint32_t ns = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits >= 9) return 0;
            ns = ns * 10 + (uint32_t)(*p - '0');
        }
        if (!digits) return 0;
        for (; digits < 9; digits++) ns *= 10;
    }
    if (strcmp(p, "Z") != 0) return 0;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap)) return 0;
    *sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    *nsec = ns;
    return 1;
}

/* ================================================================================================
 * Input: files or stdin, raw or --hex / --base64, in chunks
 * ==============================================================================================*/

typedef struct input {
    FILE *f;
    const char *name;
    int enc;
    int eof;
    uint64_t text_off; /* for --hex/--base64: bytes of text read */
    int hex_hi;        /* hex: pending high nibble or -1 */
    uint32_t b64_acc;  /* base64: pending bits */
    int b64_n, b64_pad;
    uint8_t raw[1 << 16];
    int err;           /* 1 bad text, 2 read error */
    char errmsg[128];
} input;

static int b64val(int c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

static int in_open(input *in, const char *path, int enc) {
    memset(in, 0, sizeof *in);
    in->enc = enc;
    in->hex_hi = -1;
    if (!path || strcmp(path, "-") == 0) {
        in->f = stdin;
        in->name = "<stdin>";
    } else {
        in->f = fopen(path, "rb");
        in->name = path;
        if (!in->f) {
            fprintf(stderr, "mpk: %s: %s\n", path, strerror(errno));
            return 0;
        }
    }
    return 1;
}

static void in_close(input *in) {
    if (in->f && in->f != stdin) fclose(in->f);
    in->f = NULL;
}

/* Up to cap decoded bytes into out; 0 at the end (or on an error: see in->err). */
static size_t in_read(input *in, uint8_t *out, size_t cap) {
    if (in->eof || in->err) return 0;
    if (in->enc == ENC_RAW) {
        size_t n = fread(out, 1, cap, in->f);
        if (n == 0) {
            if (ferror(in->f)) in->err = 2;
            in->eof = 1;
        }
        return n;
    }
    size_t made = 0;
    while (made == 0) {
        size_t want = in->enc == ENC_HEX ? cap * 2 : cap / 3 * 4;
        if (want > sizeof in->raw) want = sizeof in->raw;
        if (want < 4) want = 4;
        size_t n = fread(in->raw, 1, want, in->f);
        if (n == 0) {
            if (ferror(in->f)) in->err = 2;
            in->eof = 1;
            if (in->enc == ENC_HEX && in->hex_hi >= 0) {
                in->err = 1;
                snprintf(in->errmsg, sizeof in->errmsg, "an odd number of hex digits");
            } else if (in->enc == ENC_BASE64 && in->b64_n == 1) {
                in->err = 1;
                snprintf(in->errmsg, sizeof in->errmsg, "base64 ends with a lone character");
            } else if (in->enc == ENC_BASE64 && in->b64_n > 1 && !in->b64_pad) {
                /* an unpadded tail of 2 or 3 characters holds 1 or 2 bytes */
                if (in->b64_n == 2) out[made++] = (uint8_t)(in->b64_acc >> 4);
                else {
                    out[made++] = (uint8_t)(in->b64_acc >> 10);
                    out[made++] = (uint8_t)(in->b64_acc >> 2);
                }
                in->b64_n = 0;
            }
            return made;
        }
        for (size_t i = 0; i < n; i++, in->text_off++) {
            int c = in->raw[i];
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
            if (in->enc == ENC_HEX && (c == '-' || c == ':') && in->hex_hi < 0) continue; /* "00-ff" */
            if (in->enc == ENC_HEX) {
                int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (v < 0) {
                    in->err = 1;
                    snprintf(in->errmsg, sizeof in->errmsg, "'%c' is not a hex digit (text byte %llu)",
                             c >= 0x20 && c < 0x7f ? c : '?', (unsigned long long)in->text_off);
                    return made;
                }
                if (in->hex_hi < 0) in->hex_hi = v;
                else {
                    out[made++] = (uint8_t)(in->hex_hi << 4 | v);
                    in->hex_hi = -1;
                }
            } else {
                if (c == '=') {
                    if (in->b64_n < 2) goto bad64;
                    if (!in->b64_pad) {
                        int bits = in->b64_n * 6;
                        if (bits >= 16) out[made++] = (uint8_t)(in->b64_acc >> (bits - 8));
                        if (bits >= 24) out[made++] = (uint8_t)(in->b64_acc >> (bits - 16));
                        if (bits == 12) out[made++] = (uint8_t)(in->b64_acc >> 4);
                        else if (bits == 18) out[made++] = (uint8_t)(in->b64_acc >> 2);
                    }
                    in->b64_pad = 1;
                    if (++in->b64_n == 4) in->b64_n = 0, in->b64_acc = 0, in->b64_pad = 0;
                    continue;
                }
                int v = b64val(c);
                if (v < 0 || in->b64_pad) goto bad64;
                in->b64_acc = in->b64_acc << 6 | (uint32_t)v;
                if (++in->b64_n == 4) {
                    out[made++] = (uint8_t)(in->b64_acc >> 16);
                    out[made++] = (uint8_t)(in->b64_acc >> 8);
                    out[made++] = (uint8_t)in->b64_acc;
                    in->b64_n = 0;
                    in->b64_acc = 0;
                }
                continue;
            bad64:
                in->err = 1;
                snprintf(in->errmsg, sizeof in->errmsg, "'%c' is not base64 here (text byte %llu)",
                         c >= 0x20 && c < 0x7f ? c : '?', (unsigned long long)in->text_off);
                return made;
            }
        }
    }
    return made;
}

/* ================================================================================================
 * MessagePack → JSON (lossless notation, or --plain)
 * ==============================================================================================*/

static const opts *O;
static int plain_scalars; /* dump's text lines: timestamps and floats as people read them */

static void nl_indent(int depth) {
    if (!O->pretty) return;
    oc('\n');
    for (int i = 0; i < depth; i++) os("  ");
}

/* The tags of the notation: a one-key object with one of these keys is that tag. */
static const char *const tags[] = {"$bin", "$ext", "$ts", "$f32", "$f64", "$strhex", "$map"};

static int is_tag_name(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strlen(tags[i]) == n && memcmp(tags[i], p, n) == 0) return 1;
    return 0;
}

static void emit(const mpk_node *n, int depth);

static void emit_float(double v, int is32) {
    char b[64];
    if (v != v || isinf(v)) {
        if (plain_scalars) { os(v != v ? "NaN" : v > 0 ? "Infinity" : "-Infinity"); return; }
        if (O->plain) { os("null"); return; }
        os(is32 ? "{\"$f32\":" : "{\"$f64\":");
        if (isinf(v)) os(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        else {
            uint64_t bits;
            int canonical;
            if (is32) {
                float f = (float)v;
                uint32_t b32;
                memcpy(&b32, &f, 4);
                bits = b32;
                canonical = b32 == 0x7fc00000u;
            } else {
                memcpy(&bits, &v, 8);
                canonical = bits == 0x7ff8000000000000ull;
            }
            if (canonical) os("\"NaN\"");
            else of(is32 ? "\"NaN:%08llx\"" : "\"NaN:%016llx\"", (unsigned long long)bits);
        }
        oc('}');
        return;
    }
    fmt_float(b, sizeof b, v, is32);
    if (is32 && !O->plain && !plain_scalars) {
        os("{\"$f32\":");
        os(b);
        oc('}');
    } else {
        os(b);
    }
}

static void emit_ts(int64_t sec, uint32_t nsec) {
    char b[64];
    int ok = fmt_rfc3339(b, sizeof b, sec, nsec);
    if (plain_scalars) {
        if (ok) os(b);
        else of("sec %lld nsec %u", (long long)sec, (unsigned)nsec);
        return;
    }
    if (O->plain) {
        if (ok) { oc('"'); os(b); oc('"'); }
        else of("{\"sec\":%lld,\"nsec\":%u}", (long long)sec, (unsigned)nsec);
        return;
    }
    if (ok) of("{\"$ts\":\"%s\"}", b);
    else of("{\"$ts\":[%lld,%u]}", (long long)sec, (unsigned)nsec);
}

static void emit_bytes_plain(const uint8_t *p, size_t n) {
    oc('"');
    if (O->bin_hex) ohex(p, n); else ob64(p, n);
    oc('"');
}

/* Whether a map goes out as a JSON object: every key a valid UTF-8 str, and not a one-key map
 * whose key is a tag name (that would read back as the tag). */
static int plain_object(const mpk_node *m) {
    const mpk_node *k = mpk_node_first(m);
    for (uint32_t i = 0; i < m->len; i++) {
        if (k->type != MPK_STR || !mpk_utf8_valid(k->v.data, k->len)) return 0;
        if (m->len == 1 && is_tag_name(k->v.data, k->len)) return 0;
        k = mpk_node_next(mpk_node_next(k));
    }
    return 1;
}

/* --plain: a key that is not a str becomes its JSON text (as a string). */
static void emit_plain_key(const mpk_node *k) {
    if (k->type == MPK_STR) { ostr(k->v.data, k->len); return; }
    /* render into the buffer, then quote what was written */
    oflush();
    size_t start = olen;
    emit(k, 0);
    size_t end = olen;
    char tmp[256];
    size_t len = end - start < sizeof tmp ? end - start : sizeof tmp - 1;
    memcpy(tmp, obuf + start, len);
    olen = start;
    if (len >= 2 && tmp[0] == '"' && tmp[len - 1] == '"') oput(tmp, len); /* already a string */
    else ostr((const uint8_t *)tmp, len);
}

static void emit(const mpk_node *n, int depth) {
    switch ((mpk_type)n->type) {
    case MPK_NIL: os("null"); return;
    case MPK_BOOL: os(n->v.b ? "true" : "false"); return;
    case MPK_UINT: of("%llu", (unsigned long long)n->v.u); return;
    case MPK_INT: of("%lld", (long long)n->v.i); return;
    case MPK_FLOAT32: emit_float(n->v.f32, 1); return;
    case MPK_FLOAT64: emit_float(n->v.f64, 0); return;
    case MPK_STR:
        if (O->plain || mpk_utf8_valid(n->v.data, n->len)) ostr(n->v.data, n->len);
        else { os("{\"$strhex\":\""); ohex(n->v.data, n->len); os("\"}"); }
        return;
    case MPK_BIN:
        if (O->plain) emit_bytes_plain(n->v.data, n->len);
        else { os("{\"$bin\":\""); ob64(n->v.data, n->len); os("\"}"); }
        return;
    case MPK_EXT:
        if (O->plain) { of("{\"ext\":%d,\"data\":", n->ext_type); emit_bytes_plain(n->v.data, n->len); oc('}'); }
        else { of("{\"$ext\":[%d,\"", n->ext_type); ob64(n->v.data, n->len); os("\"]}"); }
        return;
    case MPK_TIMESTAMP: {
        mpk_timestamp t = mpk_node_timestamp(n);
        emit_ts(t.sec, t.nsec);
        return;
    }
    case MPK_ARRAY: {
        oc('[');
        const mpk_node *e = mpk_node_first(n);
        for (uint32_t i = 0; i < n->len; i++, e = mpk_node_next(e)) {
            if (i) oc(',');
            nl_indent(depth + 1);
            emit(e, depth + 1);
        }
        if (n->len) nl_indent(depth);
        oc(']');
        return;
    }
    case MPK_MAP: {
        int object = O->plain || plain_object(n);
        os(object ? "{" : "{\"$map\":[");
        const mpk_node *k = mpk_node_first(n);
        for (uint32_t i = 0; i < n->len; i++) {
            const mpk_node *v = mpk_node_next(k);
            if (i) oc(',');
            nl_indent(depth + 1);
            if (object) {
                if (O->plain) emit_plain_key(k); else ostr(k->v.data, k->len);
                os(O->pretty ? ": " : ":");
                emit(v, depth + 1);
            } else {
                oc('[');
                emit(k, depth + 1);
                oc(',');
                if (O->pretty) oc(' ');
                emit(v, depth + 1);
                oc(']');
            }
            k = mpk_node_next(v);
        }
        if (n->len) nl_indent(depth);
        os(object ? "}" : "]}");
        return;
    }
    }
}

/* ================================================================================================
 * Reading MessagePack input through the stream
 * ==============================================================================================*/

typedef struct reader_ctx {
    input in;
    mpk_stream s;
    uint8_t chunk[1 << 16];
    uint8_t prev[1 << 16]; /* the chunk before, for error excerpts */
    size_t chunk_len, prev_len;
    uint64_t chunk_base, prev_base;
    uint64_t values, bytes;
    const uint8_t *whole;  /* validate --one: the whole input */
    size_t whole_len;
} reader_ctx;

static void print_excerpt(reader_ctx *rc, uint64_t at) {
    /* the bytes around `at` that are still in memory (this chunk and the one before) */
    uint8_t b[32];
    uint64_t from = at >= 8 ? at - 8 : 0;
    size_t n = 0;
    for (uint64_t o = from; o < at + 16 && n < sizeof b; o++) {
        if (rc->whole) {
            if (o < rc->whole_len) b[n++] = rc->whole[o];
            else break;
        } else if (o >= rc->chunk_base && o < rc->chunk_base + rc->chunk_len) b[n++] = rc->chunk[o - rc->chunk_base];
        else if (o >= rc->prev_base && o < rc->prev_base + rc->prev_len) b[n++] = rc->prev[o - rc->prev_base];
        else if (n == 0) from = o + 1;
        else break;
    }
    if (n == 0) return;
    fprintf(stderr, "  %llu:", (unsigned long long)from);
    for (size_t i = 0; i < n; i++) fprintf(stderr, from + i == at ? " [%02x]" : " %02x", b[i]);
    if (at >= from + n) fprintf(stderr, " [end]");
    fprintf(stderr, "\n");
}

static int report(reader_ctx *rc, mpk_error e, int excerpt) {
    oflush();
    fflush(stdout);
    if (rc->in.name && strcmp(rc->in.name, "<stdin>") != 0)
        fprintf(stderr, "mpk: %s: %s at byte %llu\n", rc->in.name, mpk_error_name(e.kind), (unsigned long long)e.offset);
    else
        fprintf(stderr, "mpk: %s at byte %llu\n", mpk_error_name(e.kind), (unsigned long long)e.offset);
    if (excerpt) print_excerpt(rc, e.offset);
    return e.kind == MPK_ERR_NO_MEMORY ? EXIT_IO : EXIT_INVALID;
}

static int input_failed(reader_ctx *rc) {
    if (rc->in.err == 1) {
        fprintf(stderr, "mpk: %s: %s\n", rc->in.name, rc->in.errmsg);
        return EXIT_INVALID;
    }
    fprintf(stderr, "mpk: %s: read error\n", rc->in.name);
    return EXIT_IO;
}

/* A progress line on stderr when it is a terminal: every 256 MiB of input (MPK_PROGRESS_EVERY, in
 * bytes, changes the step), the bytes read and the values so far; erased at the end. */
static uint64_t progress_every, progress_next;
static int progress_shown;

static void progress_init(void) {
#ifdef HAVE_ISATTY
    if (!isatty(2)) return;
    const char *env = getenv("MPK_PROGRESS_EVERY");
    unsigned long long v = 0;
    progress_every = env && parse_count(env, ~0ull, &v) && v ? v : (uint64_t)256 << 20;
    progress_next = progress_every;
#endif
}

static void progress(uint64_t read, uint64_t values) {
    if (!progress_every || read < progress_next) return;
    while (progress_next <= read) progress_next += progress_every;
    fprintf(stderr, "\rmpk: %.2f MiB read, %llu values", (double)read / (1 << 20), (unsigned long long)values);
    fflush(stderr);
    progress_shown = 1;
}

static void progress_done(void) {
    if (progress_shown) fprintf(stderr, "\r\033[K");
    progress_shown = 0;
}

/* Calls fn(ctx, value, len, offset) for every top-level value of the input; returns an exit code. */
typedef int (*value_fn)(void *ctx, reader_ctx *rc, const uint8_t *v, size_t len, uint64_t off);

static int each_value(reader_ctx *rc, const char *path, value_fn fn, void *ctx, int excerpt) {
    if (!in_open(&rc->in, path, O->in_enc)) return EXIT_IO;
    mpk_stream_init(&rc->s);
    mpk_stream_set_limits(&rc->s, &O->limits);
    mpk_stream_set_flags(&rc->s, O->flags);
    rc->chunk_len = rc->prev_len = 0;
    rc->chunk_base = rc->prev_base = 0;
    int status = EXIT_OK;
    uint64_t off = 0;
    for (;;) {
        if (rc->chunk_len) {
            memcpy(rc->prev, rc->chunk, rc->chunk_len);
            rc->prev_len = rc->chunk_len;
            rc->prev_base = rc->chunk_base;
            rc->chunk_base += rc->chunk_len;
        }
        rc->chunk_len = in_read(&rc->in, rc->chunk, sizeof rc->chunk);
        if (rc->chunk_len == 0) break;
        mpk_stream_feed(&rc->s, rc->chunk, rc->chunk_len);
        const uint8_t *v;
        size_t len;
        int r;
        while ((r = mpk_stream_next(&rc->s, &v, &len)) == 1) {
            status = fn(ctx, rc, v, len, off);
            off += len;
            rc->values++;
            rc->bytes += len;
            if (status != EXIT_OK) goto done;
        }
        if (r < 0) {
            progress_done();
            status = report(rc, mpk_stream_error(&rc->s), excerpt);
            goto done;
        }
        progress(rc->chunk_base + rc->chunk_len, rc->values);
    }
    progress_done();
    if (rc->in.err) {
        status = input_failed(rc);
        goto done;
    }
    if (mpk_stream_end(&rc->s).kind != MPK_OK) status = report(rc, mpk_stream_error(&rc->s), excerpt);
done:
    mpk_stream_destroy(&rc->s);
    in_close(&rc->in);
    return status;
}

/* ---- to-json ---- */

typedef struct tojson_ctx {
    mpk_doc doc;
    uint64_t written;
} tojson_ctx;

static int tojson_value(void *vctx, reader_ctx *rc, const uint8_t *v, size_t len, uint64_t off) {
    tojson_ctx *c = (tojson_ctx *)vctx;
    const mpk_node *root = mpk_doc_parse(&c->doc, v, len);
    if (!root) {
        mpk_error e = mpk_doc_error(&c->doc);
        e.offset += (size_t)off;
        return report(rc, e, 0);
    }
    if (O->array) {
        if (c->written) oc(',');
        nl_indent(1);
        emit(root, O->pretty ? 1 : 0);
    } else {
        emit(root, 0);
        oc('\n');
    }
    c->written++;
    return out_failed ? EXIT_IO : EXIT_OK;
}

/* ---- validate ---- */

static int validate_value(void *vctx, reader_ctx *rc, const uint8_t *v, size_t len, uint64_t off) {
    (void)vctx; (void)rc; (void)v; (void)len; (void)off;
    return EXIT_OK;
}

/* validate --one: the whole input, judged as one-shot decoders judge it (spec/README.md): exactly
 * one value, then trailing_bytes; truncation at the offsets of the one-shot rules. */
static int validate_one(reader_ctx *rc, const char *path) {
    if (!in_open(&rc->in, path, O->in_enc)) return EXIT_IO;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    int status = EXIT_OK;
    for (;;) {
        if (cap - len < sizeof rc->chunk) {
            size_t ncap = cap ? cap * 2 : sizeof rc->chunk;
            uint8_t *nb = (uint8_t *)realloc(buf, ncap);
            if (!nb) {
                fprintf(stderr, "mpk: out of memory\n");
                status = EXIT_IO;
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        size_t n = in_read(&rc->in, buf + len, cap - len);
        if (n == 0) break;
        len += n;
    }
    if (rc->in.err) {
        status = input_failed(rc);
        goto done;
    }
    mpk_reader r;
    mpk_reader_init(&r, buf, len);
    mpk_reader_set_limits(&r, &O->limits);
    mpk_reader_set_flags(&r, O->flags);
    if (mpk_reader_skip(&r)) mpk_reader_finish(&r);
    mpk_error e = mpk_reader_error(&r);
    mpk_reader_destroy(&r);
    rc->whole = buf;
    rc->whole_len = len;
    if (e.kind != MPK_OK) status = report(rc, e, 1);
    else rc->values = 1;
    rc->whole = NULL;
done:
    free(buf);
    in_close(&rc->in);
    return status;
}

/* ---- dump ---- */

static const char *format_name(uint8_t b) {
    if (b <= 0x7f) return "positive fixint";
    if (b <= 0x8f) return "fixmap";
    if (b <= 0x9f) return "fixarray";
    if (b <= 0xbf) return "fixstr";
    if (b >= 0xe0) return "negative fixint";
    static const char *const names[32] = {
        "nil", "(never used)", "false", "true", "bin8", "bin16", "bin32", "ext8", "ext16", "ext32",
        "float32", "float64", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
        "fixext1", "fixext2", "fixext4", "fixext8", "fixext16", "str8", "str16", "str32", "array16",
        "array32", "map16", "map32"};
    return names[b - 0xc0];
}

static unsigned head_size(uint8_t b) {
    static const uint8_t sizes[64] = {
        1, 1, 1, 1, 2, 3, 5, 3, 4, 6, 5, 9, 2, 3, 5, 9, 2, 3, 5, 9, 2, 2, 2, 2, 2, 2, 3, 5, 3, 5, 3, 5,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    return b < 0xc0 ? 1u : sizes[b - 0xc0];
}

static void emit_scalar_tag(const mpk_tag *t) {
    switch (t->type) {
    case MPK_NIL: os("null"); break;
    case MPK_BOOL: os(t->v.b ? "true" : "false"); break;
    case MPK_UINT: of("%llu", (unsigned long long)t->v.u); break;
    case MPK_INT: of("%lld", (long long)t->v.i); break;
    case MPK_FLOAT32: emit_float(t->v.f32, 1); break;
    case MPK_FLOAT64: emit_float(t->v.f64, 0); break;
    case MPK_TIMESTAMP: emit_ts(t->v.ts.sec, t->v.ts.nsec); break;
    case MPK_STR:
        if (mpk_utf8_valid(t->data, t->len)) ostr(t->data, t->len);
        else { os("{\"$strhex\":\""); ohex(t->data, t->len); os("\"}"); }
        break;
    default: break;
    }
}

static int dump_value(void *vctx, reader_ctx *rc, const uint8_t *v, size_t len, uint64_t off) {
    (void)vctx;
    mpk_reader r;
    mpk_reader_init(&r, v, len);
    mpk_reader_set_limits(&r, &O->limits);
    mpk_reader_set_flags(&r, O->flags);
    mpk_tag t;
    int status = EXIT_OK;
    do {
        uint32_t depth = mpk_reader_depth(&r);
        size_t at = mpk_reader_offset(&r);
        if (!mpk_reader_next(&r, &t)) {
            mpk_error e = mpk_reader_error(&r);
            e.offset += (size_t)off;
            status = report(rc, e, 0);
            break;
        }
        if (depth > O->depth_show) continue;
        uint8_t b = v[at];
        unsigned hs = head_size(b);
        const char *fmt = format_name(b);
        int has_payload = t.type == MPK_STR || t.type == MPK_BIN || t.type == MPK_EXT ||
                          t.type == MPK_TIMESTAMP;
        uint32_t plen = 0;
        const uint8_t *pdata = NULL;
        if (t.type == MPK_TIMESTAMP) {
            pdata = v + at + hs;
            plen = (uint32_t)(b == 0xd6 ? 4 : b == 0xd7 ? 8 : v[at + 1] == 12 ? 12 : b == 0xc7 ? v[at + 1] : 0);
            if (b == 0xc8) plen = mpk__load16(v + at + 1);
            if (b == 0xc9) plen = mpk__load32(v + at + 1);
        } else if (has_payload) {
            pdata = t.data;
            plen = t.len;
        }
        size_t ex = plen < O->max_bytes ? plen : O->max_bytes;
        if (O->json) {
            of("{\"offset\":%llu,\"depth\":%u,\"head\":\"%02x\",\"format\":\"%s\",\"type\":\"%s\",\"head_bytes\":%u",
               (unsigned long long)(off + at), (unsigned)depth, b, fmt, mpk_type_name(t.type), hs);
            if (t.type == MPK_ARRAY || t.type == MPK_MAP) of(",\"count\":%u", (unsigned)t.len);
            if (t.type == MPK_EXT) of(",\"ext_type\":%d", t.ext_type);
            if (has_payload) {
                of(",\"length\":%u,\"hex\":\"", (unsigned)plen);
                ohex(pdata, ex);
                oc('"');
                if (ex < plen) os(",\"cut\":true");
            }
            if (t.type != MPK_ARRAY && t.type != MPK_MAP && t.type != MPK_BIN && t.type != MPK_EXT) {
                os(",\"value\":");
                emit_scalar_tag(&t);
            }
            os("}\n");
        } else {
            of("%10llu  %02x  ", (unsigned long long)(off + at), b);
            for (uint32_t i = 0; i < depth; i++) os("  ");
            os(fmt);
            switch (t.type) {
            case MPK_ARRAY: of("  %u element%s", (unsigned)t.len, t.len == 1 ? "" : "s"); break;
            case MPK_MAP: of("  %u pair%s", (unsigned)t.len, t.len == 1 ? "" : "s"); break;
            case MPK_EXT: of("  type %d  len %u  ", t.ext_type, (unsigned)plen); break;
            case MPK_TIMESTAMP: of("  type -1  len %u  ", (unsigned)plen); break;
            case MPK_STR: case MPK_BIN: of("  len %u  ", (unsigned)plen); break;
            default: os("  "); break;
            }
            if (has_payload) {
                ohex(pdata, ex);
                if (ex < plen) os("…");
                if (t.type != MPK_BIN && t.type != MPK_EXT) os("  ");
            }
            if (t.type == MPK_STR && t.len > O->max_bytes * 4) {
                /* a long str: its first bytes only */
                mpk_tag cut = t;
                cut.len = (uint32_t)(O->max_bytes * 4);
                while (cut.len && !mpk_utf8_valid(cut.data, cut.len)) cut.len--;
                emit_scalar_tag(&cut);
                os("…");
            } else if (t.type != MPK_ARRAY && t.type != MPK_MAP && t.type != MPK_BIN && t.type != MPK_EXT) {
                plain_scalars = t.type != MPK_STR;
                emit_scalar_tag(&t);
                plain_scalars = 0;
            }
            oc('\n');
        }
    } while (mpk_reader_depth(&r) > 0);
    mpk_reader_destroy(&r);
    return status != EXIT_OK ? status : out_failed ? EXIT_IO : EXIT_OK;
}

/* ---- stats ---- */

#define TOP 5
typedef struct big {
    uint64_t size, off;
    int type;
} big;

typedef struct stats_ctx {
    uint64_t count[12], bytes[12];
    uint64_t depth_count[64];
    uint32_t max_depth;
    big largest[TOP];  /* str/bin/ext/timestamp by payload, containers by count */
    big widest[TOP];
    uint64_t max_value, max_value_off;
} stats_ctx;

static void keep_top(big *list, uint64_t size, uint64_t off, int type) {
    if (size <= list[TOP - 1].size) return;
    int i = TOP - 1;
    while (i > 0 && list[i - 1].size < size) {
        list[i] = list[i - 1];
        i--;
    }
    list[i].size = size;
    list[i].off = off;
    list[i].type = type;
}

static int stats_value(void *vctx, reader_ctx *rc, const uint8_t *v, size_t len, uint64_t off) {
    stats_ctx *c = (stats_ctx *)vctx;
    if (len > c->max_value) { c->max_value = len; c->max_value_off = off; }
    mpk_reader r;
    mpk_reader_init(&r, v, len);
    mpk_reader_set_limits(&r, &O->limits);
    mpk_reader_set_flags(&r, O->flags);
    mpk_tag t;
    int status = EXIT_OK;
    do {
        uint32_t depth = mpk_reader_depth(&r);
        size_t at = mpk_reader_offset(&r);
        if (!mpk_reader_next(&r, &t)) {
            mpk_error e = mpk_reader_error(&r);
            e.offset += (size_t)off;
            status = report(rc, e, 0);
            break;
        }
        size_t used = mpk_reader_offset(&r) - at;
        if (t.type == MPK_ARRAY || t.type == MPK_MAP) {
            used = head_size(v[at]);
            keep_top(c->widest, t.len, off + at, t.type);
        } else if (t.type == MPK_STR || t.type == MPK_BIN || t.type == MPK_EXT) {
            keep_top(c->largest, t.len, off + at, t.type);
        }
        c->count[t.type]++;
        c->bytes[t.type] += used;
        c->depth_count[depth < 63 ? depth : 63]++;
        if (depth > c->max_depth) c->max_depth = depth;
    } while (mpk_reader_depth(&r) > 0);
    mpk_reader_destroy(&r);
    return status;
}

static void stats_print(stats_ctx *c, reader_ctx *rc) {
    of("values  %llu\nbytes   %llu\n", (unsigned long long)rc->values, (unsigned long long)rc->bytes);
    if (rc->values)
        of("largest value  %llu bytes at byte %llu\n", (unsigned long long)c->max_value,
           (unsigned long long)c->max_value_off);
    os("\nby type (tokens, bytes: heads and payloads; a container counts its head only)\n");
    for (int i = 0; i < 12; i++)
        if (c->count[i])
            of("  %-10s %12llu %14llu\n", mpk_type_name((mpk_type)i), (unsigned long long)c->count[i],
               (unsigned long long)c->bytes[i]);
    os("\nby depth (tokens; depth 0 is the top level)\n");
    for (uint32_t d = 0; d <= c->max_depth && d < 64; d++)
        of("  %s%-8u %12llu\n", d == 63 ? ">=" : "", (unsigned)d, (unsigned long long)c->depth_count[d]);
    if (c->largest[0].size) {
        os("\nlargest str/bin/ext payloads\n");
        for (int i = 0; i < TOP && c->largest[i].size; i++)
            of("  %-10s %12llu bytes  at byte %llu\n", mpk_type_name((mpk_type)c->largest[i].type),
               (unsigned long long)c->largest[i].size, (unsigned long long)c->largest[i].off);
    }
    if (c->widest[0].size) {
        os("\nlargest arrays/maps\n");
        for (int i = 0; i < TOP && c->widest[i].size; i++)
            of("  %-10s %12llu %s  at byte %llu\n", mpk_type_name((mpk_type)c->widest[i].type),
               (unsigned long long)c->widest[i].size, c->widest[i].type == MPK_MAP ? "pairs" : "elements",
               (unsigned long long)c->widest[i].off);
    }
}

/* ================================================================================================
 * JSON → MessagePack
 * ==============================================================================================*/

typedef struct fj {
    mpk_writer w;
    mpk_doc doc;
    char *buf;          /* text not yet converted */
    size_t len, cap;
    uint64_t base;      /* input offset of buf[0] */
    uint64_t line;      /* line of buf[0] (1-based) */
    uint64_t col;       /* column of buf[0] (1-based, in bytes) */
    const char *name;
    const char *err;    /* a conversion error */
} fj;

static void advance_pos(fj *f, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (f->buf[i] == '\n') { f->line++; f->col = 1; }
        else f->col++;
    }
    f->base += n;
}

static int json_error(fj *f, size_t at, const char *what) {
    /* line and column of buf[at] */
    uint64_t line = f->line, col = f->col;
    for (size_t i = 0; i < at && i < f->len; i++) {
        if (f->buf[i] == '\n') { line++; col = 1; }
        else col++;
    }
    char desc[96];
    if (!what) {
        if (at >= f->len) what = "unexpected end of input";
        else {
            unsigned char c = (unsigned char)f->buf[at];
            if (c < 0x20) snprintf(desc, sizeof desc, "control character 0x%02x (escape it in a string)", c);
            else if (c < 0x7f) snprintf(desc, sizeof desc, "unexpected '%c'", c);
            else snprintf(desc, sizeof desc, "unexpected byte 0x%02x", c);
            what = desc;
        }
    }
    oflush();
    fprintf(stderr, "mpk: %s%s%s at line %llu, column %llu (byte %llu)\n", f->name ? f->name : "",
            f->name ? ": " : "", what, (unsigned long long)line, (unsigned long long)col,
            (unsigned long long)(f->base + at));
    return EXIT_INVALID;
}

/* The end of the JSON text starting at buf[i] (after whitespace), or 0 when more text is needed. */
static size_t text_end(const char *b, size_t i, size_t n, int eof) {
    char c = b[i];
    if (c == '{' || c == '[') {
        size_t depth = 0;
        int in_str = 0;
        for (; i < n; i++) {
            char d = b[i];
            if (in_str) {
                if (d == '\\') i++;
                else if (d == '"') in_str = 0;
            } else if (d == '"') in_str = 1;
            else if (d == '{' || d == '[') depth++;
            else if (d == '}' || d == ']') {
                if (--depth == 0) return i + 1;
            }
        }
        return eof ? n : 0;
    }
    if (c == '"') {
        for (i++; i < n; i++) {
            if (b[i] == '\\') i++;
            else if (b[i] == '"') return i + 1;
        }
        return eof ? n : 0;
    }
    for (i++; i < n; i++) {
        char d = b[i];
        if (d == ' ' || d == '\t' || d == '\n' || d == '\r' || d == '{' || d == '[' || d == '"' || d == ']' ||
            d == '}' || d == ',' || d == ':')
            return i;
    }
    return eof ? n : 0;
}

static int b64_decode_str(const uint8_t *s, size_t n, mpk_writer *w, int as_bin, int8_t ext_type) {
    /* decoded length first (for the head), then the bytes */
    size_t pad = 0;
    while (n && s[n - 1] == '=') { n--; pad++; }
    if (pad > 2 || n % 4 == 1) return 0;
    for (size_t i = 0; i < n; i++) if (b64val(s[i]) < 0) return 0;
    size_t out = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    if (pad && (n + pad) % 4) return 0;
    if (out > 0xffffffffu) return 0;
    if (as_bin) mpk_write_bin_head(w, (uint32_t)out);
    else mpk_write_ext_head(w, ext_type, (uint32_t)out);
    uint8_t q[3];
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t v = (uint32_t)b64val(s[i]) << 18 | (uint32_t)b64val(s[i + 1]) << 12 |
                     (uint32_t)b64val(s[i + 2]) << 6 | (uint32_t)b64val(s[i + 3]);
        q[0] = (uint8_t)(v >> 16); q[1] = (uint8_t)(v >> 8); q[2] = (uint8_t)v;
        mpk_write_bytes(w, q, 3);
    }
    if (n - i >= 2) {
        uint32_t v = (uint32_t)b64val(s[i]) << 18 | (uint32_t)b64val(s[i + 1]) << 12;
        if (n - i == 3) v |= (uint32_t)b64val(s[i + 2]) << 6;
        q[0] = (uint8_t)(v >> 16); q[1] = (uint8_t)(v >> 8);
        mpk_write_bytes(w, q, n - i - 1);
    }
    return 1;
}

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int node_str_is(const mpk_node *n, const char *s) {
    return n->type == MPK_STR && n->len == strlen(s) && memcmp(n->v.data, s, n->len) == 0;
}

/* A float member: a number, or "NaN", "Infinity", "-Infinity", "NaN:<hex bits>". */
static int float_member(const mpk_node *m, int is32, mpk_writer *w) {
    double d;
    if (m->type == MPK_UINT) d = (double)m->v.u;
    else if (m->type == MPK_INT) d = (double)m->v.i;
    else if (m->type == MPK_FLOAT64) d = m->v.f64;
    else if (node_str_is(m, "NaN")) d = NAN;
    else if (node_str_is(m, "Infinity")) d = INFINITY;
    else if (node_str_is(m, "-Infinity")) d = -INFINITY;
    else if (m->type == MPK_STR && m->len == (is32 ? 12u : 20u) && memcmp(m->v.data, "NaN:", 4) == 0) {
        uint64_t bits = 0;
        for (uint32_t i = 4; i < m->len; i++) {
            int v = hexval(m->v.data[i]);
            if (v < 0) return 0;
            bits = bits << 4 | (uint64_t)v;
        }
        if (is32) {
            float f;
            uint32_t b32 = (uint32_t)bits;
            memcpy(&f, &b32, 4);
            if (f == f) return 0;
            mpk_write_float32(w, f);
        } else {
            memcpy(&d, &bits, 8);
            if (d == d) return 0;
            mpk_write_float64(w, d);
        }
        return 1;
    } else return 0;
    if (is32) mpk_write_float32(w, (float)d);
    else mpk_write_float64(w, d);
    return 1;
}

static const mpk_node *convert(fj *f, const mpk_node *n, uint32_t depth);

/* A one-key object whose key is a tag; returns the next node, or NULL with f->err set. */
static const mpk_node *convert_tag(fj *f, const mpk_node *key, const mpk_node *m, uint32_t depth) {
    mpk_writer *w = &f->w;
    const mpk_node *next = mpk_node_next(m);
    if (node_str_is(key, "$bin")) {
        if (m->type != MPK_STR || !b64_decode_str(m->v.data, m->len, w, 1, 0)) goto bad;
        return next;
    }
    if (node_str_is(key, "$ext")) {
        if (m->type != MPK_ARRAY || m->len != 2) goto bad;
        const mpk_node *t = mpk_node_first(m), *d = mpk_node_next(t);
        int64_t type = t->type == MPK_UINT ? (int64_t)(t->v.u > 200 ? 200 : t->v.u) : t->type == MPK_INT ? t->v.i : 1000;
        if (type < -128 || type > 127 || type == -1 || d->type != MPK_STR) goto bad;
        if (!b64_decode_str(d->v.data, d->len, w, 0, (int8_t)type)) goto bad;
        return next;
    }
    if (node_str_is(key, "$ts")) {
        int64_t sec;
        uint32_t nsec;
        if (m->type == MPK_STR) {
            if (!parse_rfc3339((const char *)m->v.data, m->len, &sec, &nsec)) goto bad;
        } else if (m->type == MPK_ARRAY && m->len == 2) {
            const mpk_node *s = mpk_node_first(m), *ns = mpk_node_next(s);
            if (s->type == MPK_UINT && s->v.u <= (uint64_t)INT64_MAX) sec = (int64_t)s->v.u;
            else if (s->type == MPK_INT) sec = s->v.i;
            else goto bad;
            if (ns->type != MPK_UINT || ns->v.u > 999999999u) goto bad;
            nsec = (uint32_t)ns->v.u;
        } else goto bad;
        mpk_write_timestamp(w, sec, nsec);
        return next;
    }
    if (node_str_is(key, "$f32") || node_str_is(key, "$f64")) {
        if (!float_member(m, key->v.data[2] == '3', w)) goto bad;
        return next;
    }
    if (node_str_is(key, "$strhex")) {
        if (m->type != MPK_STR || m->len % 2) goto bad;
        for (uint32_t i = 0; i < m->len; i++) if (hexval(m->v.data[i]) < 0) goto bad;
        mpk_write_str_head(w, m->len / 2);
        for (uint32_t i = 0; i < m->len; i += 2) {
            uint8_t b = (uint8_t)(hexval(m->v.data[i]) << 4 | hexval(m->v.data[i + 1]));
            mpk_write_bytes(w, &b, 1);
        }
        return next;
    }
    if (node_str_is(key, "$map")) {
        if (m->type != MPK_ARRAY) goto bad;
        if (depth + 1 > O->limits.depth) {
            f->err = "nesting deeper than --max-depth";
            return NULL;
        }
        const mpk_node *p = mpk_node_first(m);
        for (uint32_t i = 0; i < m->len; i++, p = mpk_node_next(p))
            if (p->type != MPK_ARRAY || p->len != 2) goto bad;
        mpk_write_map(w, m->len);
        p = mpk_node_first(m);
        for (uint32_t i = 0; i < m->len; i++) {
            const mpk_node *k = mpk_node_first(p);
            const mpk_node *v = convert(f, k, depth + 1);
            if (!v || !convert(f, v, depth + 1)) return NULL;
            p = mpk_node_next(p);
        }
        mpk_write_map_end(w);
        return next;
    }
bad:
    if (!f->err) {
        static char msg[64];
        snprintf(msg, sizeof msg, "a malformed %.*s value", (int)key->len, (const char *)key->v.data);
        f->err = msg;
    }
    return NULL;
}

/* Writes the value at n, `depth` containers deep; returns the node after it, or NULL with f->err
 * set. A container deeper than --max-depth is refused, as every decoder would refuse it. */
static const mpk_node *convert(fj *f, const mpk_node *n, uint32_t depth) {
    mpk_writer *w = &f->w;
    if (n->type == MPK_ARRAY && depth + 1 > O->limits.depth) {
        f->err = "nesting deeper than --max-depth";
        return NULL;
    }
    switch ((mpk_type)n->type) {
    case MPK_FLOAT64:
        if (O->float32) mpk_write_float32(w, (float)n->v.f64);
        else mpk_write_float64(w, n->v.f64);
        return n + 1;
    case MPK_ARRAY: {
        mpk_write_array(w, n->len);
        const mpk_node *e = mpk_node_first(n);
        for (uint32_t i = 0; i < n->len; i++)
            if (!(e = convert(f, e, depth + 1))) return NULL;
        mpk_write_array_end(w);
        return mpk_node_next(n);
    }
    case MPK_MAP: {
        const mpk_node *k = mpk_node_first(n);
        if (n->len == 1 && k->type == MPK_STR && is_tag_name(k->v.data, k->len))
            return convert_tag(f, k, mpk_node_next(k), depth) ? mpk_node_next(n) : NULL;
        if (depth + 1 > O->limits.depth) {
            f->err = "nesting deeper than --max-depth";
            return NULL;
        }
        mpk_write_map(w, n->len);
        for (uint32_t i = 0; i < n->len; i++) {
            mpk_write_str(w, k->v.data, k->len); /* JSON keys are strings */
            if (!(k = convert(f, k + 1, depth + 1))) return NULL;
        }
        mpk_write_map_end(w);
        return mpk_node_next(n);
    }
    default:
        mpk_node_write(n, w);
        return mpk_node_next(n);
    }
}

typedef struct out_sink {
    int enc;
    uint8_t carry[3]; /* base64: bytes short of a whole group, for the next call */
    size_t ncarry;
} out_sink;

static out_sink osink;

static int sink_flush(void *ctx, const void *data, size_t len) {
    out_sink *s = (out_sink *)ctx;
    const uint8_t *p = (const uint8_t *)data;
    if (s->enc == ENC_RAW) {
        oput(p, len);
    } else if (s->enc == ENC_HEX) {
        ohex(p, len);
    } else {
        /* base64 needs whole groups of 3 bytes: what is left over waits for the next call */
        while (s->ncarry > 0 && s->ncarry < 3 && len) {
            s->carry[s->ncarry++] = *p++;
            len--;
            if (s->ncarry == 3) {
                ob64(s->carry, 3);
                s->ncarry = 0;
            }
        }
        size_t whole = len / 3 * 3;
        ob64(p, whole);
        s->ncarry = len - whole;
        memcpy(s->carry, p + whole, s->ncarry);
    }
    return out_failed ? -1 : 0;
}

static int from_json_text(fj *f, size_t start, size_t end) {
    const mpk_node *root = mpk_doc_parse_json(&f->doc, f->buf + start, end - start);
    if (!root) {
        mpk_error e = mpk_doc_error(&f->doc);
        if (e.kind == MPK_ERR_DEPTH_LIMIT) return json_error(f, start + e.offset, "nesting deeper than --max-depth");
        if (e.kind == MPK_ERR_NO_MEMORY) return json_error(f, start + e.offset, "out of memory");
        return json_error(f, start + e.offset, NULL);
    }
    if (O->array) {
        if (root->type != MPK_ARRAY) return json_error(f, start, "--array wants one JSON array");
        const mpk_node *e = mpk_node_first(root);
        for (uint32_t i = 0; i < root->len; i++) {
            f->err = NULL;
            if (!(e = convert(f, e, 0))) return json_error(f, start, f->err);
        }
    } else {
        f->err = NULL;
        if (!convert(f, root, 0)) return json_error(f, start, f->err);
    }
    if (mpk_writer_error(&f->w) != MPK_OK) {
        if (out_failed) return EXIT_IO;
        fprintf(stderr, "mpk: cannot write the output (%s)\n", mpk_error_name(mpk_writer_error(&f->w)));
        return EXIT_IO;
    }
    return EXIT_OK;
}

static int from_json_file(fj *f, const char *path, int *seen_array) {
    input in;
    if (!in_open(&in, path, ENC_RAW)) return EXIT_IO;
    f->name = in.f == stdin ? NULL : path;
    f->len = 0;
    f->base = 0;
    f->line = f->col = 1;
    int status = EXIT_OK, eof = 0;
    while (status == EXIT_OK) {
        /* convert every complete text in the buffer */
        size_t i = 0;
        for (;;) {
            while (i < f->len && (f->buf[i] == ' ' || f->buf[i] == '\t' || f->buf[i] == '\n' || f->buf[i] == '\r')) i++;
            if (i == f->len) break;
            if (f->len - i >= 3 && memcmp(f->buf + i, "\xef\xbb\xbf", 3) == 0 && f->base + i == 0) { i += 3; continue; }
            char c = f->buf[i];
            if (c == ']' || c == '}' || c == ',' || c == ':') {
                status = json_error(f, i, NULL);
                break;
            }
            size_t end = text_end(f->buf, i, f->len, eof);
            if (end == 0) break;
            if (O->array && (*seen_array)++) {
                status = json_error(f, i, "--array wants exactly one JSON array");
                break;
            }
            status = from_json_text(f, i, end);
            if (status != EXIT_OK) break;
            i = end;
        }
        if (status != EXIT_OK) break;
        advance_pos(f, i);
        if (f->len > i) memmove(f->buf, f->buf + i, f->len - i);
        f->len -= i;
        if (eof) break;
        if (f->cap - f->len < 65536) {
            size_t cap = f->cap ? f->cap * 2 : 1 << 17;
            char *nb = (char *)realloc(f->buf, cap);
            if (!nb) {
                fprintf(stderr, "mpk: out of memory\n");
                status = EXIT_IO;
                break;
            }
            f->buf = nb;
            f->cap = cap;
        }
        size_t n = fread(f->buf + f->len, 1, f->cap - f->len, in.f);
        if (n == 0) {
            if (ferror(in.f)) {
                fprintf(stderr, "mpk: %s: read error\n", path ? path : "<stdin>");
                status = EXIT_IO;
            }
            eof = 1;
        }
        f->len += n;
    }
    in_close(&in);
    return status;
}

static int run_from_json(void) {
    fj f;
    memset(&f, 0, sizeof f);
    osink.enc = O->out_enc;
    static uint8_t stage[1 << 16];
    mpk_writer_init_flush(&f.w, stage, sizeof stage, sink_flush, &osink);
    mpk_writer_set_checks(&f.w, 1); /* a converter bug must not write malformed MessagePack */
    mpk_doc_init(&f.doc);
    /* the notation nests up to three JSON levels per MessagePack level ({"$map": [[k, v]]}) */
    mpk_limits jl = O->limits;
    jl.depth = 3 * jl.depth + 3;
    mpk_doc_set_limits(&f.doc, &jl);
    int status = EXIT_OK, seen_array = 0;
    if (O->nfiles == 0) status = from_json_file(&f, NULL, &seen_array);
    for (int i = 0; i < O->nfiles && status == EXIT_OK; i++) status = from_json_file(&f, O->files[i], &seen_array);
    if (status == EXIT_OK && O->array && !seen_array) {
        fprintf(stderr, "mpk: --array wants one JSON array, the input has none\n");
        status = EXIT_INVALID;
    }
    if (mpk_writer_finish(&f.w) != MPK_OK && status == EXIT_OK) {
        fprintf(stderr, "mpk: cannot write the output (%s)\n", mpk_error_name(mpk_writer_error(&f.w)));
        status = EXIT_IO;
    }
    if (O->out_enc == ENC_BASE64) ob64(osink.carry, osink.ncarry);
    if (O->out_enc != ENC_RAW && status == EXIT_OK) oc('\n');
    mpk_writer_destroy(&f.w);
    mpk_doc_destroy(&f.doc);
    free(f.buf);
    return status;
}

/* ================================================================================================
 * main
 * ==============================================================================================*/

static int run_reading(void) {
    static reader_ctx rc;
    static tojson_ctx tj;
    static stats_ctx st;
    value_fn fn = O->cmd == CMD_TO_JSON ? tojson_value : O->cmd == CMD_DUMP ? dump_value
                : O->cmd == CMD_STATS ? stats_value : validate_value;
    void *ctx = O->cmd == CMD_TO_JSON ? (void *)&tj : O->cmd == CMD_STATS ? (void *)&st : NULL;
    mpk_doc_init(&tj.doc);
    mpk_doc_set_limits(&tj.doc, &O->limits);
    mpk_doc_set_flags(&tj.doc, O->flags);
    if (O->cmd == CMD_TO_JSON && O->array) oc('[');
    int status = EXIT_OK;
    uint64_t total_values = 0;
    for (int i = 0; i < (O->nfiles ? O->nfiles : 1) && status == EXIT_OK; i++) {
        rc.values = 0;
        if (O->cmd == CMD_VALIDATE && O->one) status = validate_one(&rc, O->nfiles ? O->files[i] : NULL);
        else status = each_value(&rc, O->nfiles ? O->files[i] : NULL, fn, ctx, O->cmd == CMD_VALIDATE);
        total_values += rc.values;
    }
    if (O->cmd == CMD_TO_JSON && O->array) {
        if (tj.written) nl_indent(0);
        os("]\n");
    }
    if (O->cmd == CMD_STATS && status == EXIT_OK) {
        rc.values = total_values;
        stats_print(&st, &rc);
    }
    if (O->cmd == CMD_VALIDATE && status == EXIT_OK)
        of("ok: %llu value%s\n", (unsigned long long)total_values, total_values == 1 ? "" : "s");
    mpk_doc_destroy(&tj.doc);
    return status;
}

static void *command_thread(void *status) {
    *(int *)status = O->cmd == CMD_FROM_JSON ? run_from_json() : run_reading();
    return NULL;
}

/* The JSON writer (emit) and the notation reader (convert) recurse once per nesting level, up to
 * --max-depth (at most MAX_DEPTH_CAP): about 100 bytes of stack a level, so 10000 levels need 1 MiB,
 * more than a shell's `ulimit -s 512` gives the main thread (it crashed there). The command runs on
 * a thread whose stack is sized for the depth allowed: 1 MiB plus 1 KiB a level (address space;
 * only the pages a deep input reaches are touched). Where threads are not available, or the
 * thread cannot be made, it runs on the main thread as before. */
static int run_command(void) {
    int status = EXIT_IO;
#ifdef HAVE_PTHREAD
    pthread_attr_t attr;
    pthread_t t;
    size_t need = ((size_t)1 << 20) + (size_t)O->limits.depth * 1024u;
    if (pthread_attr_init(&attr) == 0) {
        int made = pthread_attr_setstacksize(&attr, need) == 0 &&
                   pthread_create(&t, &attr, command_thread, &status) == 0;
        pthread_attr_destroy(&attr);
        if (made) {
            if (pthread_join(t, NULL) == 0) return status;
            return EXIT_IO;
        }
    }
#endif
    command_thread(&status);
    return status;
}

int main(int argc, char **argv) {
    static opts o;
    O = &o;
    o.limits = mpk_limits_default();
    o.max_bytes = 16;
    o.depth_show = (unsigned long)-1;
    o.files = (char **)calloc((size_t)argc, sizeof *o.files);
    if (!o.files) return EXIT_IO;
    int have_cmd = 0, only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!have_cmd) {
                static const char *const names[] = {"to-json", "from-json", "dump", "validate", "stats"};
                for (int k = 0; k < 5; k++)
                    if (strcmp(a, names[k]) == 0) { o.cmd = k; have_cmd = 1; cmd_name = names[k]; }
                if (!have_cmd) {
                    if (strcmp(a, "help") == 0) { fputs(usage_text, stdout); return EXIT_OK; }
                    return usage_error("unknown command '%s'", a);
                }
                continue;
            }
            o.files[o.nfiles++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) { only_files = 1; continue; }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return fflush(stdout) == 0 ? EXIT_OK : EXIT_IO;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("mpk %s (libmpk %s)\n", MPK_VERSION_STRING, mpk_version());
            return EXIT_OK;
        }
        /* options with a value: --name=VALUE or --name VALUE */
        const char *eq = strchr(a, '=');
        char name[32];
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name) return usage_error("unknown option '%s'", a);
        memcpy(name, a, nl);
        name[nl] = 0;
        static const char *const valued[] = {"--max-depth", "--max-len", "--max-str", "--max-bin", "--max-ext",
                                             "--max-array", "--max-map", "--depth", "--max-bytes", "--bin"};
        int vi = -1;
        for (int k = 0; k < 10; k++) if (strcmp(name, valued[k]) == 0) vi = k;
        if (vi >= 0) {
            const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!val) return usage_error("%s needs a value", name);
            unsigned long long v = 0;
            if (vi == 9) {
                if (strcmp(val, "hex") == 0) o.bin_hex = 1;
                else if (strcmp(val, "base64") == 0) o.bin_hex = 0;
                else return usage_error("--bin is base64 or hex, not '%s'", val);
                continue;
            }
            if (!parse_count(val, vi == 0 ? MAX_DEPTH_CAP : vi == 8 ? 1u << 20 : 0xffffffffull, &v))
                return usage_error("%s wants a number from 0 to %llu, not '%s'", name,
                                   vi == 0 ? (unsigned long long)MAX_DEPTH_CAP : vi == 8 ? 1ull << 20 : 0xffffffffull, val);
            switch (vi) {
            case 0: o.limits.depth = (uint32_t)v; break;
            case 1: o.limits.str = o.limits.bin = o.limits.ext = o.limits.array = o.limits.map = (uint32_t)v; break;
            case 2: o.limits.str = (uint32_t)v; break;
            case 3: o.limits.bin = (uint32_t)v; break;
            case 4: o.limits.ext = (uint32_t)v; break;
            case 5: o.limits.array = (uint32_t)v; break;
            case 6: o.limits.map = (uint32_t)v; break;
            case 7: o.depth_show = (unsigned long)v; break;
            default: o.max_bytes = (size_t)v; break;
            }
            continue;
        }
        if (eq) return usage_error("option '%s' takes no value", name);
        if (strcmp(a, "--pretty") == 0) o.pretty = 1;
        else if (strcmp(a, "--array") == 0) o.array = 1;
        else if (strcmp(a, "--plain") == 0) o.plain = 1;
        else if (strcmp(a, "--float32") == 0) o.float32 = 1;
        else if (strcmp(a, "--json") == 0) o.json = 1;
        else if (strcmp(a, "--one") == 0) o.one = 1;
        else if (strcmp(a, "--strict-utf8") == 0) o.flags |= MPK_FLAG_STRICT_UTF8;
        else if (strcmp(a, "--hex") == 0) o.in_enc = o.out_enc = ENC_HEX;
        else if (strcmp(a, "--base64") == 0) o.in_enc = o.out_enc = ENC_BASE64;
        else return usage_error("unknown option '%s'", a);
    }
    if (!have_cmd) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    /* options that belong to other commands are usage errors, not silently ignored */
    const char *stray = NULL;
    if (o.cmd != CMD_TO_JSON && (o.pretty || o.plain)) stray = o.pretty ? "--pretty" : "--plain";
    if (o.cmd != CMD_TO_JSON && o.cmd != CMD_FROM_JSON && o.array) stray = "--array";
    if (o.cmd != CMD_FROM_JSON && o.float32) stray = "--float32";
    if (o.cmd != CMD_DUMP && o.json) stray = "--json";
    if (o.cmd != CMD_VALIDATE && o.one) stray = "--one";
    if (o.cmd != CMD_DUMP && (o.depth_show != (unsigned long)-1 || o.max_bytes != 16))
        stray = o.max_bytes != 16 ? "--max-bytes" : "--depth";
    if (stray) return usage_error("%s does not apply to %s", stray, cmd_name);
    if (o.cmd == CMD_FROM_JSON) o.in_enc = ENC_RAW;
    else o.out_enc = ENC_RAW;
    progress_init();
    int status = run_command();
    oflush();
    if (fflush(stdout) != 0 || out_failed) {
        if (status == EXIT_OK) fprintf(stderr, "mpk: cannot write the output: %s\n", strerror(errno));
        status = EXIT_IO;
    }
    free(o.files);
    return status;
}
