// RapidJSON (Debian rapidjson-dev) as the JSON bench side, and the JSON -> MessagePack conversion
// of the corpus files.
//
// RapidJSON rather than simdjson: the rows measure both directions, and RapidJSON has a writer for
// application values and a mutable DOM it can serialize, while simdjson 3.0 only parses (its DOM is
// read-only and can only re-print what it parsed). One library on every row keeps the JSON column
// comparable. Inputs are NUL-terminated so RapidJSON takes its fastest (StringStream) path;
// RAPIDJSON_SSE2 turns on its SIMD whitespace skipping, which every x86-64 CPU has.
#define RAPIDJSON_SSE2 1
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <msgpack.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "side.h"

using namespace rapidjson;

namespace {

// The output buffer, kept from one pack to the next.
StringBuffer *sb_kept;

StringBuffer &start()
{
    if (!sb_kept) sb_kept = new StringBuffer;
    sb_kept->Clear();
    return *sb_kept;
}

// GetString() NUL-terminates the text (without counting the NUL), which the parser needs.
int hand_over(const StringBuffer &sb, bench_buf *out)
{
    out->data = const_cast<char *>(sb.GetString());
    out->len = sb.GetSize();
    return 0;
}

void release()
{
    delete sb_kept;
    sb_kept = nullptr;
}

int pack_ints(uint32_t count, bench_buf *out)
{
    StringBuffer &sb = start();
    Writer<StringBuffer> w(sb);
    w.StartArray();
    for (uint32_t i = 0; i < count; i++) w.Int64(i);
    w.EndArray();
    return hand_over(sb, out);
}

int pack_strings(const bench_strings *s, bench_buf *out)
{
    StringBuffer &sb = start();
    Writer<StringBuffer> w(sb);
    w.StartArray();
    for (uint32_t i = 0; i < s->count; i++) w.String(s->chars, s->lengths[i]);
    w.EndArray();
    return hand_over(sb, out);
}

void write_pair(Writer<StringBuffer> &w, int a, int b)
{
    w.StartArray();
    w.Int(a);
    w.Int(b);
    w.EndArray();
}

int pack_messages(bench_message message, uint32_t count, bench_buf *out)
{
    StringBuffer &sb = start();
    Writer<StringBuffer> w(sb);
    for (uint32_t i = 0; i < count; i++) {
        switch (message) {
        case MSG_PAIR_POSITIVE: write_pair(w, 1, 2); break;
        case MSG_PAIR_NEGATIVE: write_pair(w, -1, -2); break;
        case MSG_BIN: w.String(bench_bin_payload, BENCH_BIN_SIZE); break;
        case MSG_NESTED:
            w.StartArray();
            write_pair(w, 1, 2);
            write_pair(w, -1, -2);
            w.String(bench_bin_payload, BENCH_BIN_SIZE);
            w.EndArray();
            break;
        }
        w.Reset(sb);  // one more top-level value
    }
    return hand_over(sb, out);
}

void walk(const Value &v, bench_check *c)
{
    c->nodes++;
    if (v.IsArray()) {
        for (const Value &e : v.GetArray()) walk(e, c);
    } else if (v.IsObject()) {
        for (const auto &m : v.GetObject()) {
            walk(m.name, c);
            walk(m.value, c);
        }
    } else if (v.IsString()) {
        c->byte_sum += v.GetStringLength();
    } else if (v.IsInt64()) {
        c->int_sum += static_cast<uint64_t>(v.GetInt64());
    } else if (v.IsUint64()) {
        c->int_sum += v.GetUint64();
    }
}

// A new Document each time, fresh or not: its pool allocator keeps no memory across parses
// (reusing a Document grows the pool; MemoryPoolAllocator::Clear frees every chunk).
void *dom_decode(const bench_buf *in, int)
{
    Document *d = new (std::nothrow) Document;
    if (!d) return nullptr;
    d->Parse(in->data);
    if (d->HasParseError()) {
        delete d;
        return nullptr;
    }
    return d;
}

void dom_check(const void *dom, bench_check *c)
{
    c->messages++;
    walk(*static_cast<const Document *>(dom), c);
}

int dom_encode(const void *dom, bench_buf *out)
{
    StringBuffer &sb = start();
    Writer<StringBuffer> w(sb);
    if (!static_cast<const Document *>(dom)->Accept(w)) return -1;
    return hand_over(sb, out);
}

void dom_free(void *dom) { delete static_cast<Document *>(dom); }

// JSON has one mode: parse the next document from where the last one stopped. The pool gets a
// fixed buffer so that clearing it between messages frees nothing.
int unpack_messages(const bench_buf *in, bench_unpack_mode, bench_check *c)
{
    static char pool_buffer[4 * BENCH_BIN_SIZE];
    MemoryPoolAllocator<> pool(pool_buffer, sizeof pool_buffer);
    Document d(&pool);
    StringStream ss(in->data);
    while (ss.Peek() != '\0') {
        d.ParseStream<kParseStopWhenDoneFlag>(ss);
        if (d.HasParseError()) return -1;
        c->messages++;
        walk(d, c);
        pool.Clear();
    }
    return 0;
}

// --- JSON -> MessagePack, once per corpus file ---

void to_msgpack(const Value &v, msgpack_packer *pk)
{
    switch (v.GetType()) {
    case kNullType: msgpack_pack_nil(pk); break;
    case kFalseType: msgpack_pack_false(pk); break;
    case kTrueType: msgpack_pack_true(pk); break;
    case kStringType:
        msgpack_pack_str(pk, v.GetStringLength());
        msgpack_pack_str_body(pk, v.GetString(), v.GetStringLength());
        break;
    case kNumberType:
        if (v.IsInt64()) msgpack_pack_int64(pk, v.GetInt64());
        else if (v.IsUint64()) msgpack_pack_uint64(pk, v.GetUint64());
        else msgpack_pack_double(pk, v.GetDouble());
        break;
    case kArrayType:
        msgpack_pack_array(pk, v.Size());
        for (const Value &e : v.GetArray()) to_msgpack(e, pk);
        break;
    case kObjectType:
        msgpack_pack_map(pk, v.MemberCount());
        for (const auto &m : v.GetObject()) {
            to_msgpack(m.name, pk);
            to_msgpack(m.value, pk);
        }
        break;
    }
}

}  // namespace

extern "C" {

const char *bench_json_version(void) { return "RapidJSON " RAPIDJSON_VERSION_STRING; }

int bench_json_to_msgpack(const char *json, size_t len, bench_buf *out)
{
    Document d;
    d.Parse(json, len);
    if (d.HasParseError()) return -1;
    msgpack_sbuffer sbuf;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sbuf);
    msgpack_packer_init(&pk, &sbuf, msgpack_sbuffer_write);
    to_msgpack(d, &pk);
    out->data = sbuf.data;
    out->len = sbuf.size;
    return 0;
}

static void copy_member(const Value &o, const char *name, char *dst, size_t cap)
{
    dst[0] = '\0';
    if (!o.HasMember(name) || !o[name].IsString()) return;
    size_t n = o[name].GetStringLength();
    if (n >= cap) n = cap - 1;
    memcpy(dst, o[name].GetString(), n);
    dst[n] = '\0';
}

int bench_read_manifest(const char *json, bench_workload *out, int max)
{
    Document d;
    d.Parse(json);
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("workloads") || !d["workloads"].IsArray()) return -1;
    int n = 0;
    for (const Value &w : d["workloads"].GetArray()) {
        if (n >= max) break;
        if (!w.IsObject()) return -1;
        bench_workload *e = &out[n];
        copy_member(w, "id", e->id, sizeof e->id);
        copy_member(w, "title", e->title, sizeof e->title);
        copy_member(w, "proto", e->proto, sizeof e->proto);
        if (!e->id[0]) return -1;
        // a message without its .pb file cannot be measured
        if (!w.HasMember("files") || !w["files"].IsObject() || !w["files"].HasMember("pb")) e->proto[0] = '\0';
        n++;
    }
    return n;
}

const bench_side bench_side_json = {
    "RapidJSON", pack_ints, pack_strings, pack_messages, dom_decode, dom_check, dom_encode, dom_free,
    unpack_messages, release, nullptr, nullptr, // no zero-copy output
};

}
