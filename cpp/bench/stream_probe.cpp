// stream_probe.cpp — should large bodies be copied with streaming stores into outputs the cache
// might keep? A same-process A/B, not part of `make bench`.
//
// The seed's Test3 (one 8 KiB bin) written N times into one presized buffer, as
// cpp/bench/seed_bench.cpp does it (a new buffer each round, the first pass takes the page faults,
// the second is timed), three ways: mpk's writer (bodies 4 MiB or more into the output copied with
// AVX2 streaming stores, mpk/codec.hpp write_body_streaming), the same bytes copied plainly
// (head stores and memcpy) into a buffer of mpk's writer, and msgpack-cxx (its sbuffer, glibc
// memcpy). Rounds rotate the order; medians and the fastest run (the closest a loaded machine
// gets to a quiet one) are printed.
//
//   g++ -std=c++17 -O2 -DNDEBUG -DMSGPACK_NO_BOOST -Icpp/include -Ic/include cpp/bench/stream_probe.cpp
//       cpp/build/bench/c/libmpk.a -o /tmp/stream_probe && /tmp/stream_probe [MESSAGES,...] [ROUNDS]
//   (default: 1024,2048,4096,32768 messages: 8 to 268 MB, 4096 the QUICK run's count, 32768 the
//   full run's; 11 rounds)
#include <mpk.hpp>

#include <msgpack.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
namespace m {
struct Test3 { mpk::bytes_view data; MPK_FIELDS(data) };
} // namespace m
namespace c {
struct Test3 { msgpack::type::raw_ref data; MSGPACK_DEFINE(data) };
} // namespace c

using clk = std::chrono::steady_clock;
std::vector<char> g_payload(8192, 'x');

double seconds_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

// Test3 as mpk writes it ([bin 16 of 8192]), copied plainly into w's buffer.
__attribute__((noinline)) void write_plain(mpk::writer &w, std::size_t n) {
    std::uint8_t *p = w.c()->pos;
    for (std::size_t i = 0; i < n; i++) {
        p[0] = 0x91;
        p[1] = 0xc5;
        p[2] = 0x20;
        p[3] = 0x00;
        std::memcpy(p + 4, g_payload.data(), 8192);
        p += 4 + 8192;
    }
    w.c()->pos = p;
}

double one(int which, std::size_t n) {
    const std::size_t capacity = n * (8196 + 16) + 64; // as seed_bench.cpp presizes it
    const m::Test3 mm{mpk::bytes_view(g_payload.data(), g_payload.size())};
    if (which == 2) {
        c::Test3 cm;
        cm.data = msgpack::type::raw_ref(g_payload.data(), static_cast<std::uint32_t>(g_payload.size()));
        msgpack::sbuffer sb(capacity);
        for (std::size_t i = 0; i < n; i++) msgpack::pack(sb, cm);
        sb.clear();
        auto t0 = clk::now();
        for (std::size_t i = 0; i < n; i++) msgpack::pack(sb, cm);
        return seconds_since(t0);
    }
    mpk::writer w(capacity);
    for (std::size_t i = 0; i < n; i++) w.write(mm);
    w.reset();
    auto t0 = clk::now();
    if (which == 0) {
        for (std::size_t i = 0; i < n; i++) w.write(mm);
        mpk::detail::order_streaming_stores();
    } else {
        write_plain(w, n);
    }
    double s = seconds_since(t0);
    if (w.size() != n * 8196) std::abort();
    return s;
}
} // namespace

int main(int argc, char **argv) {
    std::vector<std::size_t> counts{1024, 2048, 4096, 32768};
    if (argc > 1) {
        counts.clear();
        for (const char *s = argv[1]; *s;) {
            char *e;
            counts.push_back(std::strtoull(s, &e, 10));
            s = *e == ',' ? e + 1 : e;
        }
    }
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 11;
    const char *names[3] = {"mpk (streaming)", "plain copy, same buffer", "msgpack-cxx sbuffer"};
    for (std::size_t n : counts) {
        std::vector<double> t[3];
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < 3; k++) {
                const int which = (k + r) % 3;
                t[which].push_back(one(which, n));
            }
        const double bytes = static_cast<double>(n) * 8196;
        std::printf("%zu messages, %.1f MB:\n", n, bytes / 1e6);
        for (int k = 0; k < 3; k++) {
            std::sort(t[k].begin(), t[k].end());
            std::printf("  %-26s median %6.2f GB/s, fastest %6.2f GB/s\n", names[k], bytes / t[k][t[k].size() / 2] / 1e9,
                        bytes / t[k].front() / 1e9);
        }
        std::fflush(stdout);
    }
    return 0;
}
