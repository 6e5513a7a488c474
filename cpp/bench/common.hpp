// common.hpp — what cpp/bench's programs share: the clock (and the callgrind switch of --profile),
// a measured cell and its median over runs, the files of build/bench-workloads, and the schemaless
// rows (a document decoded into each library's tree and encoded back).
#ifndef MPK_CPP_BENCH_COMMON_HPP
#define MPK_CPP_BENCH_COMMON_HPP

#include <mpk.hpp>

#include <msgpack.hpp>

#ifdef MPK_BENCH_HAVE_RAPIDJSON
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#endif

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MPK_BENCH_HAVE_CALLGRIND 1
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mpkb {

// --profile LIB:OP (cpp/bench/callgrind.py): only that library runs, and under callgrind
// (--collect-atstart=no) only its timed loops of OP (1 encode, 2 decode) are counted.
inline int g_profile_op = 0;

template <class F>
double seconds_of(int op, F &&fn) {
#ifdef MPK_BENCH_HAVE_CALLGRIND
    if (op == g_profile_op) CALLGRIND_TOGGLE_COLLECT;
#endif
    auto t0 = std::chrono::steady_clock::now();
    fn();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#ifdef MPK_BENCH_HAVE_CALLGRIND
    if (op == g_profile_op) CALLGRIND_TOGGLE_COLLECT;
#endif
    (void)op;
    return s;
}

struct cell {
    double ser = 0, des = 0; // seconds for all messages
    std::size_t bytes = 0;   // all messages
};

inline volatile std::uint64_t g_sink;

#ifdef MPK_BENCH_HAVE_RAPIDJSON
using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;
#endif

// ---- the corpora through each library's dynamic tree -------------------------------------------------

inline cell corpus_mpk(const std::vector<std::byte> &bytes, std::size_t reps) {
    cell c;
    mpk::document doc;
    c.des = seconds_of(2, [&] {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < reps; i++) sum += doc.parse(bytes).size();
        g_sink = sum;
    });
    mpk::value v = doc.parse(bytes);
    mpk::writer w(bytes.size() + 4096);
    auto ser = [&] {
        for (std::size_t i = 0; i < reps; i++) {
            w.reset();
            v.write_to(w);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    if (!w.ok()) std::abort();
    c.bytes = w.size() * reps; // cells count the bytes of all messages
    return c;
}

inline cell corpus_msgpack(const std::vector<std::byte> &bytes, std::size_t reps) {
    cell c;
    auto data = reinterpret_cast<const char *>(bytes.data());
    auto ref = [](msgpack::type::object_type, std::size_t, void *) { return true; };
    c.des = seconds_of(2, [&] {
        msgpack::zone z;
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < reps; i++) {
            std::size_t off = 0;
            bool referenced = false;
            msgpack::object obj = msgpack::unpack(z, data, bytes.size(), off, referenced, ref);
            sum += obj.type;
            z.clear();
        }
        g_sink = sum;
    });
    msgpack::zone z;
    std::size_t off = 0;
    bool referenced = false;
    msgpack::object obj = msgpack::unpack(z, data, bytes.size(), off, referenced, ref);
    msgpack::sbuffer sb(bytes.size() + 4096);
    auto ser = [&] {
        for (std::size_t i = 0; i < reps; i++) {
            sb.clear();
            msgpack::pack(sb, obj);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = sb.size() * reps;
    return c;
}

#ifdef MPK_BENCH_HAVE_RAPIDJSON
inline cell corpus_json(const std::string &text, std::size_t reps) {
    cell c;
    c.des = seconds_of(2, [&] {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < reps; i++) {
            rapidjson::Document d;
            d.Parse(text.data(), text.size());
            if (d.HasParseError()) std::abort();
            sum += d.IsObject() ? d.MemberCount() : d.Size();
        }
        g_sink = sum;
    });
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    rapidjson::StringBuffer sb;
    sb.Reserve(text.size() + 4096);
    auto ser = [&] {
        for (std::size_t i = 0; i < reps; i++) {
            sb.Clear();
            json_writer w(sb);
            d.Accept(w);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = sb.GetSize() * reps;
    return c;
}
#endif

inline cell median(std::vector<cell> runs) {
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

inline std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "mpk_cpp_bench: cannot read %s (run make bench-workloads)\n", path.c_str());
        std::exit(2);
    }
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

inline std::vector<std::byte> read_bytes(const std::string &path) {
    std::string s = read_file(path);
    auto p = reinterpret_cast<const std::byte *>(s.data());
    return {p, p + s.size()};
}

inline std::string json_escape(const std::string &s) {
    std::string o;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') o += '\\';
        if (static_cast<unsigned char>(ch) < 0x20) continue;
        o += ch;
    }
    return o;
}

struct lib_row { std::string library, kind; cell c; };
// One workload's measurements; n: messages (or documents) per cell; shape: for a common workload's
// typed row, the C++ type mpk decodes it into.
struct row { std::string workload, title, variant; std::size_t n; std::vector<lib_row> libs; std::string shape = {}, proto = {}; };

// One workload of build/bench-workloads/manifest.json (proto: its protobuf message, or empty).
struct manifest_entry { std::string id, title, proto; };

// The manifest, read with mpk's own JSON reader (mpk::document::parse_json).
inline std::vector<manifest_entry> read_manifest(const std::string &dir) {
    std::string text = read_file(dir + "/manifest.json");
    mpk::document doc;
    mpk::value root = doc.parse_json(text);
    std::vector<manifest_entry> out;
    for (mpk::value w : root["workloads"]) {
        mpk::value proto = w["proto"];
        out.push_back({std::string(w["id"].str()), std::string(w["title"].str()),
                       proto && !proto.is_nil() ? std::string(proto.str()) : std::string()});
    }
    return out;
}

// Messages (documents) per cell for a message of `size` bytes: about 64 MB of MessagePack (8 MB
// under QUICK, shift 3), at least 5.
inline std::size_t reps_for(std::size_t size, unsigned shift) {
    return std::max<std::size_t>(5, ((std::size_t{64} << 20) >> shift) / std::max<std::size_t>(size, 1));
}

// What the common workloads' typed rows need from main (workloads.cpp).
struct wl_config {
    std::string data;         // build/bench-workloads
    int runs = 5;
    unsigned shift = 0;       // QUICK: 3
    std::size_t count = 0;    // --count: messages per cell, else reps_for
    std::string only;         // ",id,id," or empty
    std::string profile_lib;  // --profile's library, or empty
    bool wanted(const char *lib) const { return profile_lib.empty() || profile_lib == lib; }
    bool selected(const std::string &id) const { return only.empty() || only.find("," + id + ",") != std::string::npos; }
};

// table16, rb_image, rb_integers, rb_geojson, rb_model3d, c_ints, c_strings, long_string,
// utf8_strings, bins64k: typed, one message per op, through mpk, msgpack-cxx, protobuf and RapidJSON.
std::vector<row> typed_workloads(const wl_config &cfg, const std::vector<manifest_entry> &manifest);

} // namespace mpkb

#endif
