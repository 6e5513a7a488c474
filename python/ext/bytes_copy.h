/* bytes_copy.h — a new bytes object holding a copy of a buffer, for packb's results.
 *
 * PyBytes_FromStringAndSize reaches the allocator through two more calls and copies with a libc
 * call; on a 3-byte result that is about a third of what packb itself costs (measured: 39.4 ->
 * 35.7 ns per call on a no-op function returning 3 bytes). On CPython 3.11, whose bytes
 * layout we know, the object is built here: one PyObject_Malloc (the same allocator, so tracemalloc
 * and the allocator hooks see it), the header fields, and for a short result a fixed 16-byte copy,
 * which needs no call. Only 3.11, the version the tests run on, so far: 3.12 changed the reference count
 * field (immortal objects) and 3.13 reports new objects to reference tracers. Elsewhere (other
 * versions, debug builds) the API call. */
#ifndef MPKPY_BYTES_COPY_H
#define MPKPY_BYTES_COPY_H

#include "mpk_py.h"

#include <stddef.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_REF_DEBUG) && \
    !defined(Py_TRACE_REFS)
#define MPKPY_BYTES_BY_HAND 1
#endif

/* Short results are copied as 16 bytes: `data` must have 16 readable bytes when n < 16. */
#define MPKPY_BYTES_COPY_PAD 16

MPK__INLINE PyObject *mpkpy_bytes_copy(const void *data, Py_ssize_t n)
{
#ifdef MPKPY_BYTES_BY_HAND
    /* pymalloc serves in 16-byte classes: a header of 32 bytes plus 16 is the class of every
     * result under 16 bytes anyway, so the fixed copy costs no memory */
    size_t body = n < MPKPY_BYTES_COPY_PAD ? MPKPY_BYTES_COPY_PAD : (size_t)n + 1;
    PyBytesObject *b = (PyBytesObject *)PyObject_Malloc(offsetof(PyBytesObject, ob_sval) + body);
    if (UNLIKELY(b == NULL)) return PyErr_NoMemory();
    /* what PyObject_InitVar does for a static type; a fresh block needs no tracemalloc update */
    Py_SET_TYPE(b, &PyBytes_Type);
    Py_SET_SIZE(b, n);
    ((PyObject *)b)->ob_refcnt = 1; /* not Py_SET_REFCNT: on 3.12+ it reads the old count first */
    _Py_COMP_DIAG_PUSH
    _Py_COMP_DIAG_IGNORE_DEPR_DECLS
    b->ob_shash = -1;
    _Py_COMP_DIAG_POP
    if (n < MPKPY_BYTES_COPY_PAD)
        memcpy(b->ob_sval, data, MPKPY_BYTES_COPY_PAD);
    else
        memcpy(b->ob_sval, data, (size_t)n);
    b->ob_sval[n] = '\0';
    return (PyObject *)b;
#else
    return PyBytes_FromStringAndSize((const char *)data, n);
#endif
}

#endif
