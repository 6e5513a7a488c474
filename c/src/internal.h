/* internal.h — helpers shared by the decoders (not installed). */
#ifndef MPK_INTERNAL_H
#define MPK_INTERNAL_H

#include "mpk/common.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* A timestamp payload (4, 8 or 12 bytes) into sec/nsec; 0 if its length or nsec is invalid. */
static inline int mpk__decode_timestamp(const uint8_t *p, uint32_t len, mpk_timestamp *ts) {
    if (len == 4) {
        ts->sec = (int64_t)mpk__load32(p);
        ts->nsec = 0;
        return 1;
    }
    if (len == 8) {
        uint64_t v = mpk__load64(p);
        ts->nsec = (uint32_t)(v >> 34);
        ts->sec = (int64_t)(v & 0x3ffffffffull);
    } else if (len == 12) {
        ts->nsec = mpk__load32(p);
        ts->sec = (int64_t)mpk__load64(p + 4);
    } else {
        return 0;
    }
    return ts->nsec <= 999999999u;
}

struct mpk_doc;
struct mpk_node;
/* dom.c: one value from the start of data; see mpk_doc_parse and mpk_stream_next_doc. */
const struct mpk_node *mpk__doc_parse_value(struct mpk_doc *d, const void *data, size_t len, size_t *consumed);

/* Byte length of a head: head byte + length field + ext type byte (0 for 0xc1). Payload not
 * included. */
static inline unsigned mpk__head_size(uint8_t b) {
    static const uint8_t sizes[64] = {
        /* c0 */ 1, 0, 1, 1, 2, 3, 5, 3, 4, 6, 5, 9, 2, 3, 5, 9,
        /* d0 */ 2, 3, 5, 9, 2, 2, 2, 2, 2, 2, 3, 5, 3, 5, 3, 5,
        /* e0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        /* f0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    return b < 0xc0 ? 1u : sizes[b - 0xc0];
}

/* What a head starts, read from its bytes: the one classification of heads that the bindings'
 * own walkers share with the core (python/ext/decoder.c's stream walker reads every head
 * through it). */
typedef enum mpk__head_kind {
    MPK__HEAD_INVALID = 0, /* 0xc1 */
    MPK__HEAD_SCALAR,      /* nil, bool, int, float: the head is the whole value */
    MPK__HEAD_STR,
    MPK__HEAD_BIN,
    MPK__HEAD_EXT,
    MPK__HEAD_ARRAY,
    MPK__HEAD_MAP
} mpk__head_kind;

typedef struct mpk__head {
    mpk__head_kind kind;
    unsigned size;  /* mpk__head_size: head byte, length field and ext type byte */
    uint64_t n;     /* str/bin/ext: the body's bytes after the head; array/map: the element
                     * (array) or pair (map) count; scalar: 0 */
    int8_t type;    /* ext: the type byte; 0 otherwise */
} mpk__head;

/* Reads the head at h, of which mpk__head_size(h[0]) bytes must be present (0xc1: kind
 * MPK__HEAD_INVALID, size 0, nothing read past h[0]). Checks nothing against limits. (common.c) */
void mpk__read_head(const uint8_t *h, mpk__head *out);


/* Big buffers (node arrays, copy arenas, growable output) are written once, front to back; a
 * 2^24-element array takes 256 MiB of nodes. With 4 KiB pages that is a page fault per 4 KiB:
 * asking Linux for transparent huge pages (granted on request under the common "madvise" setting)
 * cut the faults of that parse from 65537 to 640 and its time about five-fold here. A no-op
 * elsewhere and for buffers under 8 MiB. Sources defining _DEFAULT_SOURCE get madvise declared.
 * Define MPK_NO_HUGE_PAGES to leave page sizes to the system (under defrag=madvise a huge-page
 * fault may compact memory synchronously, which a latency-bound program may not want). */
static inline void mpk__advise_huge(void *p, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(MPK_NO_HUGE_PAGES)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (size < 4 * huge) return;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~(huge - 1);
    if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}

#endif
