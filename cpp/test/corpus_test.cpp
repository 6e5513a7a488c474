// The spec/ corpus through the dynamic API (mpk::document / mpk::value), the typed reader path
// (mpk::raw skips every value through the core's pull reader) and mpk::stream.
#include "support.hpp"

#include "../driver/typed.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

struct corpus {
    std::vector<std::string> texts; // the files, kept alive: the documents point into them
    std::vector<std::unique_ptr<mpk::document>> docs;
    std::vector<mpk::value> cases;
};

const corpus &load() {
    static corpus c = [] {
        corpus out;
        std::vector<std::filesystem::path> files;
        for (auto &e : std::filesystem::directory_iterator(std::string(MPK_REPO_ROOT) + "/spec/vectors"))
            if (e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        out.texts.reserve(files.size());
        for (auto &f : files) {
            std::ifstream in(f, std::ios::binary);
            std::stringstream ss;
            ss << in.rdbuf();
            out.texts.push_back(ss.str());
            out.docs.push_back(std::make_unique<mpk::document>());
            mpk::options opts;
            opts.limits.depth = 20000; // depth.json nests 2049 JSON levels
            auto root = out.docs.back()->try_parse_json(out.texts.back(), opts);
            EXPECT_TRUE(root.ok()) << f << ": " << root.error().message();
            if (!root) continue;
            for (mpk::value c : *root) out.cases.push_back(c);
        }
        return out;
    }();
    return c;
}

/// The case's typed key and member (the key that is not name/msgpack/error/...).
std::pair<std::string_view, mpk::value> typed_of(mpk::value c) {
    for (auto m : c.items()) {
        std::string_view k = m.key.str();
        if (k != "name" && k != "msgpack" && k != "error" && k != "offset" && k != "limits" &&
            k != "strict_utf8" && k != "encode_error")
            return {k, m.val};
    }
    return {{}, {}};
}

std::vector<std::byte> bytes_of(mpk::value hex) {
    std::vector<std::byte> out;
    EXPECT_TRUE(mpk_typed::hex_decode(hex.str(), out)) << hex.str();
    return out;
}

mpk::options options_of(mpk::value c) {
    mpk::options o;
    if (mpk::value l = c["limits"]) {
        for (auto m : l.items()) {
            auto n = static_cast<std::uint32_t>(m.val.node()->v.u);
            std::string_view k = m.key.str();
            if (k == "depth") o.limits.depth = n;
            else if (k == "str") o.limits.str = n;
            else if (k == "bin") o.limits.bin = n;
            else if (k == "ext") o.limits.ext = n;
            else if (k == "array") o.limits.array = n;
            else if (k == "map") o.limits.map = n;
            else ADD_FAILURE() << "unknown limit " << k;
        }
    }
    if (mpk::value s = c["strict_utf8"]) o.strict_utf8 = s.get_bool();
    return o;
}

double number_of(mpk::value v) {
    const mpk_node *n = v.node();
    switch (v.type()) {
    case mpk::type::uint: return static_cast<double>(n->v.u);
    case mpk::type::int_: return static_cast<double>(n->v.i);
    case mpk::type::float32: return static_cast<double>(n->v.f32);
    case mpk::type::float64: return n->v.f64;
    default: return NAN;
    }
}

/// A decoded value against the case: deep-equal to the shortest form's decoding, or for the loose
/// `number` key, equal by numeric value (sign of zero included).
::testing::AssertionResult matches(std::string_view key, mpk::value got, mpk::value want) {
    if (key == "number") {
        double a = number_of(got), b = number_of(want);
        if (a == b && std::signbit(a) == std::signbit(b)) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << a << " != " << b;
    }
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got.to_json() << " != " << want.to_json();
}

} // namespace

TEST(Corpus, EveryPositiveCaseDecodesAndEncodes) {
    const corpus &c = load();
    ASSERT_GT(c.cases.size(), 1000u);
    std::size_t checked = 0;
    mpk::document want_doc, got_doc;
    for (mpk::value cs : c.cases) {
        if (cs["error"] || cs["encode_error"]) continue;
        std::string name(cs["name"].str());
        auto [key, member] = typed_of(cs);
        mpk::value forms = cs["msgpack"];
        ASSERT_TRUE(forms && forms.size() > 0) << name;
        // encode the typed value: the shortest form (any listed form for a loose number)
        mpk::writer w;
        ASSERT_TRUE(mpk_typed::encode_kv(key, member, w)) << name;
        ASSERT_TRUE(w.ok()) << name << ": " << w.error().message();
        std::string hex0 = mpk_test::to_hex(bytes_of(forms[0]));
        if (key == "number") {
            bool listed = false;
            for (mpk::value f : forms) listed |= mpk_test::to_hex(bytes_of(f)) == mpk_test::to_hex(w.bytes());
            EXPECT_TRUE(listed) << name << ": " << mpk_test::to_hex(w.bytes());
        } else {
            EXPECT_EQ(mpk_test::to_hex(w.bytes()), hex0) << name;
        }
        auto shortest = bytes_of(forms[0]);
        auto want = want_doc.try_parse(shortest);
        ASSERT_TRUE(want.ok()) << name << ": " << want.error().message();
        for (mpk::value f : forms) {
            auto bytes = bytes_of(f);
            auto got = got_doc.try_parse(bytes);
            ASSERT_TRUE(got.ok()) << name << " " << f.str() << ": " << got.error().message();
            EXPECT_TRUE(matches(key, *got, *want)) << name << " " << f.str();
            // re-encoding the decoded value gives the shortest form back
            if (key != "number") {
                mpk::writer again;
                got->write_to(again);
                EXPECT_EQ(mpk_test::to_hex(again.bytes()), hex0) << name << " " << f.str();
            }
            // the typed path: the core's pull reader skips it whole, as one value
            auto r = mpk::try_unpack<mpk::raw>(bytes);
            ASSERT_TRUE(r.ok()) << name << ": " << r.error().message();
            EXPECT_EQ(r->bytes.size(), bytes.size());
            checked++;
        }
    }
    EXPECT_GT(checked, 1000u);
}

TEST(Corpus, EveryNegativeCaseWithItsKindAndOffset) {
    const corpus &c = load();
    std::size_t checked = 0;
    mpk::document doc;
    for (mpk::value cs : c.cases) {
        if (!cs["error"]) continue;
        std::string name(cs["name"].str());
        auto bytes = bytes_of(cs["msgpack"]);
        mpk::options opts = options_of(cs);
        std::string kind(cs["error"].str());
        std::size_t offset = static_cast<std::size_t>(cs["offset"].node()->v.u);
        auto d = doc.try_parse(bytes, opts);
        ASSERT_FALSE(d.ok()) << name;
        EXPECT_EQ(mpk::name(d.error().kind), kind) << name;
        EXPECT_EQ(d.error().offset, offset) << name;
        auto r = mpk::try_unpack<mpk::raw>(bytes, opts);
        ASSERT_FALSE(r.ok()) << name;
        EXPECT_EQ(mpk::name(r.error().kind), kind) << name;
        EXPECT_EQ(r.error().offset, offset) << name;
        checked++;
    }
    EXPECT_GT(checked, 100u);
}

TEST(Corpus, EveryEncodeErrorCaseIsRefused) {
    const corpus &c = load();
    std::size_t checked = 0;
    for (mpk::value cs : c.cases) {
        if (!cs["encode_error"]) continue;
        std::string name(cs["name"].str());
        auto [key, member] = typed_of(cs);
        mpk::writer w;
        bool well_formed = mpk_typed::encode_kv(key, member, w);
        std::string kind(cs["encode_error"].str());
        if (kind == "bad_request") {
            EXPECT_FALSE(well_formed && w.ok()) << name;
        } else {
            ASSERT_TRUE(well_formed) << name;
            EXPECT_EQ(mpk::name(w.error().kind), kind) << name;
        }
        checked++;
    }
    EXPECT_GT(checked, 10u);
}

TEST(Corpus, EveryValidCaseThroughTheStreamSplitAtEveryByte) {
    const corpus &c = load();
    std::size_t checked = 0;
    mpk::document want_doc;
    for (mpk::value cs : c.cases) {
        if (cs["error"] || cs["encode_error"]) continue;
        std::string name(cs["name"].str());
        auto [key, member] = typed_of(cs);
        (void)member;
        auto shortest = bytes_of(cs["msgpack"][0]);
        auto want = want_doc.try_parse(shortest);
        ASSERT_TRUE(want.ok());
        for (mpk::value f : cs["msgpack"]) {
            auto bytes = bytes_of(f);
            // one byte at a time: every boundary at once
            {
                mpk::stream s;
                std::size_t values = 0;
                for (std::size_t i = 0; i < bytes.size(); i++) {
                    s.feed(mpk::bytes_view(bytes.data() + i, 1));
                    mpk::value v;
                    mpk::stream::status st;
                    while ((st = s.next(v)) == mpk::stream::status::value) {
                        values++;
                        EXPECT_EQ(i + 1, bytes.size()) << name << ": value before its last byte";
                        EXPECT_TRUE(matches(key, v, *want)) << name;
                    }
                    ASSERT_NE(st, mpk::stream::status::error) << name << ": " << s.error().message();
                }
                EXPECT_EQ(values, 1u) << name;
                EXPECT_TRUE(s.end().ok()) << name;
            }
            // two chunks split at every position, for forms up to 4 KiB (typed: as mpk::raw)
            if (bytes.size() <= 4096) {
                for (std::size_t cut = 0; cut <= bytes.size(); cut++) {
                    mpk::stream s;
                    std::size_t values = 0;
                    mpk::raw r;
                    s.feed(mpk::bytes_view(bytes.data(), cut));
                    while (s.next(r) == mpk::stream::status::value) values++;
                    s.feed(mpk::bytes_view(bytes.data() + cut, bytes.size() - cut));
                    while (s.next(r) == mpk::stream::status::value) {
                        values++;
                        EXPECT_EQ(mpk_test::to_hex(r.bytes), mpk_test::to_hex(bytes)) << name << " cut " << cut;
                    }
                    ASSERT_TRUE(s.end().ok()) << name << " cut " << cut;
                    ASSERT_EQ(values, 1u) << name << " cut " << cut;
                }
            }
            checked++;
        }
    }
    EXPECT_GT(checked, 1000u);
}
