/* stack_guard.h — how much C stack the running thread has left, for the recursive decoder and
 * encoder.
 *
 * max_depth bounds nesting by a count, but a count says nothing about the stack: the main thread
 * may have 8 MiB, a thread started after threading.stack_size(65536) has 64 KiB, and a caller may
 * pass max_depth=10**8. So every container level deeper than MPKPY_STACK_FREE_LEVELS compares the
 * stack pointer with the lowest address the thread may use (its stack's low end plus a reserve for
 * the hooks and the interpreter calls made at that depth) and refuses to go deeper.
 *
 * The low end is asked of the system once per thread (pthread_getattr_np reads /proc/self/maps for
 * the main thread: tens of microseconds) and kept in a thread-local. Where the system cannot say,
 * the guard falls back to a fixed budget of stack below the first decode of the thread. */
#ifndef MPKPY_STACK_GUARD_H
#define MPKPY_STACK_GUARD_H

#include <stddef.h>
#include <stdint.h>

#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__)
#include <pthread.h>
#endif
#if defined(__FreeBSD__)
#include <pthread_np.h>
#endif

/* Levels every stack has room for (a level takes well under 1 KiB, even under ASan): the check
 * starts below them, so ordinary documents never pay for it. */
#define MPKPY_STACK_FREE_LEVELS 16

/* Kept free below the deepest level: a hook called there runs Python code, which needs C stack for
 * the call into the interpreter and for whatever C it calls in turn. A quarter of the stack, at
 * least 16 KiB and at most 256 KiB. */
#define MPKPY_STACK_RESERVE_MIN (16 * 1024)
#define MPKPY_STACK_RESERVE_MAX (256 * 1024)
/* Used when the system does not report the thread's stack: what every platform's threads have. */
#define MPKPY_STACK_FALLBACK (128 * 1024)
/* At most this much below the first deep level is used, whatever the system reports. */
#define MPKPY_STACK_CLAMP ((uintptr_t)256 * 1024 * 1024)

static inline uintptr_t mpkpy_stack_here(void) { return (uintptr_t)__builtin_frame_address(0); }

/* The lowest stack address this thread may reach (stacks grow down on every platform we build on). */
static uintptr_t mpkpy_stack_floor_compute(void)
{
    uintptr_t here = mpkpy_stack_here();
    size_t size = 0;
    uintptr_t low = 0;
#if defined(__linux__) || defined(__FreeBSD__)
    pthread_attr_t attr;
    void *addr = NULL;
#if defined(__FreeBSD__)
    if (pthread_attr_init(&attr) == 0) {
        if (pthread_attr_get_np(pthread_self(), &attr) == 0 && pthread_attr_getstack(&attr, &addr, &size) == 0)
            low = (uintptr_t)addr;
        pthread_attr_destroy(&attr);
    }
#else
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) low = (uintptr_t)addr;
        pthread_attr_destroy(&attr);
    }
#endif
#elif defined(__APPLE__)
    uintptr_t top = (uintptr_t)pthread_get_stackaddr_np(pthread_self());
    size = pthread_get_stacksize_np(pthread_self());
    low = top - size;
#endif
    if (low == 0 || size == 0 || here <= low) {
        /* unknown: assume a small stack below the current frame */
        low = here - MPKPY_STACK_FALLBACK;
        size = MPKPY_STACK_FALLBACK;
    } else if (here - low > MPKPY_STACK_CLAMP) {
        /* a main thread under `ulimit -s unlimited` reports the whole gap below it: use a part */
        low = here - MPKPY_STACK_CLAMP;
        size = MPKPY_STACK_CLAMP;
    }
    size_t reserve = size / 4;
    if (reserve < MPKPY_STACK_RESERVE_MIN) reserve = MPKPY_STACK_RESERVE_MIN;
    if (reserve > MPKPY_STACK_RESERVE_MAX) reserve = MPKPY_STACK_RESERVE_MAX;
    return low + reserve;
}

static _Thread_local uintptr_t mpkpy_stack_floor_tls;

/* The floor for this thread, computed on its first deep level. */
static inline uintptr_t mpkpy_stack_floor(void)
{
    uintptr_t f = mpkpy_stack_floor_tls;
    if (f == 0) f = mpkpy_stack_floor_tls = mpkpy_stack_floor_compute();
    return f;
}

/* Nonzero when a level at `depth` may not go deeper on this thread's stack. */
static inline int mpkpy_stack_exhausted(Py_ssize_t depth)
{
    if (depth < MPKPY_STACK_FREE_LEVELS) return 0;
    return mpkpy_stack_here() < mpkpy_stack_floor();
}

#endif
