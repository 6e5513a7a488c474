/* One library under test ("side"), as a table of functions the harness calls.
 *
 * Every side does the same work on the same values; the harness times the calls, checks what they
 * return against the expected counts and against the other sides, and computes ratios. A side's
 * "bytes" are its own wire format: MessagePack for mpk and msgpack-c, JSON text for the JSON side. */
#ifndef MPK_BENCH_SIDE_H
#define MPK_BENCH_SIDE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Encoded bytes. A side packs into its own output buffer, which it keeps and reuses from one pack
 * to the next (mpk_writer_reset, msgpack_sbuffer_clear, StringBuffer::Clear), as a program that
 * sends many messages does; so the data is valid until the side's next pack or release. JSON text
 * is NUL-terminated (data[len] == 0), which RapidJSON's fastest parse path needs. */
typedef struct bench_buf {
    char *data;
    size_t len;
} bench_buf;

/* What a decode produced, so that a decode that did nothing cannot pass, and so that the sides can
 * be compared with each other: every node counts once (containers, scalars, map keys), ints add
 * to int_sum (wrapping), str and bin lengths add to byte_sum; messages counts top-level values. */
typedef struct bench_check {
    uint64_t messages;
    uint64_t nodes;
    uint64_t int_sum;
    uint64_t byte_sum;
} bench_check;

/* The strings of a string table: string i is the first lengths[i] bytes of chars. */
typedef struct bench_strings {
    const char *chars;
    const uint32_t *lengths;
    uint32_t count;
} bench_strings;

/* The messages of the stream rows. */
typedef enum bench_message {
    MSG_PAIR_POSITIVE, /* [1, 2] */
    MSG_PAIR_NEGATIVE, /* [-1, -2] */
    MSG_BIN,           /* an 8 KiB bin (a string of 8192 bytes in JSON, which has no binary) */
    MSG_NESTED         /* [[1, 2], [-1, -2], <8 KiB bin>] */
} bench_message;

#define BENCH_BIN_SIZE 8192u
/* The bin payload every side writes: BENCH_BIN_SIZE bytes of 'x' (filled in by main). */
extern char bench_bin_payload[BENCH_BIN_SIZE];

/* How a stream of messages is read back: fed in chunks to a streaming decoder, or decoded one
 * value after another from the whole buffer. */
typedef enum bench_unpack_mode { UNPACK_STREAM, UNPACK_ONESHOT } bench_unpack_mode;

/* Chunk size for the streaming decoders: a typical socket read. */
#define BENCH_CHUNK 65536u

typedef struct bench_side {
    const char *name;
    /* Synthetic rows: write the values into the side's output buffer. Return 0 on success. */
    int (*pack_ints)(uint32_t count, bench_buf *out);
    int (*pack_strings)(const bench_strings *strings, bench_buf *out);
    int (*pack_messages)(bench_message message, uint32_t count, bench_buf *out);
    /* Decode one value into the side's DOM (timed); NULL on error. With fresh == 0 the side
     * decodes into memory it keeps from one decode to the next, as far as its API allows (the
     * steady state of a program that decodes many messages); with fresh != 0 into memory new from
     * the allocator, freed again by dom_free. */
    void *(*dom_decode)(const bench_buf *in, int fresh);
    /* Walk the DOM and fill the check (not timed). */
    void (*dom_check)(const void *dom, bench_check *check);
    /* Encode the DOM back (the corpus rows' "pack"). Return 0 on success. */
    int (*dom_encode)(const void *dom, bench_buf *out);
    /* Done with a decode's DOM: frees a fresh one; a kept one stays for the next decode. */
    void (*dom_free)(void *dom);
    /* Decode every message of a stream, adding each to the check (timed). Return 0 on success. */
    int (*unpack_messages)(const bench_buf *in, bench_unpack_mode mode, bench_check *check);
    /* Free the output buffer (the next pack starts from an empty one). */
    void (*release)(void);
    /* Zero-copy pack (NULL if the side has none): like pack_strings (strings != NULL) or
     * pack_messages, but into the side's reference-chunk output, where bodies of at least
     * BENCH_REF_THRESHOLD bytes are pointed to, not copied: the pieces a program hands to writev.
     * The list of pieces is built inside the call. Return 0 on success. */
    int (*pack_chunks)(const bench_strings *strings, bench_message message, uint32_t count);
    /* Concatenate the last pack_chunks output into dst (cap bytes), for the check (not timed).
     * Return the length, or -1 if it does not fit. */
    long long (*gather_chunks)(char *dst, size_t cap);
} bench_side;

/* Bodies of at least this many bytes are referenced in the zero-copy rows, the same for every side
 * (mpk's default; msgpack-c's vrefbuffer is given it as its ref_size). */
#define BENCH_REF_THRESHOLD 1024u

extern const bench_side bench_side_mpk;
extern const bench_side bench_side_msgpackc;
extern const bench_side bench_side_json;

/* The JSON library's version string, for the table header. */
const char *bench_json_version(void);
/* Convert a JSON text to MessagePack (ints stay ints, other numbers become float 64), once, for
 * the corpus rows; out->data is malloc'd. Return 0 on success. */
int bench_json_to_msgpack(const char *json, size_t len, bench_buf *out);

/* One entry of the common workloads' manifest.json (bench/workloads/gen.py): its id, title and
 * protobuf message ("" when it has none, or when it has no .pb file). */
typedef struct bench_workload {
    char id[64];
    char title[160];
    char proto[64];
} bench_workload;

/* Read a manifest's entries (NUL-terminated JSON text) into out, at most max of them. Returns the
 * number read, or -1 when the text is not a manifest. */
int bench_read_manifest(const char *json, bench_workload *out, int max);

#ifdef __cplusplus
}
#endif

#endif
