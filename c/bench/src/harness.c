/* The timing loop: every sample is checked, rounds interleave the sides, results are medians. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Under `valgrind --tool=callgrind --collect-atstart=no` (c/bench/profile.py), the first pass
 * counts each op's instructions alone and dumps them under "row|side|op". Outside valgrind these
 * client requests are a few no-op instructions, and the first pass is not timed anyway. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif

static void count_start(void)
{
#ifdef BENCH_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

static void count_stop(const bench_row *row, const bench_side *side, bench_op op)
{
#ifdef BENCH_HAVE_CALLGRIND
    CALLGRIND_TOGGLE_COLLECT;
    if (RUNNING_ON_VALGRIND) {
        char label[256];
        snprintf(label, sizeof label, "%s|%s|%s", row->label, side->name, bench_op_name(op));
        CALLGRIND_DUMP_STATS_AT(label);
    }
#else
    (void)row, (void)side, (void)op;
#endif
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *bench_op_name(bench_op op)
{
    switch (op) {
    case OP_PACK: return "pack";
    case OP_UNPACK: return "unpack";
    case OP_UNPACK_FRESH: return "unpack (fresh memory)";
    case OP_UNPACK_STREAM: return "unpack (stream)";
    case OP_UNPACK_ONESHOT: return "unpack (one-shot)";
    case OP_PACK_CHUNKS: return "pack (zero-copy chunks)";
    }
    return "?";
}

int bench_row_ops(const bench_row *row, bench_op ops[4])
{
    int n = 0;
    ops[n++] = OP_PACK;
    if (row->kind == ROW_MESSAGES) {
        ops[n++] = OP_UNPACK_STREAM;
        ops[n++] = OP_UNPACK_ONESHOT;
    } else {
        ops[n++] = OP_UNPACK;
        if (row->kind == ROW_INTS) ops[n++] = OP_UNPACK_FRESH;
    }
    if (row->kind == ROW_STRINGS ||
        (row->kind == ROW_MESSAGES && (row->message == MSG_BIN || row->message == MSG_NESTED)))
        ops[n++] = OP_PACK_CHUNKS;
    return n;
}

static void fail(const bench_row *row, const bench_side *side, const char *what);

int bench_has_floor(const bench_row *row, bench_op op)
{
    if (row->kind == ROW_STRINGS) return op == OP_UNPACK;
    return row->kind == ROW_MESSAGES && (row->message == MSG_BIN || row->message == MSG_NESTED) &&
           op == OP_UNPACK_ONESHOT;
}

/* The memory floor of an unpack: read each value's head and jump over its body, nothing else (the
 * heads these rows hold: fixints, fixarray and array 16/32, fixstr, str and bin 8/16/32). The next
 * head's address is known only once this head is read, so a decoder that waits for each head
 * cannot go faster than this chain of loads (one that guesses ahead and prefetches can). Returns
 * the sum of the str/bin lengths (checked). */
static uint64_t walk_heads(const bench_buf *in)
{
    const uint8_t *p = (const uint8_t *)in->data, *end = p + in->len;
    uint64_t bytes = 0;
    while (p < end) {
        uint8_t b = *p;
        uint32_t n;
        if (b < 0x80 || b >= 0xe0) { p += 1; continue; }
        if (b >= 0x90 && b <= 0x9f) { p += 1; continue; }
        switch (b) {
        case 0xdc: p += 3; continue;
        case 0xdd: p += 5; continue;
        case 0xd9: case 0xc4: n = p[1]; p += 2; break;
        case 0xda: case 0xc5: n = (uint32_t)p[1] << 8 | p[2]; p += 3; break;
        case 0xdb: case 0xc6: n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4]; p += 5; break;
        default:
            if (b >= 0xa0 && b <= 0xbf) { n = b & 0x1fu; p += 1; break; }
            return UINT64_MAX; /* not a head these rows write */
        }
        bytes += n;
        p += n;
    }
    return bytes;
}

static double floor_sample(const bench_row *row, const bench_side *side, const bench_buf *in, int reps)
{
    double t0 = bench_now();
    uint64_t bytes = 0;
    for (int r = 0; r < reps; r++) bytes = walk_heads(in);
    double t = (bench_now() - t0) / reps;
    if (bytes != row->expect.byte_sum) fail(row, side, "the head walk disagrees with the byte count");
    return t;
}

static void fail(const bench_row *row, const bench_side *side, const char *what)
{
    fprintf(stderr, "bench: %s / %s: %s\n", row->label, side->name, what);
    exit(1);
}

static void expect_check(const bench_row *row, int s, const bench_side *side, const bench_check *got)
{
    const bench_check *want = row->expect_per_side ? &row->expect_side[s] : &row->expect;
    if (got->messages != want->messages || got->nodes != want->nodes || got->int_sum != want->int_sum ||
        got->byte_sum != want->byte_sum) {
        fprintf(stderr,
                "bench: %s / %s: decoded messages=%llu nodes=%llu int_sum=%llu byte_sum=%llu, "
                "expected %llu %llu %llu %llu\n",
                row->label, side->name, (unsigned long long)got->messages, (unsigned long long)got->nodes,
                (unsigned long long)got->int_sum, (unsigned long long)got->byte_sum,
                (unsigned long long)want->messages, (unsigned long long)want->nodes,
                (unsigned long long)want->int_sum, (unsigned long long)want->byte_sum);
        exit(1);
    }
}

/* Per side, what the corpus rows pack from: the DOM decoded once from the side's input. */
typedef struct side_state {
    void *corpus_dom;
    bench_buf packed;     /* this round's pack output (in the side's buffer): the unpack ops need one */
    bench_buf reference;  /* a copy of the first pass's pack output; every later pack must equal it */
    char *gathered;       /* the zero-copy pack's pieces, concatenated for the check */
} side_state;

static int pack_once(const bench_row *row, const bench_side *side, side_state *st, bench_buf *out)
{
    switch (row->kind) {
    case ROW_INTS: return side->pack_ints(row->count, out);
    case ROW_STRINGS: return side->pack_strings(row->strings, out);
    case ROW_MESSAGES: return side->pack_messages(row->message, row->count, out);
    case ROW_CORPUS: return side->dom_encode(st->corpus_dom, out);
    }
    return -1;
}

static const bench_buf *unpack_input(const bench_row *row, int s, side_state *st)
{
    /* Not the side's pack output: mpk's writer asks for huge pages and msgpack-c's sbuffer does not,
     * so decoding each side's own buffer would time the pages as well. Both decode the same bytes
     * from a plain malloc'd copy. */
    return row->kind == ROW_CORPUS ? &row->corpus[s] : &st->reference;
}

/* One sample of one op: repeated reps times, only the op itself inside the clock. */
static double sample(const bench_row *row, int s, const bench_side *side, side_state *st, bench_op op,
                     int reps, int counted)
{
    double total = 0;
    for (int r = 0; r < reps; r++) {
        if (op == OP_PACK) {
            bench_buf out = {0, 0};
            double t0 = bench_now();
            int rc = pack_once(row, side, st, &out);
            total += bench_now() - t0;
            if (rc != 0) fail(row, side, "pack failed");
            if (out.len != st->reference.len || memcmp(out.data, st->reference.data, out.len) != 0)
                fail(row, side, "pack output differs from the first pass");
            st->packed = out; /* the side's buffer: valid until its next pack */
        } else if (op == OP_PACK_CHUNKS) {
            if (!side->pack_chunks) return 0; /* no zero-copy output: its column stays empty */
            const bench_strings *strings = row->kind == ROW_STRINGS ? row->strings : NULL;
            /* counted on the second call, like the copying pack (warm output buffers) */
            if (counted && side->pack_chunks(strings, row->message, row->count) != 0)
                fail(row, side, "zero-copy pack failed");
            double t0 = bench_now();
            if (counted) count_start();
            int rc = side->pack_chunks(strings, row->message, row->count);
            if (counted) count_stop(row, side, op);
            total += bench_now() - t0;
            if (rc != 0) fail(row, side, "zero-copy pack failed");
            /* the pieces, gathered (into a buffer kept for the row), must be the copying pack's bytes;
             * checked on the first repetition of a sample (a gather of up to 268 MB per repetition
             * made the run twice as long) */
            if (r > 0) continue;
            if (!st->gathered) st->gathered = malloc(st->reference.len + 1);
            if (!st->gathered) fail(row, side, "out of memory");
            long long len = side->gather_chunks(st->gathered, st->reference.len);
            if (len != (long long)st->reference.len || memcmp(st->gathered, st->reference.data, st->reference.len) != 0)
                fail(row, side, "the gathered chunks differ from the copying pack's output");
        } else if (op == OP_UNPACK || op == OP_UNPACK_FRESH) {
            if (counted && op == OP_UNPACK) {
                /* counted on the second call, like the packs: the first grows the kept DOM memory */
                void *warm = side->dom_decode(unpack_input(row, s, st), 0);
                if (!warm) fail(row, side, "decode failed");
                side->dom_free(warm);
            }
            double t0 = bench_now();
            if (counted) count_start();
            void *dom = side->dom_decode(unpack_input(row, s, st), op == OP_UNPACK_FRESH);
            if (counted) count_stop(row, side, op);
            total += bench_now() - t0;
            if (!dom) fail(row, side, "decode failed");
            bench_check c = {0, 0, 0, 0};
            side->dom_check(dom, &c);
            side->dom_free(dom);
            expect_check(row, s, side, &c);
        } else {
            bench_check c = {0, 0, 0, 0};
            double t0 = bench_now();
            if (counted) count_start();
            int rc = side->unpack_messages(unpack_input(row, s, st), op == OP_UNPACK_STREAM ? UNPACK_STREAM : UNPACK_ONESHOT,
                                           &c);
            if (counted) count_stop(row, side, op);
            total += bench_now() - t0;
            if (rc != 0) fail(row, side, "stream decode failed");
            expect_check(row, s, side, &c);
        }
    }
    return total / reps;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The filter is a comma-separated list of op names ("pack,unpack (one-shot)"). */
static int op_selected(const bench_config *cfg, bench_op op)
{
    if (!cfg->op_filter) return 1;
    const char *name = bench_op_name(op), *at = cfg->op_filter;
    size_t n = strlen(name);
    for (; (at = strstr(at, name)) != NULL; at += n)
        if ((at == cfg->op_filter || at[-1] == ',') && (at[n] == ',' || at[n] == '\0')) return 1;
    return 0;
}

void bench_run_row(const bench_config *cfg, bench_row *row, bench_result results[4])
{
    side_state st[BENCH_MAX_SIDES];
    bench_op ops[4];
    int op_count = bench_row_ops(row, ops);
    int reps[4][BENCH_MAX_SIDES];
    memset(st, 0, sizeof st);
    memset(results, 0, 4 * sizeof *results);

    /* First pass, untimed except for choosing the repetitions: pack, check, and cross-check that
     * the MessagePack sides wrote the same bytes (both write the shortest form). */
    /* each side's own time per op decides its repetitions, so that every sample lasts at least
     * min_sample_seconds (repeating every side as often as the fastest needs made a side 1000x
     * slower, e.g. RapidJSON parsing megabytes of strings, run for minutes) */
    double once[4][BENCH_MAX_SIDES]; /* the first pass's time of each op, per side */
    for (int o = 0; o < 4; o++)
        for (int s = 0; s < BENCH_MAX_SIDES; s++) once[o][s] = 0;
    for (int s = 0; s < cfg->side_count; s++) {
        const bench_side *side = cfg->sides[s];
        if (row->kind == ROW_CORPUS) {
            st[s].corpus_dom = side->dom_decode(&row->corpus[s], 1);
            if (!st[s].corpus_dom) fail(row, side, "corpus decode failed");
        }
        bench_buf first = {0, 0};
        /* Packs are counted on their second call: the first grows the side's output buffers (and
         * under valgrind every realloc copies), which the timed rounds, reusing them, never see. */
        if (pack_once(row, side, &st[s], &first) != 0) fail(row, side, "pack failed");
        double t0 = bench_now();
        count_start();
        int rc = pack_once(row, side, &st[s], &first);
        count_stop(row, side, OP_PACK);
        if (rc != 0) fail(row, side, "pack failed");
        double t = bench_now() - t0;
        once[0][s] = t;
        st[s].reference.data = malloc(first.len + 1);
        if (!st[s].reference.data) fail(row, side, "out of memory");
        memcpy(st[s].reference.data, first.data, first.len);
        st[s].reference.data[first.len] = '\0';
        st[s].reference.len = first.len;
        /* A re-encoded corpus DOM must give the input back byte for byte (MessagePack, protobuf);
         * JSON text need not (spacing, number forms): it must parse to the same values. */
        if (row->kind == ROW_CORPUS && side != &bench_side_json &&
            (st[s].reference.len != row->corpus[s].len ||
             memcmp(st[s].reference.data, row->corpus[s].data, row->corpus[s].len) != 0))
            fail(row, side, "re-encoding the corpus DOM did not give the input back");
        if (row->kind == ROW_CORPUS && side == &bench_side_json) {
            void *again = side->dom_decode(&st[s].reference, 1);
            if (!again) fail(row, side, "its re-encoded corpus DOM does not parse");
            bench_check c = {0, 0, 0, 0};
            side->dom_check(again, &c);
            side->dom_free(again);
            expect_check(row, s, side, &c);
        }
        st[s].packed = st[s].reference;
        for (int o = 1; o < op_count; o++) {
            t = sample(row, s, side, &st[s], ops[o], 1, 1);
            once[o][s] = t; /* 0: the side has no such op */
        }
        st[s].packed.data = NULL;
    }
    for (int s = 1; s < cfg->side_count; s++) {
        if (cfg->sides[s] == &bench_side_json || cfg->sides[0] == &bench_side_json || row->kind == ROW_CORPUS)
            continue;
        if (st[0].reference.len != st[s].reference.len ||
            memcmp(st[0].reference.data, st[s].reference.data, st[0].reference.len) != 0)
            fail(row, cfg->sides[0], "packed bytes differ from the other MessagePack side's");
    }
    for (int o = 0; o < op_count; o++) {
        for (int s = 0; s < cfg->side_count; s++) {
            double t = once[o][s];
            reps[o][s] = 1;
            if (t < cfg->min_sample_seconds) reps[o][s] = (int)(cfg->min_sample_seconds / (t > 1e-7 ? t : 1e-7)) + 1;
            if (reps[o][s] > 10000) reps[o][s] = 10000;
        }
    }

    double times[4][BENCH_MAX_SIDES][BENCH_MAX_ROUNDS];
    double floors[4][BENCH_MAX_SIDES][BENCH_MAX_ROUNDS];
    for (int round = 0; round < cfg->rounds; round++) {
        for (int k = 0; k < cfg->side_count; k++) {
            /* rotate the order so that warm caches and noise do not favour one side */
            int s = (k + round) % cfg->side_count;
            const bench_side *side = cfg->sides[s];
            for (int o = 0; o < op_count; o++) {
                if (!op_selected(cfg, ops[o])) {
                    if (ops[o] == OP_PACK) st[s].packed = st[s].reference; /* the input of the others */
                    continue;
                }
                if (ops[o] != OP_PACK && row->kind != ROW_CORPUS && !st[s].packed.data)
                    fail(row, side, "no packed input");
                times[o][s][round] = sample(row, s, side, &st[s], ops[o], reps[o][s], 0);
                /* right after the side's own unpack, over the same input */
                floors[o][s][round] = 0;
                if (bench_has_floor(row, ops[o]) && side != &bench_side_json) /* MessagePack inputs */
                    floors[o][s][round] = floor_sample(row, side, unpack_input(row, s, &st[s]), reps[o][s]);
            }
            st[s].packed.data = NULL;
        }
    }
    for (int o = 0; o < op_count && cfg->rounds > 0; o++) {
        if (!op_selected(cfg, ops[o])) continue;
        for (int s = 0; s < cfg->side_count; s++) {
            results[o].seconds[s] = median(times[o][s], cfg->rounds);
            if (bench_has_floor(row, ops[o])) results[o].floor[s] = median(floors[o][s], cfg->rounds);
            results[o].bytes[s] = row->kind == ROW_CORPUS && ops[o] != OP_PACK ? row->corpus[s].len : st[s].reference.len;
        }
        results[o].measured = 1;
    }
    for (int s = 0; s < cfg->side_count; s++) {
        if (st[s].corpus_dom) cfg->sides[s]->dom_free(st[s].corpus_dom);
        cfg->sides[s]->release();
        free(st[s].reference.data);
        free(st[s].gathered);
    }
}
