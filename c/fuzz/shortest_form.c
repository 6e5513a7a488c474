/* An independent judge of "shortest form" (spec/README.md, Shortest form), written apart from the
 * library's writer so that the fuzzer can hold the writer to it: whenever this says a valid input
 * is in shortest form, encoding its DOM must give the input back byte for byte.
 *
 * It only runs on inputs the DOM accepted, so it may assume every length it reads is present. */
#include "shortest_form.h"

#include <string.h>

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* Is an ext of type -1 with this payload written in the shortest timestamp form for its head? */
static int timestamp_shortest(uint8_t head, size_t len, const uint8_t *p)
{
    if (len == 4) return head == 0xd6; /* timestamp 32 is always shortest; c7 04 ff never */
    if (len == 8) {
        if (head != 0xd7) return 0;
        uint64_t v = be(p, 8);
        uint64_t nsec = v >> 34, sec = v & ((1ull << 34) - 1);
        return !(nsec == 0 && sec < (1ull << 32));
    }
    /* len == 12: timestamp 96 (ext 8) is shortest only when sec is outside 0 .. 2^34-1 */
    int64_t sec = (int64_t)be(p + 4, 8);
    return head == 0xc7 && !(sec >= 0 && sec < (1ll << 34));
}

int shortest_form(const uint8_t *p, size_t n)
{
    /* values still owed: one top-level value; containers add theirs */
    uint64_t owed = 1;
    size_t i = 0;
    while (owed > 0) {
        if (i >= n) return 0;
        owed--;
        uint8_t b = p[i];
        const uint8_t *f = p + i + 1;
        if (b <= 0x7f || b >= 0xe0 || (b >= 0xc0 && b <= 0xc3)) { i += 1; continue; }
        if (b >= 0x80 && b <= 0x8f) { owed += 2u * (b & 0x0f); i += 1; continue; }
        if (b >= 0x90 && b <= 0x9f) { owed += b & 0x0f; i += 1; continue; }
        if (b >= 0xa0 && b <= 0xbf) { i += 1 + (b & 0x1f); continue; }
        uint64_t v;
        switch (b) {
        case 0xc4: i += 2 + f[0]; break;
        case 0xc5: v = be(f, 2); if (v <= 0xff) return 0; i += 3 + v; break;
        case 0xc6: v = be(f, 4); if (v <= 0xffff) return 0; i += 5 + v; break;
        case 0xc7: case 0xc8: case 0xc9: {
            int w = b == 0xc7 ? 1 : b == 0xc8 ? 2 : 4;
            v = be(f, w);
            int8_t type = (int8_t)f[w];
            if (type == -1) {
                if (!timestamp_shortest(b, v, f + w + 1)) return 0;
            } else if ((b == 0xc7 && (v == 1 || v == 2 || v == 4 || v == 8 || v == 16)) ||
                       (b == 0xc8 && v <= 0xff) || (b == 0xc9 && v <= 0xffff)) {
                return 0;
            }
            i += 1 + w + 1 + v;
            break;
        }
        case 0xca: i += 5; break;
        case 0xcb: i += 9; break;
        case 0xcc: if (f[0] < 0x80) return 0; i += 2; break;
        case 0xcd: if (be(f, 2) <= 0xff) return 0; i += 3; break;
        case 0xce: if (be(f, 4) <= 0xffff) return 0; i += 5; break;
        case 0xcf: if (be(f, 8) <= 0xffffffffu) return 0; i += 9; break;
        case 0xd0: if ((int8_t)f[0] >= -32) return 0; i += 2; break;
        case 0xd1: if ((int16_t)be(f, 2) >= -128) return 0; i += 3; break;
        case 0xd2: if ((int32_t)be(f, 4) >= -32768) return 0; i += 5; break;
        case 0xd3: if ((int64_t)be(f, 8) >= -2147483647ll - 1) return 0; i += 9; break;
        case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: {
            size_t len = (size_t)1 << (b - 0xd4);
            if ((int8_t)f[0] == -1 && !timestamp_shortest(b, len, f + 1)) return 0;
            i += 2 + len;
            break;
        }
        case 0xd9: if (f[0] <= 31) return 0; i += 2 + f[0]; break;
        case 0xda: v = be(f, 2); if (v <= 0xff) return 0; i += 3 + v; break;
        case 0xdb: v = be(f, 4); if (v <= 0xffff) return 0; i += 5 + v; break;
        case 0xdc: v = be(f, 2); if (v <= 15) return 0; owed += v; i += 3; break;
        case 0xdd: v = be(f, 4); if (v <= 0xffff) return 0; owed += v; i += 5; break;
        case 0xde: v = be(f, 2); if (v <= 15) return 0; owed += 2 * v; i += 3; break;
        case 0xdf: v = be(f, 4); if (v <= 0xffff) return 0; owed += 2 * v; i += 5; break;
        default: return 0;
        }
    }
    return i == n;
}
