// cpp/test/inline_guard.cpp — not a GoogleTest program: run.sh compiles it with g++ at -O2 and -O3,
// with the translation unit's inlining budget spent up front (--param inline-unit-growth=0
// --param large-unit-insns=0), and checks with nm that none of the fast path's readers was emitted
// out of line: each must be inlined into the loops below, as mpk/fast.hpp's comments require.
//
// Why: GCC inlines a plain `inline` function only while the translation unit's growth budget
// lasts. In cpp/bench's seed_bench.cpp (protobuf, msgpack-cxx, RapidJSON and mpk in one file) the
// map-form decode added more call sites of the int reader, the budget ran out before the Test2 loop's
// turn, and GCC 12 emitted fast_field<int>::read as an out-of-line clone called per field: Test2
// decode went from 44 to 75 instructions per message (callgrind). Spending the budget up front
// makes any small file behave as that large one did; the readers are MPK_CPP_FAST_INLINE
// (always_inline) so the outcome no longer depends on what else the file holds.
#include <mpk.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace guard {
struct T1 { unsigned a = 1, b = 2; MPK_FIELDS(a, b) };
struct T2 { int a = -1, b = -2; MPK_FIELDS(a, b) };
struct T3 { mpk::bytes_view data; MPK_FIELDS(data) };
struct T4 { T1 t1; T2 t2; T3 t3; MPK_FIELDS(t1, t2, t3) };
enum class color : std::uint8_t { red, green };
struct Mixed { std::int64_t id = 0; bool ok = false; double x = 0; float y = 0; color c = color::red; std::string_view s; MPK_FIELDS(id, ok, x, y, c, s) };
struct Product { std::int64_t id = 0; std::string name; std::int32_t price = 0; std::vector<std::string> colors; MPK_FIELDS_MAP(id, name, price, colors) };

// The seed's loop: messages back to back, read one after another.
template <class T>
__attribute__((noinline)) std::uint64_t guard_loop(const std::vector<std::byte> &bytes, std::size_t n) {
    mpk::reader r(bytes);
    T t;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; i++) {
        if (!r.read(t)) return 0;
        sum += reinterpret_cast<const unsigned char *>(&t)[0];
    }
    return sum;
}
template std::uint64_t guard_loop<T1>(const std::vector<std::byte> &, std::size_t);
template std::uint64_t guard_loop<T2>(const std::vector<std::byte> &, std::size_t);
template std::uint64_t guard_loop<T4>(const std::vector<std::byte> &, std::size_t);
template std::uint64_t guard_loop<Mixed>(const std::vector<std::byte> &, std::size_t);
template std::uint64_t guard_loop<Product>(const std::vector<std::byte> &, std::size_t);
template std::uint64_t guard_loop<std::vector<std::int64_t>>(const std::vector<std::byte> &, std::size_t);
} // namespace guard
