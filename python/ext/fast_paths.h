/* fast_paths.h — every version-specific fast path of the extension, each beside its portable
 * fallback.
 *
 * A fast path relies on one CPython version's object layout or on a private call; it is compiled
 * only for the versions named in its condition and never with MPKPY_PORTABLE (setup.py sets it
 * for MPK_PORTABLE=1; `make test-python` runs the whole suite on that build, so the fallback of
 * every path is tested, not assumed). Debug builds of CPython (Py_REF_DEBUG, Py_TRACE_REFS) count
 * references and objects in ways a hand-built object would bypass: they take the fallbacks.
 *
 * The paths, by what they save (measured in the sessions that added them, on 3.11):
 *   mpkpy_bytes_copy        packb's result bytes by hand (3.11): 39.4 -> 35.7 ns on a 3-byte result
 *   mpkpy_ascii_str         decoded ASCII strs by hand (3.11): Product unpack 1.07x, str array 1.22x
 *   mpkpy_int_from_magnitude decoded ints by hand (3.11): int array 10k unpack 1.13-1.21x
 * The same three on 3.12 and 3.13 (MPKPY_FAST_312: the reference count field that also marks
 * immortal objects, 3.12's str without `ready`/`wstr`, the int's lv_tag, 3.13's reference tracer),
 * measured with callgrind (python/bench/callgrind.py, instructions per call, API fallback -> hand
 * built): 3.12 int array unpack 1.73M -> 1.37M, Product unpack 5528 -> 5053, tweet unpack 35.7k ->
 * 33.7k, [1, 2] pack 542 -> 490; 3.13 int array unpack 1.78M -> 1.53M, Product unpack 5596 -> 5244,
 * tweet unpack 36.3k -> 34.9k, [1, 2] pack 515 -> 473.
 *   MPKPY_DICT_ENTRIES      the dict entry walk instead of PyDict_Next (3.11): a quarter of dict packing
 *   mpkpy_small_long        ints of up to 60 bits read without a call (3.11 digits, 3.12-3.13 lv_tag,
 *                           newer PyUnstable_Long_CompactValue up to 30 bits); zero and one digit as
 *                           sign times digit, without a branch on the sign (with put_int_run in
 *                           packer.c: rb_integers pack 1.6-2.2x, see bench/README.md, session 7)
 *   mpkpy_wide_long         64-bit ints of three digits read without a call (3.11-3.13): with the
 *                           above, 3.12 int array pack 825k -> 484k instructions
 *   mpkpy_dict_set          insert with the str's cached hash (private call, up to 3.12)
 *   mpkpy_dict_set_steal    the same consuming the references; on 3.13 the private call that
 *                           takes them over (_PyDict_SetItem_Take2): 3.13 unpack, callgrind,
 *                           citm_catalog 30.65M -> 29.17M, twitter 11.35M -> 10.91M, tweet 34.2k
 *                           -> 32.7k, Product 5,210 -> 5,113 (with MPKPY_DEFER_TRACKING off there)
 *   MPKPY_DEFER_TRACKING    decoded containers tracked at the end of a decode on 3.11 only
 *   mpkpy_dict_presized     dicts presized from their counts (private call, 3.11-3.13)
 *   mpkpy_list_unfilled     lists allocated without zeroing their slots (40 of 113 instructions of [1, 2]);
 *                           a large decode's lists after its first 80 from PyObject_GC_New, untracked
 *   mpkpy_list_unfilled_tracked  a small default unpackb's lists left tracked while filled
 *   mpkpy_float             decoded floats by hand (3.11-3.13): with decoder.c's decode_float_run,
 *                           3.12 GeoJSON unpack 1.57M -> 1.36M, canada 73.4M -> 61.6M instructions
 *   MPKPY_DICT_TEMPLATES    dicts of a repeated key set copied from a template (PyDict_Copy) with
 *                           their values put in place, instead of inserted key by key
 */
#ifndef MPKPY_FAST_PATHS_H
#define MPKPY_FAST_PATHS_H

#include "mpk_py.h"

#include <stddef.h>

#ifdef MPKPY_PORTABLE
#define MPKPY_PORTABLE_BUILD 1
#else
#define MPKPY_PORTABLE_BUILD 0
#endif

#if !defined(MPKPY_PORTABLE) && !defined(Py_REF_DEBUG) && !defined(Py_TRACE_REFS) && !defined(Py_LIMITED_API)
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define MPKPY_FAST_311 1 /* the 3.11 object layouts */
#endif
#define MPKPY_FAST_ANY 1 /* paths on the public-but-unstable or private API of every version */
/* the 3.12 and 3.13 object layouts, with the GIL (a free-threaded build's header is another) */
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#define MPKPY_FAST_312 1
#endif
#endif

#if defined(MPKPY_FAST_311) || defined(MPKPY_FAST_312)
#define MPKPY_HAND_BUILT 1 /* bytes, ASCII strs and ints are built by hand (below) */
#endif

#ifdef MPKPY_HAND_BUILT
/* ---- a new object of a static type, by hand ---------------------------------------------------
 * What PyObject_Init does for a type that is not a heap type, in a release build: the type, and a
 * reference count of 1. On 3.12 and 3.13 the count field also holds the immortal marker
 * (_Py_IMMORTAL_REFCNT); a new object is never immortal, so 1 is right there too (it is what
 * CPython's own new_reference stores, skipping Py_SET_REFCNT's immortality check). */
MPK__INLINE void mpkpy_init_static(PyObject *o, PyTypeObject *type)
{
    Py_SET_TYPE(o, type);
    o->ob_refcnt = 1;
}

/* After the object is complete: 3.13 reports every new object to the reference tracer when one is
 * installed (PyRefTracer_SetTracer, used by memory profilers); a hand-built object is reported the
 * same way, with the same event, so a tracer sees its creation as it will see its destruction. */
MPK__INLINE PyObject *mpkpy_report_new(PyObject *o)
{
#if PY_VERSION_HEX >= 0x030D0000
    void *data = NULL;
    PyRefTracer tracer = PyRefTracer_GetTracer(&data);
    if (UNLIKELY(tracer != NULL)) tracer(o, PyRefTracer_CREATE, data);
#endif
    return o;
}
#endif

/* ---- packb's result: a new bytes object holding a copy of a buffer -----------------------------
 * PyBytes_FromStringAndSize reaches the allocator through two more calls and copies with a libc
 * call; on 3.11 the object is built here: one PyObject_Malloc (the same allocator, so tracemalloc
 * and the allocator hooks see it), the header fields, and for a short result a fixed 16-byte copy.
 * 3.12 changed the reference count field (immortal objects) and 3.13 reports new objects to
 * reference tracers: both handled by mpkpy_init_static and mpkpy_report_new (the same code serves
 * 3.11-3.13, whose bytes objects have the same fields). Short results are copied as 16 bytes: `data` must have
 * 16 readable bytes when n < 16. */
#define MPKPY_BYTES_COPY_PAD 16

MPK__INLINE PyObject *mpkpy_bytes_copy(const void *data, Py_ssize_t n)
{
#ifdef MPKPY_HAND_BUILT
    /* pymalloc serves in 16-byte classes: a header of 32 bytes plus 16 is the class of every
     * result under 16 bytes anyway, so the fixed copy costs no memory */
    size_t body = n < MPKPY_BYTES_COPY_PAD ? MPKPY_BYTES_COPY_PAD : (size_t)n + 1;
    PyBytesObject *b = (PyBytesObject *)PyObject_Malloc(offsetof(PyBytesObject, ob_sval) + body);
    if (UNLIKELY(b == NULL)) return PyErr_NoMemory();
    /* what PyObject_InitVar does for a static type; a fresh block needs no tracemalloc update */
    mpkpy_init_static((PyObject *)b, &PyBytes_Type);
    Py_SET_SIZE(b, n);
    _Py_COMP_DIAG_PUSH
    _Py_COMP_DIAG_IGNORE_DEPR_DECLS
    b->ob_shash = -1;
    _Py_COMP_DIAG_POP
    if (n < MPKPY_BYTES_COPY_PAD)
        memcpy(b->ob_sval, data, MPKPY_BYTES_COPY_PAD);
    else
        memcpy(b->ob_sval, data, (size_t)n);
    b->ob_sval[n] = '\0';
    return mpkpy_report_new((PyObject *)b);
#else
    return PyBytes_FromStringAndSize((const char *)data, n);
#endif
}

/* ---- a short body (n <= 256) copied without `rep movsq` ---------------------------------------
 * GCC expands a memcpy whose length it knows to be at most 256 into `rep movsq`, slow to start: in
 * mpkpy_ascii_str it took 63% of make_str's time (perf, str array 10k unpack, 3.13), and the str
 * array unpacked at 830 us (3.12) / 893 us (3.13) per call against msgspec's 690 / 706 us with half
 * of msgspec's instructions (task-clock over 1000 calls). Here whole 16-byte moves, then the last
 * 16 bytes overlapping the ones before (or 8-, 4-byte and single moves below 16): never a byte read
 * past src + n nor written past dst + n. The portable build keeps the plain memcpy. */
MPK__INLINE void mpkpy_copy_short(char *dst, const uint8_t *src, size_t n)
{
#ifndef MPKPY_PORTABLE
    mpk__copy_short(dst, src, n); /* c/include/mpk/common.h */
#else
    memcpy(dst, src, n);
#endif
}

/* ---- a decoded ASCII str ------------------------------------------------------------------------
 * On 3.11 a non-empty one is built here: one PyObject_Malloc and the fields PyUnicode_New would set
 * (a compact ASCII str), without its call, its checks of size and maximum character, and the
 * library call for the copy of a short body. Elsewhere (and for the empty str, a singleton)
 * PyUnicode_New. */
MPK__INLINE PyObject *mpkpy_ascii_str(const uint8_t *s, Py_ssize_t n)
{
#ifdef MPKPY_HAND_BUILT
    if (UNLIKELY(n == 0)) return PyUnicode_New(0, 127);
    PyASCIIObject *u = (PyASCIIObject *)PyObject_Malloc(sizeof(PyASCIIObject) + (size_t)n + 1);
    if (UNLIKELY(u == NULL)) return PyErr_NoMemory();
    mpkpy_init_static((PyObject *)u, &PyUnicode_Type);
    u->length = n;
    u->hash = -1;
    /* not interned, not statically allocated (3.12+), compact ASCII */
    memset(&u->state, 0, sizeof u->state);
    u->state.kind = PyUnicode_1BYTE_KIND;
    u->state.compact = 1;
    u->state.ascii = 1;
#ifdef MPKPY_FAST_311
    u->state.ready = 1; /* 3.11 only: 3.12 dropped `ready` and `wstr` */
    _Py_COMP_DIAG_PUSH
    _Py_COMP_DIAG_IGNORE_DEPR_DECLS
    u->wstr = NULL;
    _Py_COMP_DIAG_POP
#endif
    char *data = (char *)(u + 1);
    if (n <= 256)
        mpkpy_copy_short(data, s, (size_t)n);
    else
        memcpy(data, s, (size_t)n);
    data[n] = '\0';
    return mpkpy_report_new((PyObject *)u);
#else
    PyObject *u = PyUnicode_New(n, 127);
    if (u) memcpy(PyUnicode_1BYTE_DATA(u), s, (size_t)n);
    return u;
#endif
}

/* ---- a decoded int of up to 64 bits, from its sign and magnitude (mag > 0) ---------------------
 * On 3.11 (a signed count of 30-bit digits after the header) one PyObject_Malloc and its digits,
 * where PyLong_From* take two more calls and a loop over the digits. */
MPK__INLINE PyObject *mpkpy_int_from_magnitude(int negative, uint64_t mag)
{
#if defined(MPKPY_FAST_311) && PyLong_SHIFT == 30
    Py_ssize_t ndigits = (mag >> 60) ? 3 : (mag >> 30) ? 2 : 1;
    PyLongObject *o = (PyLongObject *)PyObject_Malloc(offsetof(PyLongObject, ob_digit) +
                                                      (size_t)ndigits * sizeof(digit));
    if (UNLIKELY(o == NULL)) return PyErr_NoMemory();
    mpkpy_init_static((PyObject *)o, &PyLong_Type);
    Py_SET_SIZE(o, negative ? -ndigits : ndigits);
    o->ob_digit[0] = (digit)(mag & PyLong_MASK);
    if (ndigits > 1) o->ob_digit[1] = (digit)((mag >> PyLong_SHIFT) & PyLong_MASK);
    if (ndigits > 2) o->ob_digit[2] = (digit)(mag >> (2 * PyLong_SHIFT));
    return (PyObject *)o;
#elif defined(MPKPY_FAST_312) && PyLong_SHIFT == 30
    /* 3.12 and 3.13: the digit count and sign live in long_value.lv_tag, as CPython's internal
     * pycore_long.h lays it out (an extension cannot include it): count << 3 | sign, sign 0 for
     * positive and 2 for negative (1 is zero, which never comes here: mag > 0) */
    Py_ssize_t ndigits = (mag >> 60) ? 3 : (mag >> 30) ? 2 : 1;
    PyLongObject *o = (PyLongObject *)PyObject_Malloc(offsetof(PyLongObject, long_value.ob_digit) +
                                                      (size_t)ndigits * sizeof(digit));
    if (UNLIKELY(o == NULL)) return PyErr_NoMemory();
    mpkpy_init_static((PyObject *)o, &PyLong_Type);
    o->long_value.lv_tag = ((uintptr_t)ndigits << 3) | (negative ? 2u : 0u);
    o->long_value.ob_digit[0] = (digit)(mag & PyLong_MASK);
    if (ndigits > 1) o->long_value.ob_digit[1] = (digit)((mag >> PyLong_SHIFT) & PyLong_MASK);
    if (ndigits > 2) o->long_value.ob_digit[2] = (digit)(mag >> (2 * PyLong_SHIFT));
    return mpkpy_report_new((PyObject *)o);
#else
    if (!negative) return PyLong_FromUnsignedLongLong(mag);
    if (mag <= (uint64_t)1 << 63) return PyLong_FromLongLong((long long)(0 - mag));
    PyObject *m = PyLong_FromUnsignedLongLong(mag), *r = m ? PyNumber_Negative(m) : NULL;
    Py_XDECREF(m);
    return r;
#endif
}

/* ---- an int's value without a call --------------------------------------------------------------
 * Ints of at most two 30-bit digits (60 bits): 1 and *v, else 0 (the caller takes the API). */
MPK__INLINE int mpkpy_small_long(PyObject *o, long long *v)
{
#if defined(MPKPY_FAST_312) && PyLong_SHIFT == 30
    /* 3.12/3.13: up to two digits from lv_tag (count << 3 | sign: 0 positive, 1 zero, 2
     * negative). PyUnstable_Long_IsCompact (below, for newer versions) stops at one digit (30
     * bits), so 31..60-bit ints took PyLong_AsLongLongAndOverflow: int array pack, see
     * bench/README.md */
    uintptr_t tag = ((PyLongObject *)o)->long_value.lv_tag;
    const digit *d = ((PyLongObject *)o)->long_value.ob_digit;
    if (tag < (2u << 3)) {
        /* zero or one digit: 1 - sign (1, 0, -1) times the digit, CPython's own
         * _PyLong_CompactValue (zero has a digit too), so the sign costs no branch */
        *v = (1 - (long long)(tag & 3)) * (long long)d[0];
        return 1;
    }
    if ((tag >> 3) != 2) return 0;
    long long m = (long long)d[0] | ((long long)d[1] << PyLong_SHIFT);
    *v = (tag & 3) == 2 ? -m : m;
    return 1;
#elif defined(MPKPY_FAST_ANY) && PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)o)) {
        *v = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
        return 1;
    }
    return 0;
#elif defined(MPKPY_FAST_311) && PyLong_SHIFT == 30
    /* the signed digit count times the digit for zero and one digit (3.11's own medium_value: an
     * int always has one digit, zero's being 0), so the sign costs no branch (a switch on the
     * count was mispredicted in lists of ints of random signs) */
    Py_ssize_t size = Py_SIZE(o);
    const digit *d = ((PyLongObject *)o)->ob_digit;
    if ((size_t)(size + 1) <= 2) {
        *v = (long long)size * (long long)d[0];
        return 1;
    }
    if (size != 2 && size != -2) return 0;
    long long m = (long long)d[0] | ((long long)d[1] << PyLong_SHIFT);
    *v = size < 0 ? -m : m;
    return 1;
#else
    (void)o;
    (void)v;
    return 0;
#endif
}

/* Three-digit ints (61..90 bits in the object, so up to 2^64-1 when they fit): 1 with *u and
 * *negative set when the magnitude fits 64 bits, else 0 (the caller takes the API). */
MPK__INLINE int mpkpy_wide_long(PyObject *o, uint64_t *u, int *negative)
{
#if defined(MPKPY_FAST_311) && PyLong_SHIFT == 30
    Py_ssize_t size = Py_SIZE(o);
    if (size != 3 && size != -3) return 0;
    const digit *d = ((PyLongObject *)o)->ob_digit;
    if (d[2] >= 16) return 0; /* 2^64 or more */
    *u = (uint64_t)d[0] | ((uint64_t)d[1] << 30) | ((uint64_t)d[2] << 60);
    *negative = size < 0;
    return 1;
#elif defined(MPKPY_FAST_312) && PyLong_SHIFT == 30
    /* 3.12/3.13: the digit count and sign from lv_tag (count << 3 | sign, 2 = negative; see
     * mpkpy_int_from_magnitude). int array pack, 3.12: see bench/README.md */
    uintptr_t tag = ((PyLongObject *)o)->long_value.lv_tag;
    if ((tag >> 3) != 3) return 0;
    const digit *d = ((PyLongObject *)o)->long_value.ob_digit;
    if (d[2] >= 16) return 0; /* 2^64 or more */
    *u = (uint64_t)d[0] | ((uint64_t)d[1] << 30) | ((uint64_t)d[2] << 60);
    *negative = (tag & 3) == 2;
    return 1;
#else
    (void)o;
    (void)u;
    (void)negative;
    return 0;
#endif
}

/* ---- dicts ---------------------------------------------------------------------------------------
 * Insert with the hash a str key already holds (every key from the decoder's key cache has one):
 * the private call that takes it is exported up to 3.12. */
MPK__INLINE int mpkpy_dict_set(PyObject *dict, PyObject *k, PyObject *v)
{
#if defined(MPKPY_FAST_ANY) && PY_VERSION_HEX < 0x030D0000
    if (PyUnicode_CheckExact(k)) {
        Py_hash_t hash = ((PyASCIIObject *)k)->hash;
        if (hash != -1) return _PyDict_SetItem_KnownHash(dict, k, v, hash);
    }
#endif
    return PyDict_SetItem(dict, k, v);
}

/* The same, consuming the references to k and v (on failure too): on 3.13 the private call that
 * takes them over (exported, declared in CPython's internal headers, which an extension cannot
 * include) skips PyDict_SetItem's checks, its reference count changes and ours after it (the only
 * 3.13 insert that uses the str's cached hash without hashing it again through a call). Measured
 * with callgrind (python/bench/callgrind.py, instructions per unpackb, 3.13): see the list at the
 * top. Elsewhere mpkpy_dict_set and two Py_DECREFs. */
#if defined(MPKPY_FAST_312) && PY_VERSION_HEX >= 0x030D0000
#define MPKPY_TAKE2 1
PyAPI_FUNC(int) _PyDict_SetItem_Take2(PyDictObject *op, PyObject *key, PyObject *value);
#endif

MPK__INLINE int mpkpy_dict_set_steal(PyObject *dict, PyObject *k, PyObject *v)
{
#ifdef MPKPY_TAKE2
    return _PyDict_SetItem_Take2((PyDictObject *)dict, k, v);
#else
    int rc = mpkpy_dict_set(dict, k, v);
    Py_DECREF(k);
    Py_DECREF(v);
    return rc;
#endif
}

/* ---- when decoded containers are handed to the cyclic GC ---------------------------------------
 * 1: a large decode keeps its completed containers on a list and tracks them all at the end
 * (decoder.c, fill_end/finish_tracking); 0: each is tracked as soon as it is complete. On 3.11 a
 * young collection runs inside the allocation that crosses the threshold, so containers tracked
 * as they complete were walked again and again during the decode: deferring wins there (callgrind,
 * 3.11: twitter 11.0M -> 10.1M, citm_catalog 34.6M -> 25.0M instructions per unpackb). From 3.12 a
 * collection waits for the interpreter's next check, after unpackb returns, whichever way: the list
 * and the second pass over every container are then work for nothing (callgrind, 3.12, 20 calls:
 * citm_catalog 30.47M -> 29.33M, twitter 10.92M -> 10.83M). Either way a container is untracked
 * while it is filled. Not a layout trick: both settings are plain API, each run by the suites of
 * the versions that use it (the portable build runs on the default version, 3.11). */
#if PY_VERSION_HEX < 0x030C0000
#define MPKPY_DEFER_TRACKING 1
#else
#define MPKPY_DEFER_TRACKING 0
#endif

/* A dict with room for n items (n already charged against the input by the caller). */
MPK__INLINE PyObject *mpkpy_dict_presized(Py_ssize_t n)
{
#ifdef MPKPY_FAST_ANY
    return _PyDict_NewPresized(n);
#else
    (void)n;
    return PyDict_New();
#endif
}

/* The entry walk: PyDict_Next costs a call and several checks per item, about a quarter of
 * packing a dict-heavy document. On 3.11 the combined-table layout below (from CPython's internal
 * dict headers, which an extension cannot include without Py_BUILD_CORE; the field names here are
 * ours, only the sizes and order must match) lets the encoder read the entries in order. When
 * MPKPY_DICT_ENTRIES is not defined, the encoder uses PyDict_Next; so does it for split tables
 * (instance dicts). The caller must re-check the dict after running Python code.
 * 3.12 and 3.13 (with the GIL) keep the same dict and keys layouts (3.13's free-threaded build adds
 * a lock to the keys, and is excluded by MPKPY_FAST_312); measured there with callgrind, see
 * bench/README.md. */
#if defined(MPKPY_FAST_311) || defined(MPKPY_FAST_312)
#define MPKPY_DICT_ENTRIES 1

typedef struct {
    Py_hash_t hash;
    PyObject *key;
    PyObject *value;
} mpkpy_general_entry;

typedef struct {
    PyObject *key;
    PyObject *value;
} mpkpy_unicode_entry;

/* Entry i of a combined table's entries (general: with hashes, else unicode keys only): its key
 * and value (NULL for a deleted entry). */
MPK__INLINE void mpkpy_dict_entry(const void *entries, int general, Py_ssize_t i, PyObject **k, PyObject **v)
{
    if (general) {
        *k = ((const mpkpy_general_entry *)entries)[i].key;
        *v = ((const mpkpy_general_entry *)entries)[i].value;
    } else {
        *k = ((const mpkpy_unicode_entry *)entries)[i].key;
        *v = ((const mpkpy_unicode_entry *)entries)[i].value;
    }
}

typedef struct {
    Py_ssize_t refcount;
    uint8_t log2_slots;
    uint8_t log2_index_bytes;
    uint8_t kind; /* 0 general, 1 unicode, 2 split */
    uint32_t version;
    Py_ssize_t usable;
    Py_ssize_t entry_count;
    char index_table[];
} mpkpy_dict_keys;

/* The entry array of a combined-table dict, or NULL (split table: use PyDict_Next). *general tells
 * which entry type it holds; *count is the number of slots (deleted ones have a NULL value). */
MPK__INLINE const void *mpkpy_dict_entries(PyObject *dict, int *general, Py_ssize_t *count)
{
    PyDictObject *mp = (PyDictObject *)dict;
    if (mp->ma_values != NULL) return NULL;
    const mpkpy_dict_keys *k = (const mpkpy_dict_keys *)mp->ma_keys;
    if (k->kind == 2) return NULL;
    *general = k->kind == 0;
    *count = k->entry_count;
    return &k->index_table[(size_t)1 << k->log2_index_bytes];
}

/* ---- a dict of a repeated key set, cloned from a template ---------------------------------------
 * Documents repeat their maps' key sets: twitter's 20 statuses (and their users, entities,
 * metadata) or citm_catalog's events and performances all have the same keys in the same order.
 * Building such a dict by inserts pays CPython's insert for every key (the probe of the index, the
 * entry, the size checks; about half of a 3.12 citm_catalog decode's dict work). A template is a
 * private dict that holds the key set (values None); PyDict_Copy of a combined-table dict clones
 * its keys table with one allocation and one memcpy (CPython's own clone: the order, the hashes and
 * the index come with it), and the values are then put in place in the clone's entries. The clone
 * has its own table (the user may mutate it freely); a template is used only when the decoded keys
 * are, one by one and in order, the very objects the template holds (so the same strs, no
 * duplicates: a template is made only from a map whose n keys gave a dict of n entries).
 * Measured with callgrind: see bench/README.md ("Dicts from templates"). The layout is the entry
 * walk's (MPKPY_DICT_ENTRIES): without it decoder.c builds every dict by inserts. */
#define MPKPY_DICT_TEMPLATES 1

/* 1 when the template's entries hold exactly the keys kv[0], kv[2], ..., kv[2n-2], in order. The
 * template is a combined table of str keys with n entries (checked by the decoder when it made it). */
MPK__INLINE int mpkpy_template_matches(PyObject *tmpl, PyObject *const *kv, Py_ssize_t n)
{
    int general;
    Py_ssize_t count;
    const mpkpy_unicode_entry *e = (const mpkpy_unicode_entry *)mpkpy_dict_entries(tmpl, &general, &count);
    for (Py_ssize_t i = 0; i < n; i++)
        if (e[i].key != kv[2 * i]) return 0;
    return 1;
}

/* A copy of the template with the values kv[1], kv[3], ..., kv[2n-1], taking over the references
 * of kv (keys and values) on success. NULL with an exception when out of memory, NULL without one
 * when the copy is not the expected layout (the caller then inserts); kv is still the caller's
 * then. The template must match kv (mpkpy_template_matches). */
MPK__INLINE PyObject *mpkpy_dict_from_template(PyObject *tmpl, PyObject *const *kv, Py_ssize_t n)
{
    Py_INCREF(tmpl); /* the copy may allocate, and on 3.11 an allocation may run a collection */
    PyObject *dict = PyDict_Copy(tmpl);
    Py_DECREF(tmpl);
    if (UNLIKELY(dict == NULL)) return NULL;
    int general;
    Py_ssize_t count;
    mpkpy_unicode_entry *e = (mpkpy_unicode_entry *)mpkpy_dict_entries(dict, &general, &count);
    if (UNLIKELY(e == NULL || general || count != n || PyDict_GET_SIZE(dict) != n)) {
        Py_DECREF(dict);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *old = e[i].value; /* the template's None */
        e[i].value = kv[2 * i + 1];
        Py_DECREF(old);
        Py_DECREF(kv[2 * i]); /* the copy holds the same key */
    }
    return dict;
}
#endif

#if defined(MPKPY_FAST_ANY)
/* Gives an empty list (size 0) room for n items from PyMem_Malloc, unzeroed; on failure the list is
 * released and MemoryError set. */
MPK__INLINE PyObject *mpkpy_list_give_room(PyObject *list, Py_ssize_t n)
{
    PyObject **items = (size_t)n <= PY_SSIZE_T_MAX / sizeof(PyObject *)
                           ? (PyObject **)PyMem_Malloc((size_t)n * sizeof(PyObject *)) : NULL;
    if (!items) {
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    ((PyListObject *)list)->ob_item = items;
    ((PyListObject *)list)->allocated = n;
    return list;
}
#endif

/* ---- lists ---------------------------------------------------------------------------------------
 * An empty, untracked list with room for n items, to be filled in order (items[i] = ...), then
 * given its size (Py_SET_SIZE) and handed to the collector (PyObject_GC_Track, decoder.c fill_end).
 * PyList_New(n) zeroes its slots through calloc, a call and a pass over memory that the items
 * overwrite anyway (on [1, 2]: about 40 of its 113 instructions); here PyList_New(0) and the slots
 * from PyMem_Malloc. While it is being filled the list says it is empty, so a deallocation on an
 * error releases only the items set so far (the caller sets the size first).
 * `fresh` (the decoder passes it for the lists of an input over 256 bytes after its first
 * MPKPY_LIST_FREELIST): with the list layout of 3.11-3.13 (with the GIL) the object comes from
 * PyObject_GC_New, which returns it untracked, instead of PyList_New: CPython's list freelist
 * holds 80 lists (PyList_MAXFREELIST), so a decode of more finds it empty, and PyList_New then
 * pays the freelist's lookup (on 3.12/3.13 the interpreter's or thread's state, read through
 * __tls_get_addr in a shared libpython), its tracking and our untracking right after, for
 * nothing. The first lists (and a small message's) keep PyList_New: from the freelist and back
 * to it is cheaper than an allocation and a free (callgrind, 3.12: [1, 2] unpack 787
 * instructions with PyList_New, 930 with PyObject_GC_New; 100 Products 383k with PyList_New
 * only, 396k with PyObject_GC_New for every list). Measured on documents: see bench/README.md
 * ("Session 9"). The fallback is PyList_New(n) (zeroed slots), given the size 0 and untracked. */
#define MPKPY_LIST_FREELIST 80
MPK__INLINE PyObject *mpkpy_list_unfilled(Py_ssize_t n, int fresh)
{
#if defined(MPKPY_FAST_ANY)
    PyObject *list;
#if defined(MPKPY_HAND_BUILT) && !defined(Py_GIL_DISABLED)
    if (fresh) {
        list = (PyObject *)PyObject_GC_New(PyListObject, &PyList_Type);
        if (!list) return NULL;
        ((PyListObject *)list)->ob_item = NULL; /* a valid empty list before anything can fail */
        ((PyListObject *)list)->allocated = 0;
        Py_SET_SIZE(list, 0);
    } else
#endif
    {
        (void)fresh;
        list = PyList_New(0);
        if (!list) return NULL;
        PyObject_GC_UnTrack(list);
    }
    if (n == 0) return list;
    return mpkpy_list_give_room(list, n);
#else
    (void)fresh;
    PyObject *list = PyList_New(n);
    if (list) {
        Py_SET_SIZE(list, 0); /* empty until filled, as above */
        PyObject_GC_UnTrack(list);
    }
    return list;
#endif
}

/* The same list left tracked, for unpackb's small messages under its default options (no hook,
 * so no Python code of the user's runs while the list is filled): PyList_New tracks the list, and
 * untracking it for the fill and tracking it again after cost two calls (on 3.12/3.13 each reads
 * the interpreter's state through __tls_get_addr): callgrind, 3.12, [1, 2] unpack 794 -> 748
 * instructions. A collection that runs meanwhile (another thread, or the ExtType or Timestamp
 * class's Python code) finds the list empty: its items are set beyond its size, which only makes
 * them look referenced from outside, never collectable. Not a layout trick: plain API on every
 * version, the portable build included. */
MPK__INLINE PyObject *mpkpy_list_unfilled_tracked(Py_ssize_t n)
{
#ifndef MPKPY_FAST_ANY
    PyObject *list = PyList_New(n);
    if (list) Py_SET_SIZE(list, 0); /* empty until filled */
    return list;
#else
    PyObject *list = PyList_New(0);
    if (!list || n == 0) return list;
    return mpkpy_list_give_room(list, n);
#endif
}

/* ---- a decoded float ----------------------------------------------------------------------------
 * PyFloat_FromDouble pops CPython's float freelist, whose state on 3.12/3.13 is the interpreter's
 * or the thread's, read through __tls_get_addr in a shared libpython (the pyenv builds), and then
 * calls _Py_NewReference; on 3.11-3.13 (MPKPY_HAND_BUILT) the float is built here: one
 * PyObject_Malloc (the allocator float objects come from when the freelist is empty, so
 * tracemalloc and the allocator hooks see it; float_dealloc takes it back either way), the type,
 * a count of 1, the value. Measured with callgrind (3.12, instructions per unpackb): see
 * bench/README.md ("Session 9"). Elsewhere PyFloat_FromDouble. */
MPK__INLINE PyObject *mpkpy_float(double v)
{
#ifdef MPKPY_HAND_BUILT
    PyFloatObject *f = (PyFloatObject *)PyObject_Malloc(sizeof(PyFloatObject));
    if (UNLIKELY(f == NULL)) return PyErr_NoMemory();
    mpkpy_init_static((PyObject *)f, &PyFloat_Type);
    f->ob_fval = v;
    return mpkpy_report_new((PyObject *)f);
#else
    return PyFloat_FromDouble(v);
#endif
}

#endif
