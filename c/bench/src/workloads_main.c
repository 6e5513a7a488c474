/* mpk_bench_workloads: the common workloads (bench/workloads, `make bench-workloads`) in C: mpk,
 * msgpack-c, protobuf-c (where the workload has a protobuf message) and RapidJSON, in one process.
 *
 *   mpk_bench_workloads [--rounds N] [--quick] [--dir DIR] [--only TEXT] [--rows FILE]
 *
 * For every workload of DIR/manifest.json (default build/bench-workloads): mpk and msgpack-c decode
 * <id>.msgpack into their DOM (mpk_doc_parse, msgpack_unpack) and write it back (mpk_node_write,
 * msgpack_pack_object); protobuf-c unpacks <id>.pb into its generated struct and packs it back;
 * RapidJSON parses <id>.json and writes it back. The rows go through the main bench's harness as
 * corpus rows (harness.c: a checked first pass, then interleaved rounds, medians), so every decode
 * is checked and every re-encoding must give the input back (JSON: must parse to the same values).
 * Prints a Markdown section; --rows writes one JSON object per measurement (for the sidecar,
 * c/bench/sidecar.py). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "side_pb.h"
#include "seed.pb-c.h"
#include "workloads.pb-c.h"

#include <mpk.h>
#include <msgpack.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char bench_bin_payload[BENCH_BIN_SIZE];

#define MAX_WORKLOADS 64

/* The top-level messages of seed.proto and workloads.proto, found by the manifest's "proto" name. */
static const ProtobufCMessageDescriptor *const descriptors[] = {
    &seed__test1__descriptor, &seed__test2__descriptor, &seed__test3__descriptor, &seed__test4__descriptor,
    &mpkbench__product__descriptor, &mpkbench__product_list__descriptor, &mpkbench__table__descriptor,
    &mpkbench__image__descriptor, &mpkbench__ints__descriptor, &mpkbench__uints__descriptor,
    &mpkbench__strings__descriptor, &mpkbench__blobs__descriptor, &mpkbench__long_string__descriptor,
    &mpkbench__geo_feature_collection__descriptor, &mpkbench__model__descriptor,
};

static const ProtobufCMessageDescriptor *find_descriptor(const char *name)
{
    for (size_t i = 0; i < sizeof descriptors / sizeof descriptors[0]; i++)
        if (!strcmp(descriptors[i]->name, name)) return descriptors[i];
    return NULL;
}

/* dir/name.ext into path; -1 when it does not fit */
static int make_path(char *path, size_t cap, const char *dir, const char *name, const char *ext)
{
    int n = snprintf(path, cap, "%s/%s%s", dir, name, ext);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int read_file(const char *path, bench_buf *out)
{
    FILE *f = fopen(path, "rb");
    out->data = NULL;
    out->len = 0;
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    out->data = n >= 0 ? malloc((size_t)n + 1) : NULL;
    out->len = out->data ? fread(out->data, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!out->data || out->len != (size_t)n) return -1;
    out->data[n] = '\0'; /* RapidJSON's fastest parse reads NUL-terminated text */
    return 0;
}

/* What the value holds, read once from msgpack-c's object, for the checks of the other formats:
 * the sum of its ints, the lengths of its str/bin values that are not map keys (a protobuf message
 * has field numbers where MessagePack has keys), and the bytes a JSON parser reports for its
 * strings (keys too; a bin is a base64 string in the JSON file). */
typedef struct value_sums {
    uint64_t int_sum, value_bytes, json_bytes;
} value_sums;

static void sum_values(const msgpack_object *o, int is_key, value_sums *v)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: v->int_sum += o->via.u64; break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: v->int_sum += (uint64_t)o->via.i64; break;
    case MSGPACK_OBJECT_STR:
        v->json_bytes += o->via.str.size;
        if (!is_key) v->value_bytes += o->via.str.size;
        break;
    case MSGPACK_OBJECT_BIN:
        v->json_bytes += 4 * (((uint64_t)o->via.bin.size + 2) / 3);
        if (!is_key) v->value_bytes += o->via.bin.size;
        break;
    case MSGPACK_OBJECT_ARRAY:
        for (uint32_t i = 0; i < o->via.array.size; i++) sum_values(&o->via.array.ptr[i], 0, v);
        break;
    case MSGPACK_OBJECT_MAP:
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            sum_values(&o->via.map.ptr[i].key, 1, v);
            sum_values(&o->via.map.ptr[i].val, 0, v);
        }
        break;
    default: break;
    }
}

static void format_time(char *buf, size_t n, double seconds)
{
    double ns = seconds * 1e9;
    if (seconds <= 0) snprintf(buf, n, "—");
    else if (ns < 1e3) snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6) snprintf(buf, n, "%.3g µs", ns / 1e3);
    else snprintf(buf, n, "%.3g ms", ns / 1e6);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static const char *kind_of(const bench_side *side)
{
    if (side == &bench_side_mpk) return "mpk";
    if (side == &bench_side_pb) return "protobuf";
    if (side == &bench_side_json) return "json";
    return "msgpack";
}

typedef struct wl_row {
    bench_row row;
    bench_config *cfg;
    const bench_workload *w;
    bench_result results[4];
    int ran;
} wl_row;

static int side_at(const bench_config *cfg, const bench_side *side)
{
    for (int s = 0; s < cfg->side_count; s++)
        if (cfg->sides[s] == side) return s;
    return -1;
}

int main(int argc, char **argv)
{
    int rounds = 7, quick = 0;
    const char *dir = "build/bench-workloads", *only = NULL, *rows_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--dir")) dir = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--only")) only = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--rows")) rows_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--quick] [--dir DIR] [--only TEXT] [--rows FILE]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > BENCH_MAX_ROUNDS) {
        fprintf(stderr, "mpk_bench_workloads: --rounds must be 1..%d\n", BENCH_MAX_ROUNDS);
        return 2;
    }
    memset(bench_bin_payload, 'x', sizeof bench_bin_payload);

    /* Rows without a protobuf message run without the protobuf-c side. */
    bench_config with_pb, without_pb;
    memset(&with_pb, 0, sizeof with_pb);
    /* --quick: at most 3 rounds of 2 ms samples (a median, even so: one sample is at the mercy of
     * one preemption) */
    with_pb.rounds = quick && rounds > 3 ? 3 : rounds;
    with_pb.min_sample_seconds = quick ? 0.002 : 0.01;
    with_pb.sides[with_pb.side_count++] = &bench_side_mpk;
    with_pb.sides[with_pb.side_count++] = &bench_side_msgpackc;
    without_pb = with_pb;
    with_pb.sides[with_pb.side_count++] = &bench_side_pb;
    with_pb.sides[with_pb.side_count++] = &bench_side_json;
    without_pb.sides[without_pb.side_count++] = &bench_side_json;

    char path[1024];
    bench_buf manifest;
    if (make_path(path, sizeof path, dir, "manifest", ".json") || read_file(path, &manifest) != 0) {
        fprintf(stderr, "mpk_bench_workloads: cannot read %s (make bench-workloads writes it)\n", path);
        return 1;
    }
    static bench_workload workloads[MAX_WORKLOADS];
    int n = bench_read_manifest(manifest.data, workloads, MAX_WORKLOADS);
    free(manifest.data);
    if (n <= 0) {
        fprintf(stderr, "mpk_bench_workloads: %s holds no workloads\n", path);
        return 1;
    }

    static wl_row rows[MAX_WORKLOADS];
    int row_count = 0;
    for (int i = 0; i < n; i++) {
        const bench_workload *w = &workloads[i];
        if (only && !strstr(w->id, only)) continue;
        wl_row *wr = &rows[row_count++];
        bench_row *r = &wr->row;
        wr->w = w;
        wr->cfg = w->proto[0] ? &with_pb : &without_pb;
        r->label = w->id;
        r->workload = w->id;
        r->kind = ROW_CORPUS;
        r->expect_per_side = 1;
        bench_buf mp, js, pb = {NULL, 0};
        if (make_path(path, sizeof path, dir, w->id, ".msgpack") || read_file(path, &mp) != 0) goto missing;
        if (make_path(path, sizeof path, dir, w->id, ".json") || read_file(path, &js) != 0) goto missing;
        if (w->proto[0]) {
            if (make_path(path, sizeof path, dir, w->id, ".pb") || read_file(path, &pb) != 0) goto missing;
        }

        /* mpk and msgpack-c: what msgpack-c reads from the file; JSON: the same but for the
         * strings' bytes (bins are base64 there); protobuf-c: the same ints and value bytes. */
        bench_check mp_check = {0, 0, 0, 0};
        void *dom = bench_side_msgpackc.dom_decode(&mp, 1);
        if (!dom) {
            fprintf(stderr, "mpk_bench_workloads: %s.msgpack: msgpack-c cannot decode it\n", w->id);
            return 1;
        }
        bench_side_msgpackc.dom_check(dom, &mp_check);
        bench_side_msgpackc.dom_free(dom);
        value_sums sums = {0, 0, 0};
        {
            msgpack_zone zone;
            msgpack_object o;
            size_t off = 0;
            msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE);
            if (msgpack_unpack(mp.data, mp.len, &off, &zone, &o) != MSGPACK_UNPACK_SUCCESS) return 1;
            sum_values(&o, 0, &sums);
            msgpack_zone_destroy(&zone);
        }
        for (int s = 0; s < wr->cfg->side_count; s++) {
            const bench_side *side = wr->cfg->sides[s];
            bench_check *e = &r->expect_side[s];
            bench_buf *src = side == &bench_side_json ? &js : side == &bench_side_pb ? &pb : &mp;
            r->corpus[s].data = malloc(src->len + 1);
            if (!r->corpus[s].data) return 1;
            memcpy(r->corpus[s].data, src->data, src->len);
            r->corpus[s].data[src->len] = '\0';
            r->corpus[s].len = src->len;
            *e = mp_check;
            if (side == &bench_side_json) {
                e->byte_sum = sums.json_bytes;
            } else if (side == &bench_side_pb) {
                const ProtobufCMessageDescriptor *d = find_descriptor(w->proto);
                if (!d) {
                    fprintf(stderr, "mpk_bench_workloads: %s: no generated code for message %s\n", w->id, w->proto);
                    return 1;
                }
                bench_pb_set_message(d);
                void *m = bench_side_pb.dom_decode(&pb, 1);
                if (!m) {
                    fprintf(stderr, "mpk_bench_workloads: %s.pb: protobuf-c cannot unpack it as %s\n", w->id, w->proto);
                    return 1;
                }
                bench_check pc = {0, 0, 0, 0};
                bench_side_pb.dom_check(m, &pc);
                bench_side_pb.dom_free(m);
                /* the message must hold the value's ints and strings/bins (its node count is its own) */
                if (pc.int_sum != sums.int_sum || pc.byte_sum != sums.value_bytes) {
                    fprintf(stderr,
                            "mpk_bench_workloads: %s.pb holds other values than %s.msgpack: ints sum to %llu (want "
                            "%llu), strings and bytes to %llu bytes (want %llu)\n",
                            w->id, w->id, (unsigned long long)pc.int_sum, (unsigned long long)sums.int_sum,
                            (unsigned long long)pc.byte_sum, (unsigned long long)sums.value_bytes);
                    return 1;
                }
                *e = pc;
            }
        }
        r->expect = mp_check;
        r->items = mp_check.nodes;
        free(mp.data);
        free(js.data);
        free(pb.data);
        continue;
    missing:
        fprintf(stderr, "mpk_bench_workloads: cannot read %s (make bench-workloads writes it)\n", path);
        return 1;
    }

    for (int i = 0; i < row_count; i++) {
        wl_row *wr = &rows[i];
        fprintf(stderr, "bench: workload %s ...\n", wr->w->id);
        if (wr->w->proto[0]) bench_pb_set_message(find_descriptor(wr->w->proto));
        bench_run_row(wr->cfg, &wr->row, wr->results);
        wr->ran = 1;
    }

    /* ---- the section ---- */
    const bench_side *order[4] = {&bench_side_mpk, &bench_side_msgpackc, &bench_side_pb, &bench_side_json};
    printf("## The common workloads: mpk vs msgpack-c vs protobuf-c %s vs %s\n\n", protobuf_c_version(),
           bench_json_version());
    printf("Every workload of `build/bench-workloads/manifest.json` (`make bench-workloads`, bench/workloads/gen.py), "
           "one message per op, medians of %d round%s%s (`mpk_bench_workloads`, c/bench/src/workloads_main.c). "
           "decode: mpk_doc_parse (one kept mpk_doc) and msgpack_unpack (one kept zone) of `<id>.msgpack`, "
           "protobuf-c's generated unpack of `<id>.pb` into a new struct, RapidJSON's `Document::Parse` of "
           "`<id>.json`; the DOM or struct is checked and freed outside the clock. encode: mpk_node_write and "
           "msgpack_pack_object of that DOM, protobuf-c's get_packed_size + pack of the unpacked struct, "
           "RapidJSON's Writer over its Document, each into its own output buffer kept from one encode to the next. "
           "Checks: every decode reports the value's ints, string/bin bytes and node count (protobuf-c: the same "
           "ints and string/bytes values; JSON: bins as base64 text); the MessagePack and protobuf encodings must "
           "give the input file back byte for byte, RapidJSON's must parse to the same values. Bytes: the input "
           "files. × is the other library's time over mpk's (above 1: mpk is faster); — where the workload has no "
           "protobuf message.\n\n",
           with_pb.rounds, with_pb.rounds == 1 ? "" : "s", quick ? " (QUICK=1: at most 3 rounds, 2 ms samples)" : "");
    printf("| workload | op | bytes mpk / msgpack-c / protobuf-c / JSON | mpk | msgpack-c | protobuf-c | JSON | × msgpack-c "
           "| × protobuf-c | × JSON |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    FILE *rows_out = NULL;
    if (rows_path && !(rows_out = fopen(rows_path, "w"))) {
        fprintf(stderr, "mpk_bench_workloads: cannot write %s\n", rows_path);
        return 1;
    }
    for (int i = 0; i < row_count; i++) {
        wl_row *wr = &rows[i];
        for (int o = 0; o < 2; o++) { /* ROW_CORPUS: OP_PACK, OP_UNPACK */
            const bench_result *res = &wr->results[o];
            if (!res->measured) continue;
            char bytes[4][32], times[4][32], ratios[4][32];
            int m = side_at(wr->cfg, &bench_side_mpk);
            for (int k = 0; k < 4; k++) {
                int s = side_at(wr->cfg, order[k]);
                snprintf(bytes[k], sizeof bytes[k], "—");
                snprintf(times[k], sizeof times[k], "—");
                snprintf(ratios[k], sizeof ratios[k], "—");
                if (s < 0) continue;
                snprintf(bytes[k], sizeof bytes[k], "%zu", wr->row.corpus[s].len);
                format_time(times[k], sizeof times[k], res->seconds[s]);
                snprintf(ratios[k], sizeof ratios[k], "%.2f", res->seconds[s] / res->seconds[m]);
                if (rows_out) {
                    fprintf(rows_out, "{\"workload\": ");
                    json_string(rows_out, wr->w->id);
                    fprintf(rows_out, ", \"label\": ");
                    json_string(rows_out, wr->w->title[0] ? wr->w->title : wr->w->id);
                    fprintf(rows_out, ", \"op\": \"%s\", \"variant\": \"\", \"per\": \"message\", \"run\": \"c-workloads\", "
                                      "\"library\": \"%s\", \"kind\": \"%s\", \"ns_per_op\": %.6g, \"bytes\": %zu}\n",
                            o == 0 ? "encode" : "decode", order[k]->name, kind_of(order[k]), res->seconds[s] * 1e9,
                            res->bytes[s]);
                }
            }
            printf("| %s | %s | %s / %s / %s / %s | %s | %s | %s | %s | %s | %s | %s |\n", wr->w->id,
                   o == 0 ? "encode" : "decode", bytes[0], bytes[1], bytes[2], bytes[3], times[0], times[1], times[2],
                   times[3], ratios[1], ratios[2], ratios[3]);
        }
    }
    if (rows_out && fclose(rows_out) != 0) {
        fprintf(stderr, "mpk_bench_workloads: cannot write %s\n", rows_path);
        return 1;
    }
    for (int i = 0; i < row_count; i++)
        for (int s = 0; s < rows[i].cfg->side_count; s++) free(rows[i].row.corpus[s].data);
    return 0;
}
