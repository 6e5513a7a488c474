/* mpk/common.h — what every layer shares: version, error kinds, the error struct, limits, types.
 *
 * Names: every public symbol starts with mpk_ / MPK_; symbols starting with mpk__ / MPK__ are
 * private helpers that must appear in headers because the fast paths are inline (the out-of-line
 * ones are exported from libmpk.so as mpk_inline_*, see writer.h; no mpk__ symbol is). */
#ifndef MPK_COMMON_H
#define MPK_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------
 * Export (Public): MPK_API marks what libmpk.so exports. The shared library is compiled with
 * hidden visibility and MPK_EXPORTS (CMake does both), so only the declarations marked here leave
 * it; for everyone else (the static library, a program, sources compiled by hand) it is empty.
 * ----------------------------------------------------------------------------------------------*/
#if defined(MPK_EXPORTS) && defined(_WIN32)
#define MPK_API __declspec(dllexport)
#elif defined(MPK_EXPORTS) && (defined(__GNUC__) || defined(__clang__))
#define MPK_API __attribute__((visibility("default")))
#else
#define MPK_API
#endif

/* ------------------------------------------------------------------------------------------------
 * Version (Public)
 * ----------------------------------------------------------------------------------------------*/
#define MPK_VERSION_MAJOR 0
#define MPK_VERSION_MINOR 1
#define MPK_VERSION_PATCH 0
#define MPK_VERSION_STRING "0.1.0"

/** The library's version string, e.g. "0.1.0" (the one built, not the header's). */
MPK_API const char *mpk_version(void);

/* ------------------------------------------------------------------------------------------------
 * Compiler helpers (Private)
 * ----------------------------------------------------------------------------------------------*/
#if defined(__GNUC__) || defined(__clang__)
#define MPK__INLINE static __inline__ __attribute__((always_inline))
#define MPK__LIKELY(x) __builtin_expect(!!(x), 1)
#define MPK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MPK__NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define MPK__INLINE static __forceinline
#define MPK__LIKELY(x) (x)
#define MPK__UNLIKELY(x) (x)
#define MPK__NOINLINE __declspec(noinline)
#else
#define MPK__INLINE static inline
#define MPK__LIKELY(x) (x)
#define MPK__UNLIKELY(x) (x)
#define MPK__NOINLINE
#endif

/* Big-endian loads and stores. memcpy of a fixed size compiles to one unaligned move; the byte swap
 * is one instruction (bswap / rev) where the compiler has the builtin. */
#if defined(__GNUC__) || defined(__clang__)
#define MPK__BSWAP16(x) __builtin_bswap16(x)
#define MPK__BSWAP32(x) __builtin_bswap32(x)
#define MPK__BSWAP64(x) __builtin_bswap64(x)
#else
#define MPK__BSWAP16(x) ((uint16_t)(((x) >> 8) | ((x) << 8)))
#define MPK__BSWAP32(x)                                                                           \
    ((((x) >> 24) & 0xffu) | (((x) >> 8) & 0xff00u) | (((x) << 8) & 0xff0000u) | ((x) << 24))
#define MPK__BSWAP64(x)                                                                           \
    (((uint64_t)MPK__BSWAP32((uint32_t)(x)) << 32) | MPK__BSWAP32((uint32_t)((x) >> 32)))
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define MPK__BE16(x) (x)
#define MPK__BE32(x) (x)
#define MPK__BE64(x) (x)
#else
#define MPK__BE16(x) MPK__BSWAP16(x)
#define MPK__BE32(x) MPK__BSWAP32(x)
#define MPK__BE64(x) MPK__BSWAP64(x)
#endif

MPK__INLINE uint16_t mpk__load16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return (uint16_t)MPK__BE16(v); }
MPK__INLINE uint32_t mpk__load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return MPK__BE32(v); }
MPK__INLINE uint64_t mpk__load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return MPK__BE64(v); }
MPK__INLINE void mpk__store16(uint8_t *p, uint16_t v) { v = (uint16_t)MPK__BE16(v); memcpy(p, &v, 2); }
MPK__INLINE void mpk__store32(uint8_t *p, uint32_t v) { v = MPK__BE32(v); memcpy(p, &v, 4); }
MPK__INLINE void mpk__store64(uint8_t *p, uint64_t v) { v = MPK__BE64(v); memcpy(p, &v, 8); }

/* Copies n bytes with fixed-size moves: whole 16-byte moves, then the last 16 bytes overlapping the
 * ones before (8-, 4-byte and single moves below 16), never reading past src + n nor writing past
 * dst + n. For short strs in the extensions' hot paths: a memcpy of variable length there becomes
 * `rep movsb`/`movsq`, slow to start (measured in python/ext/fast_paths.h and ruby/ext/mpk). */
MPK__INLINE void mpk__copy_short(void *dst_, const void *src_, size_t n) {
    uint8_t *dst = (uint8_t *)dst_;
    const uint8_t *src = (const uint8_t *)src_;
    if (n >= 16) {
        for (size_t i = 0; i + 16 < n; i += 16) memcpy(dst + i, src + i, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else if (n > 0) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/* After a str/bin/ext payload, `next` is the following head and `stride` the bytes from this head
 * to it. A decoder cannot know where the head after next lies until it has read next, so long
 * payloads make a chain of cache and TLB misses; but values in a row are often alike, so the heads
 * one, two and three strides on are good guesses, and a prefetch of each lets those misses overlap
 * (8 KiB bins read one after another from 268 MB: about a third less time per bin here). A
 * prefetch is only a hint (a wrong guess costs a wasted line), and the addresses stay inside the
 * input. Short payloads are left to the hardware prefetchers. */
MPK__INLINE void mpk__prefetch_alike(const uint8_t *next, size_t stride, const uint8_t *end) {
#if defined(__GNUC__) || defined(__clang__)
    if (stride < 256) return;
    size_t left = (size_t)(end - next); /* each guess is checked to lie inside the input */
    if (left <= stride) return;
    const uint8_t *guess = next + stride;
    __builtin_prefetch(guess);
    if ((left -= stride) <= stride) return;
    __builtin_prefetch(guess += stride);
    if ((left -= stride) <= stride) return;
    __builtin_prefetch(guess + stride);
#else
    (void)next; (void)stride; (void)end;
#endif
}

/* ------------------------------------------------------------------------------------------------
 * Errors (Public)
 * ----------------------------------------------------------------------------------------------*/

/** What went wrong. The first seven are the corpus kinds of spec/README.md, with its offsets; the
 *  rest come from the writer, the allocator, the JSON layer and callers. */
typedef enum mpk_error_kind {
    MPK_OK = 0,                 /**< no error */
    MPK_ERR_TRUNCATED,          /**< "truncated": the input ends inside a value */
    MPK_ERR_INVALID_BYTE,       /**< "invalid_byte": head byte 0xc1 */
    MPK_ERR_DEPTH_LIMIT,        /**< "depth_limit": a container nests deeper than limits.depth */
    MPK_ERR_LENGTH_LIMIT,       /**< "length_limit": a length or count is over its limit */
    MPK_ERR_INVALID_TIMESTAMP,  /**< "invalid_timestamp": ext -1 of bad length, or nsec > 999999999 */
    MPK_ERR_INVALID_UTF8,       /**< "invalid_utf8": strict UTF-8 mode, a str that is not UTF-8 */
    MPK_ERR_TRAILING_BYTES,     /**< "trailing_bytes": one value decoded, bytes remain */
    MPK_ERR_NO_MEMORY,          /**< "no_memory": an allocation failed */
    MPK_ERR_IO,                 /**< "io": a flush callback reported failure */
    MPK_ERR_BUFFER_FULL,        /**< "buffer_full": a fixed output buffer is too small */
    MPK_ERR_INVALID_ARGUMENT,   /**< "invalid_argument": e.g. a length > 2^32-1 */
    MPK_ERR_TYPE,               /**< "type": a reader expect-call found another type */
    MPK_ERR_JSON,               /**< "json": malformed JSON text (offset = the byte where it broke) */
    MPK_ERR_COUNT_MISMATCH      /**< "count_mismatch": writer checks: an array or map was given fewer
                                     or more values than its head declared */
} mpk_error_kind;

/** An error: its kind and the byte offset from the start of the input where it was found. */
typedef struct mpk_error {
    mpk_error_kind kind;
    size_t offset;
} mpk_error;

/** The spec spelling of a kind ("truncated", "invalid_byte", ...); "ok" for MPK_OK; never NULL. */
MPK_API const char *mpk_error_name(mpk_error_kind kind);

/** Writes "<name> at byte <offset>" (e.g. "truncated at byte 0") into buf, NUL-terminated and cut
 *  to size; returns the length the whole message needs, as snprintf does. */
MPK_API int mpk_error_format(mpk_error error, char *buf, size_t size);

/* ------------------------------------------------------------------------------------------------
 * Limits (Public)
 * ----------------------------------------------------------------------------------------------*/

/** Default nesting depth: a top-level array is at depth 1; 1024 nested arrays pass. */
#define MPK_DEFAULT_DEPTH 1024u
/** Default for every length/count limit: the format's own maximum, 2^32-1. A one-shot decoder is
 *  safe with it because each declared length is checked against the bytes present. A stream fed by
 *  an untrusted peer should lower str/bin/ext (it buffers one incomplete value). */
#define MPK_DEFAULT_LENGTH 4294967295u

/** Decoding limits; a value over one is MPK_ERR_LENGTH_LIMIT / MPK_ERR_DEPTH_LIMIT at its head. */
typedef struct mpk_limits {
    uint32_t depth; /**< containers enclosing a value, itself included */
    uint32_t str;   /**< bytes of one str */
    uint32_t bin;   /**< bytes of one bin */
    uint32_t ext;   /**< payload bytes of one ext (timestamps included) */
    uint32_t array; /**< elements of one array */
    uint32_t map;   /**< key/value pairs of one map */
} mpk_limits;

/** The defaults as a value: {1024, 2^32-1, 2^32-1, 2^32-1, 2^32-1, 2^32-1}. */
MPK_API mpk_limits mpk_limits_default(void);

/** Decode flags, combined with |. */
enum {
    MPK_FLAG_STRICT_UTF8 = 1u << 0, /**< a str must be valid UTF-8, else MPK_ERR_INVALID_UTF8 */
    MPK_FLAG_COPY = 1u << 1         /**< DOM only: copy str/bin/ext payloads into the doc's arena */
};

/* ------------------------------------------------------------------------------------------------
 * Types (Public)
 * ----------------------------------------------------------------------------------------------*/

/** The type of a decoded value. Every non-negative integer is MPK_UINT and every negative one
 *  MPK_INT, whatever family it was encoded in. An ext of type -1 is always MPK_TIMESTAMP. */
typedef enum mpk_type {
    MPK_NIL = 0,
    MPK_BOOL,
    MPK_UINT,
    MPK_INT,
    MPK_FLOAT32,
    MPK_FLOAT64,
    MPK_STR,
    MPK_BIN,
    MPK_ARRAY,
    MPK_MAP,
    MPK_EXT,
    MPK_TIMESTAMP
} mpk_type;

/** Name of a type: "nil", "bool", "uint", "int", "float32", "float64", "str", "bin", "array",
 *  "map", "ext", "timestamp". */
MPK_API const char *mpk_type_name(mpk_type type);

/** A timestamp (ext -1): seconds since 1970-01-01T00:00:00Z and nanoseconds 0..999999999. */
typedef struct mpk_timestamp {
    int64_t sec;
    uint32_t nsec;
} mpk_timestamp;

/** Checks a UTF-8 byte string (no overlongs, no surrogates, nothing above U+10FFFF). 1 if valid. */
MPK_API int mpk_utf8_valid(const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
