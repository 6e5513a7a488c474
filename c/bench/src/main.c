/* mpk C benchmark: mpk vs msgpack-c vs RapidJSON, in one process, same values, same run.
 *
 *   mpk_bench [--rounds N] [--quick] [--data DIR] [--out FILE] [--rows FILE] [--env LINE]...
 *             [--only TEXT] [--op TEXT]
 *             [--first-pass-only]   (the checked first pass alone: for c/bench/profile.py)
 *
 * Prints a Markdown table (medians of N interleaved rounds; ratios are the peer's time over mpk's,
 * so above 1 means mpk is faster) and writes it to --out as well; --rows writes the same numbers as
 * one JSON object per library and op (for the sidecar, c/bench/sidecar.py). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>
#ifdef BENCH_HAVE_MPK
#include <mpk.h>
#endif

#ifndef BENCH_FLAGS
#define BENCH_FLAGS "?"
#endif

char bench_bin_payload[BENCH_BIN_SIZE];

#define MAX_ROWS 16
#define MAX_ENV 8

typedef struct options {
    int rounds;
    int quick;
    const char *data_dir;
    const char *out_path;
    const char *rows_path;
    const char *env[MAX_ENV];
    int env_count;
    const char *only;
    const char *op;
    int first_pass_only;
} options;

static void usage(void)
{
    fprintf(stderr, "usage: mpk_bench [--rounds N] [--quick] [--data DIR] [--out FILE] [--rows FILE] [--env LINE]... "
                    "[--only TEXT] [--op TEXT] [--first-pass-only]\n");
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {7, 0, NULL, NULL, NULL, {0}, 0, NULL, NULL, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) o.quick = 1;
        else if (!strcmp(a, "--first-pass-only")) o.first_pass_only = 1;
        else if (i + 1 >= argc) usage();
        else if (!strcmp(a, "--rounds")) o.rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--data")) o.data_dir = argv[++i];
        else if (!strcmp(a, "--out")) o.out_path = argv[++i];
        else if (!strcmp(a, "--rows")) o.rows_path = argv[++i];
        else if (!strcmp(a, "--only")) o.only = argv[++i];
        else if (!strcmp(a, "--op")) o.op = argv[++i];
        else if (!strcmp(a, "--env") && o.env_count < MAX_ENV) o.env[o.env_count++] = argv[++i];
        else usage();
    }
    if (o.rounds < 1 || o.rounds > BENCH_MAX_ROUNDS) usage();
    return o;
}

/* ---- data ---- */

static bench_strings make_strings(uint32_t count, uint32_t scale, char **chars_out, uint32_t **lengths_out)
{
    size_t longest = (size_t)(count - 1) * scale;
    char *chars = malloc(longest + 1);
    uint32_t *lengths = malloc(count * sizeof *lengths);
    if (!chars || !lengths) exit(1);
    memset(chars, 'a', longest + 1);
    for (uint32_t i = 0; i < count; i++) lengths[i] = i * scale;
    *chars_out = chars;
    *lengths_out = lengths;
    bench_strings s = {chars, lengths, count};
    return s;
}

static int read_file(const char *path, bench_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    out->data = malloc((size_t)n + 1);
    out->len = out->data ? fread(out->data, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!out->data || out->len != (size_t)n) return -1;
    out->data[n] = '\0';
    return 0;
}

/* Time of one memcpy of len bytes from memory that is not in cache: the median of 5 copies of
 * len bytes taken from a buffer of 64 MiB, so each source is cold. */
static double memcpy_seconds(const char *unused, size_t len)
{
    (void)unused;
    size_t span = (size_t)64 << 20;
    char *src = malloc(span + len), *dst = malloc(len);
    if (!src || !dst) exit(1);
    memset(src, 'a', span + len);
    memset(dst, 0, len);
    double t[5];
    for (int i = 0; i < 5; i++) {
        size_t n = 0, at = 0;
        double t0 = bench_now();
        for (; at + len <= span; at += len + 4096, n++) memcpy(dst, src + at, len);
        t[i] = (bench_now() - t0) / (double)n;
        if (dst[len / 2] != 'a') exit(1);
    }
    free(src);
    free(dst);
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (t[j] < t[i]) { double x = t[i]; t[i] = t[j]; t[j] = x; }
    return t[2];
}

/* ---- table ---- */

static void format_mbps(char *buf, size_t n, size_t bytes, double seconds)
{
    snprintf(buf, n, "%.0f", (double)bytes / seconds / 1e6);
}

static void print_row(FILE *f, const bench_config *cfg, const bench_row *row, bench_op op, const bench_result *r,
                      int mpk, int msgpackc, int json)
{
    char mb[3][32] = {"—", "—", "—"};
    char bytes[3][32] = {"—", "—", "—"};
    int idx[3] = {mpk, msgpackc, json};
    for (int k = 0; k < 3; k++) {
        if (idx[k] < 0 || r->seconds[idx[k]] <= 0) continue; /* not measured (no such op) */
        format_mbps(mb[k], sizeof mb[k], r->bytes[idx[k]], r->seconds[idx[k]]);
        snprintf(bytes[k], sizeof bytes[k], "%zu", r->bytes[idx[k]]);
    }
    char per_item[32] = "—", vs_msgpackc[32] = "—", vs_json[32] = "—";
    if (mpk >= 0) {
        snprintf(per_item, sizeof per_item, "%.1f", r->seconds[mpk] / (double)row->items * 1e9);
        if (msgpackc >= 0) snprintf(vs_msgpackc, sizeof vs_msgpackc, "%.2f", r->seconds[msgpackc] / r->seconds[mpk]);
        if (json >= 0 && r->seconds[json] > 0) snprintf(vs_json, sizeof vs_json, "%.2f", r->seconds[json] / r->seconds[mpk]);
    }
    (void)cfg;
    fprintf(f, "| %s | %s | %s / %s / %s | %s | %s | %s | %s | %s | %s |\n", row->label, bench_op_name(op), bytes[0],
            bytes[1], bytes[2], mb[0], mb[1], mb[2], per_item, vs_msgpackc, vs_json);
}

/* The sidecar's rows of one op (bench/README.md, "The sidecar"): per library, the time of one message
 * (one value of a stream row; the whole array or document otherwise) and its bytes. Ops map to
 * encode/decode and a variant: one-shot is the plain decode of a stream row, the stream decoder, the
 * zero-copy pack and the decode into fresh memory are variants. */
static void write_rows(FILE *f, const bench_config *cfg, const bench_row *row, bench_op op, const bench_result *r)
{
    const char *variant = op == OP_UNPACK_STREAM ? "stream"
                          : op == OP_UNPACK_FRESH ? "fresh memory"
                          : op == OP_PACK_CHUNKS  ? "zero-copy chunks"
                                                  : "";
    double per = row->kind == ROW_MESSAGES ? (double)row->count : 1.0;
    for (int s = 0; s < cfg->side_count; s++) {
        const bench_side *side = cfg->sides[s];
        if (r->seconds[s] <= 0) continue; /* not measured (no such op) */
        fprintf(f, "{\"workload\": \"%s\", \"label\": \"%s\", \"op\": \"%s\", \"variant\": \"%s\", \"per\": \"message\", "
                   "\"run\": \"c-main\", \"library\": \"%s\", \"kind\": \"%s\", \"ns_per_op\": %.6g, \"ns_per_item\": %.6g, "
                   "\"bytes\": %.6g}\n",
                row->workload ? row->workload : row->label, row->label,
                op == OP_PACK || op == OP_PACK_CHUNKS ? "encode" : "decode", variant, side->name,
                side == &bench_side_json ? "json" : side == &bench_side_msgpackc ? "msgpack" : "mpk",
                r->seconds[s] * 1e9 / per, r->seconds[s] * 1e9 / (double)row->items, (double)r->bytes[s] / per);
    }
}

static int side_index(const bench_config *cfg, const bench_side *side)
{
    for (int s = 0; s < cfg->side_count; s++)
        if (cfg->sides[s] == side) return s;
    return -1;
}

static void machine_name(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *v = strchr(line, ':');
            if (v) {
                v += 2;
                v[strcspn(v, "\n")] = 0;
                snprintf(buf, n, "%s, %ld cores", v, sysconf(_SC_NPROCESSORS_ONLN));
            }
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    memset(bench_bin_payload, 'x', sizeof bench_bin_payload);

    bench_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.rounds = opt.first_pass_only ? 0 : opt.quick ? 1 : opt.rounds;
    cfg.min_sample_seconds = opt.quick ? 0.001 : 0.02;
    cfg.op_filter = opt.op;
#ifdef BENCH_HAVE_MPK
    cfg.sides[cfg.side_count++] = &bench_side_mpk;
#endif
    cfg.sides[cfg.side_count++] = &bench_side_msgpackc;
    cfg.sides[cfg.side_count++] = &bench_side_json;

    uint32_t int_count = opt.quick ? 1u << 16 : 1u << 24;
    uint32_t string_count = opt.quick ? 1u << 10 : 1u << 13;
    uint32_t pair_count = opt.quick ? 1u << 14 : 1u << 22;
    uint32_t bin_count = opt.quick ? 1u << 9 : 1u << 15;
    uint32_t string_scale = 8;

    char *chars1, *chars8;
    uint32_t *lengths1, *lengths8;
    bench_strings strings1 = make_strings(string_count, 1, &chars1, &lengths1);
    bench_strings strings8 = make_strings(string_count, string_scale, &chars8, &lengths8);
    uint64_t string_bytes = (uint64_t)string_count * (string_count - 1) / 2;

    static bench_row rows[MAX_ROWS];
    static char labels[MAX_ROWS][96];
    int row_count = 0;
    bench_row *r;

    r = &rows[row_count++];
    snprintf(labels[row_count - 1], sizeof labels[0], "ints 0..%u", int_count - 1);
    r->label = labels[row_count - 1];
    r->kind = ROW_INTS;
    r->count = int_count;
    r->items = int_count;
    r->expect = (bench_check){1, (uint64_t)int_count + 1, (uint64_t)int_count * (int_count - 1) / 2, 0};

    r = &rows[row_count++];
    snprintf(labels[row_count - 1], sizeof labels[0], "strings of length 0..%u", string_count - 1);
    r->label = labels[row_count - 1];
    r->kind = ROW_STRINGS;
    r->strings = &strings1;
    r->items = string_count;
    r->expect = (bench_check){1, (uint64_t)string_count + 1, 0, string_bytes};

    r = &rows[row_count++];
    snprintf(labels[row_count - 1], sizeof labels[0], "strings of length 0..%u step %u", (string_count - 1) * string_scale,
             string_scale);
    r->label = labels[row_count - 1];
    r->kind = ROW_STRINGS;
    r->strings = &strings8;
    r->items = string_count;
    r->expect = (bench_check){1, (uint64_t)string_count + 1, 0, string_bytes * string_scale};

    static const struct {
        bench_message message;
        const char *name;
        const char *workload; /* the same message in the common workloads */
        int bins;
        uint64_t nodes, int_sum, byte_sum;
    } messages[] = {
        {MSG_PAIR_POSITIVE, "[1, 2]", "test1", 0, 3, 3, 0},
        {MSG_PAIR_NEGATIVE, "[-1, -2]", "test2", 0, 3, (uint64_t)-3, 0},
        {MSG_BIN, "8 KiB bin", "test3", 1, 1, 0, BENCH_BIN_SIZE},
        {MSG_NESTED, "[[1, 2], [-1, -2], 8 KiB bin]", "test4", 1, 8, 0, BENCH_BIN_SIZE},
    };
    for (size_t m = 0; m < sizeof messages / sizeof messages[0]; m++) {
        uint32_t n = messages[m].bins ? bin_count : pair_count;
        r = &rows[row_count++];
        snprintf(labels[row_count - 1], sizeof labels[0], "%u × %s", n, messages[m].name);
        r->label = labels[row_count - 1];
        r->kind = ROW_MESSAGES;
        r->workload = messages[m].workload;
        r->message = messages[m].message;
        r->count = n;
        r->items = n;
        r->expect = (bench_check){n, n * messages[m].nodes, n * messages[m].int_sum, n * messages[m].byte_sum};
    }

    /* The JSON corpora, converted to MessagePack once. */
    static const char *corpus_names[] = {"twitter", "canada", "citm_catalog"};
    char corpus_note[512] = "";
    const char *data_dir = opt.data_dir ? opt.data_dir : "../shared/bench-data";
    for (size_t k = 0; k < 3; k++) {
        char path[1024];
        bench_buf json = {0, 0}, msgpack = {0, 0};
        if (opt.only && !strstr(corpus_names[k], opt.only)) continue;
        snprintf(path, sizeof path, "%s/%s.json", data_dir, corpus_names[k]);
        if (read_file(path, &json) != 0) {
            snprintf(corpus_note + strlen(corpus_note), sizeof corpus_note - strlen(corpus_note),
                     "%s%s.json", corpus_note[0] ? ", " : "", corpus_names[k]);
            free(json.data);
            continue;
        }
        if (bench_json_to_msgpack(json.data, json.len, &msgpack) != 0) {
            fprintf(stderr, "bench: %s is not valid JSON\n", path);
            return 1;
        }
        r = &rows[row_count++];
        snprintf(labels[row_count - 1], sizeof labels[0], "%s.json", corpus_names[k]);
        r->label = labels[row_count - 1];
        r->workload = corpus_names[k];
        r->kind = ROW_CORPUS;
        for (int s = 0; s < cfg.side_count; s++) {
            bench_buf *dst = &r->corpus[s];
            const bench_buf *src = cfg.sides[s] == &bench_side_json ? &json : &msgpack;
            dst->data = malloc(src->len + 1);
            memcpy(dst->data, src->data, src->len);
            dst->data[src->len] = '\0';
            dst->len = src->len;
        }
        /* The expected check comes from msgpack-c's reading of the converted bytes. */
        void *dom = bench_side_msgpackc.dom_decode(&msgpack, 1);
        if (!dom) return 1;
        memset(&r->expect, 0, sizeof r->expect);
        bench_side_msgpackc.dom_check(dom, &r->expect);
        bench_side_msgpackc.dom_free(dom);
        r->items = r->expect.nodes;
        free(json.data);
        free(msgpack.data);
    }

    int mpk = -1;
#ifdef BENCH_HAVE_MPK
    mpk = side_index(&cfg, &bench_side_mpk);
#endif
    int msgpackc = side_index(&cfg, &bench_side_msgpackc);
    int json = side_index(&cfg, &bench_side_json);

    static bench_result results[MAX_ROWS][4];
    static int ran[MAX_ROWS];
    for (int i = 0; i < row_count; i++) {
        if (opt.only && !strstr(rows[i].label, opt.only)) continue;
        fprintf(stderr, "bench: %s ...\n", rows[i].label);
        bench_run_row(&cfg, &rows[i], results[i]);
        ran[i] = 1;
    }

    if (opt.first_pass_only) return 0; /* profile.py reads callgrind's dumps instead */

    /* ---- the report ---- */
    char *report = NULL;
    size_t report_len = 0;
    FILE *f = open_memstream(&report, &report_len);
    char date[64], machine[256];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    machine_name(machine, sizeof machine);
    fprintf(f, "# C benchmark: mpk vs msgpack-c vs %s\n\n", bench_json_version());
    fprintf(f, "- date: %s\n- machine: %s\n- compiler: gcc %s, flags `%s`\n", date, machine, __VERSION__, BENCH_FLAGS);
#ifdef BENCH_HAVE_MPK
    fprintf(f, "- mpk: %s (this repository)\n", mpk_version());
#else
    fprintf(f, "- mpk: not built (c/include/mpk.h missing), its columns are empty\n");
#endif
    fprintf(f, "- msgpack-c: %s (C API, header version)\n- JSON: %s\n", MSGPACK_VERSION, bench_json_version());
    for (int i = 0; i < opt.env_count; i++) fprintf(f, "- %s\n", opt.env[i]);
    fprintf(f, "- medians of %d rounds; in each round every library does the row's ops, in rotating order; "
               "small ops repeat within a sample until it lasts %.0f ms\n",
            cfg.rounds, cfg.min_sample_seconds * 1e3);
    fprintf(f, "- MB/s is each library's own encoded bytes (MessagePack or JSON) per second; "
               "× is the peer's median time over mpk's (above 1: mpk is faster)\n\n");
    fprintf(f, "| row | op | bytes mpk / msgpack-c / JSON | mpk MB/s | msgpack-c MB/s | JSON MB/s | mpk ns/item "
               "| × msgpack-c | × JSON |\n|---|---|---|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < row_count; i++) {
        if (!ran[i]) continue;
        bench_op ops[4];
        int n = bench_row_ops(&rows[i], ops);
        for (int o = 0; o < n; o++)
            if (results[i][o].measured) print_row(f, &cfg, &rows[i], ops[o], &results[i][o], mpk, msgpackc, json);
    }
    fprintf(f, "\nPacking writes into each library's own output buffer, kept and reused from one pack to the next "
               "(mpk_writer_reset, msgpack_sbuffer_clear, StringBuffer::Clear), the steady state of a program that "
               "sends many messages; a fresh buffer each time adds the same page faults to every library. Unpacking into "
               "a DOM likewise reuses each library's DOM memory from one decode to the next as far as its API allows: "
               "mpk_doc_parse on one kept mpk_doc (it keeps its node array), msgpack_unpack into one kept zone "
               "cleared by msgpack_zone_clear inside the clock (which keeps only the zone's first chunk, so a message "
               "bigger than that gets new memory every time, by msgpack-c's design), and a new RapidJSON Document "
               "(its pool allocator keeps nothing across parses). The stream rows reuse a doc (mpk) or a zone "
               "(msgpack-c's one-shot) per message the same way. unpack (fresh memory): the ints row again, with a new "
               "mpk_doc / msgpack_zone / Document per decode, freed outside the clock: the 2^24 ints need 256 MiB of "
               "mpk nodes (on huge pages) and 384 MiB of msgpack_object (4 KiB pages), all new pages from the kernel, so "
               "that op measures the machine's page supply as much as the decoders: on this virtual machine a "
               "huge-page fault took from 0.8 to 14 ms per 2 MiB from run to run, and the op's ratio has ranged "
               "from 0.6 to 3.3.\n");
    fprintf(f, "\nRows and checks: every decode is checked (message count, node count, sum of ints, sum of str/bin "
               "lengths) against the expected values, and the two MessagePack libraries must write identical bytes. "
               "JSON has no binary type, so its 8 KiB bins are 8192-byte strings. JSON has no streaming parser here: "
               "both unpack rows of a stream use RapidJSON parsing one document after another from the whole buffer. "
               "Zero-copy chunks: mpk_writer_init_chunks + mpk_writer_chunks vs msgpack_vrefbuffer, both referencing "
               "bodies of at least %u bytes and copying the rest (RapidJSON has no such output); the pieces, gathered "
               "outside the clock, must equal the copying pack's bytes.\n", BENCH_REF_THRESHOLD);
    fprintf(f, "\nMemory-bound rows. Copying pack of strings, 8 KiB bins and the nested messages copies the same "
               "bytes into one buffer of 33 or 268 MB for both libraries. msgpack-c copies with memcpy, which reads "
               "each destination line into the cache before overwriting it; mpk copies bodies of 1 KiB or more that "
               "land 4 MiB or more into the output with streaming stores (x86-64), which only write, so it moves "
               "about half the memory traffic. The zero-copy chunk rows copy no body at all. Unpacking "
               "strings or 8 KiB bins reads one head per value, kilobytes past the previous one, and the next head's "
               "address is known only once this one is read: a decoder waits on that chain of cache and TLB "
               "misses, and fewer instructions (callgrind, below) only show where the values are small enough to stay "
               "in cache. mpk's reader and DOM guess past it: after a payload of 256 bytes or more they prefetch the "
               "places one, two and three strides on, where the next heads lie when values in a row are alike. Both sides unpack the same bytes from one plain malloc'd copy "
               "(not each side's pack output, whose pages differ: mpk's writer asks for huge pages). These rows move "
               "by tens of percent from run to run here.\n");
    {
        int first = 1;
        for (int i = 0; i < row_count && mpk >= 0 && msgpackc >= 0; i++) {
            if (!ran[i]) continue;
            bench_op ops[4];
            int n = bench_row_ops(&rows[i], ops);
            for (int o = 0; o < n; o++) {
                const bench_result *r = &results[i][o];
                if (!r->measured || !bench_has_floor(&rows[i], ops[o]) || r->floor[mpk] <= 0 || r->floor[msgpackc] <= 0)
                    continue;
                if (first)
                    fprintf(f, "\nThe chain of those unpacks: a loop that only reads each head and jumps over its "
                               "body, without prefetching, timed right after each library's unpack over the same "
                               "input (medians, ns per item). A decoder that waits for each head cannot beat it; "
                               "mpk's prefetch of the likely next heads can:");
                fprintf(f, "%s %s %s: walk %.1f over mpk's input, %.1f over msgpack-c's; mpk %.1f (%.2f× its walk), "
                           "msgpack-c %.1f (%.2f× its walk)", first ? "" : ";", rows[i].label, bench_op_name(ops[o]),
                        r->floor[mpk] / (double)rows[i].items * 1e9, r->floor[msgpackc] / (double)rows[i].items * 1e9,
                        r->seconds[mpk] / (double)rows[i].items * 1e9, r->seconds[mpk] / r->floor[mpk],
                        r->seconds[msgpackc] / (double)rows[i].items * 1e9, r->seconds[msgpackc] / r->floor[msgpackc]);
                first = 0;
            }
        }
        if (!first) fprintf(f, ".\n");
    }
    if (corpus_note[0])
        fprintf(f, "\nCorpus rows skipped: %s not found in %s.\n", corpus_note, data_dir);
    if (mpk >= 0 && ran[1] && ran[2]) {
        fprintf(f, "\nZero-copy strings: unpack time per string, lengths 0..%u vs %u× longer:", string_count - 1,
                string_scale);
        for (int s = 0; s < cfg.side_count; s++)
            fprintf(f, " %s %.1f ns vs %.1f ns%s", cfg.sides[s]->name,
                    results[1][1].seconds[s] / string_count * 1e9, results[2][1].seconds[s] / string_count * 1e9,
                    s + 1 < cfg.side_count ? ";" : ".");
        double copy = memcpy_seconds(strings8.chars, (size_t)(string_bytes * string_scale / string_count));
        fprintf(f, " Copying the bytes alone would cost %.1f ns vs %.1f ns per string (memcpy of the average "
                   "string, measured here at %.1f GB/s, out of cache): the zero-copy decoders stay far below that; "
                   "what grows with the lengths is one cache and TLB miss per string head, which lie further apart. The "
                   "instruction counts per string (callgrind, below) compare the work itself for both tables.\n",
                copy / 8 * 1e9, copy * 1e9, (double)(string_bytes * string_scale / string_count) / copy / 1e9);
    }
    if (mpk >= 0 && msgpackc >= 0) {
        fprintf(f, "\nBar (pack and unpack ≥ 1.5× msgpack-c on every row):");
        int missed = 0;
        for (int i = 0; i < row_count; i++) {
            if (!ran[i]) continue;
            bench_op ops[4];
            int n = bench_row_ops(&rows[i], ops);
            for (int o = 0; o < n; o++) {
                if (!results[i][o].measured) continue;
                double x = results[i][o].seconds[msgpackc] / results[i][o].seconds[mpk];
                if (x < 1.5) fprintf(f, "%s %s %s (%.2f×)", missed++ ? ";" : " missed on", rows[i].label,
                                     bench_op_name(ops[o]), x);
            }
        }
        fprintf(f, "%s\n", missed ? "." : " met.");
    }
    fclose(f);
    fputs(report, stdout);
    if (opt.rows_path) {
        FILE *rows_out = fopen(opt.rows_path, "w");
        if (!rows_out) {
            fprintf(stderr, "bench: cannot write %s\n", opt.rows_path);
            return 1;
        }
        for (int i = 0; i < row_count; i++) {
            if (!ran[i]) continue;
            bench_op ops[4];
            int n = bench_row_ops(&rows[i], ops);
            for (int o = 0; o < n; o++)
                if (results[i][o].measured) write_rows(rows_out, &cfg, &rows[i], ops[o], &results[i][o]);
        }
        if (fclose(rows_out) != 0) {
            fprintf(stderr, "bench: cannot write %s\n", opt.rows_path);
            return 1;
        }
    }
    if (opt.out_path) {
        FILE *out = fopen(opt.out_path, "w");
        if (!out || fwrite(report, 1, report_len, out) != report_len || fclose(out) != 0) {
            fprintf(stderr, "bench: cannot write %s\n", opt.out_path);
            return 1;
        }
    }
    free(report);
    free(chars1);
    free(chars8);
    free(lengths1);
    free(lengths8);
    return 0;
}
