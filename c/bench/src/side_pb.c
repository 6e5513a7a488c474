/* protobuf-c (Debian libprotobuf-c) as a bench side for the common workloads' rows (ROW_CORPUS
 * only): its "DOM" is the generated struct of the workload's message.
 *
 *   decode: protobuf_c_message_unpack of the whole <id>.pb into a new struct (its only decode API;
 *           the struct is freed by dom_free, outside the clock)
 *   encode: protobuf_c_message_get_packed_size, then protobuf_c_message_pack into an output buffer
 *           kept and grown from one pack to the next (the size is asked inside the clock: a program
 *           must ask it to size its buffer)
 *   check:  a walk over the struct by its descriptors (not timed): every message and every field
 *           value (each element of a repeated field) is a node; integer fields add to int_sum (bool
 *           and floating-point ones do not), string and bytes lengths to byte_sum. */
#include "side_pb.h"

#include <stdlib.h>
#include <string.h>

static const ProtobufCMessageDescriptor *current;
static uint8_t *out_buf;
static size_t out_cap;

void bench_pb_set_message(const ProtobufCMessageDescriptor *d) { current = d; }

static size_t element_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    }
    return 0;
}

static void walk(const ProtobufCMessage *m, bench_check *c);

static void walk_value(ProtobufCType t, const void *p, bench_check *c)
{
    c->nodes++;
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        c->int_sum += (uint64_t)(int64_t) * (const int32_t *)p;
        break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        c->int_sum += *(const uint32_t *)p;
        break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
        c->int_sum += (uint64_t) * (const int64_t *)p;
        break;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        c->int_sum += *(const uint64_t *)p;
        break;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)p;
        if (s) c->byte_sum += strlen(s);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES:
        c->byte_sum += ((const ProtobufCBinaryData *)p)->len;
        break;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)p;
        if (sub) walk(sub, c);
        break;
    }
    case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: case PROTOBUF_C_TYPE_BOOL:
        break;
    }
}

static void walk(const ProtobufCMessage *m, bench_check *c)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    c->nodes++;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            const char *elems = *(const char *const *)(base + f->offset);
            for (size_t k = 0; k < n; k++) walk_value(f->type, elems + k * element_size(f->type), c);
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
                   f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING &&
                   !*(const protobuf_c_boolean *)(base + f->quantifier_offset)) {
            continue; /* a proto2 optional scalar that is absent */
        } else {
            walk_value(f->type, base + f->offset, c);
        }
    }
}

static void *dom_decode(const bench_buf *in, int fresh)
{
    (void)fresh; /* every unpack allocates a new struct: protobuf-c has no reusable one */
    if (!current) return NULL;
    return protobuf_c_message_unpack(current, NULL, in->len, (const uint8_t *)in->data);
}

static void dom_check(const void *dom, bench_check *c)
{
    c->messages++;
    walk((const ProtobufCMessage *)dom, c);
}

static int dom_encode(const void *dom, bench_buf *out)
{
    const ProtobufCMessage *m = dom;
    size_t need = protobuf_c_message_get_packed_size(m);
    if (need + 1 > out_cap) {
        uint8_t *grown = realloc(out_buf, need + 1);
        if (!grown) return -1;
        out_buf = grown;
        out_cap = need + 1;
    }
    size_t len = protobuf_c_message_pack(m, out_buf);
    if (len != need) return -1;
    out_buf[len] = 0;
    out->data = (char *)out_buf;
    out->len = len;
    return 0;
}

static void dom_free(void *dom) { protobuf_c_message_free_unpacked(dom, NULL); }

static void release(void)
{
    free(out_buf);
    out_buf = NULL;
    out_cap = 0;
}

/* Only the corpus-shaped rows (decode a message, encode it back) exist for this side. */
const bench_side bench_side_pb = {
    "protobuf-c", NULL, NULL, NULL, dom_decode, dom_check, dom_encode, dom_free, NULL, release, NULL, NULL,
};
