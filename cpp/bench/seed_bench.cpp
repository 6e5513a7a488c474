// seed_bench.cpp — the seed's C++ comparison, reproduced and extended (make bench-cpp).
//
// Typed rows: Test1 {1, 2} and Test2 {-1, -2} 2^23 times, Test3 (8 KiB of bytes) and Test4 (all
// three) 2^15 times — the seed's counts —, the Go seed's Product 2^20 times and a list of 100
// Products 2^12 times (bench/workloads' "product" and "products100", loaded from
// build/bench-workloads); each library serializes all messages into one presized buffer, then
// deserializes them one after another into typed structs. Libraries: mpk (typed: MPK_FIELDS
// structs, bytes read as a view), msgpack-cxx (the seed's MSGPACK_DEFINE structs: its documented
// path unpack → object_handle → convert, and its fastest path, a reused zone with raw_ref),
// Protocol Buffers (the seed's .proto and workloads.proto, length-delimited as in the seed) and
// RapidJSON (the same values as JSON documents, written back to back).
//
// The other common workloads with a protobuf message (table16, rb_*, c_*, long_string,
// utf8_strings, bins64k): typed, one message per op (workloads.cpp).
//
// Dynamic rows: the workloads without a protobuf message (twitter, citm_catalog, canada,
// rb_twitter, js_*) decoded into a tree and encoded back: mpk through mpk::document / mpk::value,
// msgpack-cxx through msgpack::object (reused zone, strings referenced), RapidJSON through
// rapidjson::Document (from the .json file).
//
// Every cell is the median of --runs runs; a serialization is timed on its second pass over the
// buffer (the first one touches the pages, whose faults are not serialization). Writes the
// tables (--md) and the sidecar rows (--json, bench/README.md "The sidecar").
#include "common.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/common.h>

#include "seed.pb.h"
#include "workloads.pb.h"

#include <cstring>
#include <ctime>
#include <thread>

namespace {

using namespace mpkb;

constexpr std::size_t kBin = 8192;

// ---- mpk ----------------------------------------------------------------------------------------
namespace m {
struct Test1 { std::uint32_t a = 1, b = 2; MPK_FIELDS(a, b) };
struct Test2 { std::int32_t a = -1, b = -2; MPK_FIELDS(a, b) };
struct Test3 { mpk::bytes_view data; MPK_FIELDS(data) };
struct Test4 { Test1 test1; Test2 test2; Test3 test3; MPK_FIELDS(test1, test2, test3) };
// The Go seed's Product (bench/workloads: "product"), a map keyed by field names.
struct Product {
    std::int64_t id = 0; std::string name, description; std::int32_t price = 0; std::vector<std::string> colors;
    MPK_FIELDS_MAP(id, name, description, price, colors)
};
using Products = std::vector<Product>;
} // namespace m

// ---- msgpack-cxx (the seed's structs) -------------------------------------------------------------
namespace c {
struct Test1 { std::uint32_t a = 1, b = 2; MSGPACK_DEFINE(a, b); };
struct Test2 { std::int32_t a = -1, b = -2; MSGPACK_DEFINE(a, b); };
struct Test3 { msgpack::type::raw_ref data; MSGPACK_DEFINE(data); };
struct Test4 { Test1 test1; Test2 test2; Test3 test3; MSGPACK_DEFINE(test1, test2, test3); };
struct Product {
    std::int64_t id = 0; std::string name, description; std::int32_t price = 0; std::vector<std::string> colors;
    MSGPACK_DEFINE_MAP(id, name, description, price, colors);
};
using Products = std::vector<Product>;
} // namespace c

// ---- what a deserialized message adds to the checksum (every library reads the same fields) -----
std::uint64_t touch(const m::Test1 &t) { return t.a + t.b; }
std::uint64_t touch(const m::Test2 &t) { return static_cast<std::uint64_t>(t.a + t.b); }
std::uint64_t touch(const m::Test3 &t) { return t.data.size(); }
std::uint64_t touch(const m::Test4 &t) { return t.test3.data.size() + t.test1.a; }
std::uint64_t touch(const m::Product &t) { return static_cast<std::uint64_t>(t.id + t.price) + t.name.size() + t.colors.size(); }
std::uint64_t touch(const m::Products &t) { return t.size() + (t.empty() ? 0 : touch(t.back())); }
std::uint64_t touch(const c::Test1 &t) { return t.a + t.b; }
std::uint64_t touch(const c::Test2 &t) { return static_cast<std::uint64_t>(t.a + t.b); }
std::uint64_t touch(const c::Test3 &t) { return t.data.size; }
std::uint64_t touch(const c::Test4 &t) { return t.test3.data.size + t.test1.a; }
std::uint64_t touch(const c::Product &t) { return static_cast<std::uint64_t>(t.id + t.price) + t.name.size() + t.colors.size(); }
std::uint64_t touch(const c::Products &t) { return t.size() + (t.empty() ? 0 : touch(t.back())); }
std::uint64_t touch(const seed::Test1 &t) { return static_cast<std::uint64_t>(t.a() + t.b()); }
std::uint64_t touch(const seed::Test2 &t) { return static_cast<std::uint64_t>(t.a() + t.b()); }
std::uint64_t touch(const seed::Test3 &t) { return t.data().size(); }
std::uint64_t touch(const seed::Test4 &t) { return t.test3().data().size() + t.test1().a(); }
std::uint64_t touch(const mpkbench::Product &t) { return static_cast<std::uint64_t>(t.id() + t.price()) + t.name().size() + static_cast<std::uint64_t>(t.colors_size()); }
std::uint64_t touch(const mpkbench::ProductList &t) {
    auto n = static_cast<std::uint64_t>(t.products_size());
    return n + (n ? touch(t.products(t.products_size() - 1)) : 0);
}


std::vector<char> g_payload(kBin, 'x');

// ---- one message kind through one library -------------------------------------------------------

template <class T>
cell run_mpk(std::size_t n, const T &msg) {
    cell c;
    mpk::writer w(n * (mpk::pack(msg).size() + 16) + 64); // every library presizes its buffer
    auto ser = [&] {
        w.reset();
        for (std::size_t i = 0; i < n; i++) w.write(msg);
    };
    ser();
    c.ser = seconds_of(1, ser);
    if (!w.ok()) std::abort();
    c.bytes = w.size();
    c.des = seconds_of(2, [&] {
        mpk::reader r(w.bytes());
        T t;
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n; i++) {
            if (!r.read(t)) std::abort();
            sum += touch(t);
        }
        g_sink = sum;
    });
    return c;
}

template <class T>
cell run_msgpack(std::size_t n, const T &msg, bool fast) {
    cell c;
    msgpack::sbuffer probe;
    msgpack::pack(probe, msg);
    msgpack::sbuffer buf(n * (probe.size() + 16) + 64);
    auto ser = [&] {
        buf.clear();
        for (std::size_t i = 0; i < n; i++) msgpack::pack(buf, msg);
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = buf.size();
    c.des = seconds_of(2, [&] {
        std::size_t off = 0;
        std::uint64_t sum = 0;
        T t;
        if (fast) {
            msgpack::zone z;
            for (std::size_t i = 0; i < n; i++) {
                bool referenced = false;
                msgpack::object obj = msgpack::unpack(z, buf.data(), buf.size(), off, referenced,
                                                      [](msgpack::type::object_type, std::size_t, void *) { return true; });
                obj.convert(t);
                z.clear();
                sum += touch(t);
            }
        } else {
            for (std::size_t i = 0; i < n; i++) {
                msgpack::object_handle oh = msgpack::unpack(buf.data(), buf.size(), off);
                oh.get().convert(t);
                sum += touch(t);
            }
        }
        g_sink = sum;
    });
    return c;
}

template <class T>
cell run_protobuf(std::size_t n, const T &msg) {
    cell c;
    std::string buf;
    buf.reserve(n * (msg.ByteSizeLong() + 16) + 64);
    auto ser = [&] {
        buf.clear();
        google::protobuf::io::StringOutputStream sos(&buf);
        google::protobuf::io::CodedOutputStream cos(&sos);
        for (std::size_t i = 0; i < n; i++) {
            cos.WriteVarint32(static_cast<std::uint32_t>(msg.ByteSizeLong()));
            msg.SerializeWithCachedSizes(&cos);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = buf.size();
    c.des = seconds_of(2, [&] {
        google::protobuf::io::ArrayInputStream ais(buf.data(), static_cast<int>(buf.size()));
        google::protobuf::io::CodedInputStream cis(&ais);
        cis.SetTotalBytesLimit(INT32_MAX);
        T t;
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n; i++) {
            std::uint32_t len = 0;
            if (!cis.ReadVarint32(&len)) std::abort();
            auto limit = cis.PushLimit(static_cast<int>(len));
            if (!t.ParseFromCodedStream(&cis)) std::abort();
            cis.PopLimit(limit);
            sum += touch(t);
        }
        g_sink = sum;
    });
    return c;
}

#ifdef MPK_BENCH_HAVE_RAPIDJSON
// ---- JSON (RapidJSON), the seed's question's third format ------------------------------------------
// The same values as JSON (Test1 [1,2], Test2 [-1,-2], Test3 the 8 KiB as a string of 8192 bytes:
// JSON has no binary type, Test4 the three nested, Product an object), written back to back; read
// back one document after another (kParseStopWhenDoneFlag) into a new Document each, then the
// same fields read out as from the typed structs. A new Document per message is RapidJSON's
// documented use; its pool allocator keeps nothing across parses.

void json_pair(json_writer &w, std::int64_t a, std::int64_t b) {
    w.StartArray();
    w.Int64(a);
    w.Int64(b);
    w.EndArray();
}

void json_str(json_writer &w, const std::string &s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void json_product(json_writer &w, const m::Product &p) {
    w.StartObject();
    w.Key("id"); w.Int64(p.id);
    w.Key("name"); json_str(w, p.name);
    w.Key("description"); json_str(w, p.description);
    w.Key("price"); w.Int(p.price);
    w.Key("colors");
    w.StartArray();
    for (auto &col : p.colors) json_str(w, col);
    w.EndArray();
    w.EndObject();
}

std::uint64_t json_touch_product(const rapidjson::Value &d) {
    return static_cast<std::uint64_t>(d["id"].GetInt64() + d["price"].GetInt()) + d["name"].GetStringLength() + d["colors"].Size();
}

template <class Write, class Read>
cell run_json(std::size_t n, Write write_one, Read read_one) {
    cell c;
    rapidjson::StringBuffer sb;
    json_writer w(sb);
    write_one(w);
    std::size_t one = sb.GetSize();
    sb.Clear();
    sb.Reserve(n * (one + 16) + 64); // every library presizes its buffer
    auto ser = [&] {
        sb.Clear();
        for (std::size_t i = 0; i < n; i++) {
            w.Reset(sb);
            write_one(w);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = sb.GetSize();
    c.des = seconds_of(2, [&] {
        rapidjson::StringStream ss(sb.GetString());
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n; i++) {
            rapidjson::Document d;
            d.ParseStream<rapidjson::kParseStopWhenDoneFlag>(ss);
            if (d.HasParseError()) std::abort();
            sum += read_one(d);
        }
        g_sink = sum;
    });
    return c;
}
#endif


c::Product to_c(const m::Product &p) { return {p.id, p.name, p.description, p.price, p.colors}; }
void to_pb(const m::Product &p, mpkbench::Product &out) {
    out.set_id(p.id); out.set_name(p.name); out.set_description(p.description); out.set_price(p.price);
    for (auto &col : p.colors) out.add_colors(col);
}


} // namespace

int main(int argc, char **argv) {
    int runs = 5;
    bool quick = false;
    std::string data = "build/bench-workloads", md_path, json_path;
    std::vector<std::string> env;
    std::string only;        // --only test3,product: just these workloads (for profiling)
    std::string profile_lib; // --profile mpk:encode (see g_profile_op)
    std::size_t count = 0;   // --count N: every workload's message count (corpora: documents)
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool has = i + 1 < argc;
        if (a == "--runs" && has) runs = std::atoi(argv[++i]);
        else if (a == "--quick") quick = true;
        else if (a == "--data" && has) data = argv[++i];
        else if (a == "--md" && has) md_path = argv[++i];
        else if (a == "--json" && has) json_path = argv[++i];
        else if (a == "--env" && has) env.push_back(argv[++i]);
        else if (a == "--only" && has) only = std::string(",") + argv[++i] + ",";
        else if (a == "--count" && has) count = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--profile" && has) {
            std::string p = argv[++i];
            auto colon = p.find(':');
            profile_lib = p.substr(0, colon);
            g_profile_op = colon != std::string::npos && p.substr(colon + 1) == "decode" ? 2 : 1;
        }
        else {
            std::fprintf(stderr, "usage: mpk_cpp_bench [--runs N] [--quick] [--data DIR] [--md FILE] [--json FILE] [--env TEXT]... [--only ID,ID] [--count N] [--profile LIB:encode|decode]\n");
            return 2;
        }
    }
    if (const char *q = std::getenv("MPK_BENCH_QUICK"); q && std::strcmp(q, "1") == 0) quick = true;
    if (runs < 1) runs = 1;
    // QUICK: one eighth of the counts (a first look, not figures to quote).
    const unsigned shift = quick ? 3 : 0;
    const std::size_t small = count ? count : (std::size_t{1} << 23) >> shift, large = count ? count : (std::size_t{1} << 15) >> shift,
                      mid = count ? count : (std::size_t{1} << 20) >> shift, list = count ? count : (std::size_t{1} << 12) >> shift;
    // LIB names for --profile: mpk, cxxdoc, cxxfast, protobuf, json.
    auto wanted = [&](const char *lib) { return profile_lib.empty() || profile_lib == lib; };

    // The Go seed's Product and the list of 100, from the common workloads (checked: mpk's
    // encoding of what it decoded is the file, byte for byte).
    auto product_bytes = read_bytes(data + "/product.msgpack");
    auto list_bytes = read_bytes(data + "/products100.msgpack");
    const m::Product product = mpk::unpack<m::Product>(product_bytes);
    const m::Products products = mpk::unpack<m::Products>(list_bytes);
    if (mpk::pack(product) != product_bytes || mpk::pack(products) != list_bytes) {
        std::fprintf(stderr, "mpk_cpp_bench: re-encoded product/products100 differ from the workload files\n");
        return 1;
    }

    m::Test1 m1; m::Test2 m2; m::Test3 m3{mpk::bytes_view(g_payload)}; m::Test4 m4{m1, m2, m3};
    c::Test1 c1; c::Test2 c2; c::Test3 c3; c3.data = msgpack::type::raw_ref(g_payload.data(), kBin);
    c::Test4 c4{c1, c2, c3};
    seed::Test1 p1; p1.set_a(1); p1.set_b(2);
    seed::Test2 p2; p2.set_a(-1); p2.set_b(-2);
    seed::Test3 p3; p3.set_data(std::string(g_payload.begin(), g_payload.end()));
    seed::Test4 p4; *p4.mutable_test1() = p1; *p4.mutable_test2() = p2; *p4.mutable_test3() = p3;
    c::Product cprod = to_c(product);
    c::Products cprods;
    for (auto &p : products) cprods.push_back(to_c(p));
    mpkbench::Product pprod;
    to_pb(product, pprod);
    mpkbench::ProductList pprods;
    for (auto &p : products) to_pb(p, *pprods.add_products());

    std::vector<row> rows;
    auto typed = [&](const char *wl, const char *title, std::size_t n, auto &mm, auto &cm, auto &pm, [[maybe_unused]] auto jw,
                     [[maybe_unused]] auto jr) {
        if (!only.empty() && only.find(std::string(",") + wl + ",") == std::string::npos) return;
        row r{wl, title, "typed", n, {}};
        if (wanted("mpk")) r.libs.push_back({"mpk", "mpk", repeat(runs, [&] { return run_mpk(n, mm); })});
        if (wanted("cxxdoc"))
            r.libs.push_back({"msgpack-cxx documented", "msgpack", repeat(runs, [&] { return run_msgpack(n, cm, false); })});
        if (wanted("cxxfast"))
            r.libs.push_back({"msgpack-cxx zone+raw_ref", "msgpack", repeat(runs, [&] { return run_msgpack(n, cm, true); })});
        if (wanted("protobuf"))
            r.libs.push_back({"protobuf " + std::to_string(GOOGLE_PROTOBUF_VERSION / 1000000) + "." +
                                  std::to_string(GOOGLE_PROTOBUF_VERSION / 1000 % 1000),
                              "protobuf", repeat(runs, [&] { return run_protobuf(n, pm); })});
#ifdef MPK_BENCH_HAVE_RAPIDJSON
        if (wanted("json")) r.libs.push_back({"RapidJSON", "json", repeat(runs, [&] { return run_json(n, jw, jr); })});
#endif
        std::fprintf(stderr, "  %s done\n", title);
        rows.push_back(std::move(r));
    };
#ifdef MPK_BENCH_HAVE_RAPIDJSON
    using D = rapidjson::Document;
    auto jw1 = [](json_writer &w) { json_pair(w, 1, 2); };
    auto jr1 = [](D &d) -> std::uint64_t { return d[0].GetUint() + d[1].GetUint(); };
    auto jw2 = [](json_writer &w) { json_pair(w, -1, -2); };
    auto jr2 = [](D &d) -> std::uint64_t { return static_cast<std::uint64_t>(d[0].GetInt() + d[1].GetInt()); };
    auto jw3 = [](json_writer &w) { w.String(g_payload.data(), static_cast<rapidjson::SizeType>(kBin)); };
    auto jr3 = [](D &d) -> std::uint64_t { return d.GetStringLength(); };
    auto jw4 = [](json_writer &w) {
        w.StartArray();
        json_pair(w, 1, 2);
        json_pair(w, -1, -2);
        w.String(g_payload.data(), static_cast<rapidjson::SizeType>(kBin));
        w.EndArray();
    };
    auto jr4 = [](D &d) -> std::uint64_t { return d[2].GetStringLength() + d[0][0].GetUint() + static_cast<std::uint64_t>(d[1][1].GetInt()); };
    auto jw5 = [&](json_writer &w) { json_product(w, product); };
    auto jr5 = [](D &d) -> std::uint64_t { return json_touch_product(d); };
    auto jw6 = [&](json_writer &w) {
        w.StartArray();
        for (auto &p : products) json_product(w, p);
        w.EndArray();
    };
    auto jr6 = [](D &d) -> std::uint64_t { return d.Size() + json_touch_product(d[d.Size() - 1]); };
#else
    int jw1 = 0, jr1 = 0, jw2 = 0, jr2 = 0, jw3 = 0, jr3 = 0, jw4 = 0, jr4 = 0, jw5 = 0, jr5 = 0, jw6 = 0, jr6 = 0;
#endif
    typed("test1", "Test1", small, m1, c1, p1, jw1, jr1);
    typed("test2", "Test2", small, m2, c2, p2, jw2, jr2);
    typed("test3", "Test3", large, m3, c3, p3, jw3, jr3);
    typed("test4", "Test4", large, m4, c4, p4, jw4, jr4);
    typed("product", "Product", mid, product, cprod, pprod, jw5, jr5);
    typed("products100", "100 Products", list, products, cprods, pprods, jw6, jr6);

    // The common workloads with a protobuf message, typed (workloads.cpp).
    const std::vector<manifest_entry> manifest = read_manifest(data);
    wl_config cfg;
    cfg.data = data;
    cfg.runs = runs;
    cfg.shift = shift;
    cfg.count = count;
    cfg.only = only;
    cfg.profile_lib = profile_lib;
    std::vector<row> wl_rows = typed_workloads(cfg, manifest);

    // The schemaless workloads (no protobuf message: twitter, citm_catalog, canada, rb_twitter and
    // the js_* documents present), in the manifest's order: decode into each library's tree and
    // encode the tree back.
    std::vector<row> corpora;
    for (const manifest_entry &e : manifest) {
        if (!e.proto.empty() || !cfg.selected(e.id)) continue;
        auto bytes = read_bytes(data + "/" + e.id + ".msgpack");
        std::size_t reps = count ? count : reps_for(bytes.size(), shift);
        row r{e.id, e.id, "", reps, {}};
        if (wanted("mpk")) r.libs.push_back({"mpk", "mpk", repeat(runs, [&] { return corpus_mpk(bytes, reps); })});
        if (wanted("cxxfast"))
            r.libs.push_back({"msgpack-cxx zone+ref", "msgpack", repeat(runs, [&] { return corpus_msgpack(bytes, reps); })});
#ifdef MPK_BENCH_HAVE_RAPIDJSON
        std::string text = read_file(data + "/" + e.id + ".json");
        if (wanted("json")) r.libs.push_back({"RapidJSON", "json", repeat(runs, [&] { return corpus_json(text, reps); })});
#endif
        std::fprintf(stderr, "  %s done\n", e.id.c_str());
        corpora.push_back(std::move(r));
    }

    if (!profile_lib.empty()) return 0; // a profiling run: callgrind.py reads the counts

    // ---- the report ------------------------------------------------------------------------------
    char date[64];
    std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::string cpu = "?";
    {
        std::ifstream f("/proc/cpuinfo");
        for (std::string line; std::getline(f, line);)
            if (line.rfind("model name", 0) == 0) { cpu = line.substr(line.find(':') + 2); break; }
    }
    std::string machine = std::to_string(std::thread::hardware_concurrency()) + " cores (" + cpu + ")";

    std::string md;
    char buf[4096];
    auto out = [&](const char *fmt, auto... a) {
        std::snprintf(buf, sizeof buf, fmt, a...);
        md += buf;
    };
    auto pb_of = [](const row &r) -> const cell * {
        for (auto &l : r.libs) if (l.kind == "protobuf") return &l.c;
        return nullptr;
    };
    out("## C++ (cpp/bench): the seed's Test1-Test4, Product, 100 Products, the common workloads\n\n");
    if (quick) out("**QUICK run** (1/8 of the counts): a first look, not figures to quote.\n\n");
    out("Medians of %d runs. Test1/Test2: %zu messages, Test3/Test4: %zu, the Go seed's Product (a map keyed by field names; "
        "protobuf: mpkbench.Product of bench/workloads/workloads.proto): %zu, 100 Products (protobuf: mpkbench.ProductList): %zu; "
        "all serialized into one buffer, then deserialized one after another into typed structs. "
        "Mbps = message bytes x 8 / seconds.\n\n",
        runs, small, large, mid, list);
    out("| test | library | MB | serialize s | Mbps | deserialize s | Mbps | ser. vs protobuf | deser. vs protobuf |\n");
    out("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (auto &r : rows) {
        const cell *pb = pb_of(r);
        for (auto &l : r.libs) {
            double mb = static_cast<double>(l.c.bytes) / 1e6;
            out("| %s | %s | %.1f | %.4f | %.0f | %.4f | %.0f | %.2fx | %.2fx |\n", r.title.c_str(), l.library.c_str(), mb, l.c.ser,
                mb * 8 / l.c.ser, l.c.des, mb * 8 / l.c.des, pb->ser / l.c.ser, pb->des / l.c.des);
        }
    }
    out("\nmpk against msgpack-cxx's fastest path (zone+raw_ref), same run (its time over mpk's):\n\n");
    out("| test | serialize | deserialize |\n|---|---:|---:|\n");
    for (auto &r : rows) out("| %s | %.2fx | %.2fx |\n", r.title.c_str(), r.libs[2].c.ser / r.libs[0].c.ser, r.libs[2].c.des / r.libs[0].c.des);
    out("\nThe seed (2009, msgpack vs protobuf): serialize 2-3.7x faster; deserialize Test1 4.9x and "
        "Test2 2.7x slower, Test3 17x faster.\n\n");
    // Microseconds with 3 significant digits (a table16 op takes well under one).
    auto us = [](double s) {
        static char t[4][32];
        static int k = 0;
        char *o = t[k++ & 3];
        double v = s * 1e6;
        std::snprintf(o, 32, v < 10 ? "%.3f" : v < 100 ? "%.2f" : v < 1000 ? "%.1f" : "%.0f", v);
        return o;
    };
    // One row per library: per op, its bytes, its times and rates, and the ratios to mpk's times.
    auto per_op_table = [&](const std::vector<row> &set, const char *first) {
        out("| %s | ops | library | bytes | decode us | MB/s | encode us | MB/s | decode vs mpk | encode vs mpk |\n", first);
        out("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (auto &r : set) {
            const cell &mc = r.libs[0].c;
            for (auto &l : r.libs) {
                double per_d = l.c.des / static_cast<double>(r.n), per_e = l.c.ser / static_cast<double>(r.n);
                std::size_t doc = l.c.bytes / r.n;
                double mb = static_cast<double>(doc) / 1e6;
                out("| %s | %zu | %s | %zu | %s | %.0f | %s | %.0f | %.2fx | %.2fx |\n", r.workload.c_str(), r.n, l.library.c_str(), doc,
                    us(per_d), mb / per_d, us(per_e), mb / per_e, l.c.des / mc.des, l.c.ser / mc.ser);
            }
        }
    };
    if (!wl_rows.empty()) {
        out("### The common workloads with a protobuf message, typed: one message per op\n\n");
        out("Each workload of bench/workloads (build/bench-workloads) decoded from its own file by each library into its typed "
            "form, over and over into the same object, and encoded back from it into a kept buffer (cpp/bench/workloads.cpp). "
            "mpk and msgpack-cxx read and write the same C++ type (below; msgpack-cxx through MSGPACK_DEFINE / "
            "MSGPACK_DEFINE_MAP, its fastest path: a reused zone with str and bin referenced, then convert); protobuf 3.21 "
            "reads <id>.pb with code generated from bench/workloads/workloads.proto (ParseFromArray into the same message, "
            "SerializeToArray); RapidJSON parses <id>.json into a new Document and writes it back with its Writer. Every "
            "library owns what it decodes (strings and bins are copied by all; no views). Checked before timing: mpk and "
            "msgpack-cxx re-encode the .msgpack file byte for byte and protobuf the .pb file, all three hold the same values. "
            "proto3 `string` fields are UTF-8-checked by protobuf when parsed; mpk, msgpack-cxx and RapidJSON check nothing "
            "by default (mpk: options::strict_utf8). Medians of %d runs; ratios: the other library's time over mpk's.\n\n",
            runs);
        out("| workload | what | mpk's C++ type | protobuf message |\n|---|---|---|---|\n");
        for (auto &r : wl_rows) out("| %s | %s | %s | %s |\n", r.workload.c_str(), r.title.c_str(), r.shape.c_str(), r.proto.c_str());
        out("\n");
        per_op_table(wl_rows, "workload");
        out("\n");
    }
    out("### The schemaless workloads: into a tree and back\n\n");
    out("twitter, citm_catalog, canada, rb_twitter and the js_* documents (the workloads without a protobuf message). "
        "mpk: mpk::document::parse (decode) and mpk::value::write_to (encode); msgpack-cxx: msgpack::unpack into a reused zone "
        "with strings referenced, msgpack::pack of the msgpack::object; RapidJSON: Document::Parse of the .json file and "
        "Document::Accept(Writer). Microseconds per document (median of %d runs); ratios: the other library's time over mpk's.\n\n",
        runs);
    per_op_table(corpora, "document");
    out("\nmsgpack-cxx %s, protobuf %d, ", MSGPACK_VERSION, GOOGLE_PROTOBUF_VERSION);
#ifdef MPK_BENCH_HAVE_RAPIDJSON
    out("RapidJSON %s, ", RAPIDJSON_VERSION_STRING);
#endif
    out("%s %s; %s; %s.\n", "compiler", __VERSION__, machine.c_str(), date);
    for (auto &e : env) out("%s\n", e.c_str());

    std::fputs(md.c_str(), stdout);
    if (!md_path.empty()) {
        std::ofstream f(md_path);
        f << md;
    }

    if (!json_path.empty()) {
        std::string j = "{\n \"name\": \"cpp\",\n \"title\": \"C++ (cpp/): mpk vs msgpack-cxx vs Protocol Buffers vs RapidJSON\",\n";
        j += " \"date\": \"" + std::string(date) + "\",\n \"machine\": \"" + json_escape(machine) + "\",\n";
        j += std::string(" \"quick\": ") + (quick ? "true" : "false") + ",\n \"runs\": " + std::to_string(runs) + ",\n";
        j += " \"versions\": {\"msgpack-cxx\": \"" MSGPACK_VERSION "\", \"protobuf\": \"" + std::to_string(GOOGLE_PROTOBUF_VERSION) + "\"";
#ifdef MPK_BENCH_HAVE_RAPIDJSON
        j += ", \"RapidJSON\": \"" RAPIDJSON_VERSION_STRING "\"";
#endif
        j += ", \"compiler\": \"" + json_escape(__VERSION__) + "\"},\n \"rows\": [\n";
        bool first = true;
        auto emit = [&](const row &r, const lib_row &l, const char *op, double seconds) {
            double ns = seconds * 1e9 / static_cast<double>(r.n);
            double per = static_cast<double>(l.c.bytes) / static_cast<double>(r.n);
            std::snprintf(buf, sizeof buf,
                          "%s  {\"workload\": \"%s\", \"label\": \"%s\", \"op\": \"%s\", \"variant\": \"%s\", \"library\": \"%s\", "
                          "\"kind\": \"%s\", \"ns_per_op\": %.3f, \"mb_per_s\": %.1f, \"bytes\": %.0f, \"count\": %zu}",
                          first ? "" : ",\n", r.workload.c_str(), r.title.c_str(), op, r.variant.c_str(), l.library.c_str(),
                          l.kind.c_str(), ns, per / ns * 1e3, per, r.n);
            j += buf;
            first = false;
        };
        for (auto *set : {&rows, &wl_rows, &corpora})
            for (auto &r : *set)
                for (auto &l : r.libs) {
                    emit(r, l, "encode", l.c.ser);
                    emit(r, l, "decode", l.c.des);
                }
        j += "\n ]\n}\n";
        std::ofstream f(json_path);
        f << j;
    }
    return 0;
}
