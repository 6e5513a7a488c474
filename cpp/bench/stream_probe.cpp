// stream_probe.cpp — how large bodies should be copied into outputs that fit in cache and outputs
// that do not (mpk/writer.hpp, stream_min_capacity). Not part of `make bench`: a same-process A/B.
//
// The seed's Test4 (ints and an 8 KiB bin) written N times into one presized buffer, as
// cpp/bench/seed_bench.cpp does, by mpk with its streaming threshold forced to 0 (AVX2 streaming
// stores for every body 4 MiB or more into the output), forced to SIZE_MAX (plain copies), and left
// to its rule (what users get), and by msgpack-cxx (glibc memcpy into its sbuffer). Each variant
// is timed on a second pass over its buffer (the first takes the page faults), in rotating order,
// for several rounds; the medians are printed with their spread. Wall-clock: run it on a quiet
// machine, or read only the ratios of one run.
//
//   g++ -std=c++17 -O2 -DNDEBUG -DMSGPACK_NO_BOOST -Icpp/include -Ic/include cpp/bench/stream_probe.cpp
//       cpp/build/bench/c/libmpk.a -o /tmp/stream_probe && /tmp/stream_probe [MESSAGES,...] [ROUNDS]
//   (default: 4096,32768 messages, the QUICK and the full run's counts; 9 rounds)
#include <mpk.hpp>

#include <msgpack.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
namespace m {
struct Test1 { std::uint32_t a = 1, b = 2; MPK_FIELDS(a, b) };
struct Test2 { std::int32_t a = -1, b = -2; MPK_FIELDS(a, b) };
struct Test3 { mpk::bytes_view data; MPK_FIELDS(data) };
struct Test4 { Test1 test1; Test2 test2; Test3 test3; MPK_FIELDS(test1, test2, test3) };
} // namespace m
namespace c {
struct Test1 { std::uint32_t a = 1, b = 2; MSGPACK_DEFINE(a, b) };
struct Test2 { std::int32_t a = -1, b = -2; MSGPACK_DEFINE(a, b) };
struct Test3 { msgpack::type::raw_ref data; MSGPACK_DEFINE(data) };
struct Test4 { Test1 test1; Test2 test2; Test3 test3; MSGPACK_DEFINE(test1, test2, test3) };
} // namespace c

using clk = std::chrono::steady_clock;
std::vector<char> g_payload(8192, 'x');

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
} // namespace

int main(int argc, char **argv) {
    std::vector<std::size_t> counts{4096, 32768};
    if (argc > 1) {
        counts.clear();
        for (const char *s = argv[1]; *s;) {
            char *e;
            counts.push_back(std::strtoull(s, &e, 10));
            s = *e == ',' ? e + 1 : e;
        }
    }
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
    const std::size_t rule = mpk::detail::stream_min_capacity();
    std::printf("stream_min_capacity (the rule, from sysconf): %zu bytes; AVX2: %s\n", rule,
#ifdef MPK_CPP_STREAM_AVX2
                mpk::detail::cpu_has_avx2() ? "yes" : "no"
#else
                "not built"
#endif
    );
    const m::Test4 mm{{}, {}, {mpk::bytes_view(g_payload.data(), g_payload.size())}};
    c::Test4 cm;
    cm.test3.data = msgpack::type::raw_ref(g_payload.data(), static_cast<std::uint32_t>(g_payload.size()));
    for (std::size_t n : counts) {
        const std::size_t one = mpk::pack(mm).size();
        mpk::writer w(n * (one + 16) + 64); // as seed_bench.cpp presizes it
        msgpack::sbuffer sb(n * (one + 16) + 64);
        const char *names[4] = {"mpk streaming (threshold 0)", "mpk plain (threshold max)", "mpk (the rule)", "msgpack-cxx sbuffer"};
        auto pass = [&](int which) {
            if (which == 3) {
                sb.clear();
                auto t0 = clk::now();
                for (std::size_t i = 0; i < n; i++) msgpack::pack(sb, cm);
                return std::chrono::duration<double>(clk::now() - t0).count();
            }
            mpk::detail::set_stream_min_capacity(which == 0 ? 0 : which == 1 ? SIZE_MAX : rule);
            w.reset();
            auto t0 = clk::now();
            for (std::size_t i = 0; i < n; i++) w.write(mm);
            mpk::detail::order_streaming_stores();
            return std::chrono::duration<double>(clk::now() - t0).count();
        };
        for (int k = 0; k < 4; k++) pass(k); // page faults
        std::vector<double> t[4];
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < 4; k++) {
                int which = (k + r) % 4; // rotating order
                t[which].push_back(pass(which));
            }
        mpk::detail::set_stream_min_capacity(rule);
        const double bytes = static_cast<double>(w.size());
        std::printf("%zu messages, %.1f MB output (writer capacity %zu):\n", n, bytes / 1e6,
                    static_cast<std::size_t>(w.c()->end - w.c()->buf));
        for (int k = 0; k < 4; k++) {
            auto s = t[k];
            std::sort(s.begin(), s.end());
            std::printf("  %-30s %7.2f GB/s  (runs %.2f..%.2f)  %.2fx msgpack-cxx\n", names[k], bytes / median(t[k]) / 1e9,
                        bytes / s.back() / 1e9, bytes / s.front() / 1e9, median(t[3]) / median(t[k]));
        }
        std::fflush(stdout);
    }
    return 0;
}
