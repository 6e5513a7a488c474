// mpk::value: the dynamic view on the core's DOM, and conversion of a sub-tree later.
#include "support.hpp"

#include <map>

using mpk_test::hex;

namespace {
struct Args {
    int a = 0, b = 0;
    MPK_FIELDS_MAP(a, b)
};
} // namespace

TEST(Value, TypeIndexIterationAndConversion) {
    // {"method": "add", "params": {"a": 1, "b": 2}, "tags": [true, nil, 1.5]}
    auto bytes = hex("83a66d6574686f64a3616464a6706172616d7382a16101a16202a47461677393c3c0cb3ff8000000000000");
    mpk::document doc;
    mpk::value v = doc.parse(bytes);
    ASSERT_EQ(v.type(), mpk::type::map);
    EXPECT_EQ(v.size(), 3u);
    EXPECT_EQ(v["method"].str(), "add");
    EXPECT_EQ(v["method"].str().data(), reinterpret_cast<const char *>(bytes.data()) + 9); // zero-copy
    EXPECT_FALSE(v["missing"]);
    EXPECT_FALSE(v["tags"][3]);
    EXPECT_FALSE(v["method"][0]);
    EXPECT_TRUE(v["tags"][1].is_nil());
    EXPECT_EQ(v["tags"][2].type(), mpk::type::float64);
    std::vector<mpk::type> types;
    for (mpk::value e : v["tags"]) types.push_back(e.type());
    EXPECT_EQ(types, (std::vector<mpk::type>{mpk::type::boolean, mpk::type::nil, mpk::type::float64}));
    std::vector<std::string> keys;
    for (auto m : v.items()) keys.emplace_back(m.key.str());
    EXPECT_EQ(keys, (std::vector<std::string>{"method", "params", "tags"}));
    // convert a sub-tree once the method is known
    Args args = v["params"].as<Args>();
    EXPECT_EQ(args.a + args.b, 3);
    EXPECT_EQ((v["params"].as<std::map<std::string, int>>().at("b")), 2);
    EXPECT_EQ(v["tags"][2].as<double>(), 1.5);
    auto bad = v["method"].try_as<int>();
    EXPECT_EQ(bad.error().kind, mpk::errc::type);
    EXPECT_EQ(v["missing"].try_as<int>().error().kind, mpk::errc::type);
    // as<T>() converts straight from the nodes: a view points into the input, as str() does (a
    // re-encoding would have put it in a scratch buffer)
    std::string_view m = v["method"].as<std::string_view>();
    EXPECT_EQ(m, "add");
    EXPECT_EQ(m.data(), reinterpret_cast<const char *>(bytes.data()) + 9);
    // errors: the kind, the path, and the offset as the failing node's position in the sub-tree
    // ({"a": 1, "b": 2}: the map is node 0, "a" 1, 1 is 2, "b" 3, 2 is 4)
    struct Strs { std::string a, b; MPK_FIELDS_MAP(a, b) };
    auto wrong = v["params"].try_as<Strs>();
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().kind, mpk::errc::type);
    EXPECT_EQ(wrong.error().offset, 2u);
    EXPECT_NE(wrong.error().path.find(".a"), std::string::npos) << wrong.error().path;
    auto tuple3 = v["tags"].try_as<std::tuple<bool, std::optional<int>, double>>();
    ASSERT_TRUE(tuple3.ok()) << tuple3.error().message();
    EXPECT_FALSE(std::get<1>(*tuple3).has_value());
    EXPECT_EQ((v["tags"].try_as<std::tuple<bool, int, double>>().error().offset), 2u); // the nil
    // extra elements are skipped node by node (a struct of fewer fields), whole sub-trees at once
    struct First { bool t = false; MPK_FIELDS(t) };
    EXPECT_TRUE(v["tags"].as<First>().t);
    EXPECT_EQ((v.as<std::map<std::string, mpk::raw>>().size()), 3u); // raw: from a re-encoding
    EXPECT_EQ(mpk_test::to_hex(v["params"].as<mpk::raw>().bytes), "82a16101a16202");
    EXPECT_EQ(v.to_json(), R"({"method":"add","params":{"a":1,"b":2},"tags":[true,null,1.5]})");
    // comparison is deep; the same value from other bytes compares equal
    mpk::document other;
    auto same = hex("83a66d6574686f64a3616464a6706172616d7382a16101a16202a47461677393c3c0cb3ff8000000000000");
    EXPECT_EQ(other.parse(same), v);
    auto differs = hex("81a66d6574686f64a3616464");
    EXPECT_NE(other.parse(differs), v);
    // write_to gives the bytes back (shortest form)
    mpk::writer w;
    v.write_to(w);
    EXPECT_EQ(w.to_vector(), bytes);
}

TEST(Value, ErrorsAndJson) {
    mpk::document doc;
    auto cut = hex("92c0");
    auto r = doc.try_parse(cut);
    EXPECT_EQ(r.error().kind, mpk::errc::truncated);
    EXPECT_EQ(r.error().offset, 0u);
    EXPECT_FALSE(doc.root());
    auto j = doc.try_parse_json(R"({"a": [1, -2, 3.5, "x"]})");
    ASSERT_TRUE(j.ok());
    EXPECT_EQ((*j)["a"][1].as<int>(), -2);
    EXPECT_EQ(mpk_test::pack_hex(*j), "81a1619401fecb400c000000000000a178");
    EXPECT_EQ(doc.try_parse_json("[1,").error().kind, mpk::errc::json);
}

// spec/README.md, "Maps with duplicate keys": every pair is kept in order, and a lookup by key or
// a conversion into a structure with unique keys gives the last pair's value.
TEST(Value, DuplicateKeysGiveTheLastValue) {
    auto bytes = hex("83a16101a16202a16103"); // {"a": 1, "b": 2, "a": 3}
    mpk::document doc;
    mpk::value v = doc.parse(bytes);
    EXPECT_EQ(v.size(), 3u);
    EXPECT_EQ(v["a"].as<int>(), 3);
    EXPECT_EQ((mpk::unpack<std::map<std::string, int>>(bytes).at("a")), 3);
    EXPECT_EQ((mpk::unpack<std::unordered_map<std::string, int>>(bytes).at("a")), 3);
    Args args = mpk::unpack<Args>(bytes);
    EXPECT_EQ(args.a, 3);
    EXPECT_EQ(args.b, 2);
}
