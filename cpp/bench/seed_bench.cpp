// seed_bench.cpp — the seed's C++ comparison, reproduced: Test1 {1, 2} and Test2 {-1, -2} 2^23
// times, Test3 (8 KiB of bytes) and Test4 (all three) 2^15 times; each library serializes all
// messages into one buffer, then deserializes them one after another into typed structs. Every
// cell is the median of --runs runs. Libraries: mpk (typed: MPK_FIELDS structs, the bytes read as
// a view), msgpack-cxx (the seed's MSGPACK_DEFINE structs: its documented path
// unpack → object_handle → convert, and its fastest path, a reused zone with raw_ref), and
// Protocol Buffers (the seed's .proto, length-delimited as in the seed).
#include <mpk.hpp>

#include <msgpack.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "seed.pb.h"
#include "workloads.pb.h"

#ifdef MPK_BENCH_HAVE_RAPIDJSON
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kBin = 8192;

// ---- mpk ----------------------------------------------------------------------------------------
namespace m {
struct Test1 { std::uint32_t a = 1, b = 2; MPK_FIELDS(a, b) };
struct Test2 { std::int32_t a = -1, b = -2; MPK_FIELDS(a, b) };
struct Test3 { mpk::bytes_view data; MPK_FIELDS(data) };
struct Test4 { Test1 test1; Test2 test2; Test3 test3; MPK_FIELDS(test1, test2, test3) };
// The Go seed's Product (bench/workloads: the "product" workload), as a map keyed by field names.
struct Product {
    std::int64_t id = 0; std::string name, description; std::int32_t price = 0; std::vector<std::string> colors;
    MPK_FIELDS_MAP(id, name, description, price, colors)
};
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
} // namespace c

double seconds_of(const std::function<void()> &fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct cell {
    double ser = 0, des = 0;
    std::size_t bytes = 0;
};

volatile std::uint64_t g_sink;

std::vector<char> g_payload(kBin, 'x');

// The Go seed's Product (go/bench/values.go SampleProduct; bench/workloads/gen.py product()).
const m::Product g_product{191919191919, "Men's Trail Running Shoe",
                           "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.", 18900,
                           {"Black", "Forest Green", "Slate Blue"}};

// ---- one message kind through one library -------------------------------------------------------

template <class T>
cell run_mpk(std::size_t n, const T &msg) {
    cell c;
    mpk::writer w(n * (mpk::pack(msg).size() + 16) + 64); // every library presizes its buffer
    c.ser = seconds_of([&] {
        w.reset();
        for (std::size_t i = 0; i < n; i++) w.write(msg);
    });
    c.bytes = w.size();
    c.des = seconds_of([&] {
        mpk::reader r(w.bytes());
        T t;
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n; i++) {
            if (!r.read(t)) std::abort();
            if constexpr (std::is_same_v<T, m::Test1> || std::is_same_v<T, m::Test2>) sum += static_cast<std::uint64_t>(t.a + t.b);
            else if constexpr (std::is_same_v<T, m::Test3>) sum += t.data.size();
            else if constexpr (std::is_same_v<T, m::Product>) sum += static_cast<std::uint64_t>(t.id + t.price) + t.name.size() + t.colors.size();
            else sum += t.test3.data.size() + static_cast<std::uint64_t>(t.test1.a);
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
    c.ser = seconds_of([&] {
        buf.clear();
        for (std::size_t i = 0; i < n; i++) msgpack::pack(buf, msg);
    });
    c.bytes = buf.size();
    c.des = seconds_of([&] {
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
                if constexpr (std::is_same_v<T, c::Test1> || std::is_same_v<T, c::Test2>) sum += static_cast<std::uint64_t>(t.a + t.b);
                else if constexpr (std::is_same_v<T, c::Test3>) sum += t.data.size;
                else if constexpr (std::is_same_v<T, c::Product>) sum += static_cast<std::uint64_t>(t.id + t.price) + t.name.size() + t.colors.size();
                else sum += t.test3.data.size + t.test1.a;
            }
        } else {
            for (std::size_t i = 0; i < n; i++) {
                msgpack::object_handle oh = msgpack::unpack(buf.data(), buf.size(), off);
                oh.get().convert(t);
                if constexpr (std::is_same_v<T, c::Test1> || std::is_same_v<T, c::Test2>) sum += static_cast<std::uint64_t>(t.a + t.b);
                else if constexpr (std::is_same_v<T, c::Test3>) sum += t.data.size;
                else if constexpr (std::is_same_v<T, c::Product>) sum += static_cast<std::uint64_t>(t.id + t.price) + t.name.size() + t.colors.size();
                else sum += t.test3.data.size + t.test1.a;
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
    c.ser = seconds_of([&] {
        buf.clear();
        google::protobuf::io::StringOutputStream sos(&buf);
        google::protobuf::io::CodedOutputStream cos(&sos);
        for (std::size_t i = 0; i < n; i++) {
            cos.WriteVarint32(static_cast<std::uint32_t>(msg.ByteSizeLong()));
            msg.SerializeWithCachedSizes(&cos);
        }
    });
    c.bytes = buf.size();
    c.des = seconds_of([&] {
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
            if constexpr (std::is_same_v<T, seed::Test1> || std::is_same_v<T, seed::Test2>) sum += static_cast<std::uint64_t>(t.a() + t.b());
            else if constexpr (std::is_same_v<T, seed::Test3>) sum += t.data().size();
            else if constexpr (std::is_same_v<T, mpkbench::Product>) sum += static_cast<std::uint64_t>(t.id() + t.price()) + t.name().size() + static_cast<std::uint64_t>(t.colors_size());
            else sum += t.test3().data().size() + t.test1().a();
        }
        g_sink = sum;
    });
    return c;
}

#ifdef MPK_BENCH_HAVE_RAPIDJSON
// ---- JSON (RapidJSON), the seed's question's third format ------------------------------------------
// The same values as JSON arrays (Test1 [1,2], Test2 [-1,-2], Test3 the 8 KiB as a string of 8192
// bytes: JSON has no binary type, Test4 the three nested), written back to back; read back one
// document after another (kParseStopWhenDoneFlag) into a new Document each, then into the struct
// (values read out and summed, as the other libraries' typed reads). A new Document per message is
// RapidJSON's documented use; its pool allocator keeps nothing across parses.
template <class Writer>
void json_pair(Writer &w, std::int64_t a, std::int64_t b) {
    w.StartArray();
    w.Int64(a);
    w.Int64(b);
    w.EndArray();
}

cell run_json(std::size_t n, int which) {
    cell c;
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    auto write_one = [&] {
        w.Reset(sb);
        if (which == 1) json_pair(w, 1, 2);
        else if (which == 2) json_pair(w, -1, -2);
        else if (which == 3) w.String(g_payload.data(), static_cast<rapidjson::SizeType>(kBin));
        else if (which == 5) {
            w.StartObject();
            w.Key("id"); w.Int64(g_product.id);
            w.Key("name"); w.String(g_product.name.data(), static_cast<rapidjson::SizeType>(g_product.name.size()));
            w.Key("description"); w.String(g_product.description.data(), static_cast<rapidjson::SizeType>(g_product.description.size()));
            w.Key("price"); w.Int(g_product.price);
            w.Key("colors");
            w.StartArray();
            for (auto &col : g_product.colors) w.String(col.data(), static_cast<rapidjson::SizeType>(col.size()));
            w.EndArray();
            w.EndObject();
        } else {
            w.StartArray();
            json_pair(w, 1, 2);
            json_pair(w, -1, -2);
            w.String(g_payload.data(), static_cast<rapidjson::SizeType>(kBin));
            w.EndArray();
        }
    };
    write_one();
    std::size_t one = sb.GetSize();
    sb.Clear();
    sb.Reserve(n * (one + 16) + 64); // every library presizes its buffer
    c.ser = seconds_of([&] {
        sb.Clear();
        for (std::size_t i = 0; i < n; i++) write_one();
    });
    c.bytes = sb.GetSize();
    c.des = seconds_of([&] {
        rapidjson::StringStream ss(sb.GetString());
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n; i++) {
            rapidjson::Document d;
            d.ParseStream<rapidjson::kParseStopWhenDoneFlag>(ss);
            if (d.HasParseError()) std::abort();
            if (which == 1) sum += static_cast<std::uint64_t>(d[0].GetUint() + d[1].GetUint());
            else if (which == 2) sum += static_cast<std::uint64_t>(d[0].GetInt() + d[1].GetInt());
            else if (which == 3) sum += d.GetStringLength();
            else if (which == 5) sum += static_cast<std::uint64_t>(d["id"].GetInt64() + d["price"].GetInt()) + d["name"].GetStringLength() + d["colors"].Size();
            else sum += d[2].GetStringLength() + d[0][0].GetUint() + static_cast<std::uint64_t>(d[1][1].GetInt());
        }
        g_sink = sum;
    });
    return c;
}
#endif

cell median(std::vector<cell> runs) {
    cell out;
    auto med = [&](auto get) {
        std::vector<double> v;
        for (auto &r : runs) v.push_back(get(r));
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    out.ser = med([](const cell &c) { return c.ser; });
    out.des = med([](const cell &c) { return c.des; });
    out.bytes = runs[0].bytes;
    return out;
}

template <class F>
cell repeat(int runs, F f) {
    std::vector<cell> v;
    for (int i = 0; i < runs; i++) v.push_back(f());
    return median(v);
}

} // namespace

int main(int argc, char **argv) {
    int runs = 5;
    for (int i = 1; i + 1 < argc; i++)
        if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
    const std::size_t small = std::size_t{1} << 23, large = std::size_t{1} << 15;

    m::Test1 m1; m::Test2 m2; m::Test3 m3{mpk::bytes_view(g_payload)}; m::Test4 m4{m1, m2, m3};
    c::Test1 c1; c::Test2 c2; c::Test3 c3; c3.data = msgpack::type::raw_ref(g_payload.data(), kBin);
    c::Test4 c4{c1, c2, c3};
    seed::Test1 p1; p1.set_a(1); p1.set_b(2);
    seed::Test2 p2; p2.set_a(-1); p2.set_b(-2);
    seed::Test3 p3; p3.set_data(std::string(g_payload.begin(), g_payload.end()));
    seed::Test4 p4; *p4.mutable_test1() = p1; *p4.mutable_test2() = p2; *p4.mutable_test3() = p3;

    const std::size_t mid = std::size_t{1} << 20;
    c::Product cprod{g_product.id, g_product.name, g_product.description, g_product.price, g_product.colors};
    mpkbench::Product pprod;
    pprod.set_id(g_product.id); pprod.set_name(g_product.name); pprod.set_description(g_product.description);
    pprod.set_price(g_product.price);
    for (auto &col : g_product.colors) pprod.add_colors(col);

    struct row { const char *test; std::size_t n; cell mpk, cdoc, cfast, pb, json; };
    std::vector<row> rows;
    rows.push_back({"Test1", small, repeat(runs, [&] { return run_mpk(small, m1); }),
                    repeat(runs, [&] { return run_msgpack(small, c1, false); }),
                    repeat(runs, [&] { return run_msgpack(small, c1, true); }),
                    repeat(runs, [&] { return run_protobuf(small, p1); }),
#ifdef MPK_BENCH_HAVE_RAPIDJSON
                    repeat(runs, [&] { return run_json(small, 1); })
#else
                    cell{}
#endif
                    });
    rows.push_back({"Test2", small, repeat(runs, [&] { return run_mpk(small, m2); }),
                    repeat(runs, [&] { return run_msgpack(small, c2, false); }),
                    repeat(runs, [&] { return run_msgpack(small, c2, true); }),
                    repeat(runs, [&] { return run_protobuf(small, p2); }),
#ifdef MPK_BENCH_HAVE_RAPIDJSON
                    repeat(runs, [&] { return run_json(small, 2); })
#else
                    cell{}
#endif
                    });
    rows.push_back({"Test3", large, repeat(runs, [&] { return run_mpk(large, m3); }),
                    repeat(runs, [&] { return run_msgpack(large, c3, false); }),
                    repeat(runs, [&] { return run_msgpack(large, c3, true); }),
                    repeat(runs, [&] { return run_protobuf(large, p3); }),
#ifdef MPK_BENCH_HAVE_RAPIDJSON
                    repeat(runs, [&] { return run_json(large, 3); })
#else
                    cell{}
#endif
                    });
    rows.push_back({"Test4", large, repeat(runs, [&] { return run_mpk(large, m4); }),
                    repeat(runs, [&] { return run_msgpack(large, c4, false); }),
                    repeat(runs, [&] { return run_msgpack(large, c4, true); }),
                    repeat(runs, [&] { return run_protobuf(large, p4); }),
#ifdef MPK_BENCH_HAVE_RAPIDJSON
                    repeat(runs, [&] { return run_json(large, 4); })
#else
                    cell{}
#endif
                    });

    rows.push_back({"Product", mid, repeat(runs, [&] { return run_mpk(mid, g_product); }),
                    repeat(runs, [&] { return run_msgpack(mid, cprod, false); }),
                    repeat(runs, [&] { return run_msgpack(mid, cprod, true); }),
                    repeat(runs, [&] { return run_protobuf(mid, pprod); }),
#ifdef MPK_BENCH_HAVE_RAPIDJSON
                    repeat(runs, [&] { return run_json(mid, 5); })
#else
                    cell{}
#endif
                    });

    std::printf("## C++ (cpp/bench): the seed's Test1-Test4\n\n");
    std::printf("Medians of %d runs. Test1/Test2: 2^23 messages, Test3/Test4: 2^15, the Go seed's Product (a map keyed by field names; protobuf: mpkbench.Product of bench/workloads/workloads.proto): 2^20; all serialized into one "
                "buffer, then deserialized one after another into typed structs. Mbps = message bytes x 8 / seconds.\n\n",
                runs);
    std::printf("| test | library | MB | serialize s | Mbps | deserialize s | Mbps | ser. vs protobuf | deser. vs protobuf |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (auto &r : rows) {
        struct lib { const char *name; cell c; };
        lib libs[] = {{"mpk (typed)", r.mpk}, {"msgpack-cxx documented", r.cdoc}, {"msgpack-cxx zone+raw_ref", r.cfast},
                      {"protobuf 3.21", r.pb}, {"RapidJSON", r.json}};
        for (auto &l : libs) {
            if (l.c.bytes == 0) continue; // RapidJSON not built in
            double mb = static_cast<double>(l.c.bytes) / 1e6;
            std::printf("| %s | %s | %.1f | %.4f | %.0f | %.4f | %.0f | %.2fx | %.2fx |\n", r.test, l.name, mb, l.c.ser,
                        mb * 8 / l.c.ser, l.c.des, mb * 8 / l.c.des, r.pb.ser / l.c.ser, r.pb.des / l.c.des);
        }
    }
    std::printf("\nmpk against msgpack-cxx's fastest path (zone+raw_ref), same run:\n\n");
    std::printf("| test | serialize | deserialize |\n|---|---:|---:|\n");
    for (auto &r : rows)
        std::printf("| %s | %.2fx | %.2fx |\n", r.test, r.cfast.ser / r.mpk.ser, r.cfast.des / r.mpk.des);
    std::printf("\nThe seed (2009, msgpack vs protobuf): serialize 2-3.7x faster; deserialize Test1 4.9x and "
                "Test2 2.7x slower, Test3 17x faster.\n");
    return 0;
}
