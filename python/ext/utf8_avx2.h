/* utf8_avx2.h — long non-ASCII strs with AVX2, chosen at run time (included by strbuild.h).
 *
 *   mpkpy_utf8_check_avx2  validates UTF-8 32 bytes a step (the three-nibble-table method of
 *                          Keiser and Lemire, "Validating UTF-8 in less than one instruction per
 *                          byte", 2021: the error classes of two adjacent bytes are looked up by the
 *                          first byte's two nibbles and the second byte's high nibble and ANDed; a
 *                          byte two or three after a 3- or 4-byte lead must be a continuation), and
 *                          counts the continuation bytes and the largest byte on the way. A block of
 *                          32 ASCII bytes costs a load and a test (the ASCII runs of mostly-ASCII
 *                          Latin-1 text).
 *   mpkpy_utf8_fill_avx2_* decodes bytes already validated into a str of kind 1, 2 or 4 with no
 *                          per-sequence branch: for 8 byte positions at a time each 32-bit lane takes
 *                          the 4 bytes from its position, decodes them as if a code point started
 *                          there (two multiply-adds assemble the bits, a nibble table gives the
 *                          lead's mask and the shift), and the lanes at code point starts are
 *                          packed together by a permutation from a table of the 256 start masks.
 *                          A block of 32 ASCII bytes is widened and stored as it is.
 *
 * Why: CPython's decoder, msgspec's and the checked fill of strbuild.h branch once per code point on
 * its length; on mixed-width text (`100 non-ASCII strings`: Latin, Greek, kana, emoji) that branch
 * mispredicts about every other code point. Measured: python/bench/README.md, "Final: str and bin
 * cells below the bar (session 10)".
 *
 * The fallback (no AVX2 on the CPU, MPK_PY_NO_AVX2=1 in the environment at import, or a build
 * without x86-64 GCC/Clang or with MPKPY_PORTABLE) is CPython's decoder, as before. */
#ifndef MPKPY_UTF8_AVX2_H
#define MPKPY_UTF8_AVX2_H

#if !defined(MPKPY_PORTABLE) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MPKPY_UTF8_AVX2 1
#include <immintrin.h>

#define MPKPY_AVX2_FN __attribute__((target("avx2,popcnt")))
#define MPKPY_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,popcnt")))

/* 1 once the CPU was found to have AVX2 (and MPK_PY_NO_AVX2 is not set): mpkpy_utf8_avx2_init */
static int mpkpy_utf8_avx2_on = 0;

/* For each of the 256 masks of 8 lanes, the indexes of the set lanes in order (then zeros): the
 * vpermd that packs the code point lanes together. Filled by mpkpy_utf8_avx2_init. */
static uint8_t mpkpy_pack_lanes[256][8];

static void mpkpy_utf8_avx2_init(void)
{
    for (int m = 0; m < 256; m++) {
        int k = 0;
        for (int j = 0; j < 8; j++)
            if (m & (1 << j)) mpkpy_pack_lanes[m][k++] = (uint8_t)j;
        while (k < 8) mpkpy_pack_lanes[m][k++] = 0;
    }
    const char *off = getenv("MPK_PY_NO_AVX2");
    __builtin_cpu_init();
    mpkpy_utf8_avx2_on = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") && !(off && *off && strcmp(off, "0"));
}

/* ---- validation ------------------------------------------------------------------------------
 * Error classes of a byte pair (previous byte p, current byte c), one bit each:
 *   0x01 a lead (p >= 0xC0) not followed by a continuation
 *   0x02 ASCII followed by a continuation
 *   0x04 E0 followed by 80-9F (overlong 3-byte form)
 *   0x08 F4 followed by 90-BF, or F5-FF followed by 90-BF (above U+10FFFF)
 *   0x10 ED followed by A0-BF (a surrogate)
 *   0x20 C0 or C1 followed by a continuation (overlong 2-byte form)
 *   0x40 F0 followed by 80-8F (overlong 4-byte form), or F5-FF followed by 80-8F
 *   0x80 a continuation followed by a continuation (legal only 2 or 3 bytes after a 3/4-byte lead)
 * Each class is a product of conditions on p's high nibble, p's low nibble and c's high nibble, so
 * it is the AND of three 16-entry tables indexed by those nibbles. */
#define MPKPY_V_HI1 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x80, 0x80, 0x80, 0x80, 0x21, 0x01, 0x15, 0x49
#define MPKPY_V_LO1 0xE7, 0xA3, 0x83, 0x83, 0x8B, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xDB, 0xCB, 0xCB
#define MPKPY_V_HI2 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0xE6, 0xAE, 0xBA, 0xBA, 0x01, 0x01, 0x01, 0x01

/* the 32 bytes that end k bytes before the block `in` (prev: the block before) */
#define MPKPY_PREV(in, prev, k) _mm256_alignr_epi8((in), _mm256_permute2x128_si256((prev), (in), 0x21), 16 - (k))

/* nonzero bytes where the block `in` (after `prev`) breaks a rule */
MPKPY_AVX2_INLINE __m256i mpkpy_utf8_block_errors(__m256i in, __m256i prev)
{
    const __m256i hi1 = _mm256_setr_epi8(MPKPY_V_HI1, MPKPY_V_HI1);
    const __m256i lo1 = _mm256_setr_epi8(MPKPY_V_LO1, MPKPY_V_LO1);
    const __m256i hi2 = _mm256_setr_epi8(MPKPY_V_HI2, MPKPY_V_HI2);
    const __m256i nib = _mm256_set1_epi8(0x0f);
    __m256i p1 = MPKPY_PREV(in, prev, 1), p2 = MPKPY_PREV(in, prev, 2), p3 = MPKPY_PREV(in, prev, 3);
    __m256i e = _mm256_and_si256(
        _mm256_and_si256(_mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(p1, 4), nib)),
                         _mm256_shuffle_epi8(lo1, _mm256_and_si256(p1, nib))),
        _mm256_shuffle_epi8(hi2, _mm256_and_si256(_mm256_srli_epi16(in, 4), nib)));
    /* 0x80 where the byte must be a continuation after a continuation: 2 after a lead >= E0, 3
     * after a lead >= F0 (saturating subtractions leave the top bit only for those) */
    __m256i must = _mm256_and_si256(_mm256_or_si256(_mm256_subs_epu8(p2, _mm256_set1_epi8(0x60)),
                                                    _mm256_subs_epu8(p3, _mm256_set1_epi8(0x70))),
                                    _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(e, must);
}

typedef struct {
    Py_ssize_t cont; /* continuation bytes */
    unsigned top;    /* the largest byte */
} mpkpy_utf8_summary;

/* 1 when s[0..n) is valid UTF-8 (CPython's strict rules), with the continuation bytes and the
 * largest byte in *sum; 0 when it is not. */
MPKPY_AVX2_FN static int mpkpy_utf8_check_avx2(const uint8_t *s, Py_ssize_t n, mpkpy_utf8_summary *sum)
{
    /* a block ending with a lead that needs more bytes than the block has: nonzero */
    const __m256i tail_max = _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                              -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                              (char)0xEF, (char)0xDF, (char)0xBF);
    const __m256i below_c0 = _mm256_set1_epi8((char)0xC0); /* signed: continuation bytes are less */
    __m256i prev = _mm256_setzero_si256(), incomplete = _mm256_setzero_si256(), err = _mm256_setzero_si256();
    __m256i top = _mm256_setzero_si256(), conts = _mm256_setzero_si256(), lanes = _mm256_setzero_si256();
    int turns = 0;
    Py_ssize_t i = 0;
    for (;; i += 32) {
        __m256i in;
        int last = n - i < 32;
        if (LIKELY(!last)) {
            in = _mm256_loadu_si256((const __m256i *)(s + i));
            if (!_mm256_movemask_epi8(in)) {
                /* ASCII: an error only if the block before ended inside a sequence */
                err = _mm256_or_si256(err, incomplete);
                incomplete = _mm256_setzero_si256();
                prev = in;
                continue;
            }
        } else {
            /* the last 0-31 bytes, then zeros: ASCII after the end shows a sequence cut short */
            uint8_t pad[32] = {0};
            memcpy(pad, s + i, (size_t)(n - i));
            in = _mm256_loadu_si256((const __m256i *)pad);
        }
        err = _mm256_or_si256(err, mpkpy_utf8_block_errors(in, prev));
        incomplete = _mm256_subs_epu8(in, tail_max);
        top = _mm256_max_epu8(top, in);
        lanes = _mm256_sub_epi8(lanes, _mm256_cmpgt_epi8(below_c0, in));
        if (++turns == 255 || last) { /* byte lanes summed before they can overflow */
            conts = _mm256_add_epi64(conts, _mm256_sad_epu8(lanes, _mm256_setzero_si256()));
            lanes = _mm256_setzero_si256();
            turns = 0;
        }
        prev = in;
        if (last) break;
    }
    if (!_mm256_testz_si256(err, err)) return 0;
    __m128i t = _mm_max_epu8(_mm256_castsi256_si128(top), _mm256_extracti128_si256(top, 1));
    t = _mm_max_epu8(t, _mm_srli_si128(t, 8));
    t = _mm_max_epu8(t, _mm_srli_si128(t, 4));
    t = _mm_max_epu8(t, _mm_srli_si128(t, 2));
    t = _mm_max_epu8(t, _mm_srli_si128(t, 1));
    sum->top = (unsigned)_mm_cvtsi128_si32(t) & 0xff;
    sum->cont = (Py_ssize_t)(_mm256_extract_epi64(conts, 0) + _mm256_extract_epi64(conts, 1) +
                             _mm256_extract_epi64(conts, 2) + _mm256_extract_epi64(conts, 3));
    return 1;
}

/* ---- the fill ---------------------------------------------------------------------------------
 * For input positions q..q+7 (a 16-byte load at q), lane j holds bytes q+j..q+j+3 (b0 lowest).
 * Decoded as if a code point started at q+j: b0 masked by its lead class (0x7F, 0x1F, 0x0F, 0x07),
 * the next three bytes by 0x3F, assembled as b0<<18 | b1<<12 | b2<<6 | b3 (maddubs, then madd) and
 * shifted right by 6 for each byte the sequence does not have (18, 12, 6, 0). */
#define MPKPY_F_MASK 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f, 0x3f, 0x3f, 0x3f, 0x1f, 0x1f, 0x0f, 0x07
#define MPKPY_F_SHIFT 18, 18, 18, 18, 18, 18, 18, 18, 0, 0, 0, 0, 12, 12, 6, 0
#define MPKPY_F_SPREAD 0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6

MPKPY_AVX2_INLINE __m256i mpkpy_utf8_decode8(const uint8_t *q)
{
    const __m256i spread = _mm256_setr_epi8(MPKPY_F_SPREAD, MPKPY_F_SPREAD); /* + 4 in the high half */
    const __m256i masks = _mm256_setr_epi8(MPKPY_F_MASK, MPKPY_F_MASK);
    const __m256i shifts = _mm256_setr_epi8(MPKPY_F_SHIFT, MPKPY_F_SHIFT);
    __m128i src = _mm_loadu_si128((const __m128i *)q);
    __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(src), _mm_srli_si128(src, 4), 1);
    __m256i d = _mm256_shuffle_epi8(both, spread);
    __m256i lead = _mm256_and_si256(_mm256_srli_epi32(d, 4), _mm256_set1_epi32(0x0f));
    /* the table's entry 0 (0x7F) falls on bytes 1-3, which 0x3F3F3FFF masks again */
    __m256i m = _mm256_and_si256(_mm256_and_si256(d, _mm256_set1_epi32(0x3f3f3fff)), _mm256_shuffle_epi8(masks, lead));
    __m256i pairs = _mm256_maddubs_epi16(m, _mm256_set1_epi32(0x01400140)); /* b0*64+b1, b2*64+b3 */
    __m256i full = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x00011000)); /* (b0*64+b1)*4096 + ... */
    __m256i sh = _mm256_and_si256(_mm256_shuffle_epi8(shifts, lead), _mm256_set1_epi32(0xff));
    return _mm256_srlv_epi32(full, sh);
}

/* The code points of lanes `starts` (a mask of 8) moved to the front */
MPKPY_AVX2_INLINE __m256i mpkpy_pack_starts(__m256i cp, unsigned starts)
{
    __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)mpkpy_pack_lanes[starts]));
    return _mm256_permutevar8x32_epi32(cp, idx);
}

/* Unchecked decode of valid UTF-8 (the tail of the vector loop), one code point a step */
#define MPKPY_UTF8_SCALAR_TAIL(kind, out, k, s, i, n)                                                   \
    while (i < n) {                                                                                    \
        unsigned c0 = s[i];                                                                            \
        Py_UCS4 cp;                                                                                    \
        if (c0 < 0x80) {                                                                               \
            cp = c0;                                                                                   \
            i += 1;                                                                                    \
        } else if (c0 < 0xe0) {                                                                        \
            cp = ((c0 & 0x1f) << 6) | (s[i + 1] & 0x3f);                                               \
            i += 2;                                                                                    \
        } else if (c0 < 0xf0) {                                                                        \
            cp = ((c0 & 0x0f) << 12) | ((Py_UCS4)(s[i + 1] & 0x3f) << 6) | (s[i + 2] & 0x3f);          \
            i += 3;                                                                                    \
        } else {                                                                                       \
            cp = ((c0 & 0x07) << 18) | ((Py_UCS4)(s[i + 1] & 0x3f) << 12) |                            \
                 ((Py_UCS4)(s[i + 2] & 0x3f) << 6) | (s[i + 3] & 0x3f);                                \
            i += 4;                                                                                    \
        }                                                                                              \
        MPKPY_PUT(kind, out, k, cp);                                                                   \
        k++;                                                                                           \
    }

/* The fill of a str of `kind` (a constant in each caller) from n bytes of valid UTF-8. Stores 8
 * code points at out[k] whatever the number of starts among the 8 positions: safe because the loop
 * runs while 56 bytes are left, so the last step's position has 32 bytes after it, which hold at
 * least 8 code points (every 4 consecutive bytes of valid UTF-8 hold a start). */
MPKPY_AVX2_INLINE void mpkpy_utf8_fill_avx2(int kind, void *out, const uint8_t *s, Py_ssize_t n)
{
    const __m256i below_c0 = _mm256_set1_epi8((char)0xC0);
    Py_ssize_t i = 0, k = 0;
    while (n - i >= 56) {
        __m256i blk = _mm256_loadu_si256((const __m256i *)(s + i));
        if (!_mm256_movemask_epi8(blk)) {
            if (kind == 1) {
                _mm256_storeu_si256((__m256i *)((Py_UCS1 *)out + k), blk);
            } else if (kind == 2) {
                Py_UCS2 *o = (Py_UCS2 *)out + k;
                _mm256_storeu_si256((__m256i *)o, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(blk)));
                _mm256_storeu_si256((__m256i *)(o + 16), _mm256_cvtepu8_epi16(_mm256_extracti128_si256(blk, 1)));
            } else {
                Py_UCS4 *o = (Py_UCS4 *)out + k;
                __m128i lo = _mm256_castsi256_si128(blk), hi = _mm256_extracti128_si256(blk, 1);
                _mm256_storeu_si256((__m256i *)o, _mm256_cvtepu8_epi32(lo));
                _mm256_storeu_si256((__m256i *)(o + 8), _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
                _mm256_storeu_si256((__m256i *)(o + 16), _mm256_cvtepu8_epi32(hi));
                _mm256_storeu_si256((__m256i *)(o + 24), _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
            }
            i += 32;
            k += 32;
            continue;
        }
        /* the positions that start a code point: every byte that is not 10xxxxxx */
        uint32_t starts = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(below_c0, blk));
        for (int j = 0; j < 4; j++) {
            unsigned m = (starts >> (8 * j)) & 0xff;
            __m256i cp = mpkpy_pack_starts(mpkpy_utf8_decode8(s + i + 8 * j), m);
            if (kind == 4) {
                _mm256_storeu_si256((__m256i *)((Py_UCS4 *)out + k), cp);
            } else {
                __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(cp), _mm256_extracti128_si256(cp, 1));
                if (kind == 2)
                    _mm_storeu_si128((__m128i *)((Py_UCS2 *)out + k), w);
                else
                    _mm_storel_epi64((__m128i *)((Py_UCS1 *)out + k), _mm_packus_epi16(w, w));
            }
            k += __builtin_popcount(m);
        }
        i += 32;
    }
    /* the last code point of the loop may end past i: its continuation bytes were its lane's */
    while (i < n && (s[i] & 0xc0) == 0x80) i++;
    MPKPY_UTF8_SCALAR_TAIL(kind, out, k, s, i, n)
}

/* The fill of a Latin-1 str (kind 1: the only leads are C2 and C3), 32 bytes a step: each lead
 * byte becomes its code point (0x80 or 0xC0 by the lead's low bit, ORed with the next byte's 6
 * bits), then the continuation bytes are squeezed out 8 bytes at a time (pshufb by the same table
 * of start positions). Half the instructions of mpkpy_utf8_fill_avx2(1, ...) on `long str array`
 * (mostly ASCII, an accented word in ten). Stores 8 bytes at out[k] per 8 positions: the loop runs
 * while 40 bytes are left, so the last 8 positions have 16 bytes from them, at least 8 code points
 * (at most 2 bytes each). */
MPKPY_AVX2_FN static void mpkpy_utf8_fill_avx2_1(Py_UCS1 *out, const uint8_t *s, Py_ssize_t n)
{
    const __m256i c0 = _mm256_set1_epi8((char)0xC0), low6 = _mm256_set1_epi8(0x3f), nib = _mm256_set1_epi8(0x0f);
    const __m256i top2 = _mm256_setr_epi8(0, 0, (char)0x80, (char)0xC0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          0, 0, (char)0x80, (char)0xC0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    Py_ssize_t i = 0, k = 0;
    while (n - i >= 40) {
        __m256i blk = _mm256_loadu_si256((const __m256i *)(s + i));
        if (!_mm256_movemask_epi8(blk)) {
            _mm256_storeu_si256((__m256i *)(out + k), blk);
            i += 32;
            k += 32;
            continue;
        }
        __m256i next = _mm256_loadu_si256((const __m256i *)(s + i + 1));
        __m256i lead = _mm256_cmpeq_epi8(_mm256_and_si256(blk, c0), c0);
        __m256i cp = _mm256_or_si256(_mm256_and_si256(next, low6), _mm256_shuffle_epi8(top2, _mm256_and_si256(blk, nib)));
        __m256i v = _mm256_blendv_epi8(blk, cp, lead);
        uint32_t keep = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(c0, blk)); /* not 10xxxxxx */
        __m128i half[2] = {_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)};
        for (int j = 0; j < 4; j++) {
            unsigned m = (keep >> (8 * j)) & 0xff;
            __m128i chunk = (j & 1) ? _mm_srli_si128(half[j >> 1], 8) : half[j >> 1];
            __m128i idx = _mm_loadl_epi64((const __m128i *)mpkpy_pack_lanes[m]);
            _mm_storel_epi64((__m128i *)(out + k), _mm_shuffle_epi8(chunk, idx));
            k += __builtin_popcount(m);
        }
        i += 32;
    }
    while (i < n && (s[i] & 0xc0) == 0x80) i++;
    MPKPY_UTF8_SCALAR_TAIL(1, out, k, s, i, n)
}
MPKPY_AVX2_FN static void mpkpy_utf8_fill_avx2_2(Py_UCS2 *out, const uint8_t *s, Py_ssize_t n)
{
    mpkpy_utf8_fill_avx2(2, out, s, n);
}
MPKPY_AVX2_FN static void mpkpy_utf8_fill_avx2_4(Py_UCS4 *out, const uint8_t *s, Py_ssize_t n)
{
    mpkpy_utf8_fill_avx2(4, out, s, n);
}

/* The str of s[0..n) by the AVX2 check and fill; NULL without an exception when the bytes are not
 * valid UTF-8 (CPython's decoder then gives the error), with one when out of memory. */
static PyObject *mpkpy_str_from_utf8_avx2(const uint8_t *s, Py_ssize_t n)
{
    mpkpy_utf8_summary sum;
    if (!mpkpy_utf8_check_avx2(s, n, &sum)) return NULL;
    Py_ssize_t count = n - sum.cont;
    Py_UCS4 maxchar = sum.top < 0x80 ? 0x7f : sum.top < 0xc4 ? 0xff : sum.top < 0xf0 ? 0xffff : 0x10ffff;
    PyObject *u = PyUnicode_New(count, maxchar);
    if (!u) return NULL;
    switch (PyUnicode_KIND(u)) {
    case PyUnicode_1BYTE_KIND: mpkpy_utf8_fill_avx2_1(PyUnicode_1BYTE_DATA(u), s, n); break;
    case PyUnicode_2BYTE_KIND: mpkpy_utf8_fill_avx2_2(PyUnicode_2BYTE_DATA(u), s, n); break;
    default: mpkpy_utf8_fill_avx2_4(PyUnicode_4BYTE_DATA(u), s, n); break;
    }
    return u;
}

#endif /* MPKPY_UTF8_AVX2 */
#endif
