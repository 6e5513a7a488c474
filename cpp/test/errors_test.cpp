// Every decode error: its kind (the core's, one-to-one), its byte offset and the path to the field.
#include "support.hpp"

#include <map>

#if defined(__unix__)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

using mpk::errc;
using mpk_test::expect_error;
using mpk_test::hex;

namespace {
struct Test1 {
    unsigned a = 1, b = 2;
    MPK_FIELDS(a, b)
};
struct Test3 {
    std::vector<std::byte> data;
    MPK_FIELDS(data)
};
struct Test4 {
    Test1 test1;
    Test1 test2;
    Test3 test3;
    MPK_FIELDS(test1, test2, test3)
};
struct Named {
    std::string host;
    std::vector<Test1> items;
    MPK_FIELDS_MAP(host, items)
};
struct Node {
    std::vector<Node> kids;
    MPK_FIELDS(kids)
};
} // namespace

TEST(DecodeErrors, TypeMismatchNamesTheField) {
    // Test4 whose test3 is a str where the struct's array belongs
    expect_error<Test4>("93920102920304a178", errc::type, 7, "Test4.test3");
    // ... and whose test3.data is a str where a bin belongs
    expect_error<Test4>("9392010292030491a178", errc::type, 8, "Test4.test3.data");
    expect_error<Test1>("a0", errc::type, 0, "");
    expect_error<std::vector<Test1>>("929201029201a178", errc::type, 6, "[1].b");
    expect_error<std::map<std::string, Test1>>("81a16b9201a178", errc::type, 5, "[k].b");
    expect_error<Named>("82a4686f7374a178a56974656d73919201c3", errc::type, 17, "Named.items[0].b");
    auto r = mpk::try_unpack<Test4>(hex("93920102920304a178"));
    EXPECT_EQ(r.error().message(), "type at byte 7 in Test4.test3: str does not fit " +
                                       std::string(mpk::detail::type_name<Test3>()));
}

TEST(DecodeErrors, OutOfRangeIntIsNeverTruncated) {
    expect_error<Test1>("92ff02", errc::type, 1, "Test1.a");
    expect_error<Test1>("9201cf0000000100000000", errc::type, 2, "Test1.b");
    expect_error<std::int8_t>("cc80", errc::type, 0);
    expect_error<std::uint64_t>("d0ff", errc::type, 0);
    expect_error<std::int64_t>("cf8000000000000000", errc::type, 0);
}

TEST(DecodeErrors, CoreKindsWithTheirOffsets) {
    expect_error<Test1>("9201", errc::truncated, 0);            // 2 elements cannot fit in 1 byte
    expect_error<Test1>("9201cd01", errc::truncated, 2, "Test1.b");
    expect_error<Test1>("9201c1", errc::invalid_byte, 2, "Test1.b");
    expect_error<Test1>("92c101", errc::invalid_byte, 1, "Test1.a");
    expect_error<int>("0102", errc::trailing_bytes, 1);
    expect_error<Test1>("92010203", errc::trailing_bytes, 3);
    expect_error<mpk::timestamp>("d5ff0000", errc::invalid_timestamp, 0);
    expect_error<mpk::timestamp>("d7ff" "ffffffff00000000", errc::invalid_timestamp, 0);
    expect_error<std::vector<int>>("ddffffffff", errc::truncated, 0); // msgpack-cxx's 96 GB five bytes
    expect_error<std::string>("dbffffffff", errc::truncated, 0);
    mpk::options small;
    small.limits.str = 4;
    expect_error<Named>("81a4686f7374a56162636465", errc::length_limit, 6, "Named.host", small);
    small = {};
    small.limits.array = 1;
    expect_error<std::vector<int>>("920102", errc::length_limit, 0, "", small);
    small = {};
    small.limits.depth = 2;
    expect_error<std::vector<std::vector<std::vector<int>>>>("91919101", errc::depth_limit, 2, "[0][0]", small);
    mpk::options strict;
    strict.strict_utf8 = true;
    expect_error<std::string_view>("a1ff", errc::invalid_utf8, 0, "", strict);
    EXPECT_EQ(mpk::unpack<std::string_view>(hex("a1ff")).size(), 1u); // accepted when not strict
}

TEST(DecodeErrors, DepthIsBoundedForRecursiveTypes) {
    // 100000 nested arrays: the core stops at the 1025th head, before the C++ stack grows deeper
    std::string h;
    for (int i = 0; i < 100000; i++) h += "91";
    h += "90";
    auto r = mpk::try_unpack<Node>(hex(h));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, errc::depth_limit);
    EXPECT_EQ(r.error().offset, 1024u);
    // exactly 1024 levels decode
    std::string ok;
    for (int i = 0; i < 1023; i++) ok += "91";
    ok += "90";
    EXPECT_TRUE(mpk::try_unpack<Node>(hex(ok)).ok());
}

TEST(DecodeErrors, ReaderIsStickyAndCountsFromTheBufferStart) {
    auto bytes = hex("920102" "92ff02" "920304");
    mpk::reader r(bytes);
    Test1 t;
    EXPECT_TRUE(r.read(t));
    EXPECT_FALSE(r.read(t));
    EXPECT_EQ(r.error().kind, errc::type);
    EXPECT_EQ(r.error().offset, 4u);
    EXPECT_EQ(r.error().path, "Test1.a");
    EXPECT_FALSE(r.read(t));
    EXPECT_TRUE(r.done());
}

TEST(DecodeErrors, ThrowingApiCarriesTheSameInfo) {
#if MPK_CPP_EXCEPTIONS
    try {
        (void)mpk::unpack<Test4>(hex("93920102920304a178"));
        FAIL();
    } catch (const mpk::error &e) {
        EXPECT_EQ(e.kind(), errc::type);
        EXPECT_EQ(e.offset(), 7u);
        EXPECT_EQ(e.path(), "Test4.test3");
    }
#endif
}

TEST(DecodeErrors, KindsAreTheCoresOneToOne) {
    EXPECT_EQ(static_cast<int>(errc::truncated), MPK_ERR_TRUNCATED);
    EXPECT_EQ(static_cast<int>(errc::json), MPK_ERR_JSON);
    EXPECT_STREQ(mpk::name(errc::invalid_timestamp), "invalid_timestamp");
    EXPECT_STREQ(mpk::name(errc::type), "type");
}

TEST(Stream, TypedValuesFromChunksAndErrorsAtStreamOffsets) {
    mpk::writer w;
    for (unsigned i = 0; i < 50; i++) w.write(Test1{i, i + 1});
    w.write(std::string("not a Test1"));
    auto all = w.to_vector();
    mpk::stream s;
    std::vector<Test1> got;
    mpk::stream::status st = mpk::stream::status::need_more;
    std::size_t at = 0;
    while (at < all.size()) { // chunks of 7 bytes
        std::size_t n = std::min<std::size_t>(7, all.size() - at);
        s.feed(mpk::bytes_view(all.data() + at, n));
        at += n;
        Test1 t;
        while ((st = s.next(t)) == mpk::stream::status::value) got.push_back(t);
        if (st == mpk::stream::status::error) break;
    }
    ASSERT_EQ(got.size(), 50u);
    EXPECT_EQ(got[49].b, 50u);
    ASSERT_EQ(st, mpk::stream::status::error);
    EXPECT_EQ(s.error().kind, errc::type);
    EXPECT_EQ(s.error().offset, all.size() - 12);
    // format errors are sticky, at stream offsets; truncation comes from end()
    mpk::stream bad;
    auto b = hex("0102c1");
    bad.feed(b);
    int v;
    EXPECT_EQ(bad.next(v), mpk::stream::status::value);
    EXPECT_EQ(bad.next(v), mpk::stream::status::value);
    EXPECT_EQ(bad.next(v), mpk::stream::status::error);
    EXPECT_EQ(bad.error().kind, errc::invalid_byte);
    EXPECT_EQ(bad.error().offset, 2u);
    mpk::stream cut;
    auto c = hex("9201");
    cut.feed(c);
    EXPECT_EQ(cut.next(v), mpk::stream::status::need_more);
    auto end = cut.end();
    EXPECT_EQ(end.error().kind, errc::truncated);
    EXPECT_EQ(end.error().offset, 0u);
}

#if defined(__unix__) && !defined(__SANITIZE_ADDRESS__)
namespace {
/// Runs fn in a child process limited to `mib` MiB of address space; its exit status.
template <class F>
int in_capped_child(std::size_t mib, F fn) {
    pid_t pid = fork();
    if (pid == 0) {
        rlimit lim{mib << 20, mib << 20};
        setrlimit(RLIMIT_AS, &lim);
        _exit(fn());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}
} // namespace

TEST(Memory, HostileDeclaredLengthsStayWithinACap) {
    // 5 bytes declaring 2^32-1 elements (msgpack-cxx allocates about 96 GB for them); a str of
    // 2^32-1 bytes; 1 MiB declaring 2^20-1 elements, all present but the last one cut.
    std::vector<std::byte> big = hex("dd000fffff");
    big.resize(big.size() + (1u << 20) - 2, std::byte{0x90});
    big.push_back(std::byte{0xdc});
    auto run = [](std::vector<std::byte> input, auto *type_tag) {
        using T = std::remove_pointer_t<decltype(type_tag)>;
        return in_capped_child(256, [&] {
            auto r = mpk::try_unpack<T>(input);
            return r.ok() ? 0 : static_cast<int>(r.error().kind);
        });
    };
    EXPECT_EQ(run(hex("ddffffffff"), static_cast<std::vector<std::vector<std::string>> *>(nullptr)),
              static_cast<int>(errc::truncated));
    EXPECT_EQ(run(hex("dbffffffff41"), static_cast<std::string *>(nullptr)), static_cast<int>(errc::truncated));
    EXPECT_EQ(run(big, static_cast<std::vector<std::vector<std::string>> *>(nullptr)),
              static_cast<int>(errc::truncated));
    EXPECT_EQ(run(big, static_cast<std::vector<mpk::raw> *>(nullptr)), static_cast<int>(errc::truncated));
    // 500 nested Nodes whose kids each declare 2^20-1 elements over 1 MiB of empty Nodes: every
    // head alone fits the bytes left, so a reservation per head would take 500 x 1 MiB
    std::vector<std::byte> nested;
    for (int i = 0; i < 500; i++)
        for (const char *b : {"91", "dd000fffff"})
            for (std::byte x : hex(b)) nested.push_back(x);
    nested.resize(nested.size() + (1u << 20) - 1, std::byte{0x90});
    EXPECT_EQ(run(nested, static_cast<Node *>(nullptr)), static_cast<int>(errc::truncated));
    auto cut = mpk::try_unpack<std::vector<std::vector<int>>>(big);
    EXPECT_EQ(cut.error().offset, big.size() - 1);
    EXPECT_EQ(cut.error().path, "[1048574]");
}
#endif

#if defined(__unix__) && !defined(__SANITIZE_ADDRESS__)
// A vector of large elements filled from nils: 256 Ki nils (one byte each) would make 256 Ki
// elements of 4097 bytes, 1 GiB. Every element is charged to the decode's allocation budget (1 MiB
// plus 256 bytes per input byte, about 65 MiB here), so the decode stops with length_limit at the
// vector's head inside a 256 MiB cap instead of running out of memory.
namespace {
using Big = std::vector<std::optional<std::array<char, 4096>>>;
struct Holder {
    Big items;
    MPK_FIELDS(items)
};
} // namespace

TEST(Memory, LargeElementsFromNilsAreChargedToTheBudget) {
    std::vector<std::byte> in = hex("dd00040000");
    in.resize(in.size() + (1u << 18), std::byte{0xc0});
    int status = in_capped_child(256, [&] {
        auto r = mpk::try_unpack<Big>(in);
        if (r.ok()) return 0;
        return r.error().offset == 0 ? static_cast<int>(r.error().kind) : 99;
    });
    EXPECT_EQ(status, static_cast<int>(errc::length_limit));
    // The same elements, fewer of them: within the budget, decoded.
    std::vector<std::byte> few = hex("dc0100");
    few.resize(few.size() + 256, std::byte{0xc0});
    auto ok = mpk::try_unpack<Big>(few);
    ASSERT_TRUE(ok.ok()) << ok.error().message();
    EXPECT_EQ(ok->size(), 256u);
    // A budget of one's own (options::max_alloc), here too small for the 256 elements: the error
    // is at the vector's head, with the path of the field that holds it.
    std::vector<std::byte> held = hex("91");
    held.insert(held.end(), few.begin(), few.end());
    mpk::options small;
    small.max_alloc = 100 * sizeof(Big::value_type);
    auto refused = mpk::try_unpack<Holder>(held, small);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().kind, errc::length_limit);
    EXPECT_EQ(refused.error().offset, 1u);
    EXPECT_EQ(refused.error().path, "Holder.items");
}
#endif

// std::error_code: the category, the kinds as codes, and the overloads that set one instead of
// throwing.
TEST(ErrorCode, CategoryKindsAndOverloads) {
    std::error_code truncated = errc::truncated;
    EXPECT_STREQ(truncated.category().name(), "mpk");
    EXPECT_EQ(truncated.message(), "truncated");
    EXPECT_EQ(truncated.value(), MPK_ERR_TRUNCATED);
    EXPECT_EQ(std::error_code(errc::type).message(), "type");
    EXPECT_NE(std::error_code(errc::type), std::error_code(errc::truncated));

    std::error_code ec = make_error_code(errc::io); // set: the calls must clear it on success
    auto bytes = mpk::pack(std::make_tuple(1, std::string("x")), ec);
    EXPECT_FALSE(ec);
    auto back = mpk::unpack<std::tuple<int, std::string>>(bytes, ec);
    EXPECT_FALSE(ec);
    EXPECT_EQ(std::get<1>(back), "x");

    auto cut = hex("9201");
    auto none = mpk::unpack<std::tuple<int, int>>(cut, ec);
    EXPECT_EQ(ec, errc::truncated);
    EXPECT_EQ(std::get<0>(none), 0);
    std::int8_t small = 5;
    mpk::unpack(hex("cd0100"), small, ec);
    EXPECT_EQ(ec, errc::type);

    char buf[2];
    EXPECT_EQ(mpk::pack_into(buf, sizeof buf, std::string("hello"), ec), 0u);
    EXPECT_EQ(ec, errc::buffer_full);
    EXPECT_EQ(mpk::pack_into(buf, sizeof buf, 7, ec), 1u);
    EXPECT_FALSE(ec);

    auto two = hex("01c1");
    mpk::reader r(two);
    EXPECT_EQ(r.next<int>(ec), 1);
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.next<int>(ec), 0);
    EXPECT_EQ(ec, errc::invalid_byte);

    mpk::document doc;
    auto in = hex("92a161c0"); // the values' strings point into it
    mpk::value v = doc.parse(in, ec);
    EXPECT_FALSE(ec);
    EXPECT_EQ(v[0].as<std::string>(ec), "a");
    EXPECT_FALSE(ec);
    EXPECT_EQ(v[1].as<int>(ec), 0);
    EXPECT_EQ(ec, errc::type);
    EXPECT_FALSE(doc.parse(hex("92"), ec));
    EXPECT_EQ(ec, errc::truncated);
    // error_info::code(): empty for ok
    EXPECT_FALSE(mpk::error_info{}.code());
}
