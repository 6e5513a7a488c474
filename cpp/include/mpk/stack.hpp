// mpk/stack.hpp — the stack guard of the typed layer's recursive paths.
//
// The typed codecs recurse once per nesting level (a struct holding a std::vector of itself, a
// map of maps, ...), so the C stack bounds how deep a value can go, whatever limits.depth says:
// 511 nested `struct Node { std::vector<Node> kids; }` (1022 levels, under the default depth limit)
// take about 300 bytes a level at -O2, and crashed a thread with a 128 KiB stack (musl's default)
// or a 256 KiB one. Before a codec that can recurse opens a container it asks (decoder::enter,
// writer::enter, stack_has_room below) whether the current thread's stack still has more than
// stack_margin bytes below the caller; when it has not, the codec fails with errc::depth_limit
// instead of going deeper. Which codecs ask: codec.hpp, is_leaf and guards_itself.
//
// The thread's stack bounds are asked of the system once per thread (a thread_local cache):
// Linux (glibc, musl, bionic) pthread_getattr_np, macOS pthread_get_stackaddr_np /
// pthread_get_stacksize_np, Windows GetCurrentThreadStackLimits. Elsewhere, or when the code runs
// on a stack that is not the thread's own (a fiber, a coroutine's or a signal stack), the bounds
// are unknown and only limits.depth bounds the nesting, as before.
#ifndef MPK_CPP_STACK_HPP
#define MPK_CPP_STACK_HPP

#include <mpk.h>

#include <cstddef>
#include <cstdint>

#if defined(__GNUC__) || defined(__clang__)
#define MPK__STACK_INLINE inline __attribute__((always_inline))
#define MPK__STACK_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define MPK__STACK_INLINE __forceinline
#define MPK__STACK_NOINLINE __declspec(noinline)
#else
#define MPK__STACK_INLINE inline
#define MPK__STACK_NOINLINE
#endif

#if defined(__linux__)
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#define MPK_CPP_STACK_LINUX 1
#elif defined(__APPLE__)
#include <pthread.h>
#define MPK_CPP_STACK_APPLE 1
#elif defined(_WIN32)
#define MPK_CPP_STACK_WINDOWS 1
extern "C" __declspec(dllimport) void __stdcall GetCurrentThreadStackLimits(
#if defined(_WIN64)
    unsigned __int64 *, unsigned __int64 *);
#else
    unsigned long *, unsigned long *);
#endif
#endif

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

/// Bytes of stack the typed codecs leave unused below the deepest container they open (see
/// mpk::stack_margin). Define it before including mpk.hpp to change it.
#ifndef MPK_CPP_STACK_MARGIN
#define MPK_CPP_STACK_MARGIN (32 * 1024)
#endif

namespace mpk {

/// The typed codecs refuse to open a container (errc::depth_limit) when less than this many bytes
/// of the thread's stack are left. 32 KiB: what runs below the last check — one level's frames
/// (about 200-350 bytes at -O2, 400 at -O0, 800 under AddressSanitizer, GCC 12, measured
/// on the recursive Node of the tests), a leaf's codec, malloc, an error's detail and path strings, a user codec of
/// modest size — plus a signal handler landing on that stack (a signal frame with AVX-512 state is
/// about 3.5 KiB) fits in it several times over, while a 128 KiB thread keeps three quarters of
/// its stack for the nesting.
inline constexpr std::size_t stack_margin = MPK_CPP_STACK_MARGIN;

namespace detail {

/// A thread's stack: the addresses [lo, hi). Both 0 when unknown.
struct stack_span {
    std::uintptr_t lo = 0, hi = 0;
};

/// The address of the caller's stack frame, portably: the frame address the compiler knows (GCC,
/// Clang: forces a frame pointer in the function it is inlined into), the return address slot
/// (MSVC), or a local's address. (The address of a local is not used with GCC and Clang: under
/// AddressSanitizer's use-after-return detection locals live on a heap "fake stack".)
#if defined(__GNUC__) || defined(__clang__)
MPK__STACK_INLINE std::uintptr_t stack_address_portable() noexcept {
    return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
}
#elif defined(_MSC_VER)
MPK__STACK_INLINE std::uintptr_t stack_address_portable() noexcept {
    return reinterpret_cast<std::uintptr_t>(_AddressOfReturnAddress());
}
#else
inline std::uintptr_t stack_address_portable() noexcept {
    volatile char here = 0;
    return reinterpret_cast<std::uintptr_t>(&here);
}
#endif

/// stack_address: the stack pointer itself, read with one instruction on x86-64 and AArch64 (GCC,
/// Clang). Why: stack_address_portable (__builtin_frame_address) makes every codec it is inlined
/// into set up a frame pointer (a push, a move and a pop per call, on a path taken once per
/// struct and container). Elsewhere it is stack_address_portable; the tests check both agree.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
MPK__STACK_INLINE std::uintptr_t stack_address() noexcept {
    std::uintptr_t sp;
    __asm__("movq %%rsp, %0" : "=r"(sp));
    return sp;
}
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
MPK__STACK_INLINE std::uintptr_t stack_address() noexcept {
    std::uintptr_t sp;
    __asm__("mov %0, sp" : "=r"(sp));
    return sp;
}
#else
inline std::uintptr_t stack_address() noexcept { return stack_address_portable(); }
#endif

/// The calling thread's stack as the system reports it (not cached: on Linux's main thread glibc
/// reads /proc/self/maps for it). {0, 0} when unknown.
inline stack_span query_thread_stack() noexcept {
    stack_span s;
#if defined(MPK_CPP_STACK_LINUX)
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return s;
    void *addr = nullptr;
    std::size_t size = 0;
    int rc = pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    if (rc != 0 || addr == nullptr || size == 0) return s;
    s.lo = reinterpret_cast<std::uintptr_t>(addr);
    s.hi = s.lo + size;
#if !defined(__GLIBC__)
    // musl reports the main thread's stack as far as it is mapped now, not as far as it may grow:
    // take RLIMIT_STACK from its top instead (unknown when unlimited). glibc does this itself.
    if (static_cast<long>(getpid()) == static_cast<long>(syscall(SYS_gettid))) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return stack_span{};
        if (rl.rlim_cur < s.hi && s.hi - rl.rlim_cur < s.lo) s.lo = s.hi - static_cast<std::uintptr_t>(rl.rlim_cur);
    }
#endif
#elif defined(MPK_CPP_STACK_APPLE)
    pthread_t t = pthread_self();
    s.hi = reinterpret_cast<std::uintptr_t>(pthread_get_stackaddr_np(t));
    std::size_t size = pthread_get_stacksize_np(t);
    if (s.hi == 0 || size == 0 || size > s.hi) return stack_span{};
    s.lo = s.hi - size;
#elif defined(MPK_CPP_STACK_WINDOWS)
#if defined(_WIN64)
    unsigned __int64 lo = 0, hi = 0;
#else
    unsigned long lo = 0, hi = 0;
#endif
    GetCurrentThreadStackLimits(&lo, &hi);
    s.lo = static_cast<std::uintptr_t>(lo);
    s.hi = static_cast<std::uintptr_t>(hi);
#endif
    if (s.hi <= s.lo) return stack_span{};
    return s;
}

/// The calling thread's stack, asked of the system on the thread's first call only.
struct thread_stack_cache {
    stack_span span;
    bool asked = false;
};
inline thread_stack_cache &thread_stack_slot() noexcept {
    static thread_local thread_stack_cache c;
    return c;
}
inline stack_span thread_stack() noexcept {
    thread_stack_cache &c = thread_stack_slot();
    if (!c.asked) {
        c.span = query_thread_stack();
        c.asked = true;
    }
    return c.span;
}


/// The range of stack addresses where the calling thread has more than stack_margin bytes left
/// (room while floor <= sp <= floor + span), cached per thread so that the check before a
/// container is a thread_local load, a subtraction and a comparison. It starts empty and is filled
/// on the thread's first check (stack_refresh). Measured (callgrind, cpp/bench/callgrind.py): a
/// range kept in each decoder and filled from the thread's bounds on its first check cost every
/// one-shot decode that refill (rb_image decode 1,969 -> 2,010 instructions a message); this cache
/// is filled once per thread (rb_image 1,969 again; the largest cost left is rb_geojson encode,
/// 37,177 -> 37,383, one check per Feature struct). In a shared library compiled with -fPIC the load may go through
/// __tls_get_addr.
struct stack_room {
    std::uintptr_t floor = 0, span = 0;
};
inline thread_local stack_room thread_room;

/// stack_has_room's slow path, out of line: the thread's first check, a check on a stack that is
/// not the thread's own (not cached: the guard is off there), and a stack nearly used up.
MPK__STACK_NOINLINE inline bool stack_refresh(std::uintptr_t sp) noexcept {
    stack_span s = thread_stack();
    stack_room &r = thread_room;
    if (s.hi == 0) { // unknown bounds: no guard on this thread, only limits.depth
        r.floor = 0;
        r.span = UINTPTR_MAX;
        return true;
    }
    if (sp < s.lo || sp >= s.hi) return true; // a fiber's, coroutine's or signal stack: no guard
    if (sp - s.lo <= stack_margin) return false;
    r.floor = s.lo + stack_margin + 1;
    r.span = s.hi - r.floor;
    return true;
}

/// True while more than stack_margin bytes of the calling thread's stack are left below the
/// caller (or its bounds are unknown). The codecs ask it through decoder::enter / writer::enter.
MPK__STACK_INLINE bool stack_has_room() noexcept {
    const std::uintptr_t sp = stack_address();
    const stack_room &r = thread_room;
    if (MPK__LIKELY(sp - r.floor <= r.span)) return true;
    return stack_refresh(sp);
}

/// For the tests: forgets the calling thread's cached range (after set_thread_stack_for_test).
inline void reset_thread_room_for_test() noexcept { thread_room = stack_room{}; }

/// For the tests: makes the calling thread's bounds `s` ({0, 0}: unknown, the fallback of other
/// platforms), as if the system had reported them.
inline void set_thread_stack_for_test(stack_span s) noexcept {
    thread_stack_cache &c = thread_stack_slot();
    c.span = s;
    c.asked = true;
    reset_thread_room_for_test();
}

} // namespace detail
} // namespace mpk

#endif
