// The stack guard (mpk/stack.hpp): a recursive type decoded from hostile input, or a deep one built
// by the user and encoded, fails with errc::depth_limit in a thread with a small stack (musl's
// default is 128 KiB) instead of overflowing it, with the default limits and with limits.depth
// raised far above them; a normal depth still works there. Without the guard every "Small*" test
// below kills the test program with SIGSEGV (511 nested Nodes need about 330 KiB at -O2).
#include "support.hpp"

#include <pthread.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

struct Node {
    std::vector<Node> kids;
    MPK_FIELDS(kids)
};
struct MapNode {
    std::vector<MapNode> kids;
    MPK_FIELDS_MAP(kids)
};
struct PlainNode { // no description: the plain aggregate codec
    std::vector<PlainNode> kids;
};
struct TaggedNode { // through a std::pair in a vector (the tuple codec)
    std::vector<std::pair<int, TaggedNode>> kids;
    MPK_FIELDS(kids)
};

/// A type with a codec of the user's own (not an aggregate: it has a constructor), recursing
/// through the standard vector codec, which asks the guard for such elements.
struct UserNode {
    UserNode() {}
    std::vector<UserNode> kids;
};
} // namespace

template <>
struct mpk::codec<UserNode> {
    static void encode(mpk::writer &w, const UserNode &v) { mpk::codec<std::vector<UserNode>>::encode(w, v.kids); }
    static bool decode(mpk::decoder &d, UserNode &v) { return mpk::codec<std::vector<UserNode>>::decode(d, v.kids); }
};

namespace {
/// A chain of `levels` nested nodes (each holding the next as its only kid), built without recursion.
template <class N>
N chain(std::size_t levels) {
    N n;
    for (std::size_t i = 1; i < levels; i++) {
        N p;
        p.kids.emplace_back();
        p.kids.back() = std::move(n);
        n = std::move(p);
    }
    return n;
}
template <>
TaggedNode chain<TaggedNode>(std::size_t levels) {
    TaggedNode n;
    for (std::size_t i = 1; i < levels; i++) {
        TaggedNode p;
        p.kids.emplace_back();
        p.kids.back().first = static_cast<int>(i);
        p.kids.back().second = std::move(n);
        n = std::move(p);
    }
    return n;
}

/// Takes a chain apart without recursion (its destructor recurses once a level).
template <class N>
void unchain(N &n) {
    while (!n.kids.empty()) {
        N next = std::move(n.kids.front());
        n = std::move(next);
    }
}
void unchain(TaggedNode &n) {
    while (!n.kids.empty()) {
        TaggedNode next = std::move(n.kids.front().second);
        n = std::move(next);
    }
}

/// Runs f on a new thread whose stack is `stack` bytes.
void on_thread(std::size_t stack, std::function<void()> f) {
    pthread_attr_t a;
    ASSERT_EQ(pthread_attr_init(&a), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&a, stack), 0);
    pthread_t t;
    auto run = [](void *p) -> void * {
        (*static_cast<std::function<void()> *>(p))();
        return nullptr;
    };
    ASSERT_EQ(pthread_create(&t, &a, run, &f), 0);
    pthread_join(t, nullptr);
    pthread_attr_destroy(&a);
}

constexpr std::size_t KiB = 1024;

/// n's encoding, written on a thread with a 256 MiB stack (the chains of these tests are deeper
/// than the main thread's 8 MiB allow at -O0 and under AddressSanitizer; only touched pages count).
template <class N>
std::vector<std::byte> pack_deep(const N &n) {
    std::vector<std::byte> out;
    on_thread(256 * 1024 * KiB, [&] {
        auto r = mpk::try_pack(n);
        ASSERT_TRUE(r.ok()) << mpk::name(r.error().kind);
        out = std::move(*r);
    });
    return out;
}
const std::size_t small_stacks[] = {128 * KiB, 256 * KiB};

mpk::options depth_opts(std::uint32_t depth) {
    mpk::options o;
    o.limits.depth = depth;
    return o;
}

/// An error's message, cut short (the paths of these errors are thousands of characters long).
std::string brief(const mpk::error_info &e) { return e.message().substr(0, 160); }

/// The guard's error: depth_limit at a container head inside the input, the path into the chain.
void expect_stack_error(const mpk::error_info &e, mpk::bytes_view input, std::string_view path_start) {
    EXPECT_EQ(e.kind, mpk::errc::depth_limit) << brief(e);
    EXPECT_NE(e.detail.find("of the thread's stack left"), std::string::npos) << brief(e);
    EXPECT_LT(e.offset, input.size());
    EXPECT_GT(e.offset, 0u);
    EXPECT_EQ(e.path.substr(0, path_start.size()), path_start) << brief(e);
}

/// Decodes a chain of `levels` nodes in a thread with a 128 KiB and one with a 256 KiB stack, with
/// limits.depth at `depth`. `levels` under the depth limit (the lead's repro: 511 Nodes, 1022
/// levels) overflows the 128 KiB stack without the guard (about 200-800 bytes a level, whatever the
/// build) and must fail there; with 256 KiB, whether the stack runs short depends on how the
/// compiler inlined the codecs (200-330 bytes a level at -O2): it may decode, or fail with the
/// guard's error, never crash. A chain deeper than the stack can hold (20000 levels under a raised
/// limit) must fail on both.
template <class N>
void decode_in_small_threads(std::size_t levels, std::uint32_t depth, std::string_view path_start) {
    N deep = chain<N>(levels);
    const auto input = pack_deep(deep);
    unchain(deep);
    const bool must_fail_256 = levels >= 10000;
    for (std::size_t stack : small_stacks) {
        {
            SCOPED_TRACE("stack " + std::to_string(stack / KiB) + " KiB, limits.depth " + std::to_string(depth));
            on_thread(stack, [&] {
                auto r = mpk::try_unpack<N>(input, depth_opts(depth));
                if (r.ok() && stack > 128 * KiB && !must_fail_256) return unchain(*r);
                ASSERT_FALSE(r.ok());
                expect_stack_error(r.error(), input, path_start);
                // the same error into an existing object, and the std::error_code overload
                N into;
                auto r2 = mpk::try_unpack(input, into, depth_opts(depth));
                unchain(into);
                if (!r2.ok() || stack == 128 * KiB || must_fail_256) {
                    ASSERT_FALSE(r2.ok());
                    expect_stack_error(r2.error(), input, path_start);
                }
                std::error_code ec;
                N third = mpk::unpack<N>(input, ec, depth_opts(depth));
                unchain(third);
                if (ec || stack == 128 * KiB || must_fail_256) {
                    EXPECT_EQ(ec, mpk::errc::depth_limit);
                }
            });
        }
    }
}

} // namespace

// The lead's repro: 511 nested Nodes, 1022 levels, under the default depth limit of 1024.
TEST(StackGuard, SmallThreadDecodeAtDefaultDepth) {
    const std::uint32_t d = mpk_limits_default().depth;
    decode_in_small_threads<Node>(511, d, "Node.kids[0].kids[0]");
    decode_in_small_threads<MapNode>(511, d, "MapNode.kids[0].kids[0]");
    decode_in_small_threads<PlainNode>(511, d, "PlainNode[0][0]");
    decode_in_small_threads<TaggedNode>(340, d, "TaggedNode.kids[0][1].kids[0][1]"); // 3 levels a node
    decode_in_small_threads<UserNode>(1023, d, "[0][0]");
}
// The same inputs with limits.depth raised to 100000, and ones deeper than any of these stacks.
TEST(StackGuard, SmallThreadDecodeWithRaisedDepth) {
    decode_in_small_threads<Node>(511, 100000, "Node.kids[0].kids[0]");
    decode_in_small_threads<Node>(20000, 100000, "Node.kids[0].kids[0]");
    decode_in_small_threads<MapNode>(20000, 100000, "MapNode.kids[0].kids[0]");
    decode_in_small_threads<PlainNode>(20000, 100000, "PlainNode[0][0]");
    decode_in_small_threads<TaggedNode>(20000, 100000, "TaggedNode.kids[0][1].kids[0][1]");
    decode_in_small_threads<UserNode>(20000, 100000, "[0][0]");
}

// The typed stream's next(T&) and value::as<T>() decode through the same codecs.
// (511 Nodes at the default limits in 128 KiB; 5000 under a raised limit in 128 and 256 KiB.)
TEST(StackGuard, SmallThreadStreamAndValue) {
    for (std::size_t levels : {511, 5000}) {
        Node deep = chain<Node>(levels);
        const auto input = pack_deep(deep);
        unchain(deep);
        const mpk::options opts = depth_opts(levels > 511 ? 100000 : mpk_limits_default().depth);
        mpk::document doc;
        auto v = doc.try_parse(input, opts); // the core's parser does not recurse
        ASSERT_TRUE(v.ok()) << brief(v.error());
        for (std::size_t stack : small_stacks) {
            if (levels == 511 && stack > 128 * KiB) continue; // may fit (see decode_in_small_threads)
            SCOPED_TRACE("stack " + std::to_string(stack / KiB) + " KiB, " + std::to_string(levels) + " nodes");
            on_thread(stack, [&] {
                mpk::stream s(opts);
                s.feed(mpk::bytes_view(input));
                Node out;
                ASSERT_EQ(s.next(out), mpk::stream::status::error);
                expect_stack_error(s.error(), input, "Node.kids[0]");
                unchain(out);
                auto r = v->try_as<Node>(opts);
                ASSERT_FALSE(r.ok());
                EXPECT_EQ(r.error().kind, mpk::errc::depth_limit) << brief(r.error());
                EXPECT_EQ(r.error().path.substr(0, 12), "Node.kids[0]");
            });
        }
    }
}

// Encoding a deep value the user built recurses the same way (the writer has no depth limit).
TEST(StackGuard, SmallThreadEncode) {
    Node deep = chain<Node>(20000);
    TaggedNode tagged = chain<TaggedNode>(20000);
    PlainNode plain = chain<PlainNode>(20000);
    UserNode user = chain<UserNode>(20000);
    for (std::size_t stack : small_stacks) {
        SCOPED_TRACE("stack " + std::to_string(stack / KiB) + " KiB");
        on_thread(stack, [&] {
            auto r = mpk::try_pack(deep);
            ASSERT_FALSE(r.ok());
            EXPECT_EQ(r.error().kind, mpk::errc::depth_limit) << brief(r.error());
            EXPECT_EQ(r.error().path.substr(0, 20), "Node.kids[0].kids[0]") << brief(r.error());
            std::vector<std::byte> buf(1 << 20);
            auto f = mpk::try_pack_into(buf.data(), buf.size(), deep);
            ASSERT_FALSE(f.ok());
            EXPECT_EQ(f.error().kind, mpk::errc::depth_limit);
            mpk::writer w;
            w.write(deep);
            EXPECT_EQ(w.error().kind, mpk::errc::depth_limit);
            w.reset(); // the writer goes on after reset
            w.write(std::vector<int>{1, 2});
            EXPECT_TRUE(w.ok());
            auto t = mpk::try_pack(tagged);
            ASSERT_FALSE(t.ok());
            EXPECT_EQ(t.error().kind, mpk::errc::depth_limit);
            EXPECT_EQ(t.error().path.substr(0, 19), "TaggedNode.kids[0][") << brief(t.error());
            auto p = mpk::try_pack(plain);
            ASSERT_FALSE(p.ok());
            EXPECT_EQ(p.error().kind, mpk::errc::depth_limit);
            auto u = mpk::try_pack(user);
            ASSERT_FALSE(u.ok());
            EXPECT_EQ(u.error().kind, mpk::errc::depth_limit);
            EXPECT_EQ(u.error().path.substr(0, 6), "[0][0]") << brief(u.error());
        });
    }
    unchain(deep);
    unchain(tagged);
    unchain(plain);
    unchain(user);
}

// A normal depth (100 MessagePack levels: 50 Nodes) decodes and encodes in such a thread.
TEST(StackGuard, SmallThreadNormalDepthWorks) {
    Node n = chain<Node>(50);
    const auto input = mpk::pack(n);
    for (std::size_t stack : small_stacks) {
        SCOPED_TRACE("stack " + std::to_string(stack / KiB) + " KiB");
        on_thread(stack, [&] {
            auto r = mpk::try_unpack<Node>(input);
            ASSERT_TRUE(r.ok()) << brief(r.error());
            auto again = mpk::try_pack(*r);
            ASSERT_TRUE(again.ok()) << brief(again.error());
            EXPECT_EQ(*again, input);
            mpk::stream s;
            s.feed(mpk::bytes_view(input));
            Node out;
            EXPECT_EQ(s.next(out), mpk::stream::status::value);
        });
    }
}

// On the main thread (8 MiB) the default limits hold as before: 1022 levels decode, and the depth
// limit (the core's error, not the guard's) stops 1026.
TEST(StackGuard, MainThreadKeepsTheDepthLimit) {
    Node deep = chain<Node>(511);
    auto input = mpk::pack(deep);
    unchain(deep);
    auto r = mpk::try_unpack<Node>(input);
    ASSERT_TRUE(r.ok()) << brief(r.error());
    unchain(*r);
    Node deeper = chain<Node>(513);
    input = mpk::pack(deeper);
    unchain(deeper);
    auto e = mpk::try_unpack<Node>(input);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().kind, mpk::errc::depth_limit);
    EXPECT_EQ(e.error().offset, 1024u);
    EXPECT_EQ(e.error().detail.find("stack"), std::string::npos) << brief(e.error());
}

// The guard's decision, whatever the build's frame sizes: with the thread's bounds set to leave
// 48 KiB below the current frame, a chain fails within those 16 KiB over the margin although the
// real stack is large; with the bounds unknown (the fallback of platforms without a query, and of
// fibers), only limits.depth bounds the nesting.
TEST(StackGuard, BoundsDecideAndUnknownFallsBack) {
    Node deep = chain<Node>(511);
    const auto input = mpk::pack(deep);
    unchain(deep);
    on_thread(8192 * KiB, [&] {
        const std::uintptr_t sp = mpk::detail::stack_address();
        const mpk::detail::stack_span real = mpk::detail::thread_stack();
        ASSERT_NE(real.hi, 0u);
        EXPECT_GT(sp, real.lo);
        EXPECT_LT(sp, real.hi);
        mpk::detail::set_thread_stack_for_test({sp - mpk::stack_margin - 16 * KiB, real.hi});
        auto r = mpk::try_unpack<Node>(input);
        ASSERT_FALSE(r.ok());
        expect_stack_error(r.error(), input, "Node");
        mpk::detail::set_thread_stack_for_test({}); // unknown
        auto ok = mpk::try_unpack<Node>(input);
        ASSERT_TRUE(ok.ok()) << brief(ok.error());
        unchain(*ok);
        auto enc = mpk::try_pack(*ok);
        EXPECT_TRUE(enc.ok());
        mpk::detail::set_thread_stack_for_test(real);
        ok = mpk::try_unpack<Node>(input);
        ASSERT_TRUE(ok.ok()) << brief(ok.error()); // 8 MiB: room for 1022 levels
        unchain(*ok);
    });
}

// stack_address (one instruction on x86-64 and AArch64) and its portable fallback agree, and both
// lie inside the thread's stack as the system reports it (on the main thread and another one).
TEST(StackGuard, StackAddressAndFallbackAgree) {
    auto check = [] {
        const std::uintptr_t a = mpk::detail::stack_address(), b = mpk::detail::stack_address_portable();
        const std::uintptr_t d = a > b ? a - b : b - a;
        EXPECT_LT(d, 4 * KiB);
        const mpk::detail::stack_span s = mpk::detail::query_thread_stack();
        ASSERT_LT(s.lo, s.hi);
        EXPECT_GT(a, s.lo);
        EXPECT_LT(a, s.hi);
        EXPECT_GT(b, s.lo);
        EXPECT_LT(b, s.hi);
    };
    check();
    on_thread(256 * KiB, check);
}
