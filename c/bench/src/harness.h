/* The timing loop and the table: rows of work, each done by every side, in interleaved rounds. */
#ifndef MPK_BENCH_HARNESS_H
#define MPK_BENCH_HARNESS_H

#include "side.h"

#include <stdio.h>

#define BENCH_MAX_SIDES 4
#define BENCH_MAX_ROUNDS 31

typedef enum bench_row_kind { ROW_INTS, ROW_STRINGS, ROW_MESSAGES, ROW_CORPUS } bench_row_kind;

/* What a row's ops are. DOM rows: pack, unpack (into the DOM memory kept from the last decode).
 * The ints row also unpacks into fresh memory (its DOM is hundreds of MB, all new pages from the
 * kernel). Message rows: pack, unpack with the streaming decoder, unpack one value after another
 * from the whole buffer. Rows with long str/bin bodies (the strings, the 8 KiB bins) also pack into
 * reference chunks (zero-copy, for writev). */
typedef enum bench_op {
    OP_PACK,
    OP_UNPACK,
    OP_UNPACK_FRESH,
    OP_UNPACK_STREAM,
    OP_UNPACK_ONESHOT,
    OP_PACK_CHUNKS
} bench_op;

typedef struct bench_row {
    const char *label;
    bench_row_kind kind;
    uint32_t count;                 /* ints, messages */
    bench_message message;          /* ROW_MESSAGES */
    const bench_strings *strings;   /* ROW_STRINGS */
    bench_buf corpus[BENCH_MAX_SIDES]; /* ROW_CORPUS: each side's input (msgpack or the JSON text) */
    bench_check expect;             /* what every decode must report */
    /* ROW_CORPUS with inputs in different shapes (the common workloads: JSON with base64 for bin,
     * protobuf messages): what each side's decode must report instead of expect */
    int expect_per_side;
    bench_check expect_side[BENCH_MAX_SIDES];
    const char *workload;           /* the common workload id (manifest.json) for the sidecar, or NULL */
    uint64_t items;                 /* for the ns/item column */
} bench_row;

typedef struct bench_result {
    double seconds[BENCH_MAX_SIDES]; /* median per op */
    /* unpack ops of the rows of long strs and bins (bench_has_floor): the median time of a walk
     * that only follows the value heads through the same side's input (0: not measured) */
    double floor[BENCH_MAX_SIDES];
    size_t bytes[BENCH_MAX_SIDES];
    int measured;
} bench_result;

typedef struct bench_config {
    int rounds;
    const bench_side *sides[BENCH_MAX_SIDES];
    int side_count;
    double min_sample_seconds; /* small rows repeat an op until one sample takes this long */
    const char *op_filter;     /* time only these ops: names, comma-separated (NULL: all) */
} bench_config;

/* Run every op of a row: a checked, untimed first pass, then cfg->rounds interleaved rounds.
 * results[op] is filled for the row's ops. Exits the process on a wrong result. */
void bench_run_row(const bench_config *cfg, bench_row *row, bench_result results[4]);

int bench_row_ops(const bench_row *row, bench_op ops[4]);
/* 1 for the unpack ops whose time the chain of head loads bounds (see bench_result.floor). */
int bench_has_floor(const bench_row *row, bench_op op);
const char *bench_op_name(bench_op op);
double bench_now(void);

#endif
