/* internal.h — helpers shared by the decoders (not installed). */
#ifndef MPK_INTERNAL_H
#define MPK_INTERNAL_H

#include "mpk/common.h"

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

#endif
