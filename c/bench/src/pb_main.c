/* mpk_bench_pb: the C++ seed's Test1-Test4 in C, mpk and msgpack-c against Protocol Buffers
 * (protobuf-c, Debian's libprotobuf-c), in one process.
 *
 * Each side writes N messages back to back into one buffer (Test1/Test2: 2^23, Test3/Test4: 2^15,
 * as in the seed; --quick: 2^16 and 2^9), then reads them back one after another. The MessagePack
 * sides are the main bench's (side_mpk.c, side_msgpackc.c: pack_messages, and unpack_messages in
 * one-shot mode: mpk's pull reader, msgpack-c's msgpack_unpack per message). protobuf-c writes each
 * message length-delimited, as the seed did, and reads each one with seed__testN__unpack into a
 * struct (its only decode API: a malloc'd struct per message, freed by free_unpacked inside the
 * clock). Every read is checked: message count, sum of the ints, sum of the byte lengths, the same
 * for every side. Medians of --rounds rounds; in each round every side runs in rotating order.
 * Prints a markdown table (appended to bench/results/c.md by make bench-c); --rows FILE writes the
 * same numbers as one JSON object per side and op (for the sidecar, c/bench/sidecar.py). */
#include "side.h"
#include "seed.pb-c.h"
#include "workloads.pb-c.h"

#include <mpk.h>
#include <msgpack.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char bench_bin_payload[BENCH_BIN_SIZE];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- protobuf-c ------------------------------------------------------------------------------- */

static unsigned char *pb_out;
static size_t pb_cap;

static size_t put_varint(unsigned char *p, size_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static int get_varint(const unsigned char *p, size_t len, size_t *pos, size_t *v)
{
    size_t r = 0;
    for (int shift = 0; shift < 64 && *pos < len; shift += 7) {
        unsigned char b = p[(*pos)++];
        r |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* The messages, built once (building them is not what is measured). */
static Seed__Test1 t1 = SEED__TEST1__INIT;
static Seed__Test2 t2 = SEED__TEST2__INIT;
static Seed__Test3 t3 = SEED__TEST3__INIT;
static Seed__Test4 t4 = SEED__TEST4__INIT;

static const ProtobufCMessage *pb_message(bench_message m)
{
    switch (m) {
    case MSG_PAIR_POSITIVE: return &t1.base;
    case MSG_PAIR_NEGATIVE: return &t2.base;
    case MSG_BIN: return &t3.base;
    default: return &t4.base;
    }
}

static const ProtobufCMessageDescriptor *pb_descriptor(bench_message m)
{
    switch (m) {
    case MSG_PAIR_POSITIVE: return &seed__test1__descriptor;
    case MSG_PAIR_NEGATIVE: return &seed__test2__descriptor;
    case MSG_BIN: return &seed__test3__descriptor;
    default: return &seed__test4__descriptor;
    }
}

static int pb_pack(bench_message m, uint32_t count, bench_buf *out)
{
    const ProtobufCMessage *msg = pb_message(m);
    size_t need = (protobuf_c_message_get_packed_size(msg) + 10) * count;
    if (need > pb_cap) {
        free(pb_out);
        pb_out = malloc(need);
        pb_cap = pb_out ? need : 0;
        if (!pb_out) return -1;
    }
    size_t len = 0;
    for (uint32_t i = 0; i < count; i++) {
        /* the size is asked per message, as a program sending different messages must */
        size_t size = protobuf_c_message_get_packed_size(msg);
        len += put_varint(pb_out + len, size);
        len += protobuf_c_message_pack(msg, pb_out + len);
    }
    out->data = (char *)pb_out;
    out->len = len;
    return 0;
}

static void add_pair_u(bench_check *c, uint32_t a, uint32_t b) { c->int_sum += (uint64_t)a + b; }
static void add_pair_i(bench_check *c, int32_t a, int32_t b) { c->int_sum += (uint64_t)(int64_t)a + (uint64_t)(int64_t)b; }

static int pb_unpack(bench_message m, const bench_buf *in, bench_check *c)
{
    const unsigned char *p = (const unsigned char *)in->data;
    const ProtobufCMessageDescriptor *d = pb_descriptor(m);
    size_t pos = 0;
    while (pos < in->len) {
        size_t size;
        if (get_varint(p, in->len, &pos, &size) || size > in->len - pos) return -1;
        ProtobufCMessage *msg = protobuf_c_message_unpack(d, NULL, size, p + pos);
        if (!msg) return -1;
        pos += size;
        c->messages++;
        switch (m) {
        case MSG_PAIR_POSITIVE: add_pair_u(c, ((Seed__Test1 *)msg)->a, ((Seed__Test1 *)msg)->b); break;
        case MSG_PAIR_NEGATIVE: add_pair_i(c, ((Seed__Test2 *)msg)->a, ((Seed__Test2 *)msg)->b); break;
        case MSG_BIN: c->byte_sum += ((Seed__Test3 *)msg)->data.len; break;
        case MSG_NESTED: {
            Seed__Test4 *t = (Seed__Test4 *)msg;
            add_pair_u(c, t->test1->a, t->test1->b);
            add_pair_i(c, t->test2->a, t->test2->b);
            c->byte_sum += t->test3->data.len;
            break;
        }
        }
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    return 0;
}

/* ---- the Go seed's Product: a map keyed by field names (MessagePack), mpkbench.Product (protobuf) -- */

#define PRODUCT_ID 191919191919LL
#define PRODUCT_PRICE 18900
static const char *const product_name = "Men's Trail Running Shoe";
static const char *const product_description =
    "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.";
static char *product_colors[] = {"Black", "Forest Green", "Slate Blue"};
#define PRODUCT_COLORS 3u
static Mpkbench__Product pprod = MPKBENCH__PRODUCT__INIT;

/* What a decode of one Product adds to the check: id and price to int_sum, the string lengths
 * (name, description, colors) to byte_sum. */
static const char *const keys[] = {"id", "name", "description", "price", "colors"};

static mpk_writer pw;
static int pw_ready;

static int mpk_product_pack(uint32_t count, bench_buf *out)
{
    if (!pw_ready) {
        mpk_writer_init_growable(&pw, 0);
        pw_ready = 1;
    }
    mpk_writer_reset(&pw);
    for (uint32_t i = 0; i < count; i++) {
        mpk_write_map(&pw, 5);
        mpk_write_str(&pw, keys[0], 2);
        mpk_write_int(&pw, PRODUCT_ID);
        mpk_write_str(&pw, keys[1], 4);
        mpk_write_cstr(&pw, product_name);
        mpk_write_str(&pw, keys[2], 11);
        mpk_write_cstr(&pw, product_description);
        mpk_write_str(&pw, keys[3], 5);
        mpk_write_int(&pw, PRODUCT_PRICE);
        mpk_write_str(&pw, keys[4], 6);
        mpk_write_array(&pw, PRODUCT_COLORS);
        for (uint32_t k = 0; k < PRODUCT_COLORS; k++) mpk_write_cstr(&pw, product_colors[k]);
    }
    if (mpk_writer_finish(&pw) != MPK_OK) return -1;
    out->data = (char *)mpk_writer_data(&pw);
    out->len = mpk_writer_size(&pw);
    return 0;
}

static int key_is(const uint8_t *p, uint32_t len, const char *k)
{
    return strlen(k) == len && memcmp(p, k, len) == 0;
}

/* Typed read with the pull reader: each value found by its key (the strings stay in the input). */
static int mpk_product_unpack(const bench_buf *in, bench_check *c)
{
    mpk_reader r;
    mpk_tag t, k, v;
    mpk_reader_init(&r, in->data, in->len);
    while (mpk_reader_offset(&r) < in->len) {
        if (!mpk_reader_next(&r, &t) || t.type != MPK_MAP) break;
        for (uint32_t i = 0; i < t.len; i++) {
            if (!mpk_reader_next(&r, &k) || k.type != MPK_STR || !mpk_reader_next(&r, &v)) goto out;
            if (key_is(k.data, k.len, "id") || key_is(k.data, k.len, "price")) {
                c->int_sum += v.type == MPK_UINT ? v.v.u : (uint64_t)v.v.i;
            } else if (key_is(k.data, k.len, "name") || key_is(k.data, k.len, "description")) {
                c->byte_sum += v.len;
            } else if (key_is(k.data, k.len, "colors") && v.type == MPK_ARRAY) {
                for (uint32_t j = 0; j < v.len; j++) {
                    mpk_tag s;
                    if (!mpk_reader_next(&r, &s)) goto out;
                    c->byte_sum += s.len;
                }
            }
        }
        c->messages++;
    }
out:;
    int rc = mpk_reader_error(&r).kind == MPK_OK && mpk_reader_offset(&r) == in->len ? 0 : -1;
    mpk_reader_destroy(&r);
    return rc;
}

static msgpack_sbuffer msb;
static int msb_ready;

static int msgpackc_product_pack(uint32_t count, bench_buf *out)
{
    if (!msb_ready) {
        msgpack_sbuffer_init(&msb);
        msb_ready = 1;
    }
    msgpack_sbuffer_clear(&msb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &msb, msgpack_sbuffer_write);
    int rc = 0;
    for (uint32_t i = 0; i < count; i++) {
        rc |= msgpack_pack_map(&pk, 5);
        rc |= msgpack_pack_str(&pk, 2) | msgpack_pack_str_body(&pk, keys[0], 2) | msgpack_pack_int64(&pk, PRODUCT_ID);
        rc |= msgpack_pack_str(&pk, 4) | msgpack_pack_str_body(&pk, keys[1], 4);
        rc |= msgpack_pack_str(&pk, strlen(product_name)) | msgpack_pack_str_body(&pk, product_name, strlen(product_name));
        rc |= msgpack_pack_str(&pk, 11) | msgpack_pack_str_body(&pk, keys[2], 11);
        rc |= msgpack_pack_str(&pk, strlen(product_description)) |
              msgpack_pack_str_body(&pk, product_description, strlen(product_description));
        rc |= msgpack_pack_str(&pk, 5) | msgpack_pack_str_body(&pk, keys[3], 5) | msgpack_pack_int64(&pk, PRODUCT_PRICE);
        rc |= msgpack_pack_str(&pk, 6) | msgpack_pack_str_body(&pk, keys[4], 6) | msgpack_pack_array(&pk, PRODUCT_COLORS);
        for (uint32_t k = 0; k < PRODUCT_COLORS; k++)
            rc |= msgpack_pack_str(&pk, strlen(product_colors[k])) | msgpack_pack_str_body(&pk, product_colors[k], strlen(product_colors[k]));
    }
    out->data = msb.data;
    out->len = msb.size;
    return rc ? -1 : 0;
}

/* msgpack_unpack into a reused zone, then the values found by their keys in the object. */
static int msgpackc_product_unpack(const bench_buf *in, bench_check *c)
{
    msgpack_zone zone;
    if (!msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE)) return -1;
    size_t off = 0;
    int rc = 0;
    while (off < in->len) {
        msgpack_object o;
        /* EXTRA_BYTES: a whole object, more messages after it */
        msgpack_unpack_return ur = msgpack_unpack(in->data, in->len, &off, &zone, &o);
        if ((ur != MSGPACK_UNPACK_SUCCESS && ur != MSGPACK_UNPACK_EXTRA_BYTES) || o.type != MSGPACK_OBJECT_MAP) {
            rc = -1;
            break;
        }
        for (uint32_t i = 0; i < o.via.map.size; i++) {
            const msgpack_object *k = &o.via.map.ptr[i].key, *v = &o.via.map.ptr[i].val;
            if (k->type != MSGPACK_OBJECT_STR) continue;
            const uint8_t *kp = (const uint8_t *)k->via.str.ptr;
            uint32_t kl = k->via.str.size;
            if (key_is(kp, kl, "id") || key_is(kp, kl, "price"))
                c->int_sum += v->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? v->via.u64 : (uint64_t)v->via.i64;
            else if (key_is(kp, kl, "name") || key_is(kp, kl, "description"))
                c->byte_sum += v->via.str.size;
            else if (key_is(kp, kl, "colors") && v->type == MSGPACK_OBJECT_ARRAY)
                for (uint32_t j = 0; j < v->via.array.size; j++) c->byte_sum += v->via.array.ptr[j].via.str.size;
        }
        c->messages++;
        msgpack_zone_clear(&zone);
    }
    msgpack_zone_destroy(&zone);
    return rc;
}

static int pb_product_pack(uint32_t count, bench_buf *out)
{
    size_t need = (mpkbench__product__get_packed_size(&pprod) + 10) * count;
    if (need > pb_cap) {
        free(pb_out);
        pb_out = malloc(need);
        pb_cap = pb_out ? need : 0;
        if (!pb_out) return -1;
    }
    size_t len = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t size = mpkbench__product__get_packed_size(&pprod);
        len += put_varint(pb_out + len, size);
        len += mpkbench__product__pack(&pprod, pb_out + len);
    }
    out->data = (char *)pb_out;
    out->len = len;
    return 0;
}

static int pb_product_unpack(const bench_buf *in, bench_check *c)
{
    const unsigned char *p = (const unsigned char *)in->data;
    size_t pos = 0;
    while (pos < in->len) {
        size_t size;
        if (get_varint(p, in->len, &pos, &size) || size > in->len - pos) return -1;
        Mpkbench__Product *m = mpkbench__product__unpack(NULL, size, p + pos);
        if (!m) return -1;
        pos += size;
        c->messages++;
        c->int_sum += (uint64_t)m->id + (uint64_t)(int64_t)m->price;
        c->byte_sum += strlen(m->name) + strlen(m->description);
        for (size_t j = 0; j < m->n_colors; j++) c->byte_sum += strlen(m->colors[j]);
        mpkbench__product__free_unpacked(m, NULL);
    }
    return 0;
}

/* ---- the run ---------------------------------------------------------------------------------- */

enum { SIDE_MPK, SIDE_MSGPACKC, SIDE_PB, SIDES };
static const char *side_names[SIDES] = {"mpk", "msgpack-c", "protobuf-c"};

#define MSG_PRODUCT ((bench_message)99)

static int pack(int side, bench_message m, uint32_t count, bench_buf *out)
{
    if (m == MSG_PRODUCT)
        return side == SIDE_MPK ? mpk_product_pack(count, out)
               : side == SIDE_MSGPACKC ? msgpackc_product_pack(count, out) : pb_product_pack(count, out);
    if (side == SIDE_MPK) return bench_side_mpk.pack_messages(m, count, out);
    if (side == SIDE_MSGPACKC) return bench_side_msgpackc.pack_messages(m, count, out);
    return pb_pack(m, count, out);
}

static int unpack(int side, bench_message m, const bench_buf *in, bench_check *c)
{
    if (m == MSG_PRODUCT)
        return side == SIDE_MPK ? mpk_product_unpack(in, c)
               : side == SIDE_MSGPACKC ? msgpackc_product_unpack(in, c) : pb_product_unpack(in, c);
    if (side == SIDE_MPK) return bench_side_mpk.unpack_messages(in, UNPACK_ONESHOT, c);
    if (side == SIDE_MSGPACKC) return bench_side_msgpackc.unpack_messages(in, UNPACK_ONESHOT, c);
    return pb_unpack(m, in, c);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rounds = 7, quick = 0;
    const char *rows_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--quick] [--rows FILE]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > 99) rounds = 7;
    memset(bench_bin_payload, 'x', sizeof bench_bin_payload);
    t1.a = 1;
    t1.b = 2;
    t2.a = -1;
    t2.b = -2;
    t3.data.data = (uint8_t *)bench_bin_payload;
    t3.data.len = BENCH_BIN_SIZE;
    t4.test1 = &t1;
    t4.test2 = &t2;
    t4.test3 = &t3;
    pprod.id = PRODUCT_ID;
    pprod.name = (char *)product_name;
    pprod.description = (char *)product_description;
    pprod.price = PRODUCT_PRICE;
    pprod.n_colors = PRODUCT_COLORS;
    pprod.colors = product_colors;

    struct { const char *name; const char *workload; bench_message m; uint32_t count; } rows[] = {
        {"Test1 [1, 2]", "test1", MSG_PAIR_POSITIVE, quick ? 1u << 16 : 1u << 23},
        {"Test2 [-1, -2]", "test2", MSG_PAIR_NEGATIVE, quick ? 1u << 16 : 1u << 23},
        {"Test3 8 KiB bin", "test3", MSG_BIN, quick ? 1u << 9 : 1u << 15},
        {"Test4 [[1, 2], [-1, -2], 8 KiB bin]", "test4", MSG_NESTED, quick ? 1u << 9 : 1u << 15},
        {"Product", "product", MSG_PRODUCT, quick ? 1u << 14 : 1u << 20},
    };
    printf("## Protocol Buffers in C: the C++ seed's Test1-Test4, mpk vs msgpack-c vs protobuf-c %s\n\n", protobuf_c_version());
    printf("Medians of %d rounds%s. Test1/Test2: %u messages, Test3/Test4: %u, the Go seed's Product (a map keyed by field names; "
           "protobuf: mpkbench.Product of bench/workloads/workloads.proto): %u, written back to back into one buffer and "
           "read back one after another (`mpk_bench_pb`, c/bench/src/pb_main.c); bytes per message (protobuf-c's include its length prefix). mpk reads with its pull reader, msgpack-c "
           "with msgpack_unpack into a reused zone, protobuf-c with its generated unpack into a new struct per message (its "
           "only decode API; freed inside the clock); protobuf-c's messages are length-delimited as in the seed. Every read "
           "is checked (message count, sum of ints, sum of byte lengths). × is the other side's time over mpk's (above 1: "
           "mpk is faster).\n\n",
           rounds, quick ? " (QUICK=1: fewer messages)" : "", rows[0].count, rows[2].count, rows[4].count);
    printf("| message | op | bytes/msg mpk / msgpack-c / protobuf-c | mpk ns/msg | msgpack-c ns/msg | protobuf-c ns/msg | × msgpack-c | × protobuf-c |\n");
    printf("|---|---|---|--:|--:|--:|--:|--:|\n");
    int failed = 0;
    FILE *rows_out = NULL;
    if (rows_path && !(rows_out = fopen(rows_path, "w"))) {
        fprintf(stderr, "cannot write %s\n", rows_path);
        return 1;
    }
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        double tp[SIDES][99], tu[SIDES][99];
        size_t bytes[SIDES] = {0};
        bench_check want = {0};
        for (int k = 0; k < rounds; k++) {
            for (int j = 0; j < SIDES; j++) {
                int s = (j + k) % SIDES;
                bench_buf out = {0};
                double t0 = now();
                if (pack(s, rows[r].m, rows[r].count, &out)) {
                    fprintf(stderr, "%s: pack failed on %s\n", side_names[s], rows[r].name);
                    return 1;
                }
                tp[s][k] = now() - t0;
                bytes[s] = out.len;
                /* unpack from a private copy, so no side reads another side's (or its own writer's) pages */
                bench_buf in = {malloc(out.len), out.len};
                if (!in.data) return 1;
                memcpy(in.data, out.data, out.len);
                bench_check c = {0};
                t0 = now();
                int rc = unpack(s, rows[r].m, &in, &c);
                tu[s][k] = now() - t0;
                free(in.data);
                if (rc || c.messages != rows[r].count) {
                    fprintf(stderr, "%s: unpack failed on %s\n", side_names[s], rows[r].name);
                    return 1;
                }
                if (!want.messages) want = c;
                if (c.int_sum != want.int_sum || c.byte_sum != want.byte_sum) {
                    fprintf(stderr, "%s: unpack of %s read other values than the first side\n", side_names[s], rows[r].name);
                    failed = 1;
                }
            }
        }
        for (int op = 0; op < 2; op++) {
            double ns[SIDES];
            for (int s = 0; s < SIDES; s++) ns[s] = median(op ? tu[s] : tp[s], rounds) * 1e9 / rows[r].count;
            printf("| %s | %s | %zu / %zu / %zu | %.1f | %.1f | %.1f | %.2f | %.2f |\n", rows[r].name, op ? "unpack" : "pack",
                   bytes[SIDE_MPK] / rows[r].count, bytes[SIDE_MSGPACKC] / rows[r].count, bytes[SIDE_PB] / rows[r].count,
                   ns[0], ns[1], ns[2], ns[1] / ns[0], ns[2] / ns[0]);
            /* The sidecar: mpk and msgpack-c are here as protobuf-c's baseline in the same run
             * ("base_only": mpk_bench and mpk_bench_workloads measure them on these workloads). */
            for (int s = 0; rows_out && s < SIDES; s++)
                fprintf(rows_out,
                        "{\"workload\": \"%s\", \"label\": \"%s\", \"op\": \"%s\", \"variant\": \"\", \"per\": \"message\", "
                        "\"run\": \"c-pb\", \"library\": \"%s\", \"kind\": \"%s\", \"ns_per_op\": %.6g, \"bytes\": %.6g, "
                        "\"base_only\": %s}\n",
                        rows[r].workload, rows[r].name, op ? "decode" : "encode", side_names[s],
                        s == SIDE_PB ? "protobuf" : s == SIDE_MPK ? "mpk" : "msgpack", ns[s],
                        (double)bytes[s] / rows[r].count, s == SIDE_PB ? "false" : "true");
        }
    }
    if (rows_out && fclose(rows_out) != 0) {
        fprintf(stderr, "cannot write %s\n", rows_path);
        return 1;
    }
    bench_side_mpk.release();
    bench_side_msgpackc.release();
    if (pw_ready) mpk_writer_destroy(&pw);
    if (msb_ready) msgpack_sbuffer_destroy(&msb);
    free(pb_out);
    return failed;
}
