/* common.c — error and type names, default limits, UTF-8 validation. */
#include "mpk/common.h"
#include "internal.h"

#include <stdio.h>

const char *mpk_version(void) { return MPK_VERSION_STRING; }

const char *mpk_error_name(mpk_error_kind kind) {
    switch (kind) {
    case MPK_OK: return "ok";
    case MPK_ERR_TRUNCATED: return "truncated";
    case MPK_ERR_INVALID_BYTE: return "invalid_byte";
    case MPK_ERR_DEPTH_LIMIT: return "depth_limit";
    case MPK_ERR_LENGTH_LIMIT: return "length_limit";
    case MPK_ERR_INVALID_TIMESTAMP: return "invalid_timestamp";
    case MPK_ERR_INVALID_UTF8: return "invalid_utf8";
    case MPK_ERR_TRAILING_BYTES: return "trailing_bytes";
    case MPK_ERR_NO_MEMORY: return "no_memory";
    case MPK_ERR_IO: return "io";
    case MPK_ERR_BUFFER_FULL: return "buffer_full";
    case MPK_ERR_INVALID_ARGUMENT: return "invalid_argument";
    case MPK_ERR_TYPE: return "type";
    case MPK_ERR_JSON: return "json";
    case MPK_ERR_COUNT_MISMATCH: return "count_mismatch";
    }
    return "unknown";
}

int mpk_error_format(mpk_error error, char *buf, size_t size) {
    return snprintf(buf, size, "%s at byte %llu", mpk_error_name(error.kind),
                    (unsigned long long)error.offset);
}

const char *mpk_type_name(mpk_type type) {
    static const char *const names[] = {"nil", "bool", "uint", "int", "float32", "float64",
                                        "str", "bin", "array", "map", "ext", "timestamp"};
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "unknown";
}

mpk_limits mpk_limits_default(void) {
    mpk_limits l;
    l.depth = MPK_DEFAULT_DEPTH;
    l.str = l.bin = l.ext = l.array = l.map = MPK_DEFAULT_LENGTH;
    return l;
}

int mpk_utf8_valid(const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data, *end = p + len;
    while (p < end) {
        /* ASCII runs are the common case: take eight bytes at a time. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (w & 0x8080808080808080ull) break;
            p += 8;
        }
        if (p >= end) break;
        uint8_t c = *p;
        if (c < 0x80) { p++; continue; }
        if (c < 0xc2) return 0; /* continuation byte or overlong 2-byte lead */
        if (c < 0xe0) {
            if (end - p < 2 || (p[1] & 0xc0) != 0x80) return 0;
            p += 2;
        } else if (c < 0xf0) {
            if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
            if (c == 0xe0 && p[1] < 0xa0) return 0;  /* overlong */
            if (c == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
            p += 3;
        } else if (c < 0xf5) {
            if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
                (p[3] & 0xc0) != 0x80)
                return 0;
            if (c == 0xf0 && p[1] < 0x90) return 0;  /* overlong */
            if (c == 0xf4 && p[1] >= 0x90) return 0; /* above U+10FFFF */
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

void mpk__read_head(const uint8_t *h, mpk__head *out) {
    uint8_t b = h[0];
    out->size = mpk__head_size(b);
    out->n = 0;
    out->type = 0;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3 || (b >= 0xca && b <= 0xd3)) {
        out->kind = MPK__HEAD_SCALAR;
        return;
    }
    if (b <= 0x8f) { out->kind = MPK__HEAD_MAP; out->n = b & 0x0f; return; }
    if (b <= 0x9f) { out->kind = MPK__HEAD_ARRAY; out->n = b & 0x0f; return; }
    if (b <= 0xbf) { out->kind = MPK__HEAD_STR; out->n = b & 0x1f; return; }
    switch (b) {
    case 0xc1: out->kind = MPK__HEAD_INVALID; return;
    case 0xc4: out->kind = MPK__HEAD_BIN; out->n = h[1]; return;
    case 0xc5: out->kind = MPK__HEAD_BIN; out->n = mpk__load16(h + 1); return;
    case 0xc6: out->kind = MPK__HEAD_BIN; out->n = mpk__load32(h + 1); return;
    case 0xc7: out->kind = MPK__HEAD_EXT; out->n = h[1]; break;
    case 0xc8: out->kind = MPK__HEAD_EXT; out->n = mpk__load16(h + 1); break;
    case 0xc9: out->kind = MPK__HEAD_EXT; out->n = mpk__load32(h + 1); break;
    case 0xd9: out->kind = MPK__HEAD_STR; out->n = h[1]; return;
    case 0xda: out->kind = MPK__HEAD_STR; out->n = mpk__load16(h + 1); return;
    case 0xdb: out->kind = MPK__HEAD_STR; out->n = mpk__load32(h + 1); return;
    case 0xdc: out->kind = MPK__HEAD_ARRAY; out->n = mpk__load16(h + 1); return;
    case 0xdd: out->kind = MPK__HEAD_ARRAY; out->n = mpk__load32(h + 1); return;
    case 0xde: out->kind = MPK__HEAD_MAP; out->n = mpk__load16(h + 1); return;
    case 0xdf: out->kind = MPK__HEAD_MAP; out->n = mpk__load32(h + 1); return;
    default: out->kind = MPK__HEAD_EXT; out->n = (uint64_t)1 << (b - 0xd4); break; /* d4..d8 */
    }
    out->type = (int8_t)h[out->size - 1];
}
