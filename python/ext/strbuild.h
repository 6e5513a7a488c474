/* strbuild.h — str objects made from UTF-8 bytes (the decoder's str values; make_str in decoder.c):
 *
 *   mpkpy_long_ascii_str  a str over 256 bytes whose first 256 bytes are ASCII: allocated as an
 *                         ASCII str and filled by mpkpy_ascii_copy, which checks while it copies
 *                         (SSE2 64 bytes a step; 8-byte words in the portable build). One pass where
 *                         CPython's decoder, on a body that is not 8-byte aligned, scans and then
 *                         copies: one 1 MiB string unpack 2.0-2.75x faster (3.11-3.13).
 *   mpkpy_utf8_census     the number of code points (every byte that is not a continuation byte
 *                         10xxxxxx starts one) and the largest byte, which names the str's kind when
 *                         the bytes are valid UTF-8 (below 0x80: ASCII; 0xC2-0xC3 leads only: UCS1;
 *                         leads up to 0xEF: UCS2; 0xF0-0xF4: UCS4). 16 bytes a step with SSE2
 *                         (mpkpy_utf8_census_sse2), else 8 (mpkpy_utf8_census_words, the portable one).
 *   mpkpy_str_from_utf8   a str of up to 256 bytes: the census, then PyUnicode_New(count, kind's max)
 *                         filled directly, each sequence checked as it is decoded (continuation bytes,
 *                         overlongs, surrogates, above U+10FFFF: CPython's strict rules). Replaces a
 *                         byte-at-a-time two-pass decoder: twitter unpack 8.46M -> 8.13M instructions
 *                         (3.12), 7.71M -> 7.45M (3.11).
 *   mpkpy_str_from_utf8_avx2  (utf8_avx2.h) on a CPU with AVX2, every non-ASCII str of 32 bytes or
 *                         more (below that the census and checked fill): a vector check, then a fill
 *                         without per-sequence checks. Without AVX2 (or with MPK_PY_NO_AVX2=1 at
 *                         import) a long non-ASCII str goes to CPython's decoder, as before.
 * Anything else (invalid bytes; a long non-ASCII str without AVX2) returns NULL without an exception
 * and make_str hands the bytes to PyUnicode_DecodeUTF8, whose result, error and error handlers are
 * the reference. Measurements and what was tried and dropped: python/bench/README.md, "Session 9"
 * and "Final: str and bin cells below the bar (session 10)".
 *
 * The count is safe on any bytes: the fill writes one code point per non-continuation byte it
 * consumes and checks every continuation byte it consumes, so it never writes past `count` whatever
 * the input; the kind is canonical (the narrowest that holds the str, as CPython requires) because
 * a valid sequence with lead 0xC2/0xC3 is U+0080-U+00FF, with lead 0xC4-0xDF or 0xE0-0xEF is
 * U+0100-U+FFFF, and with lead 0xF0-0xF4 is U+10000 or above. */
#ifndef MPKPY_STRBUILD_H
#define MPKPY_STRBUILD_H

#include "fast_paths.h"

#if !defined(MPKPY_PORTABLE) && (defined(__SSE2__) || defined(_M_X64))
#define MPKPY_CENSUS_SSE2 1
#include <emmintrin.h>
#endif

#define MPKPY_HI8 0x8080808080808080ull

typedef struct {
    Py_ssize_t cont; /* continuation bytes (10xxxxxx) */
    unsigned top;    /* the largest byte */
} mpkpy_census;

/* The portable census, 8 bytes a step: continuation bytes counted by their top two bits (10), the
 * largest byte tracked as three flags (any byte >= 0x80, any lead >= 0xC4, any lead >= 0xF0) from
 * which `top` is given as a representative byte of its class (0x7F, 0xC3, 0xEF, 0xF4). The tail (under
 * 8 bytes) byte by byte. */
MPK__INLINE mpkpy_census mpkpy_utf8_census_words(const uint8_t *s, Py_ssize_t n)
{
    uint64_t hi = 0, wide2 = 0, wide4 = 0;
    Py_ssize_t cont = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (!(w & MPKPY_HI8)) continue;
        uint64_t c = w & ~(w << 1) & MPKPY_HI8;             /* 10xxxxxx */
        uint64_t lead = w & (w << 1) & MPKPY_HI8;           /* 11xxxxxx */
        hi |= w;
        wide2 |= lead & ((w << 2) | (w << 3) | (w << 4) | (w << 5)); /* 11xxxx.. not 1100001x */
        wide4 |= lead & (w << 2) & (w << 3);                 /* 1111xxxx */
        /* the top bits of c summed: one per continuation byte */
        cont += (Py_ssize_t)(((c >> 7) * 0x0101010101010101ull) >> 56);
    }
    unsigned top = 0;
    for (; i < n; i++) {
        unsigned b = s[i];
        if ((b & 0xc0) == 0x80) cont++;
        if (b > top) top = b;
    }
    if (wide4 & MPKPY_HI8) top = top > 0xf4 ? top : 0xf4;
    else if (wide2 & MPKPY_HI8) top = top > 0xef ? top : 0xef;
    else if (hi & MPKPY_HI8) top = top > 0xc3 ? top : 0xc3;
    mpkpy_census r = {cont, top};
    return r;
}

#ifdef MPKPY_CENSUS_SSE2
/* The census 16 bytes a step (64 per loop turn): the largest byte by _mm_max_epu8, continuation
 * bytes as the signed bytes below -64 (0x80-0xBF), counted in byte lanes that are summed into
 * 64-bit ones (_mm_sad_epu8) before they can overflow (every 63 turns: 4 x 63 = 252 per lane).
 * The tail goes to mpkpy_utf8_census_words. Measured (callgrind, 3.12): see the header comment. */
MPK__INLINE mpkpy_census mpkpy_utf8_census_sse2(const uint8_t *s, Py_ssize_t n)
{
    const __m128i c0 = _mm_set1_epi8((char)0xc0);
    __m128i top = _mm_setzero_si128(), total = _mm_setzero_si128();
    Py_ssize_t i = 0;
    while (i + 64 <= n) {
        __m128i lanes = _mm_setzero_si128();
        Py_ssize_t stop = i + 63 * 64;
        if (stop > n) stop = n;
        for (; i + 64 <= stop; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(s + i + 48));
            top = _mm_max_epu8(top, _mm_max_epu8(_mm_max_epu8(a, b), _mm_max_epu8(c, d)));
            /* a compare gives -1 per continuation byte: subtracting counts them */
            lanes = _mm_sub_epi8(lanes, _mm_cmplt_epi8(a, c0));
            lanes = _mm_sub_epi8(lanes, _mm_cmplt_epi8(b, c0));
            lanes = _mm_sub_epi8(lanes, _mm_cmplt_epi8(c, c0));
            lanes = _mm_sub_epi8(lanes, _mm_cmplt_epi8(d, c0));
        }
        total = _mm_add_epi64(total, _mm_sad_epu8(lanes, _mm_setzero_si128()));
    }
    /* the largest of the 16 bytes */
    top = _mm_max_epu8(top, _mm_srli_si128(top, 8));
    top = _mm_max_epu8(top, _mm_srli_si128(top, 4));
    top = _mm_max_epu8(top, _mm_srli_si128(top, 2));
    top = _mm_max_epu8(top, _mm_srli_si128(top, 1));
    unsigned t = (unsigned)_mm_cvtsi128_si32(top) & 0xff;
    Py_ssize_t cont = (Py_ssize_t)_mm_cvtsi128_si32(total) + (Py_ssize_t)_mm_cvtsi128_si32(_mm_srli_si128(total, 8));
    mpkpy_census r = mpkpy_utf8_census_words(s + i, n - i);
    r.cont += cont;
    if (t > r.top) r.top = t;
    return r;
}
#endif

/* The census this build uses (SSE2 on x86-64, else the portable one) */
MPK__INLINE mpkpy_census mpkpy_utf8_census(const uint8_t *s, Py_ssize_t n)
{
#ifdef MPKPY_CENSUS_SSE2
    return mpkpy_utf8_census_sse2(s, n);
#else
    return mpkpy_utf8_census_words(s, n);
#endif
}

/* ---- the fill: one function per kind -----------------------------------------------------------
 * Each returns the number of code points written, or -1 at an invalid sequence (or one that cannot
 * be in a str of that kind, which the census rules out for valid input). `cap` is the census count,
 * never exceeded: every code point written consumes one byte that is not a continuation byte. After
 * an ASCII byte, a run of ASCII goes 8 bytes a step; a non-ASCII sequence is decoded by
 * mpkpy_utf8_one, without length checks while 4 bytes are left (the loop's bound), with them in the
 * last 3 bytes. First version (an 8-byte ASCII test before every code point, length checks in
 * every sequence): 16.7M instructions per unpackb of `utf8_strings` (3.12) against CPython's 9.9M. */

#define MPKPY_CONT(b) (((b) & 0xc0) == 0x80)

/* The non-ASCII sequence at p (avail bytes from p, avail >= 1) as a code point no larger than
 * `widest` (0xff, 0xffff or 0x10ffff: the str's kind), its length in *len; -1 if it is not valid
 * UTF-8 or does not fit the kind. Inlined with avail a constant 4 in the main loops, so the length
 * tests fold away there. */
MPK__INLINE int32_t mpkpy_utf8_one(const uint8_t *p, Py_ssize_t avail, Py_UCS4 widest, int *len)
{
    unsigned c = p[0];
    if (c < 0xe0) {
        if (c < 0xc2 || avail < 2 || !MPKPY_CONT(p[1])) return -1; /* continuation byte, overlong */
        *len = 2;
        return (int32_t)(((c & 0x1f) << 6) | (p[1] & 0x3f));
    }
    if (widest <= 0xff) return -1;
    if (c < 0xf0) {
        if (avail < 3 || ((p[1] & 0xc0) ^ 0x80) | ((p[2] & 0xc0) ^ 0x80)) return -1;
        uint32_t cp = ((c & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
        if (cp < 0x800 || cp - 0xd800 < 0x800) return -1; /* overlong, surrogate */
        *len = 3;
        return (int32_t)cp;
    }
    if (widest <= 0xffff || c > 0xf4 || avail < 4 ||
        (((p[1] & 0xc0) ^ 0x80) | ((p[2] & 0xc0) ^ 0x80) | ((p[3] & 0xc0) ^ 0x80)))
        return -1;
    uint32_t cp = ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) | ((uint32_t)(p[2] & 0x3f) << 6) |
                  (p[3] & 0x3f);
    if (cp < 0x10000 || cp > 0x10ffff) return -1; /* overlong, above U+10FFFF */
    *len = 4;
    return (int32_t)cp;
}

/* Writes code point cp at out[k] in a str of `kind` (a constant where inlined) */
#define MPKPY_PUT(kind, out, k, cp)                                                               \
    ((kind) == 1 ? (void)(((Py_UCS1 *)(out))[k] = (Py_UCS1)(cp))                                  \
     : (kind) == 2 ? (void)(((Py_UCS2 *)(out))[k] = (Py_UCS2)(cp))                                \
                   : (void)(((Py_UCS4 *)(out))[k] = (Py_UCS4)(cp)))

#include "utf8_avx2.h"

/* The fill of a str of `kind` (1, 2, 4; a constant in each of the three callers below), on
 * pointers (an index form was 1-2 instructions a code point more) */
MPK__INLINE Py_ssize_t mpkpy_fill_kind(int kind, void *out, Py_ssize_t cap, const uint8_t *s, Py_ssize_t n)
{
    Py_UCS4 widest = kind == 1 ? 0xff : kind == 2 ? 0xffff : 0x10ffff;
    const uint8_t *p = s, *end = s + n;
    Py_ssize_t k = 0;
    while (p < end) {
        unsigned c = *p;
        if (UNLIKELY(k >= cap)) return -1;
        if (c < 0x80) {
            MPKPY_PUT(kind, out, k, c);
            k++;
            p++;
            /* an ASCII run 8 bytes a step from an aligned address only (as CPython's decoder):
             * tried after every ASCII byte it cost 3 instructions a code point on mixed text */
            if (((uintptr_t)p & 7) == 0) {
                while (end - p >= 8 && cap - k >= 8) {
                    uint64_t w;
                    memcpy(&w, p, 8);
                    if (w & MPKPY_HI8) break;
                    if (kind == 1)
                        memcpy((Py_UCS1 *)out + k, &w, 8);
                    else
                        for (int j = 0; j < 8; j++) MPKPY_PUT(kind, out, k + j, p[j]);
                    p += 8;
                    k += 8;
                }
            }
            continue;
        }
        int len = 0;
        /* never a read past the str's last byte: its bytes are followed by the rest of the input */
        int32_t cp = LIKELY(end - p >= 4) ? mpkpy_utf8_one(p, 4, widest, &len)
                                       : mpkpy_utf8_one(p, end - p, widest, &len);
        if (UNLIKELY(cp < 0)) return -1;
        MPKPY_PUT(kind, out, k, cp);
        k++;
        p += len;
    }
    return k;
}

static Py_ssize_t mpkpy_fill_ucs1(Py_UCS1 *out, Py_ssize_t cap, const uint8_t *s, Py_ssize_t n)
{
    return mpkpy_fill_kind(1, out, cap, s, n);
}
static Py_ssize_t mpkpy_fill_ucs2(Py_UCS2 *out, Py_ssize_t cap, const uint8_t *s, Py_ssize_t n)
{
    return mpkpy_fill_kind(2, out, cap, s, n);
}
static Py_ssize_t mpkpy_fill_ucs4(Py_UCS4 *out, Py_ssize_t cap, const uint8_t *s, Py_ssize_t n)
{
    return mpkpy_fill_kind(4, out, cap, s, n);
}

/* ---- long ASCII: checked while copied ----------------------------------------------------------
 * mpkpy_ascii_copy copies s[0..n) to dst while it checks that every byte is ASCII, 64 bytes a step
 * (SSE2: four 16-byte loads, their OR's sign bits, four stores; portable: 8-byte words), and
 * returns n, or less when it met a non-ASCII byte (what was copied up to there is then of no use).
 * One pass over the bytes where CPython's decoder, for a body that is not 8-byte aligned (a str in
 * a MessagePack buffer behind a 3- or 5-byte head), checks the whole body and then memcpy's it. */
MPK__INLINE Py_ssize_t mpkpy_ascii_copy_words(uint8_t *dst, const uint8_t *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t a, b, c, d;
        memcpy(&a, s + i, 8);
        memcpy(&b, s + i + 8, 8);
        memcpy(&c, s + i + 16, 8);
        memcpy(&d, s + i + 24, 8);
        if ((a | b | c | d) & MPKPY_HI8) return i;
        memcpy(dst + i, &a, 8);
        memcpy(dst + i + 8, &b, 8);
        memcpy(dst + i + 16, &c, 8);
        memcpy(dst + i + 24, &d, 8);
    }
    for (; i < n; i++) {
        if (s[i] & 0x80) return i;
        dst[i] = s[i];
    }
    return n;
}

#ifdef MPKPY_CENSUS_SSE2
MPK__INLINE Py_ssize_t mpkpy_ascii_copy_sse2(uint8_t *dst, const uint8_t *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(s + i + 48));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)))) return i;
        _mm_storeu_si128((__m128i *)(dst + i), a);
        _mm_storeu_si128((__m128i *)(dst + i + 16), b);
        _mm_storeu_si128((__m128i *)(dst + i + 32), c);
        _mm_storeu_si128((__m128i *)(dst + i + 48), d);
    }
    Py_ssize_t r = mpkpy_ascii_copy_words(dst + i, s + i, n - i);
    return i + r;
}
#endif

MPK__INLINE Py_ssize_t mpkpy_ascii_copy(uint8_t *dst, const uint8_t *s, Py_ssize_t n)
{
#ifdef MPKPY_CENSUS_SSE2
    return mpkpy_ascii_copy_sse2(dst, s, n);
#else
    return mpkpy_ascii_copy_words(dst, s, n);
#endif
}

/* 1 when s[0..n) is ASCII (a scan that stops at the first 64-byte block that is not) */
MPK__INLINE int mpkpy_ascii_scan(const uint8_t *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
#ifdef MPKPY_CENSUS_SSE2
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(s + i + 48));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)))) return 0;
    }
#endif
    uint64_t acc = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < n; i++) acc |= s[i];
    return (acc & MPKPY_HI8) == 0;
}

/* A long str (over MPKPY_STR_FILL_MAX bytes) that is ASCII: its first 256 bytes are scanned (stopping
 * at the first block that is not ASCII), and when it is ASCII the str is made and filled by
 * mpkpy_ascii_copy; NULL without an exception when a byte is not ASCII (CPython's decoder then
 * decodes it: see mpkpy_str_from_utf8). Why the scan first: a str found not to be ASCII during the
 * copy has cost an allocation and the copy up to there for nothing; testing only the first 64
 * bytes before copying, `long str array` (1000 strs of 100 B-4 KiB, an accented word in ten) took
 * 2% more instructions than CPython's decoder alone (3.12: 8.27M against 8.10M per unpackb; with the 256-byte scan 8.06M; a 1 KiB scan cost
 * `strings of length 0..1023` 922k instructions against 807k). A scan of the whole str and then memcpy (no fused copy) measured 5-10% slower on `one 1 MiB string`
 * (same-process A/B, 3.12). */
#define MPKPY_ASCII_PROBE 256
static PyObject *mpkpy_long_ascii_str(const uint8_t *s, Py_ssize_t n)
{
    if (!mpkpy_ascii_scan(s, n < MPKPY_ASCII_PROBE ? n : MPKPY_ASCII_PROBE)) return NULL;
    PyObject *u = PyUnicode_New(n, 127);
    if (!u) return NULL;
    if (LIKELY(mpkpy_ascii_copy(PyUnicode_1BYTE_DATA(u), s, n) == n)) return u;
    Py_DECREF(u);
    return NULL;
}

/* A str of the UTF-8 bytes s[0..n), or NULL: with an exception (out of memory) or without one (the
 * bytes are not valid UTF-8, or long and not ASCII: the caller decodes them with CPython's decoder,
 * which also gives the error). Long non-ASCII bytes go to CPython: there the fill measured even with
 * its decoder in time and 27% more instructions (utf8_strings, 3.12: 13.0M against 10.2M per
 * unpackb; CPython's widening copies cost it little, its per-code-point loop is as tight as ours).
 * A branchless fill (every sequence length in one straight step, the checks folded into one flag)
 * removed the mispredicted branches (290k -> 1k per call) but took 31M instructions and 1.6x the
 * time: dropped. */
#define MPKPY_STR_FILL_MAX 256
/* Non-ASCII strs from this many bytes take the AVX2 path when it is on (utf8_avx2.h). Measured on
 * twitter unpack (755 non-ASCII strs, 3.12, callgrind per call): CPython's decoder above 256 bytes
 * 8.16M, the AVX2 path above 256 7.55M, from 128 7.27M, from 64 7.20M, from 32 7.18M, from 1 7.15M;
 * same-process times from 64 down to 1 were level within the noise, above 256 5-20% slower. */
#define MPKPY_AVX2_MIN 32

static PyObject *mpkpy_str_from_utf8(const uint8_t *s, Py_ssize_t n)
{
    if (n > MPKPY_STR_FILL_MAX) {
        PyObject *u = mpkpy_long_ascii_str(s, n);
#ifdef MPKPY_UTF8_AVX2
        /* not ASCII: the AVX2 check and fill when the CPU has it (utf8_avx2.h), else CPython's */
        if (!u && mpkpy_utf8_avx2_on && !PyErr_Occurred()) return mpkpy_str_from_utf8_avx2(s, n);
#endif
        return u;
    }
#ifdef MPKPY_UTF8_AVX2
    if (n >= MPKPY_AVX2_MIN && mpkpy_utf8_avx2_on) {
        PyObject *u = mpkpy_str_from_utf8_avx2(s, n);
        if (u || PyErr_Occurred()) return u;
        return NULL;
    }
#endif
    mpkpy_census c = mpkpy_utf8_census(s, n);
    if (c.top < 0x80) return mpkpy_ascii_str(s, n);
    Py_ssize_t count = n - c.cont;
    Py_UCS4 maxchar = c.top < 0xc4 ? 0xff : c.top < 0xf0 ? 0xffff : 0x10ffff;
    PyObject *u = PyUnicode_New(count, maxchar);
    if (!u) return NULL;
    Py_ssize_t k;
    switch (PyUnicode_KIND(u)) {
    case PyUnicode_1BYTE_KIND: k = mpkpy_fill_ucs1(PyUnicode_1BYTE_DATA(u), count, s, n); break;
    case PyUnicode_2BYTE_KIND: k = mpkpy_fill_ucs2(PyUnicode_2BYTE_DATA(u), count, s, n); break;
    default: k = mpkpy_fill_ucs4(PyUnicode_4BYTE_DATA(u), count, s, n); break;
    }
    if (UNLIKELY(k != count)) {
        Py_DECREF(u);
        return NULL;
    }
    return u;
}

/* Called once at import: which path long non-ASCII strs take (see utf8_avx2.h) */
static void mpkpy_strbuild_init(void)
{
#ifdef MPKPY_UTF8_AVX2
    mpkpy_utf8_avx2_init();
#endif
}

/* "avx2" or "portable" (CPython's decoder): the module's _utf8_path, which the tests check */
static const char *mpkpy_strbuild_path(void)
{
#ifdef MPKPY_UTF8_AVX2
    if (mpkpy_utf8_avx2_on) return "avx2";
#endif
    return "portable";
}

#endif
