/* writer.c — the writer's slow paths: growing, flushing, referencing bodies, heads, timestamps. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise, for mpk__advise_huge (internal.h) */
#endif
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "mpk/writer.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#if defined(__unix__) || defined(__APPLE__)
#include <errno.h>
#include <unistd.h>
#define MPK__HAVE_FD 1
#endif

#if (defined(__x86_64__) || defined(_M_X64)) && !defined(MPK_NO_STREAMING_STORES)
#include <emmintrin.h>
#define MPK__STREAMING 1
#endif

enum { MODE_GROWABLE, MODE_FIXED, MODE_FLUSH, MODE_CHUNKS, MODE_ALLOC };

/* Writer checks start on in a debug build (NDEBUG not defined) unless the build says otherwise. */
#ifndef MPK_WRITER_CHECKS_DEFAULT
#ifdef NDEBUG
#define MPK_WRITER_CHECKS_DEFAULT 0
#else
#define MPK_WRITER_CHECKS_DEFAULT 1
#endif
#endif

/* Bodies of at least STREAM_MIN_BODY bytes written at least STREAM_MIN_OFFSET bytes into the
 * output are copied with streaming (non-temporal) stores on x86-64: a plain copy reads every
 * destination line into the cache before overwriting it, a streaming one only writes it, and
 * output that large would leave the cache anyway. Measured here (EPYC, 1 MiB L2, 32 MiB L3),
 * copying 8 KiB bodies from a hot source into a 256 MiB buffer took 23-32 ms instead of 42-63 ms
 * (glibc memcpy), bodies of 0..8191 bytes 24-28 ms instead of 40-42 ms. Below the offset the output
 * may still be read from the cache (a small message sent right away), so it is copied plainly. */
#define STREAM_MIN_BODY 1024
#define STREAM_MIN_OFFSET ((size_t)4 << 20)

/* The flush buffer must hold the longest head or fixed-size value (15 bytes: timestamp 96). */
#define MIN_FLUSH_CAP 64
#define DEFAULT_FLUSH_CAP (64 * 1024)
#define DEFAULT_GROWABLE_CAP 256
#define DEFAULT_REF_THRESHOLD 1024

/* ================================================================================================
 * Lifecycle (Public)
 * ==============================================================================================*/

static void set_buffer(mpk_writer *w, uint8_t *buf, size_t cap) {
    w->buf = w->pos = buf;
    w->end = w->cap_end = buf + cap;
}

/* Speed trick (writer_clear): an init or destroy stores the fields that a later call on the writer
 * reads in its mode, instead of clearing the whole struct. memset of the 248-byte struct compiled
 * to `rep stos`, whose start-up cost is paid twice per MPK.pack in Ruby (an init_alloc and an
 * init_buf(NULL, 0)): 14-22 ns each, 17% of a Test1 pack in Ruby's perf profile. Fields left as
 * they were are read in one mode only, and that mode's init sets them: flush, flush_ctx and
 * flushed (flush mode), grow and grow_ctx (caller-grown), chunks_cap and run_at (chunk mode; they
 * are read only once chunks is non-NULL or the mode is chunks); check_cap, check_head and
 * check_small are written before they are read (check_push starts from check_owed == NULL). Every
 * field any mode's calls read is set here: the buffer (NULL), the error, owns_buf and chunks
 * (destroy frees by them), nchunks, check_owed and the check cursor, and ref_threshold, which is
 * 0 outside chunk mode (cpp/include/mpk reads it as "not chunk mode"). The portable fallback is
 * the same code: these are plain stores. Measured per [1, 2] pack (init, three values, finish,
 * then init_buf(NULL, 0) or destroy), callgrind instructions: Ruby's pattern (init_alloc ...
 * init_buf(NULL, 0)) 190 -> 137, init_buf 107 -> 82, init_alloc + destroy 205 -> 142, growable +
 * destroy 317 -> 255; time, old and new writer.c in one process, alternating rounds, best of 15:
 * Ruby's pattern 95.8 -> 44.1 ns, init_alloc + destroy 99.0 -> 42.1 ns (callgrind counts a
 * `rep stos` as few instructions; its cost is its start-up). */
static void writer_clear(mpk_writer *w, int mode) {
    w->pos = w->end = w->buf = w->cap_end = NULL;
    w->mode = mode;
    w->owns_buf = 0;
    w->error = MPK_OK;
    w->ref_threshold = 0;
    w->chunks = NULL;
    w->nchunks = 0;
    w->checks = MPK_WRITER_CHECKS_DEFAULT;
    w->check_at = 0;
    w->check_skip = 0;
    w->check_have = 0;
    w->check_depth = 0;
    w->check_owed = NULL;
}

void mpk_writer_init_growable(mpk_writer *w, size_t initial_capacity) {
    writer_clear(w, MODE_GROWABLE);
    if (initial_capacity == 0) initial_capacity = DEFAULT_GROWABLE_CAP;
    uint8_t *buf = (uint8_t *)malloc(initial_capacity);
    if (!buf) {
        w->error = MPK_ERR_NO_MEMORY;
        return;
    }
    w->owns_buf = 1;
    set_buffer(w, buf, initial_capacity);
}

void mpk_writer_init_alloc(mpk_writer *w, size_t initial, mpk_grow_fn grow_fn, void *ctx) {
    writer_clear(w, MODE_ALLOC);
    w->grow = grow_fn;
    w->grow_ctx = ctx;
    if (!grow_fn) {
        w->error = MPK_ERR_INVALID_ARGUMENT;
        return;
    }
    if (initial == 0) initial = DEFAULT_GROWABLE_CAP;
    uint8_t *buf = (uint8_t *)grow_fn(ctx, NULL, initial);
    if (!buf) {
        w->error = MPK_ERR_NO_MEMORY;
        return;
    }
    set_buffer(w, buf, initial);
}

void mpk_writer_init_buf(mpk_writer *w, void *buf, size_t cap) {
    writer_clear(w, MODE_FIXED);
    set_buffer(w, (uint8_t *)buf, buf ? cap : 0);
}

void mpk_writer_init_flush(mpk_writer *w, void *buf, size_t cap, mpk_flush_fn fn, void *ctx) {
    writer_clear(w, MODE_FLUSH);
    w->flush = fn;
    w->flush_ctx = ctx;
    w->flushed = 0;
    if (!fn || (buf && cap < MIN_FLUSH_CAP)) {
        w->error = MPK_ERR_INVALID_ARGUMENT;
        return;
    }
    if (!buf) {
        if (cap < MIN_FLUSH_CAP) cap = cap ? MIN_FLUSH_CAP : DEFAULT_FLUSH_CAP;
        buf = malloc(cap);
        if (!buf) {
            w->error = MPK_ERR_NO_MEMORY;
            return;
        }
        w->owns_buf = 1;
    }
    set_buffer(w, (uint8_t *)buf, cap);
}

void mpk_writer_init_chunks(mpk_writer *w, size_t ref_threshold) {
    mpk_writer_init_growable(w, 0);
    w->mode = MODE_CHUNKS;
    w->ref_threshold = ref_threshold ? ref_threshold : DEFAULT_REF_THRESHOLD;
    w->chunks_cap = 0;
    w->run_at = 0;
}

void mpk_writer_flag_error(mpk_writer *w, mpk_error_kind kind) {
    if (w->error == MPK_OK) w->error = kind;
    w->end = w->pos; /* every fast path now fails its room check and lands in the slow path */
}

#ifdef MPK__STREAMING
/* The line that holds the head and the body's first bytes is copied plainly, and so is the last
 * partial line: streaming stores start on a line boundary. A line written partly by plain and
 * partly by streaming stores made the copy as slow as a plain one (measured). */
static MPK__NOINLINE void stream_copy(uint8_t *dst, const uint8_t *src, size_t len) {
    size_t lead = (size_t)(-(uintptr_t)dst & 63);
    memcpy(dst, src, lead);
    dst += lead;
    src += lead;
    len -= lead;
    for (; len >= 64; len -= 64, dst += 64, src += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)src);
        __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, len);
}
#endif

/* A body into the buffer at dst (room checked by the caller). */
MPK__INLINE void copy_body(const mpk_writer *w, uint8_t *dst, const void *src, size_t len) {
#ifdef MPK__STREAMING
    if (len >= STREAM_MIN_BODY && (size_t)(dst - w->buf) >= STREAM_MIN_OFFSET) {
        stream_copy(dst, (const uint8_t *)src, len);
        return;
    }
#else
    (void)w;
#endif
    memcpy(dst, src, len);
}

/* Streaming stores are ordered only for this thread: before the output is handed on (finish,
 * release, chunks, a flush) a fence orders them for every other thread too. */
static void order_stores(void) {
#ifdef MPK__STREAMING
    _mm_sfence();
#endif
}

/* ================================================================================================
 * Writer checks (Public; see mpk_writer_set_checks)
 * ==============================================================================================*/

/* The output is read back as MessagePack heads: each open container's entry holds the values it
 * still owes (bit 63 marks a map). An entry is decremented when one of its values STARTS, so an
 * entry at 0 whose last value is itself an open container stays under that container's entry;
 * entries at 0 on top of the stack are closed by the next value or by an end call. */
#define CHECK_MAP ((uint64_t)1 << 63)
#define CHECK_OWED(e) ((e) & ~CHECK_MAP)

static void check_reset(mpk_writer *w) {
    w->check_at = (size_t)(w->pos - w->buf);
    w->check_skip = 0;
    w->check_have = 0;
    w->check_depth = 0;
}

void mpk_writer_set_checks(mpk_writer *w, int on) {
    w->checks = on != 0;
    check_reset(w);
}

static void check_fail(mpk_writer *w) { mpk_writer_flag_error(w, MPK_ERR_COUNT_MISMATCH); }

/* Closes the containers that have every value (those on top of the stack at 0). */
static void check_close_done(mpk_writer *w) {
    while (w->check_depth && CHECK_OWED(w->check_owed[w->check_depth - 1]) == 0) w->check_depth--;
}

/* The stack: 8 levels inside the writer, the heap beyond (freed when the output is finished or
 * the writer destroyed, so that a fixed-buffer writer, which callers need not destroy, leaks
 * nothing). */
static void check_free(mpk_writer *w) {
    if (w->check_owed != w->check_small) free(w->check_owed);
    w->check_owed = NULL;
    w->check_cap = 0;
    w->check_depth = 0;
}

static int check_push(mpk_writer *w, uint64_t entry) {
    if (!w->check_owed) {
        w->check_owed = w->check_small;
        w->check_cap = (uint32_t)(sizeof w->check_small / sizeof w->check_small[0]);
    }
    if (w->check_depth == w->check_cap) {
        if (w->check_cap > UINT32_MAX / 2) {
            mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
            return 0;
        }
        uint32_t cap = w->check_cap * 2;
        int small = w->check_owed == w->check_small;
        uint64_t *owed = (uint64_t *)realloc(small ? NULL : w->check_owed, (size_t)cap * sizeof *owed);
        if (!owed) {
            mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
            return 0;
        }
        if (small) memcpy(owed, w->check_small, sizeof w->check_small);
        w->check_owed = owed;
        w->check_cap = cap;
    }
    w->check_owed[w->check_depth++] = entry;
    return 1;
}

/* Reads n output bytes. 0 once the output is wrong (the error is set). */
static int check_scan(mpk_writer *w, const uint8_t *p, size_t n) {
    while (n) {
        if (w->check_skip) {
            size_t k = w->check_skip < n ? (size_t)w->check_skip : n;
            w->check_skip -= k;
            p += k;
            n -= k;
            continue;
        }
        if (w->check_have == 0) {
            if (*p == 0xc1) { /* raw bytes (mpk_write_bytes) that are no MessagePack */
                mpk_writer_flag_error(w, MPK_ERR_INVALID_ARGUMENT);
                return 0;
            }
            /* a value starts: close finished containers, then charge it to the innermost open one */
            check_close_done(w);
            if (w->check_depth) w->check_owed[w->check_depth - 1]--;
        }
        unsigned hs = mpk__head_size(w->check_have ? w->check_head[0] : *p);
        size_t k = hs - w->check_have < n ? hs - w->check_have : n;
        memcpy(w->check_head + w->check_have, p, k);
        w->check_have = (uint8_t)(w->check_have + k);
        p += k;
        n -= k;
        if (w->check_have < hs) return 1;
        w->check_have = 0;
        const uint8_t *h = w->check_head;
        uint8_t b = h[0];
        uint64_t count = 0, payload = 0;
        int map = 0, container = 0;
        if (b <= 0x7f || b >= 0xe0) continue;
        if (b <= 0x8f) { count = b & 0x0f; map = container = 1; }
        else if (b <= 0x9f) { count = b & 0x0f; container = 1; }
        else if (b <= 0xbf) payload = b & 0x1f;
        else switch (b) {
            case 0xc4: case 0xc7: case 0xd9: payload = h[1]; break;
            case 0xc5: case 0xc8: case 0xda: payload = mpk__load16(h + 1); break;
            case 0xc6: case 0xc9: case 0xdb: payload = mpk__load32(h + 1); break;
            case 0xd4: payload = 1; break;
            case 0xd5: payload = 2; break;
            case 0xd6: payload = 4; break;
            case 0xd7: payload = 8; break;
            case 0xd8: payload = 16; break;
            case 0xdc: count = mpk__load16(h + 1); container = 1; break;
            case 0xdd: count = mpk__load32(h + 1); container = 1; break;
            case 0xde: count = mpk__load16(h + 1); map = container = 1; break;
            case 0xdf: count = mpk__load32(h + 1); map = container = 1; break;
            default: break; /* nil, bool, floats, ints: the head is the value */
            }
        if (container && !check_push(w, (map ? 2 * count : count) | (map ? CHECK_MAP : 0))) return 0;
        w->check_skip = payload;
    }
    return 1;
}

/* Reads the buffer up to pos. */
static int check_sync(mpk_writer *w) {
    size_t at = (size_t)(w->pos - w->buf);
    if (!w->checks || w->error != MPK_OK || at <= w->check_at) return w->error == MPK_OK;
    int ok = check_scan(w, w->buf + w->check_at, at - w->check_at);
    w->check_at = at;
    return ok;
}

/* The output so far ends between top-level values. The output is being finished: the stack goes
 * (it is empty when the output is right, and the error is sticky when it is not). */
static int check_complete(mpk_writer *w) {
    int ok = 1;
    if (w->checks && w->error == MPK_OK) {
        if (!check_sync(w)) ok = 0;
        else {
            check_close_done(w);
            if (w->check_depth || w->check_have || w->check_skip) {
                check_fail(w);
                ok = 0;
            }
        }
    }
    check_free(w);
    return ok;
}

static void write_end(mpk_writer *w, int map) {
    if (!w->checks || !check_sync(w)) return;
    /* the innermost container not yet closed: at 0, with nothing of its last value pending, and
     * of the kind named */
    if (w->check_depth == 0 || w->check_have || w->check_skip) {
        check_fail(w);
        return;
    }
    uint64_t e = w->check_owed[w->check_depth - 1];
    if (CHECK_OWED(e) != 0 || ((e & CHECK_MAP) != 0) != map) {
        check_fail(w);
        return;
    }
    w->check_depth--;
}

void mpk_write_array_end(mpk_writer *w) { write_end(w, 0); }
void mpk_write_map_end(mpk_writer *w) { write_end(w, 1); }

static int do_flush(mpk_writer *w, const void *data, size_t len) {
    if (w->checks) {
        /* the buffer is read back before it goes (and is then emptied by every caller); a body
         * sent straight from the caller's memory, after the buffer, is read as it goes */
        if (data == w->buf) {
            if (!check_sync(w)) return 0;
            w->check_at = 0;
        } else if (w->error != MPK_OK || !check_scan(w, (const uint8_t *)data, len)) {
            return 0;
        }
    }
    if (len == 0) return 1;
    order_stores();
    if (w->flush(w->flush_ctx, data, len) != 0) {
        mpk_writer_flag_error(w, MPK_ERR_IO);
        return 0;
    }
    w->flushed += len;
    return 1;
}

mpk_error_kind mpk_writer_finish(mpk_writer *w) {
    check_complete(w);
    order_stores();
    if (w->error == MPK_OK && w->mode == MODE_FLUSH) {
        if (do_flush(w, w->buf, (size_t)(w->pos - w->buf))) w->pos = w->buf;
    }
    return w->error;
}

/* Leaves what a zeroed writer is to every later call (writer_clear; a second destroy frees
 * nothing), without the memset (see writer_clear) or a call to free(NULL). */
void mpk_writer_destroy(mpk_writer *w) {
    if (w->check_owed && w->check_owed != w->check_small) free(w->check_owed);
    if (w->owns_buf) free(w->buf);
    if (w->chunks) free(w->chunks);
    writer_clear(w, MODE_GROWABLE);
    w->checks = 0;
}

void mpk_writer_reset(mpk_writer *w) {
    if (!w->buf && (w->mode == MODE_GROWABLE || w->mode == MODE_CHUNKS)) {
        /* after mpk_writer_release, or a failed first allocation: start a new buffer */
        uint8_t *buf = (uint8_t *)malloc(DEFAULT_GROWABLE_CAP);
        if (buf) {
            w->owns_buf = 1;
            set_buffer(w, buf, DEFAULT_GROWABLE_CAP);
        }
    }
    w->pos = w->buf;
    w->end = w->cap_end;
    w->error = w->buf || w->mode == MODE_FIXED ? MPK_OK : MPK_ERR_NO_MEMORY;
    if (w->mode == MODE_FLUSH && !w->flush) w->error = MPK_ERR_INVALID_ARGUMENT;
    w->flushed = 0;
    w->nchunks = 0;
    w->run_at = 0;
    check_reset(w);
}

mpk_error_kind mpk_writer_rewind(mpk_writer *w, size_t size) {
    if (size == 0) {
        mpk_writer_reset(w);
        return w->error;
    }
    if ((w->mode != MODE_GROWABLE && w->mode != MODE_FIXED && w->mode != MODE_ALLOC) || !w->buf ||
        size > (size_t)(w->pos - w->buf))
        return MPK_ERR_INVALID_ARGUMENT;
    /* a failed growth leaves the old buffer and its bytes in place, so the first `size` are intact */
    w->pos = w->buf + size;
    w->end = w->cap_end;
    w->error = MPK_OK;
    check_reset(w);
    return MPK_OK;
}

uint8_t *mpk_writer_release(mpk_writer *w, size_t *size) {
    check_complete(w);
    if (w->mode != MODE_GROWABLE || w->error != MPK_OK) {
        if (size) *size = 0;
        return NULL;
    }
    uint8_t *buf = w->buf;
    order_stores();
    if (size) *size = (size_t)(w->pos - w->buf);
    w->buf = w->pos = w->end = w->cap_end = NULL;
    w->owns_buf = 0;
    w->error = MPK_ERR_NO_MEMORY; /* until reset with a new buffer: there is none */
    return buf;
}

static int grow_chunks(mpk_writer *w, size_t need);

/* The list is built as the values are written (add_ref); only the run after the last referenced
 * body is added here, past the recorded count, so that writing may go on afterwards. */
int mpk_writer_chunks(mpk_writer *w, const mpk_chunk **chunks, size_t *count) {
    *chunks = NULL;
    *count = 0;
    if (w->mode == MODE_CHUNKS) check_complete(w);
    if (w->error != MPK_OK || w->mode != MODE_CHUNKS) return 0;
    order_stores();
    size_t n = w->nchunks, size = (size_t)(w->pos - w->buf);
    if (w->chunks_cap < n + 1 && !grow_chunks(w, n + 1)) return 0;
    if (size > w->run_at) {
        w->chunks[n].data = w->buf + w->run_at;
        w->chunks[n++].len = size - w->run_at;
    }
    *chunks = w->chunks;
    *count = n;
    return 1;
}

/* ================================================================================================
 * Flush callbacks (Public)
 * ==============================================================================================*/

int mpk_flush_file(void *ctx, const void *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : -1;
}

int mpk_flush_fd(void *ctx, const void *data, size_t len) {
#ifdef MPK__HAVE_FD
    int fd = (int)(intptr_t)ctx;
    const uint8_t *p = (const uint8_t *)data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
#else
    (void)ctx; (void)data; (void)len;
    return -1;
#endif
}

/* ================================================================================================
 * Slow paths (Private)
 * ==============================================================================================*/

/* Chunk mode with pieces listed: the listed buffer runs must move with the buffer. They are the
 * pieces that lie in the old buffer's used bytes (a referenced body cannot: it must stay valid, the
 * buffer did not). The new buffer is malloc'd and the old one freed only after the runs are rebased,
 * so no pointer into freed memory is ever read or compared (a realloc followed by a rebase against
 * the old address is what GCC 12's -Wuse-after-free rightly flags). Growth doubles, so the copy and
 * this pass are paid once per doubling of the output; realloc would mostly copy too. */
static uint8_t *move_listed(mpk_writer *w, size_t new_cap, size_t used) {
    uint8_t *buf = (uint8_t *)malloc(new_cap);
    if (!buf) return NULL;
    const uint8_t *old = w->buf;
    if (used) memcpy(buf, old, used);
    for (size_t i = 0; i < w->nchunks; i++) {
        const uint8_t *at = (const uint8_t *)w->chunks[i].data;
        /* a run lies inside [old, old + used); compared as integers since a referenced body is
         * another object, and relational operators between distinct objects are undefined */
        uintptr_t off = (uintptr_t)at - (uintptr_t)old;
        if (off < used) w->chunks[i].data = buf + off;
    }
    free(w->buf);
    return buf;
}

static int grow(mpk_writer *w, size_t n) {
    /* no object may exceed PTRDIFF_MAX bytes (pointer differences must stay defined) */
    const size_t limit = (size_t)PTRDIFF_MAX;
    size_t used = (size_t)(w->pos - w->buf);
    size_t cap = (size_t)(w->cap_end - w->buf);
    if (n > limit - used) {
        mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
        return 0;
    }
    size_t want = used + n;
    size_t new_cap = cap > limit / 2 ? limit : cap * 2;
    if (new_cap < want) new_cap = want;
    if (new_cap < DEFAULT_GROWABLE_CAP) new_cap = DEFAULT_GROWABLE_CAP;
    if (w->mode == MODE_ALLOC) {
        /* The caller's memory: grown by its callback, and no madvise, since the writer does not
         * know what else shares those pages (a Python bytes object's header, another mapping). */
        uint8_t *buf = (uint8_t *)w->grow(w->grow_ctx, w->buf, new_cap);
        if (!buf) {
            /* the old buffer may be gone (a callback need not keep it, unlike realloc): forget it,
             * so that neither a reset nor mpk_writer_data() can reach it */
            mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
            w->buf = w->pos = w->end = w->cap_end = NULL;
            return 0;
        }
        w->buf = buf;
        w->pos = buf + used;
        w->end = w->cap_end = buf + new_cap;
        return 1;
    }
    uint8_t *buf = w->mode == MODE_CHUNKS && w->nchunks ? move_listed(w, new_cap, used)
                                                        : (uint8_t *)realloc(w->buf, new_cap);
    if (!buf) {
        mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
        return 0;
    }
    w->buf = buf;
    w->pos = buf + used;
    w->end = w->cap_end = buf + new_cap;
    mpk__advise_huge(buf, new_cap);
    return 1;
}

MPK__NOINLINE int mpk__writer_make_room(mpk_writer *w, size_t n) {
    if (w->error != MPK_OK) {
        w->end = w->pos;
        return 0;
    }
    switch (w->mode) {
    case MODE_GROWABLE:
    case MODE_CHUNKS:
    case MODE_ALLOC:
        return grow(w, n);
    case MODE_FLUSH:
        if (!do_flush(w, w->buf, (size_t)(w->pos - w->buf))) return 0;
        w->pos = w->buf;
        if ((size_t)(w->end - w->pos) >= n) return 1;
        mpk_writer_flag_error(w, MPK_ERR_BUFFER_FULL);
        return 0;
    default:
        mpk_writer_flag_error(w, MPK_ERR_BUFFER_FULL);
        return 0;
    }
}

static MPK__NOINLINE int grow_chunks(mpk_writer *w, size_t need) {
    size_t cap = w->chunks_cap ? w->chunks_cap * 2 : 16;
    if (cap < need) cap = need;
    if (cap > SIZE_MAX / sizeof(mpk_chunk)) {
        mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
        return 0;
    }
    mpk_chunk *chunks = (mpk_chunk *)realloc(w->chunks, cap * sizeof *chunks);
    if (!chunks) {
        mpk_writer_flag_error(w, MPK_ERR_NO_MEMORY);
        return 0;
    }
    w->chunks = chunks;
    w->chunks_cap = cap;
    return 1;
}

/* Lists the buffer run before a referenced body, then the body: the pieces are built as they are
 * written, with no second pass over a list of references in mpk_writer_chunks (that pass and the
 * list cost about 14 instructions and 56 bytes of memory traffic per referenced body). Inline, with
 * its growth apart: as a call it cost about 30 instructions per body. */
MPK__INLINE int add_ref(mpk_writer *w, const void *data, size_t len) {
    if (MPK__UNLIKELY(w->checks) && (!check_sync(w) || !check_scan(w, (const uint8_t *)data, len))) return 0;
    if (MPK__UNLIKELY(w->chunks_cap - w->nchunks < 2) && !grow_chunks(w, w->nchunks + 2)) return 0;
    size_t at = (size_t)(w->pos - w->buf);
    mpk_chunk *c = w->chunks + w->nchunks;
    if (at > w->run_at) {
        c->data = w->buf + w->run_at;
        c->len = at - w->run_at;
        c++;
        w->run_at = at;
    }
    c->data = data;
    c->len = len;
    w->nchunks = (size_t)(c + 1 - w->chunks);
    return 1;
}

MPK__NOINLINE void mpk__write_body(mpk_writer *w, const void *data, size_t len) {
    if (w->error != MPK_OK || len == 0) return;
    if (w->mode == MODE_CHUNKS && len >= w->ref_threshold) {
        add_ref(w, data, len);
        return;
    }
    if (w->mode == MODE_FLUSH && (size_t)(w->end - w->pos) < len) {
        /* Too big for what is left: flush, then send a body the buffer cannot hold as it is. */
        if (!do_flush(w, w->buf, (size_t)(w->pos - w->buf))) return;
        w->pos = w->buf;
        if ((size_t)(w->end - w->pos) < len) {
            do_flush(w, data, len);
            return;
        }
    }
    if (!mpk__writer_room(w, len)) return;
    copy_body(w, w->pos, data, len);
    w->pos += len;
}

/* ================================================================================================
 * Heads and composite values (Public)
 * ==============================================================================================*/

static int check_len(mpk_writer *w, size_t len) {
    if (len > 0xffffffffu) {
        mpk_writer_flag_error(w, MPK_ERR_INVALID_ARGUMENT);
        return 0;
    }
    return 1;
}

/* Heads are assembled in a small array and stored with one exact room check, so a fixed buffer
 * that has just enough space for the head is never reported full. */
static void put(mpk_writer *w, const uint8_t *head, size_t n) {
    if (!mpk__writer_room(w, n)) return;
    memcpy(w->pos, head, n);
    w->pos += n;
}

/* A head and its body in one call: a referenced body (chunk mode) or one room check for both.
 * Writing them apart cost three calls per value (value, head, body): a chunk-mode 8 KiB bin took
 * 115 instructions, msgpack-c's vrefbuffer 138 (callgrind). Inlined at each head size, so that the
 * head's copy has a constant size (with a variable one it is a call to memcpy). Anything unusual (no room, flush mode
 * with a full buffer, an earlier error) takes the separate head and body paths, which decide it. */
MPK__INLINE void put_framed(mpk_writer *w, const uint8_t *head, size_t n, const void *data, size_t len) {
    if (w->mode == MODE_CHUNKS && len >= w->ref_threshold) {
        if ((size_t)(w->end - w->pos) >= n) {
            memcpy(w->pos, head, n);
            w->pos += n;
            add_ref(w, data, len);
            return;
        }
    } else if ((size_t)(w->end - w->pos) >= n + len) {
        memcpy(w->pos, head, n);
        if (len) copy_body(w, w->pos + n, data, len); /* data may be NULL when len is 0 */
        w->pos += n + len;
        return;
    }
    put(w, head, n);
    mpk__write_body(w, data, len);
}

/* str and bin heads: with data, the head and its body (put_framed); without, the head alone. */
MPK__INLINE void put_str(mpk_writer *w, uint32_t len, const void *data, int with_body) {
    uint8_t h[5];
    if (len <= 31) {
        h[0] = (uint8_t)(0xa0 | len);
        if (with_body) put_framed(w, h, 1, data, len); else put(w, h, 1);
    } else if (len <= 0xff) {
        h[0] = 0xd9; h[1] = (uint8_t)len;
        if (with_body) put_framed(w, h, 2, data, len); else put(w, h, 2);
    } else if (len <= 0xffff) {
        h[0] = 0xda; mpk__store16(h + 1, (uint16_t)len);
        if (with_body) put_framed(w, h, 3, data, len); else put(w, h, 3);
    } else {
        h[0] = 0xdb; mpk__store32(h + 1, len);
        if (with_body) put_framed(w, h, 5, data, len); else put(w, h, 5);
    }
}

MPK__INLINE void put_bin(mpk_writer *w, uint32_t len, const void *data, int with_body) {
    uint8_t h[5];
    if (len <= 0xff) {
        h[0] = 0xc4; h[1] = (uint8_t)len;
        if (with_body) put_framed(w, h, 2, data, len); else put(w, h, 2);
    } else if (len <= 0xffff) {
        h[0] = 0xc5; mpk__store16(h + 1, (uint16_t)len);
        if (with_body) put_framed(w, h, 3, data, len); else put(w, h, 3);
    } else {
        h[0] = 0xc6; mpk__store32(h + 1, len);
        if (with_body) put_framed(w, h, 5, data, len); else put(w, h, 5);
    }
}

void mpk_write_str_head(mpk_writer *w, uint32_t len) { put_str(w, len, NULL, 0); }

/* Chunk mode's referenced bodies over 255 bytes (all of them at the default threshold): the head
 * straight into the buffer, then the reference, ahead of the general head code (which builds the
 * head apart and checks the mode after the length classes). 0 if the general path must decide. */
MPK__INLINE int put_ref(mpk_writer *w, uint8_t head16, const void *data, size_t len) {
    if (w->mode != MODE_CHUNKS || len < w->ref_threshold || len <= 0xff || len > 0xffffffffu ||
        (size_t)(w->end - w->pos) < 5)
        return 0;
    uint8_t *p = w->pos;
    if (len <= 0xffff) {
        p[0] = head16;
        mpk__store16(p + 1, (uint16_t)len);
        w->pos = p + 3;
    } else {
        p[0] = (uint8_t)(head16 + 1); /* str 32 / bin 32 follow str 16 / bin 16 */
        mpk__store32(p + 1, (uint32_t)len);
        w->pos = p + 5;
    }
    add_ref(w, data, len);
    return 1;
}

MPK__NOINLINE void mpk__write_str_slow(mpk_writer *w, const void *data, size_t len) {
    if (put_ref(w, 0xda, data, len)) return;
    if (!check_len(w, len)) return;
    put_str(w, (uint32_t)len, data, 1);
}

void mpk_write_bin_head(mpk_writer *w, uint32_t len) { put_bin(w, len, NULL, 0); }

void mpk_write_bin(mpk_writer *w, const void *data, size_t len) {
    if (put_ref(w, 0xc5, data, len)) return;
    if (!check_len(w, len)) return;
    put_bin(w, (uint32_t)len, data, 1);
}

void mpk_write_ext_head(mpk_writer *w, int8_t type, uint32_t len) {
    uint8_t h[6];
    switch (len) {
    case 1: h[0] = 0xd4; break;
    case 2: h[0] = 0xd5; break;
    case 4: h[0] = 0xd6; break;
    case 8: h[0] = 0xd7; break;
    case 16: h[0] = 0xd8; break;
    default:
        if (len <= 0xff) {
            h[0] = 0xc7; h[1] = (uint8_t)len; h[2] = (uint8_t)type;
            put(w, h, 3);
        } else if (len <= 0xffff) {
            h[0] = 0xc8; mpk__store16(h + 1, (uint16_t)len); h[3] = (uint8_t)type;
            put(w, h, 4);
        } else {
            h[0] = 0xc9; mpk__store32(h + 1, len); h[5] = (uint8_t)type;
            put(w, h, 6);
        }
        return;
    }
    h[1] = (uint8_t)type;
    put(w, h, 2);
}

void mpk_write_ext(mpk_writer *w, int8_t type, const void *data, size_t len) {
    if (!check_len(w, len)) return;
    mpk_write_ext_head(w, type, (uint32_t)len);
    mpk_write_bytes(w, data, len);
}

void mpk_write_timestamp(mpk_writer *w, int64_t sec, uint32_t nsec) {
    uint8_t h[15];
    if (nsec > 999999999u) {
        /* the decoders' kind for the same fault: a timestamp that cannot exist */
        mpk_writer_flag_error(w, MPK_ERR_INVALID_TIMESTAMP);
        return;
    }
    if (sec >= 0 && sec < ((int64_t)1 << 34)) {
        if (nsec == 0 && sec <= 0xffffffffll) {
            h[0] = 0xd6; h[1] = 0xff; mpk__store32(h + 2, (uint32_t)sec);
            put(w, h, 6);
        } else {
            h[0] = 0xd7; h[1] = 0xff; mpk__store64(h + 2, ((uint64_t)nsec << 34) | (uint64_t)sec);
            put(w, h, 10);
        }
    } else {
        h[0] = 0xc7; h[1] = 12; h[2] = 0xff;
        mpk__store32(h + 3, nsec);
        mpk__store64(h + 7, (uint64_t)sec);
        put(w, h, 15);
    }
}
