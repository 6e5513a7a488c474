// workloads.cpp — the common workloads of bench/workloads that have a protobuf message (besides the
// seed's Test1–Test4 and the Go seed's Product rows of seed_bench.cpp), typed, in C++.
//
// Each workload's value is one C++ type that both MessagePack libraries read and write: a struct
// described with mpk's macros (MPK_FIELDS for the array form, MPK_FIELDS_MAP where the workload is
// a map keyed by field names) and with msgpack-cxx's (MSGPACK_DEFINE / MSGPACK_DEFINE_MAP), or a
// standard container where the workload is a bare array or string (rb_integers is an array of ints,
// not a map with a "values" key as its protobuf message is). Before anything is timed, every
// library's reading of its file is checked: mpk and msgpack-cxx re-encode <id>.msgpack byte for
// byte, protobuf re-encodes <id>.pb (protoc's own encoding) byte for byte, the three hold the same
// values (integers, string and byte lengths, floating-point sums: sums_of), and RapidJSON's Writer
// output of <id>.json parses back to an equal Document.
//
// A cell is one message per op, repeated (reps_for: about 64 MB of MessagePack per cell), decoded
// into the same object each time (every library reuses its object's memory: mpk and msgpack-cxx
// their vectors and strings, protobuf its cleared message) and encoded from it into a buffer kept
// from one op to the next. Every library owns what it decodes (std::string, std::vector<std::byte>,
// the protobuf message's strings): none reads views into the input, so the bins and strings are
// copied by all. RapidJSON parses <id>.json into a new Document per op and writes it back with
// Document::Accept(Writer), as in the corpora rows.
#include "common.hpp"

#include <google/protobuf/message.h>
#include <google/protobuf/stubs/common.h>

#include "workloads.pb.h"

#include <array>
#include <cstring>
#include <tuple>
#include <type_traits>

namespace {

using namespace mpkb;

// ---- the workloads' C++ types (one per workload, shared by mpk and msgpack-cxx) -----------------
namespace w {
// table16: 16 rows of [str, int, bool] (the array form: each row is a 3-element array).
struct Row {
    std::string s; std::int32_t n = 0; bool b = false;
    MPK_FIELDS(s, n, b)
    MSGPACK_DEFINE(s, n, b);
};
using Table = std::vector<Row>;

// rb_image: a map keyed by field names, with 6 KiB of bin.
struct Image {
    std::int64_t id = 0; std::string name; std::int32_t width = 0, height = 0; std::vector<std::string> tags;
    std::int64_t created = 0; std::vector<std::byte> data;
    MPK_FIELDS_MAP(id, name, width, height, tags, created, data)
    MSGPACK_DEFINE_MAP(id, name, width, height, tags, created, data);
};

// rb_integers: a bare array of 10000 ints of ±2^31; c_ints: 0..65535.
using Ints = std::vector<std::int64_t>;
using UInts = std::vector<std::uint64_t>;

// rb_geojson: maps keyed by field names; a ring is an array of [lng, lat] pairs (protobuf: each
// ring's pairs flattened into one packed double array).
struct GeoProperties {
    std::string name; std::int64_t pop = 0;
    MPK_FIELDS_MAP(name, pop)
    MSGPACK_DEFINE_MAP(name, pop);
};
struct GeoGeometry {
    std::string type; std::vector<std::vector<std::array<double, 2>>> coordinates;
    MPK_FIELDS_MAP(type, coordinates)
    MSGPACK_DEFINE_MAP(type, coordinates);
};
struct GeoFeature {
    std::string type; GeoProperties properties; GeoGeometry geometry;
    MPK_FIELDS_MAP(type, properties, geometry)
    MSGPACK_DEFINE_MAP(type, properties, geometry);
};
struct GeoFeatureCollection {
    std::string type; std::vector<GeoFeature> features;
    MPK_FIELDS_MAP(type, features)
    MSGPACK_DEFINE_MAP(type, features);
};

// rb_model3d: a map of a name, 2 × 15000 doubles and 27000 ints.
struct Model {
    std::string name; std::vector<double> vertices, normals; std::vector<std::uint32_t> faces;
    MPK_FIELDS_MAP(name, vertices, normals, faces)
    MSGPACK_DEFINE_MAP(name, vertices, normals, faces);
};

// c_strings, utf8_strings: bare arrays of str; long_string: one str; bins64k: an array of 16 bins.
using Strings = std::vector<std::string>;
using LongString = std::string;
using Blobs = std::vector<std::vector<std::byte>>;
} // namespace w

// ---- what a decoded message holds, the same for every library (the pre-timing check) ------------
struct sums {
    std::uint64_t ints = 0, bytes = 0, items = 0;
    double reals = 0; // added in the message's order by every library, so equal to the bit
    bool operator==(const sums &o) const {
        return ints == o.ints && bytes == o.bytes && items == o.items && std::memcmp(&reals, &o.reals, sizeof reals) == 0;
    }
};

template <class T, class = void>
struct described : std::false_type {};
template <class T>
struct described<T, std::void_t<decltype(std::declval<const T &>().mpk_tie())>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T, std::size_t N>
struct is_vector<std::array<T, N>> : std::true_type {};

template <class T>
void add(sums &s, const T &v) {
    if constexpr (described<T>::value) {
        std::apply([&](const auto &...f) { (add(s, f), ...); }, v.mpk_tie());
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::byte>>) {
        s.items++;
        s.bytes += v.size();
    } else if constexpr (is_vector<T>::value) {
        for (const auto &e : v) add(s, e);
    } else if constexpr (std::is_floating_point_v<T>) {
        s.items++;
        s.reals += v;
    } else {
        static_assert(std::is_integral_v<T>);
        s.items++;
        s.ints += static_cast<std::uint64_t>(v);
    }
}

template <class T>
sums sums_of(const T &v) {
    sums s;
    add(s, v);
    return s;
}

// The same walk over a protobuf message, by reflection. The message fields themselves add
// nothing (an mpk struct's fields are not values), only their leaves; an unset scalar of proto3 is
// its default, which an mpk struct holds too (and every workload sets every field anyway).
void add_pb(sums &s, const google::protobuf::Message &m);

void add_pb_field(sums &s, const google::protobuf::Message &m, const google::protobuf::FieldDescriptor *f, int i) {
    using F = google::protobuf::FieldDescriptor;
    const google::protobuf::Reflection *r = m.GetReflection();
    bool rep = f->is_repeated();
    switch (f->cpp_type()) {
    case F::CPPTYPE_INT32: s.ints += static_cast<std::uint64_t>(rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f)); break;
    case F::CPPTYPE_INT64: s.ints += static_cast<std::uint64_t>(rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f)); break;
    case F::CPPTYPE_UINT32: s.ints += rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f); break;
    case F::CPPTYPE_UINT64: s.ints += rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f); break;
    case F::CPPTYPE_BOOL: s.ints += rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f); break;
    case F::CPPTYPE_DOUBLE: s.reals += rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f); break;
    case F::CPPTYPE_STRING: s.bytes += (rep ? r->GetRepeatedString(m, f, i) : r->GetString(m, f)).size(); break;
    case F::CPPTYPE_MESSAGE: add_pb(s, rep ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f)); return;
    default: std::fprintf(stderr, "mpk_cpp_bench: no check for protobuf field %s\n", f->full_name().c_str()); std::exit(1);
    }
    s.items++;
}

void add_pb(sums &s, const google::protobuf::Message &m) {
    const google::protobuf::Descriptor *d = m.GetDescriptor();
    for (int k = 0; k < d->field_count(); k++) {
        const google::protobuf::FieldDescriptor *f = d->field(k);
        if (f->is_repeated())
            for (int i = 0, n = m.GetReflection()->FieldSize(m, f); i < n; i++) add_pb_field(s, m, f, i);
        else
            add_pb_field(s, m, f, -1);
    }
}

// ---- what a decoded message adds to the timed loop's checksum (one field's size, per type) -------
template <class T>
std::uint64_t light(const T &v) {
    if constexpr (described<T>::value) return light(std::get<0>(v.mpk_tie())) + 1;
    else if constexpr (std::is_arithmetic_v<T>) return static_cast<std::uint64_t>(v);
    else return v.size();
}
std::uint64_t light(const w::Image &v) { return v.data.size(); }
std::uint64_t light(const w::GeoFeatureCollection &v) { return v.features.size(); }
std::uint64_t light(const w::Model &v) { return v.faces.size(); }
std::uint64_t light(const mpkbench::Table &m) { return static_cast<std::uint64_t>(m.rows_size()); }
std::uint64_t light(const mpkbench::Image &m) { return m.data().size(); }
std::uint64_t light(const mpkbench::Ints &m) { return static_cast<std::uint64_t>(m.values_size()); }
std::uint64_t light(const mpkbench::UInts &m) { return static_cast<std::uint64_t>(m.values_size()); }
std::uint64_t light(const mpkbench::GeoFeatureCollection &m) { return static_cast<std::uint64_t>(m.features_size()); }
std::uint64_t light(const mpkbench::Model &m) { return static_cast<std::uint64_t>(m.faces_size()); }
std::uint64_t light(const mpkbench::Strings &m) { return static_cast<std::uint64_t>(m.values_size()); }
std::uint64_t light(const mpkbench::LongString &m) { return m.value().size(); }
std::uint64_t light(const mpkbench::Blobs &m) { return static_cast<std::uint64_t>(m.values_size()); }

[[noreturn]] void fail(const std::string &id, const char *what) {
    std::fprintf(stderr, "mpk_cpp_bench: %s: %s\n", id.c_str(), what);
    std::exit(1);
}

// ---- one workload through one library -------------------------------------------------------------

template <class T>
cell typed_mpk(const std::vector<std::byte> &bytes, std::size_t reps) {
    cell c;
    T t;
    if (!mpk::try_unpack(bytes, t)) std::abort(); // the object's memory is warm, as in every later op
    c.des = seconds_of(2, [&] {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < reps; i++) {
            if (!mpk::try_unpack(bytes, t)) std::abort();
            sum += light(t);
        }
        g_sink = sum;
    });
    mpk::writer wr(bytes.size() + 4096);
    auto ser = [&] {
        for (std::size_t i = 0; i < reps; i++) {
            wr.reset();
            wr.write(t);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    if (!wr.ok()) std::abort();
    c.bytes = wr.size() * reps;
    return c;
}

// msgpack-cxx's fastest path: a reused zone, str and bin referenced in the input (then copied
// into the struct's strings and vectors by convert).
template <class T>
cell typed_msgpack(const std::vector<std::byte> &bytes, std::size_t reps) {
    cell c;
    auto data = reinterpret_cast<const char *>(bytes.data());
    auto ref = [](msgpack::type::object_type, std::size_t, void *) { return true; };
    T t;
    msgpack::zone z;
    auto one = [&] {
        std::size_t off = 0;
        bool referenced = false;
        msgpack::object obj = msgpack::unpack(z, data, bytes.size(), off, referenced, ref);
        obj.convert(t);
        z.clear();
    };
    one();
    c.des = seconds_of(2, [&] {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < reps; i++) {
            one();
            sum += light(t);
        }
        g_sink = sum;
    });
    msgpack::sbuffer sb(bytes.size() + 4096);
    auto ser = [&] {
        for (std::size_t i = 0; i < reps; i++) {
            sb.clear();
            msgpack::pack(sb, t);
        }
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = sb.size() * reps;
    return c;
}

// Protocol Buffers: ParseFromArray into the same message (it clears it, keeping its memory);
// SerializeToArray (which sizes the message first, as a program must) into a kept buffer.
template <class PB>
cell typed_pb(const std::string &bytes, std::size_t reps) {
    cell c;
    PB m;
    if (!m.ParseFromString(bytes)) std::abort();
    c.des = seconds_of(2, [&] {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < reps; i++) {
            if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) std::abort();
            sum += light(m);
        }
        g_sink = sum;
    });
    std::string out(bytes.size() + 4096, '\0');
    auto ser = [&] {
        for (std::size_t i = 0; i < reps; i++)
            if (!m.SerializeToArray(out.data(), static_cast<int>(out.size()))) std::abort();
    };
    ser();
    c.ser = seconds_of(1, ser);
    c.bytes = m.ByteSizeLong() * reps;
    return c;
}

// ---- one workload: the checks, then every library -------------------------------------------------

template <class T, class PB>
void workload(const wl_config &cfg, const std::vector<manifest_entry> &manifest, std::vector<row> &rows, const char *id,
              const char *shape) {
    if (!cfg.selected(id)) return;
    const manifest_entry *me = nullptr;
    for (auto &e : manifest)
        if (e.id == id) me = &e;
    if (!me) fail(id, "not in manifest.json (run make bench-workloads)");
    std::string base = cfg.data + "/" + id;
    const std::vector<std::byte> bytes = read_bytes(base + ".msgpack");
    const std::string pb_bytes = read_file(base + ".pb");

    // mpk: decode, re-encode byte for byte
    T value{};
    if (auto r = mpk::try_unpack(bytes, value); !r) fail(id, r.error().message().c_str());
    if (mpk::pack(value) != bytes) fail(id, "mpk's encoding of what it decoded differs from the .msgpack file");
    const sums want = sums_of(value);
    // msgpack-cxx: the same
    {
        msgpack::object_handle oh = msgpack::unpack(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        T other{};
        oh.get().convert(other);
        msgpack::sbuffer sb;
        msgpack::pack(sb, other);
        if (sb.size() != bytes.size() || std::memcmp(sb.data(), bytes.data(), bytes.size()) != 0)
            fail(id, "msgpack-cxx's encoding of what it decoded differs from the .msgpack file");
        if (!(sums_of(other) == want)) fail(id, "msgpack-cxx decoded other values than mpk");
    }
    // protobuf: the .pb file (protoc --encode), re-encoded byte for byte, with the same values
    {
        PB m;
        if (!m.ParseFromString(pb_bytes)) fail(id, "protobuf cannot parse the .pb file");
        if (m.SerializeAsString() != pb_bytes) fail(id, "protobuf's encoding of what it parsed differs from the .pb file");
        sums got;
        add_pb(got, m);
        if (!(got == want)) fail(id, "the .pb file holds other values than the .msgpack file");
    }
#ifdef MPK_BENCH_HAVE_RAPIDJSON
    const std::string text = read_file(base + ".json");
    {
        // Full precision here: the default parse (the timed one, as in c/bench) may be off by an ulp,
        // so a double could read back other than it was written.
        rapidjson::Document d, back;
        d.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
        if (d.HasParseError()) fail(id, "RapidJSON cannot parse the .json file");
        rapidjson::StringBuffer sb;
        json_writer jw(sb);
        d.Accept(jw);
        back.Parse<rapidjson::kParseFullPrecisionFlag>(sb.GetString(), sb.GetSize());
        if (back.HasParseError() || !(back == d)) fail(id, "RapidJSON's writing of the .json file does not read back equal");
    }
#endif

    std::size_t reps = cfg.count ? cfg.count : reps_for(bytes.size(), cfg.shift);
    row r{id, me->title, "typed", reps, {}, shape, me->proto};
    if (cfg.wanted("mpk")) r.libs.push_back({"mpk", "mpk", repeat(cfg.runs, [&] { return typed_mpk<T>(bytes, reps); })});
    if (cfg.wanted("cxxfast"))
        r.libs.push_back({"msgpack-cxx zone+ref", "msgpack", repeat(cfg.runs, [&] { return typed_msgpack<T>(bytes, reps); })});
    if (cfg.wanted("protobuf"))
        r.libs.push_back({"protobuf " + std::to_string(GOOGLE_PROTOBUF_VERSION / 1000000) + "." +
                              std::to_string(GOOGLE_PROTOBUF_VERSION / 1000 % 1000),
                          "protobuf", repeat(cfg.runs, [&] { return typed_pb<PB>(pb_bytes, reps); })});
#ifdef MPK_BENCH_HAVE_RAPIDJSON
    if (cfg.wanted("json")) r.libs.push_back({"RapidJSON", "json", repeat(cfg.runs, [&] { return corpus_json(text, reps); })});
#endif
    std::fprintf(stderr, "  %s done\n", id);
    rows.push_back(std::move(r));
}

} // namespace

std::vector<mpkb::row> mpkb::typed_workloads(const wl_config &cfg, const std::vector<manifest_entry> &manifest) {
    std::vector<row> rows;
    workload<w::Table, mpkbench::Table>(cfg, manifest, rows, "table16", "std::vector of an MPK_FIELDS struct (array form)");
    workload<w::Image, mpkbench::Image>(cfg, manifest, rows, "rb_image", "MPK_FIELDS_MAP struct, data as std::vector<std::byte>");
    workload<w::Ints, mpkbench::Ints>(cfg, manifest, rows, "rb_integers", "std::vector<std::int64_t> (a bare array)");
    workload<w::GeoFeatureCollection, mpkbench::GeoFeatureCollection>(
        cfg, manifest, rows, "rb_geojson", "MPK_FIELDS_MAP structs, rings as std::vector<std::array<double, 2>>");
    workload<w::Model, mpkbench::Model>(cfg, manifest, rows, "rb_model3d", "MPK_FIELDS_MAP struct of std::vectors");
    workload<w::UInts, mpkbench::UInts>(cfg, manifest, rows, "c_ints", "std::vector<std::uint64_t> (a bare array)");
    workload<w::Strings, mpkbench::Strings>(cfg, manifest, rows, "c_strings", "std::vector<std::string> (a bare array)");
    workload<w::LongString, mpkbench::LongString>(cfg, manifest, rows, "long_string", "std::string (a bare str)");
    workload<w::Strings, mpkbench::Strings>(cfg, manifest, rows, "utf8_strings", "std::vector<std::string> (a bare array)");
    workload<w::Blobs, mpkbench::Blobs>(cfg, manifest, rows, "bins64k", "std::vector<std::vector<std::byte>> (a bare array)");
    return rows;
}
