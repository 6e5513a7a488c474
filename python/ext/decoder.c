/* decoder.c — MessagePack bytes to Python objects.
 *
 * The hot path switches on the head byte, testing the fix* ranges first because they are most of
 * the bytes of typical documents, and builds each object directly: PyUnicode_New + memcpy for ASCII
 * strings, lists and dicts sized from their counts (a count is only trusted after it has been
 * checked against the bytes left, so a hostile count cannot make a large allocation), and a key
 * cache of interned strings for short map keys. */
#include "decoder.h"
#include "stack_guard.h"
#include "fast_paths.h"
#include "strbuild.h"

#include <datetime.h>

/* The core's decoders' helpers (c/src/internal.h, not installed): the timestamp check is the
 * core's, so that every decoder of the project accepts and refuses the same payloads. Found
 * through the core's include directory (../c/include in the repository, core/include in the
 * sdist), whose sibling src/ holds it in both layouts. */
#include "../src/internal.h"

#define OFF(d, ptr) ((Py_ssize_t)((ptr) - (d)->start) + (d)->base)
#define LEFT(d) ((Py_ssize_t)((d)->end - (d)->p))

/* ================================================================================================
 * Options
 * ==============================================================================================*/

void mpkpy_unpack_options_default(mpkpy_unpack_options *o)
{
    memset(o, 0, sizeof *o);
    o->use_list = 1;
    o->strict_map_key = 1;
    o->max_str = o->max_bin = o->max_array = o->max_map = o->max_ext = MPK_DEFAULT_LENGTH;
    o->max_depth = MPK_DEFAULT_DEPTH;
}

void mpkpy_unpack_options_clear(mpkpy_unpack_options *o)
{
    Py_CLEAR(o->unicode_errors);
    Py_CLEAR(o->object_hook);
    Py_CLEAR(o->object_pairs_hook);
    Py_CLEAR(o->list_hook);
    Py_CLEAR(o->ext_hook);
    Py_CLEAR(o->float32_type);
}

int mpkpy_unpack_options_check(mpkpy_unpack_options *o)
{
    if (o->object_hook && !PyCallable_Check(o->object_hook)) {
        PyErr_SetString(PyExc_TypeError, "object_hook must be a callable.");
        return -1;
    }
    if (o->object_pairs_hook && !PyCallable_Check(o->object_pairs_hook)) {
        PyErr_SetString(PyExc_TypeError, "object_pairs_hook must be a callable.");
        return -1;
    }
    if (o->object_hook && o->object_pairs_hook) {
        PyErr_SetString(PyExc_TypeError, "object_pairs_hook and object_hook are mutually exclusive.");
        return -1;
    }
    if (o->list_hook && !PyCallable_Check(o->list_hook)) {
        PyErr_SetString(PyExc_TypeError, "list_hook must be a callable.");
        return -1;
    }
    if (o->ext_hook && !PyCallable_Check(o->ext_hook)) {
        PyErr_SetString(PyExc_TypeError, "ext_hook must be a callable.");
        return -1;
    }
    if (o->timestamp < 0 || o->timestamp > 3) {
        PyErr_SetString(PyExc_ValueError, "timestamp must be 0..3");
        return -1;
    }
    if (o->unicode_errors && !PyUnicode_Check(o->unicode_errors)) {
        PyErr_SetString(PyExc_TypeError, "unicode_errors must be a str or None");
        return -1;
    }
    if (o->max_depth < 0) {
        PyErr_SetString(PyExc_ValueError, "max_depth must be non-negative");
        return -1;
    }
    return 0;
}

/* ================================================================================================
 * Errors (out of line: never on the hot path)
 * ==============================================================================================*/

static MPK__NOINLINE PyObject *truncated(mpkpy_decoder *d, const uint8_t *at, Py_ssize_t need_end)
{
    d->need = need_end;
    return mpkpy_raise(MPK_ERR_TRUNCATED, OFF(d, at), "Unpack failed: incomplete input");
}

static MPK__NOINLINE PyObject *over_limit(mpkpy_decoder *d, const uint8_t *at, Py_ssize_t n,
                                          const char *name, Py_ssize_t limit)
{
    char what[128];
    PyOS_snprintf(what, sizeof what, "%zd exceeds %s(%zd)", n, name, limit);
    return mpkpy_raise(MPK_ERR_LENGTH_LIMIT, OFF(d, at), what);
}

static MPK__NOINLINE PyObject *too_deep(mpkpy_decoder *d, const uint8_t *at)
{
    char what[96];
    PyOS_snprintf(what, sizeof what, "nested deeper than max_depth(%zd)", d->o->max_depth);
    return mpkpy_raise(MPK_ERR_DEPTH_LIMIT, OFF(d, at), what);
}

/* A container level the thread's C stack has no room for (stack_guard.h): the same kind as max_depth,
 * since it is the same limit seen from the machine's side. */
static MPK__NOINLINE PyObject *stack_too_deep(mpkpy_decoder *d, const uint8_t *at)
{
    return mpkpy_raise(MPK_ERR_DEPTH_LIMIT, OFF(d, at), "nested deeper than the C stack allows");
}

static MPK__NOINLINE PyObject *bad_byte(mpkpy_decoder *d, const uint8_t *at)
{
    return mpkpy_raise(MPK_ERR_INVALID_BYTE, OFF(d, at), "invalid head byte 0xc1");
}

/* ================================================================================================
 * Token heads. `head` decodes the length/count fields of the byte at d->p into a token, checking
 * the field is present (truncated), the limit (length_limit) and, for containers, the depth
 * (depth_limit), and then the declared size against the bytes left (truncated) — the spec's order.
 * ==============================================================================================*/

enum { T_STR, T_BIN, T_EXT, T_ARRAY, T_MAP };

/* Checks a declared length; on success sets d->p past the fields. 0 or -1. */
static inline int check_len(mpkpy_decoder *d, const uint8_t *h, Py_ssize_t fields, Py_ssize_t n,
                            int kind, Py_ssize_t depth)
{
    const mpkpy_unpack_options *o = d->o;
    Py_ssize_t limit;
    const char *name;
    switch (kind) {
    case T_STR: limit = o->max_str; name = "max_str_len"; break;
    case T_BIN: limit = o->max_bin; name = "max_bin_len"; break;
    case T_EXT: limit = o->max_ext; name = "max_ext_len"; break;
    case T_ARRAY: limit = o->max_array; name = "max_array_len"; break;
    default: limit = o->max_map; name = "max_map_len"; break;
    }
    if (UNLIKELY(n > limit)) {
        over_limit(d, h, n, name, limit);
        return -1;
    }
    if (kind >= T_ARRAY) {
        if (UNLIKELY(depth + 1 > o->max_depth)) {
            too_deep(d, h);
            return -1;
        }
        /* every level, whatever max_depth says: the decoder recurses once per level */
        if (UNLIKELY(mpkpy_stack_exhausted(depth))) {
            stack_too_deep(d, h);
            return -1;
        }
    }
    /* every value takes at least one byte: n elements need n bytes, n pairs 2n */
    Py_ssize_t size = kind == T_MAP ? 2 * n : n;
    Py_ssize_t left = (Py_ssize_t)(d->end - h) - fields;
    if (UNLIKELY(size > left)) {
        truncated(d, h, (Py_ssize_t)(h - d->start) + fields + size);
        return -1;
    }
    d->p = h + fields;
    return 0;
}

/* ================================================================================================
 * Strings and the key cache
 * ==============================================================================================*/

/* Whole words where there are: the tail is the last 8 (or 4) bytes read again, overlapping, rather
 * than a byte loop, since most strings of documents are shorter than 8 bytes or end unaligned. */
static inline int is_ascii(const uint8_t *s, Py_ssize_t n)
{
    uint64_t acc = 0, w;
    if (n >= 8) {
        for (Py_ssize_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&w, s + i, 8);
            acc |= w;
        }
        memcpy(&w, s + n - 8, 8);
        acc |= w;
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        acc = x | y;
    } else if (n > 0) {
        acc = s[0] | s[n / 2] | s[n - 1];
    }
    return (acc & 0x8080808080808080ull) == 0;
}

static PyObject *make_str(mpkpy_decoder *d, const uint8_t *h, const uint8_t *s, Py_ssize_t n)
{
    if (d->o->raw) return PyBytes_FromStringAndSize((const char *)s, n);
    /* Short ASCII (most strs of documents): our scan and a hand-built str. Anything else:
     * mpkpy_str_from_utf8 (strbuild.h: a census of code points and kind, then the str of that kind
     * filled directly), where CPython's decoder widens as it goes; invalid bytes (NULL without an
     * exception) go to CPython's decoder, whose error or error handler is the reference. */
    if (n <= 256 && LIKELY(is_ascii(s, n))) return mpkpy_ascii_str(s, n);
    PyObject *u = mpkpy_str_from_utf8(s, n);
    if (u || PyErr_Occurred()) return u;
    u = PyUnicode_DecodeUTF8((const char *)s, n, d->errors);
    if (!u && !d->errors && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return mpkpy_raise_utf8((const char *)s, n, OFF(d, h));
    return u;
}

/* The key cache: short ASCII map keys, interned, with their hash computed once. 256 sets of 4
 * keys, each set in most-recently-used order; a miss replaces the set's oldest key. With one key
 * per slot, a few of twitter.json's 94 keys shared slots and evicted each other on every object
 * (about 1700 misses per document); four ways leave room for the keys a set draws. 1024 keys up to
 * 64 bytes, 16 KiB of slots. */
#define KEY_CACHE_SETS 256
#define KEY_CACHE_WAYS 4
#define KEY_CACHE_MAX_LEN 64
typedef struct key_slot {
    PyObject *key;
    uint32_t hash; /* key_hash of its bytes: most mismatches are rejected without reading the key */
} key_slot;
static key_slot key_cache[KEY_CACHE_SETS][KEY_CACHE_WAYS];

/* The hash reads three words (both ends and the middle) of keys of 8 bytes or more: a key that
 * differs only elsewhere just collides, which the full comparison catches. */
MPK__INLINE uint32_t key_hash(const uint8_t *s, Py_ssize_t n)
{
    uint64_t a, b, c = 0;
    if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        if (n > 16) memcpy(&c, s + n / 2 - 4, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        a = x;
        b = y;
    } else {
        a = n ? (uint64_t)s[0] | (uint64_t)s[n / 2] << 8 | (uint64_t)s[n - 1] << 16 : 0;
        b = 0;
    }
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ (c * 0x165667B19E3779F9ull) ^ (uint64_t)n;
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* Equal bytes, for n <= KEY_CACHE_MAX_LEN, a word at a time without a call to memcmp; short keys
 * by two overlapping loads (4..7 bytes) or their first, middle and last byte (1..3 bytes). */
MPK__INLINE int key_equal(const uint8_t *x, const uint8_t *y, Py_ssize_t n)
{
    if (n >= 8) {
        uint64_t a, b;
        for (Py_ssize_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&a, x + i, 8);
            memcpy(&b, y + i, 8);
            if (a != b) return 0;
        }
        memcpy(&a, x + n - 8, 8);
        memcpy(&b, y + n - 8, 8);
        return a == b;
    }
    if (n >= 4) {
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, x, 4);
        memcpy(&b0, y, 4);
        memcpy(&a1, x + n - 4, 4);
        memcpy(&b1, y + n - 4, 4);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    return n == 0 || ((x[0] ^ y[0]) | (x[n / 2] ^ y[n / 2]) | (x[n - 1] ^ y[n - 1])) == 0;
}

/* The interned str of the key bytes s[0..n), or NULL without an exception when they are not ASCII
 * (the caller decodes them the long way), or NULL with one. A hit is ASCII by construction, so the
 * bytes are only scanned on a miss. */
static PyObject *cache_new_key(key_slot *set, uint32_t hash, const uint8_t *s, Py_ssize_t n);

/* Str map keys are interned, as msgpack-python does, so that they are the same objects as the
 * program's own literals — except on CPython 3.12, whose PyUnicode_InternInPlace makes the str
 * immortal: every distinct key ever decoded (ids used as keys, say) would then stay in memory for
 * the life of the process (measured: 1M distinct keys decoded and dropped left 103 MB behind on
 * 3.12.1, as with msgpack-python; 3.11 and 3.13 intern mortal strs, which go when unused). On 3.12
 * keys are left uninterned: repeated short keys still share one object through the key cache, and
 * a lookup with a literal compares the bytes after the hash instead of the pointer. */
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
#define MPKPY_INTERN_KEYS 0
#else
#define MPKPY_INTERN_KEYS 1
#endif

MPK__INLINE void intern_key(PyObject **k)
{
#if MPKPY_INTERN_KEYS
    PyUnicode_InternInPlace(k);
#else
    (void)k;
#endif
}

MPK__INLINE PyObject *cached_key(const uint8_t *s, Py_ssize_t n)
{
    uint32_t hash = key_hash(s, n);
    key_slot *set = key_cache[hash & (KEY_CACHE_SETS - 1)];
    for (int w = 0; w < KEY_CACHE_WAYS; w++) {
        PyObject *k = set[w].key;
        if (set[w].hash == hash && k != NULL && PyUnicode_GET_LENGTH(k) == n &&
            key_equal(PyUnicode_1BYTE_DATA(k), s, n)) {
            if (w > 0) { /* to the front, so that the oldest is last */
                key_slot hit = set[w];
                memmove(set + 1, set, sizeof(key_slot) * (size_t)w);
                set[0] = hit;
            }
            Py_INCREF(k);
            return k;
        }
    }
    return cache_new_key(set, hash, s, n);
}

static MPK__NOINLINE PyObject *cache_new_key(key_slot *set, uint32_t hash, const uint8_t *s, Py_ssize_t n)
{
    if (!is_ascii(s, n)) return NULL;
    PyObject *k = PyUnicode_New(n, 127);
    if (!k) return NULL;
    memcpy(PyUnicode_1BYTE_DATA(k), s, (size_t)n);
    intern_key(&k);
    if (PyObject_Hash(k) == -1) {
        Py_DECREF(k);
        return NULL;
    }
    PyObject *oldest = set[KEY_CACHE_WAYS - 1].key;
    memmove(set + 1, set, sizeof(key_slot) * (KEY_CACHE_WAYS - 1));
    set[0].key = k;
    set[0].hash = hash;
    Py_XDECREF(oldest);
    Py_INCREF(k);
    return k;
}

/* ================================================================================================
 * Ext and timestamp
 * ==============================================================================================*/

static PyObject *timestamp_object(mpkpy_decoder *d, int64_t sec, uint32_t nsec);

/* The ExtType and Timestamp classes (or ext_hook): Python code, run as any other. */
static PyObject *call_python(mpkpy_decoder *d, PyObject *callable, PyObject *const *args, size_t n)
{
    (void)d;
    return PyObject_Vectorcall(callable, args, n, NULL);
}

/* The core's check (mpk__decode_timestamp), and the message of what failed: 1 with *ts, or 0 with
 * InvalidTimestampError (decode and skip alike). */
static int timestamp_valid(mpkpy_decoder *d, const uint8_t *h, const uint8_t *s, Py_ssize_t n,
                           mpk_timestamp *ts)
{
    if (LIKELY(mpk__decode_timestamp(s, (uint32_t)n, ts))) return 1;
    if (n != 4 && n != 8 && n != 12) {
        char what[64];
        PyOS_snprintf(what, sizeof what, "invalid timestamp data (length %zd)", n);
        mpkpy_raise(MPK_ERR_INVALID_TIMESTAMP, OFF(d, h), what);
    } else {
        mpkpy_raise(MPK_ERR_INVALID_TIMESTAMP, OFF(d, h), "timestamp nanoseconds greater than 999999999");
    }
    return 0;
}

static PyObject *make_timestamp(mpkpy_decoder *d, const uint8_t *h, const uint8_t *s, Py_ssize_t n)
{
    mpk_timestamp ts;
    if (!timestamp_valid(d, h, s, n, &ts)) return NULL;
    return timestamp_object(d, ts.sec, ts.nsec);
}

static PyObject *timestamp_object(mpkpy_decoder *d, int64_t sec, uint32_t nsec)
{
    switch (d->o->timestamp) {
    case 1:
        return PyFloat_FromDouble((double)sec + (double)nsec / 1e9);
    case 2: {
        PyObject *a = PyLong_FromLongLong(sec), *giga = NULL, *t = NULL, *ns = NULL, *r = NULL;
        if (!a) return NULL;
        if ((giga = PyLong_FromLong(1000000000L)) && (t = PyNumber_Multiply(a, giga)) &&
            (ns = PyLong_FromUnsignedLong(nsec)))
            r = PyNumber_Add(t, ns);
        Py_DECREF(a);
        Py_XDECREF(giga);
        Py_XDECREF(t);
        Py_XDECREF(ns);
        return r;
    }
    case 3: {
        /* floor division so that negative seconds keep a positive remainder */
        int64_t days = sec / 86400, rem = sec % 86400;
        if (rem < 0) {
            rem += 86400;
            days -= 1;
        }
        if (days > 999999999 || days < -999999999) {
            PyErr_SetString(PyExc_OverflowError, "date value out of range");
            return NULL;
        }
        PyObject *delta = PyDelta_FromDSU((int)days, (int)rem, (int)(nsec / 1000));
        if (!delta) return NULL;
        PyObject *r = PyNumber_Add(mpkpy_epoch, delta);
        Py_DECREF(delta);
        return r;
    }
    default: {
        PyObject *args[2] = {PyLong_FromLongLong(sec), PyLong_FromUnsignedLong(nsec)};
        PyObject *r = args[0] && args[1] ? call_python(d, mpkpy_Timestamp, args, 2) : NULL;
        Py_XDECREF(args[0]);
        Py_XDECREF(args[1]);
        return r;
    }
    }
}

static PyObject *make_ext(mpkpy_decoder *d, const uint8_t *h, int8_t type, const uint8_t *s,
                          Py_ssize_t n)
{
    if (type == -1) return make_timestamp(d, h, s, n);
    PyObject *data = PyBytes_FromStringAndSize((const char *)s, n);
    if (!data) return NULL;
    PyObject *code = PyLong_FromLong(type);
    if (!code) {
        Py_DECREF(data);
        return NULL;
    }
    PyObject *args[2] = {code, data};
    PyObject *r = call_python(d, d->o->ext_hook ? d->o->ext_hook : mpkpy_ExtType, args, 2);
    Py_DECREF(code);
    Py_DECREF(data);
    return r;
}

/* The ints of -128..255 (every fixint, int 8 and uint 8), made once: a fixint then costs a table
 * load and an incref instead of a call into PyLong_FromLong (measured on [1, 2]: 21 instructions
 * per int in it). Ints are immutable, so sharing them is invisible (CPython shares -5..256 itself). */
#define SMALL_INT_MIN (-128)
#define SMALL_INT_MAX 255
static PyObject *small_ints[SMALL_INT_MAX - SMALL_INT_MIN + 1];

MPK__INLINE PyObject *small_int(int v)
{
    return Py_NewRef(small_ints[v - SMALL_INT_MIN]);
}

MPK__INLINE PyObject *int_from(int64_t v)
{
    if (v >= SMALL_INT_MIN && v <= SMALL_INT_MAX) return small_int((int)v);
    return v < 0 ? mpkpy_int_from_magnitude(1, 0 - (uint64_t)v) : mpkpy_int_from_magnitude(0, (uint64_t)v);
}

MPK__INLINE PyObject *uint_from(uint64_t u)
{
    if (u <= SMALL_INT_MAX) return small_int((int)u);
    return mpkpy_int_from_magnitude(0, u);
}

static int small_ints_init(void)
{
    for (int v = SMALL_INT_MIN; v <= SMALL_INT_MAX; v++)
        if (!small_ints[v - SMALL_INT_MIN] && !(small_ints[v - SMALL_INT_MIN] = PyLong_FromLong(v))) return -1;
    return 0;
}

/* ================================================================================================
 * Containers
 * ==============================================================================================*/

/* Containers being filled are kept out of the collector's lists: a list or tuple is untracked as
 * soon as it is made, and a dict (which CPython tracks itself when a container goes into it) is
 * untracked again after each such insert (dict_fill_tracks). So a collection that runs meanwhile
 * (another thread, Python code of a hook or of the ExtType and Timestamp classes, an allocation on
 * 3.11) neither walks a half-built value nor finds one with gc.get_objects(), and the process's
 * collector is never switched off (earlier versions called PyGC_Disable for the decode, which
 * every other thread felt). A container that fails half-way is released untracked (the
 * deallocators accept that).
 *
 * When complete, a container is tracked at once if a hook may see it (object_hook,
 * object_pairs_hook, list_hook), the input is small, or the interpreter is 3.12 or newer
 * (MPKPY_DEFER_TRACKING in fast_paths.h: there a collection waits for the interpreter's next check
 * anyway, so deferring only adds a pass); otherwise (3.11) it is put on d->done and all are
 * tracked when the whole value is built (finish_tracking). Why: on 3.11 a collection runs inside
 * the allocation that crosses the threshold (700), so containers tracked as they complete were
 * walked by young collections again and again during the decode. Measured with callgrind on 3.11
 * (instructions per unpackb): tracking at completion 11.0M (twitter) and 34.6M (citm_catalog),
 * tracking at the end 10.1M and 25.0M, the collector switched off (as before) 9.5M and 21.6M: the
 * young collections that still run during the decode on 3.11 cost the difference. On 3.12, where a
 * collection waits for the interpreter's next check, tracking at the end takes 11.2M and 28.6M
 * against 11.8M and 31.2M with the collector switched off.
 * Each container on the list holds a reference of ours, so one that the decode drops meanwhile (a
 * duplicate key's earlier value) stays valid until then. */
MPK__INLINE void fill_begin(PyObject *container) { PyObject_GC_UnTrack(container); }

static MPK__NOINLINE void fill_end_deferred(mpkpy_decoder *d, PyObject *container)
{
    if (d->ndone == d->done_cap) {
        int inline_ = d->done == d->done_inline;
        Py_ssize_t cap = inline_ ? 256 : d->done_cap * 2;
        PyObject **bigger = (size_t)cap > PY_SSIZE_T_MAX / sizeof(PyObject *) ? NULL
                            : inline_ ? PyMem_Malloc((size_t)cap * sizeof(PyObject *))
                                      : PyMem_Realloc(d->done, (size_t)cap * sizeof(PyObject *));
        if (!bigger) { /* no room to defer it: tracked now, which is only slower */
            PyObject_GC_Track(container);
            return;
        }
        if (inline_) memcpy(bigger, d->done_inline, (size_t)d->ndone * sizeof(PyObject *));
        d->done = bigger;
        d->done_cap = cap;
    }
    d->done[d->ndone++] = Py_NewRef(container);
}

MPK__INLINE void fill_end(mpkpy_decoder *d, PyObject *container)
{
    if (LIKELY(d->defer) && LIKELY(d->ndone < d->done_cap)) {
        d->done[d->ndone++] = Py_NewRef(container);
        return;
    }
    if (d->defer)
        fill_end_deferred(d, container);
    else
        PyObject_GC_Track(container);
}

/* The end of a decode that deferred: every container put on d->done is tracked (when the decode
 * failed too: the ones still referenced elsewhere are then garbage about to go, or parts of
 * nothing) and our reference dropped. */
static void finish_tracking(mpkpy_decoder *d)
{
    for (Py_ssize_t i = 0; i < d->ndone; i++) {
        PyObject *c = d->done[i];
        if (!PyObject_GC_IsTracked(c)) PyObject_GC_Track(c);
        Py_DECREF(c);
    }
    if (d->done != d->done_inline) PyMem_Free(d->done);
    d->done = NULL;
    d->ndone = d->done_cap = 0;
    d->defer = 0;
}

/* before an insert into a dict being filled: whether the key or value can hold references, in which
 * case CPython tracks the dict when it inserts them, and the caller untracks it again until complete */
MPK__INLINE int dict_fill_tracks(PyObject *k, PyObject *v)
{
    return !(LIKELY(!PyType_IS_GC(Py_TYPE(v))) && (PyUnicode_CheckExact(k) || !PyType_IS_GC(Py_TYPE(k))));
}

static PyObject *decode_value(mpkpy_decoder *d, Py_ssize_t depth);
static PyObject *decode_array(mpkpy_decoder *d, Py_ssize_t n, Py_ssize_t depth);
static PyObject *decode_map(mpkpy_decoder *d, Py_ssize_t n, Py_ssize_t depth);

/* The elements of arrays and maps: the most frequent heads are decoded here, inline in the
 * container loops, and the rest goes to the full switch. */
MPK__INLINE PyObject *decode_element(mpkpy_decoder *d, Py_ssize_t depth)
{
    const uint8_t *h = d->p;
    if (LIKELY(h < d->end)) {
        uint8_t b = *h;
        if (b <= 0x7f) {
            d->p = h + 1;
            return small_int(b);
        }
        if (b >= 0xe0) {
            d->p = h + 1;
            return small_int((int8_t)b);
        }
        if ((b & 0xe0) == 0xa0) {
            Py_ssize_t n = b & 0x1f;
            if (LIKELY(n <= d->end - h - 1 && n <= d->o->max_str)) {
                d->p = h + 1 + n;
                return make_str(d, h, h + 1, n);
            }
        } else if ((b & 0xe0) == 0x80) { /* fixmap 0x80..0x8f, fixarray 0x90..0x9f */
            if ((b & 0xf0) == 0x90) {
                if (check_len(d, h, 1, b & 0x0f, T_ARRAY, depth)) return NULL;
                return decode_array(d, b & 0x0f, depth);
            }
            if (check_len(d, h, 1, b & 0x0f, T_MAP, depth)) return NULL;
            return decode_map(d, b & 0x0f, depth);
        } else {
            Py_ssize_t left = d->end - h;
            switch (b) {
            case 0xc0: d->p = h + 1; Py_RETURN_NONE;
            case 0xc2: d->p = h + 1; Py_RETURN_FALSE;
            case 0xc3: d->p = h + 1; Py_RETURN_TRUE;
            case 0xcb:
                if (LIKELY(left >= 9)) {
                    uint64_t bits = mpk__load64(h + 1);
                    double f;
                    memcpy(&f, &bits, 8);
                    d->p = h + 9;
                    return mpkpy_float(f);
                }
                break;
            case 0xcd:
                if (LIKELY(left >= 3)) {
                    d->p = h + 3;
                    return uint_from(mpk__load16(h + 1));
                }
                break;
            case 0xce:
                if (LIKELY(left >= 5)) {
                    d->p = h + 5;
                    return uint_from(mpk__load32(h + 1));
                }
                break;
            case 0xd9:
                if (LIKELY(left >= 2)) {
                    Py_ssize_t n = h[1];
                    if (LIKELY(n <= left - 2 && n <= d->o->max_str)) {
                        d->p = h + 2 + n;
                        return make_str(d, h, h + 2, n);
                    }
                }
                break;
            case 0xcf:
                if (LIKELY(left >= 9)) {
                    d->p = h + 9;
                    return uint_from(mpk__load64(h + 1));
                }
                break;
            case 0xd2:
                if (LIKELY(left >= 5)) {
                    d->p = h + 5;
                    return int_from((int32_t)mpk__load32(h + 1));
                }
                break;
            default:
                break;
            }
        }
    }
    return decode_value(d, depth);
}


/* Charging the open containers. A container's count has been checked against the bytes left
 * (check_len), but so has every enclosing one's: 1,000 nested heads that each declare as many
 * elements as there are bytes left would together presize depth times the input. So before a
 * container is presized, the values still owed by the enclosing containers (d->owed, one byte each
 * at least) are charged against the bytes left too: the room of all open containers together never
 * exceeds the input. A container whose count does not fit cannot be completed by these bytes (the
 * input is truncated, or an error comes first); it is still decoded the same way, so that the error
 * is the same, but grown one element at a time instead of presized. */
MPK__INLINE Py_ssize_t room_left(const mpkpy_decoder *d) { return LEFT(d) - d->owed; }

/* An array that cannot fit (see room_left): a list grown by appends, as a tuple at the end when
 * use_list is off. Its elements are read exactly as decode_array reads them. */
static MPK__NOINLINE PyObject *decode_array_unsized(mpkpy_decoder *d, Py_ssize_t n, Py_ssize_t depth)
{
    const mpkpy_unpack_options *o = d->o;
    Py_ssize_t base = d->owed + n - 1;
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    fill_begin(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        d->owed = base - i;
        PyObject *item = decode_value(d, depth + 1);
        if (!item || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    fill_end(d, list);
    PyObject *seq = list;
    if (!o->use_list) {
        seq = PyList_AsTuple(list);
        Py_DECREF(list);
        if (!seq) return NULL;
    }
    if (UNLIKELY(o->list_hook != NULL)) {
        PyObject *r = PyObject_CallOneArg(o->list_hook, seq);
        Py_DECREF(seq);
        return r;
    }
    return seq;
}

/* A run of float 64s at the start of an array's elements, read into items[0..] without the
 * per-element dispatch of decode_element (which tests the fixint, fixstr and container heads
 * before it reaches the float's case) and without the owed count's update per element (a float
 * opens no container). Arrays of coordinates (GeoJSON, canada.json: [lon, lat] pairs, rings of
 * them) are mostly such runs. Returns how many were read (d->p advanced past them; the caller
 * reads the rest, if any, the usual way), or -1 with MemoryError after `*got` items. Measured with
 * callgrind, 3.12, instructions per unpackb: see bench/README.md ("Session 9"). The portable build
 * reads every element through decode_element (FLOAT_RUNS 0). */
#ifdef MPKPY_PORTABLE
#define FLOAT_RUNS 0
#else
#define FLOAT_RUNS 1
#endif
static Py_ssize_t decode_float_run(mpkpy_decoder *d, PyObject **items, Py_ssize_t n, Py_ssize_t *got)
{
    const uint8_t *p = d->p, *end = d->end;
    Py_ssize_t i = 0;
    while (i < n && end - p >= 9 && *p == 0xcb) {
        uint64_t bits = mpk__load64(p + 1);
        double f;
        memcpy(&f, &bits, 8);
        PyObject *o = mpkpy_float(f);
        if (UNLIKELY(o == NULL)) {
            d->p = p;
            *got = i;
            return -1;
        }
        items[i++] = o;
        p += 9;
    }
    d->p = p;
    return i;
}

static PyObject *decode_array(mpkpy_decoder *d, Py_ssize_t n, Py_ssize_t depth)
{
    const mpkpy_unpack_options *o = d->o;
    if (UNLIKELY(n > room_left(d))) return decode_array_unsized(d, n, depth);
    /* before element i the open containers owe base - i values after it */
    Py_ssize_t base = d->owed + n - 1;
    PyObject *seq;
    if (LIKELY(o->use_list)) {
        /* a decode of more than 256 bytes (mpkpy_decode gave it the inline list of deferred
         * containers): runs of floats (decode_float_run), and after its first lists (as many as
         * CPython's list freelist holds, which the previous value's lists may have filled) lists
         * from a fresh allocation (mpkpy_list_unfilled); a small message skips both */
        int large = d->done != NULL;
        int tracked = !large && d->small_lists_tracked;
        seq = tracked ? mpkpy_list_unfilled_tracked(n)
                      : mpkpy_list_unfilled(n, large && --d->freelist_lists < 0); /* untracked until fill_end */
        if (!seq) return NULL;
        PyObject **items = ((PyListObject *)seq)->ob_item;
        Py_ssize_t i = 0;
        /* n > 0: the count fits the bytes left (room_left), so *d->p is in the input */
        if (FLOAT_RUNS && large && n > 0 && *d->p == 0xcb) {
            Py_ssize_t got;
            i = decode_float_run(d, items, n, &got);
            if (UNLIKELY(i < 0)) {
                Py_SET_SIZE(seq, got);
                Py_DECREF(seq);
                return NULL;
            }
        }
        for (; i < n; i++) {
            d->owed = base - i;
            PyObject *item = decode_element(d, depth + 1);
            if (UNLIKELY(!item)) {
                Py_SET_SIZE(seq, i); /* the items so far are released with it */
                Py_DECREF(seq);
                return NULL;
            }
            items[i] = item;
        }
        Py_SET_SIZE(seq, n);
        if (!tracked) fill_end(d, seq);
    } else if (n == 0) {
        seq = PyTuple_New(0); /* a shared singleton: never untracked or tracked here */
        if (!seq) return NULL;
    } else {
        seq = PyTuple_New(n);
        if (!seq) return NULL;
        fill_begin(seq);
        for (Py_ssize_t i = 0; i < n; i++) {
            d->owed = base - i;
            PyObject *item = decode_value(d, depth + 1);
            if (UNLIKELY(!item)) {
                Py_DECREF(seq);
                return NULL;
            }
            PyTuple_SET_ITEM(seq, i, item);
        }
        fill_end(d, seq);
    }
    if (UNLIKELY(o->list_hook != NULL)) {
        PyObject *r = PyObject_CallOneArg(o->list_hook, seq);
        Py_DECREF(seq);
        return r;
    }
    return seq;
}

static inline PyObject *decode_key(mpkpy_decoder *d, Py_ssize_t depth)
{
    const uint8_t *h = d->p;
    if (LIKELY(h < d->end && !d->o->raw)) {
        Py_ssize_t n = -1, fields = 1;
        if ((*h & 0xe0) == 0xa0)
            n = *h & 0x1f;
        else if (*h == 0xd9 && d->end - h >= 2) {
            n = h[1];
            fields = 2;
        }
        if (n >= 0 && n <= KEY_CACHE_MAX_LEN && LIKELY(n <= d->end - h - fields && n <= d->o->max_str)) {
            const uint8_t *s = h + fields;
            PyObject *k = cached_key(s, n);
            if (LIKELY(k != NULL)) {
                d->p = s + n;
                return k;
            }
            if (PyErr_Occurred()) return NULL;
        }
    }
    PyObject *k = decode_value(d, depth);
    if (!k) return NULL;
    if (d->o->strict_map_key && !PyUnicode_CheckExact(k) && !PyBytes_CheckExact(k)) {
        PyErr_Format(PyExc_ValueError, "%.100s is not allowed for map key when strict_map_key=True",
                     Py_TYPE(k)->tp_name);
        Py_DECREF(k);
        return NULL;
    }
    if (PyUnicode_CheckExact(k)) intern_key(&k);
    return k;
}


/* A dict presized for n pairs that got far fewer keys (duplicates: later values replace earlier
 * ones) keeps a table for n: 15 pairs of one key make a 32-slot table for one entry, and a document
 * of such maps holds several times the memory of the same dicts sized for what they hold. Such a
 * dict is rebuilt by inserting its items into a new one, which sizes its table (and picks the
 * compact str-key layout) as a dict filled by hand does; PyDict_Copy and PyDict_Update would clone
 * or mirror the oversized table's layout. Only inputs with duplicate keys pay for it. */
static MPK__NOINLINE PyObject *dict_shrink(PyObject *dict)
{
    PyObject *small = PyDict_New(), *k, *v;
    Py_ssize_t pos = 0;
    while (small && PyDict_Next(dict, &pos, &k, &v))
        if (PyDict_SetItem(small, k, v) < 0) Py_CLEAR(small);
    Py_DECREF(dict);
    return small;
}

#ifdef MPKPY_DICT_TEMPLATES
/* Dicts of a repeated key set (fast_paths.h, MPKPY_DICT_TEMPLATES). A map of 2 to 64 pairs looks up
 * the template slot of its first key object and its size. When the slot's template starts with
 * that key and has that size, the map is read into the decoder's kv stack first (keys and values)
 * and, if the template holds the same key objects in the same order, built as a copy of the
 * template (decode_map_kv). Otherwise it is built by inserts as any map (decode_map), while a
 * signature of its key objects' addresses is taken; a key set whose signature is seen twice in a
 * row in its slot becomes the slot's template when its dict has as many entries as the map had
 * pairs (no duplicate keys) and its keys are strs. Key objects are the same from map to map when
 * they come from the key cache (short ASCII keys) or are interned; other keys never match and cost
 * only the signature (about 5 instructions a key). A template holds references to its keys (at most
 * TEMPLATE_SLOTS x TEMPLATE_MAX_PAIRS strs stay alive). Decoding a value may run Python code (hooks,
 * ExtType), which may decode too: a slot is re-read after the map's values are decoded, and a
 * template being copied holds a reference of ours. */
#define TEMPLATE_MIN_PAIRS 2
#define TEMPLATE_MAX_PAIRS 64
#define TEMPLATE_SLOTS 256
typedef struct template_slot {
    uint64_t pending; /* signature of the last map of this slot that had no template */
    PyObject *tmpl;   /* a dict of str keys and None values, or NULL */
} template_slot;
static template_slot dict_templates[TEMPLATE_SLOTS];

MPK__INLINE template_slot *template_slot_of(PyObject *k0, Py_ssize_t n)
{
    uint64_t h = ((uint64_t)(uintptr_t)k0 ^ (uint64_t)n) * 0x9E3779B97F4A7C15ull;
    return &dict_templates[(h >> 40) & (TEMPLATE_SLOTS - 1)];
}

MPK__INLINE uint64_t template_sig_step(uint64_t sig, PyObject *k)
{
    return (sig ^ (uint64_t)(uintptr_t)k) * 0x9E3779B97F4A7C15ull;
}

/* The slot's template when it starts with k0 and has n keys, else NULL. */
MPK__INLINE PyObject *template_for(template_slot *s, PyObject *k0, Py_ssize_t n)
{
    PyObject *t = s->tmpl;
    if (t == NULL || PyDict_GET_SIZE(t) != n) return NULL;
    int general;
    Py_ssize_t count;
    const mpkpy_unicode_entry *e = (const mpkpy_unicode_entry *)mpkpy_dict_entries(t, &general, &count);
    return e[0].key == k0 ? t : NULL;
}

/* The map just built as `dict` (no duplicate keys) had the signature sig: the second time in a row
 * in its slot, its key set becomes the slot's template. */
static MPK__NOINLINE void template_store(template_slot *s, PyObject *dict)
{
    /* filled from empty, not presized: CPython's presized tables are of the general kind (a hash
     * per entry); from empty, str keys give the compact str-key table (mpkpy_template_matches) */
    PyObject *t = NULL, *k, *v;
    Py_ssize_t pos = 0, n = PyDict_GET_SIZE(dict);
    while (PyDict_Next(dict, &pos, &k, &v))
        if (!PyUnicode_CheckExact(k)) return; /* bytes keys (raw=True), ints: no template */
    if (!(t = PyDict_New())) goto fail;
    pos = 0;
    while (PyDict_Next(dict, &pos, &k, &v))
        if (mpkpy_dict_set(t, k, Py_None) < 0) goto fail; /* exact strs: checked above */
    int general;
    Py_ssize_t count;
    if (mpkpy_dict_entries(t, &general, &count) == NULL || general || count != n || PyDict_GET_SIZE(t) != n)
        goto fail;
    PyObject *old = s->tmpl;
    s->tmpl = t;
    Py_XDECREF(old);
    return;
fail: /* no template for this key set: its maps are built by inserts, as before */
    Py_XDECREF(t);
    if (PyErr_Occurred()) PyErr_Clear();
}

MPK__INLINE void template_seen(template_slot *s, uint64_t sig, PyObject *dict)
{
    if (s->pending == sig)
        template_store(s, dict);
    else
        s->pending = sig;
}

/* After a dict is complete: it holds containers, so it is handed to the collector (fill_end: at
 * once, or at the end of the decode when d->defer) */
MPK__INLINE void dict_filled(mpkpy_decoder *d, PyObject *dict)
{
    if (d->defer) {
        PyObject_GC_UnTrack(dict); /* an insert of a container tracked it */
        fill_end(d, dict);
    } else if (!PyObject_GC_IsTracked(dict)) {
        PyObject_GC_Track(dict);
    }
}

/* The map read into the kv stack, its first key k0 already read (consumed), then copied from the
 * slot's template if it still matches, else built by inserts. */
static MPK__NOINLINE PyObject *decode_map_kv(mpkpy_decoder *d, Py_ssize_t n, Py_ssize_t depth,
                                             Py_ssize_t base, PyObject *k0, template_slot *s)
{
    PyObject **kv = d->kv + d->nkv;
    d->nkv += 2 * n;
    Py_ssize_t got = 0, i;
    int tracks = 0;
    kv[got++] = k0;
    for (i = 0; i < n; i++) {
        if (i > 0) {
            d->owed = base - 2 * i;
            PyObject *k = decode_key(d, depth + 1);
            if (UNLIKELY(!k)) goto fail;
            kv[got++] = k;
        }
        d->owed = base - 2 * i - 1;
        PyObject *v = decode_element(d, depth + 1);
        if (UNLIKELY(!v)) goto fail; /* the nested maps have given back their kv slots */
        kv[got++] = v;
        tracks |= dict_fill_tracks(kv[got - 2], v);
    }
    d->nkv -= 2 * n;
    PyObject *dict, *t = template_for(s, k0, n); /* again: a hook may have changed the slot */
    if (t != NULL && mpkpy_template_matches(t, kv, n)) {
        dict = mpkpy_dict_from_template(t, kv, n);
        if (LIKELY(dict != NULL)) goto built;
        if (PyErr_Occurred()) goto release;
    }
    dict = mpkpy_dict_presized(n);
    if (UNLIKELY(!dict)) goto release;
    uint64_t sig = (uint64_t)n;
    for (i = 0; i < n; i++) {
        sig = template_sig_step(sig, kv[2 * i]);
        if (UNLIKELY(mpkpy_dict_set_steal(dict, kv[2 * i], kv[2 * i + 1]) < 0)) {
            /* the pair was consumed; the rest is ours */
            for (Py_ssize_t j = 2 * i + 2; j < 2 * n; j++) Py_DECREF(kv[j]);
            Py_DECREF(dict);
            return NULL;
        }
    }
    if (PyDict_GET_SIZE(dict) == n)
        template_seen(s, sig, dict);
    else if (n > 5 && PyDict_GET_SIZE(dict) <= n / 2) {
        if (tracks) dict_filled(d, dict);
        return dict_shrink(dict);
    }
built:
    if (tracks) dict_filled(d, dict);
    return dict;
fail:
    d->nkv -= 2 * n;
    goto release_got;
release:
    got = 2 * n;
release_got:
    for (Py_ssize_t j = 0; j < got; j++) Py_DECREF(kv[j]);
    return NULL;
}

#endif

static PyObject *decode_map(mpkpy_decoder *d, Py_ssize_t n, Py_ssize_t depth)
{
    const mpkpy_unpack_options *o = d->o;
    /* 2n values; when they do not fit in the room the open containers leave (see room_left), the
     * dict or pair list is not presized (dicts grow by themselves, the pair list by appends) */
    int sized = LIKELY(2 * n <= room_left(d));
    /* before key i the open containers owe base - 2i values after it (its value included) */
    Py_ssize_t base = d->owed + 2 * n - 1;
    if (UNLIKELY(o->object_pairs_hook != NULL)) {
        PyObject *pairs = PyList_New(sized ? n : 0);
        if (!pairs) return NULL;
        fill_begin(pairs);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *k, *v = NULL, *pair = NULL;
            d->owed = base - 2 * i;
            k = decode_key(d, depth + 1);
            if (k) d->owed = base - 2 * i - 1;
            if (k && (v = decode_value(d, depth + 1)) && (pair = PyTuple_New(2))) {
                PyTuple_SET_ITEM(pair, 0, k);
                PyTuple_SET_ITEM(pair, 1, v);
                if (sized) {
                    PyList_SET_ITEM(pairs, i, pair);
                    continue;
                }
                int rc = PyList_Append(pairs, pair);
                Py_DECREF(pair);
                if (rc == 0) continue;
                k = v = NULL;
            }
            Py_XDECREF(k);
            Py_XDECREF(v);
            Py_DECREF(pairs);
            return NULL;
        }
        fill_end(d, pairs);
        PyObject *r = PyObject_CallOneArg(o->object_pairs_hook, pairs);
        Py_DECREF(pairs);
        return r;
    }
    PyObject *k = NULL, *dict;
#ifdef MPKPY_DICT_TEMPLATES
    template_slot *s = NULL;
    uint64_t sig = (uint64_t)n;
    if (LIKELY(sized) && n >= TEMPLATE_MIN_PAIRS && n <= TEMPLATE_MAX_PAIRS) {
        d->owed = base;
        k = decode_key(d, depth + 1);
        if (UNLIKELY(!k)) return NULL;
        s = template_slot_of(k, n);
        if (template_for(s, k, n) != NULL && LIKELY(d->nkv + 2 * n <= MPKPY_KV_STACK)) {
            dict = decode_map_kv(d, n, depth, base, k, s);
            goto done;
        }
    }
#endif
    dict = sized ? mpkpy_dict_presized(n) : PyDict_New();
    if (!dict) {
        Py_XDECREF(k);
        return NULL;
    }
    int holds_containers = 0; /* a fresh dict is untracked until one goes in (dict_fill_tracks) */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (k == NULL) { /* not the first key, read above for the template's slot */
            d->owed = base - 2 * i;
            k = decode_key(d, depth + 1);
            if (UNLIKELY(!k)) goto fail;
        }
        d->owed = base - 2 * i - 1;
        PyObject *v = decode_element(d, depth + 1);
        if (UNLIKELY(!v)) {
            Py_DECREF(k);
            goto fail;
        }
#ifdef MPKPY_DICT_TEMPLATES
        sig = template_sig_step(sig, k);
#endif
        int tracks = dict_fill_tracks(k, v);
        int rc = mpkpy_dict_set_steal(dict, k, v); /* k and v are the dict's now */
        k = NULL;
        if (UNLIKELY(rc < 0)) goto fail;
        if (tracks) {
            PyObject_GC_UnTrack(dict);
            holds_containers = 1;
        }
    }
    if (holds_containers) fill_end(d, dict);
#ifdef MPKPY_DICT_TEMPLATES
    if (s != NULL && LIKELY(PyDict_GET_SIZE(dict) == n)) template_seen(s, sig, dict);
#endif
    /* _PyDict_NewPresized gives a plain dict for up to 5 */
    if (UNLIKELY(n > 5 && PyDict_GET_SIZE(dict) <= n / 2) && sized) {
        if (!(dict = dict_shrink(dict))) return NULL;
    }
#ifdef MPKPY_DICT_TEMPLATES
done:
    if (UNLIKELY(dict == NULL)) return NULL;
#endif
    if (UNLIKELY(o->object_hook != NULL)) {
        PyObject *r = PyObject_CallOneArg(o->object_hook, dict);
        Py_DECREF(dict);
        return r;
    }
    return dict;
fail:
    Py_DECREF(dict);
    return NULL;
}

/* ================================================================================================
 * The value switch
 * ==============================================================================================*/

static PyObject *decode_value(mpkpy_decoder *d, Py_ssize_t depth)
{
    const uint8_t *h = d->p;
    if (UNLIKELY(h >= d->end)) return truncated(d, h, (Py_ssize_t)(h - d->start) + 1);
    uint8_t b = *h;
    Py_ssize_t left = d->end - h, n;

    if (b <= 0x7f) {
        d->p = h + 1;
        return small_int(b);
    }
    if (b >= 0xe0) {
        d->p = h + 1;
        return small_int((int8_t)b);
    }
    if ((b & 0xe0) == 0xa0) {
        n = b & 0x1f;
        if (check_len(d, h, 1, n, T_STR, depth)) return NULL;
        d->p = h + 1 + n;
        return make_str(d, h, h + 1, n);
    }
    if ((b & 0xf0) == 0x90) {
        if (check_len(d, h, 1, b & 0x0f, T_ARRAY, depth)) return NULL;
        return decode_array(d, b & 0x0f, depth);
    }
    if ((b & 0xf0) == 0x80) {
        if (check_len(d, h, 1, b & 0x0f, T_MAP, depth)) return NULL;
        return decode_map(d, b & 0x0f, depth);
    }

/* a fixed-size scalar of `size` bytes after the head */
#define NEED(size)                                                                                \
    if (UNLIKELY(left < 1 + (size))) return truncated(d, h, (Py_ssize_t)(h - d->start) + 1 + (size)); \
    d->p = h + 1 + (size)

    switch (b) {
    case 0xc0: d->p = h + 1; Py_RETURN_NONE;
    case 0xc2: d->p = h + 1; Py_RETURN_FALSE;
    case 0xc3: d->p = h + 1; Py_RETURN_TRUE;
    case 0xc1: return bad_byte(d, h);
    case 0xcc: { NEED(1); return small_int(h[1]); }
    case 0xcd: { NEED(2); return uint_from(mpk__load16(h + 1)); }
    case 0xce: { NEED(4); return uint_from(mpk__load32(h + 1)); }
    case 0xcf: { NEED(8); return uint_from(mpk__load64(h + 1)); }
    case 0xd0: { NEED(1); return small_int((int8_t)h[1]); }
    case 0xd1: { NEED(2); return int_from((int16_t)mpk__load16(h + 1)); }
    case 0xd2: { NEED(4); return int_from((int32_t)mpk__load32(h + 1)); }
    case 0xd3: { NEED(8); return int_from((int64_t)mpk__load64(h + 1)); }
    case 0xca: {
        NEED(4);
        uint32_t bits = mpk__load32(h + 1);
        float f;
        memcpy(&f, &bits, 4);
        if (UNLIKELY(d->o->float32_type != NULL))
            return PyObject_CallFunction(d->o->float32_type, "d", (double)f);
        return mpkpy_float((double)f);
    }
    case 0xcb: {
        NEED(8);
        uint64_t bits = mpk__load64(h + 1);
        double f;
        memcpy(&f, &bits, 8);
        return mpkpy_float(f);
    }
    case 0xd9: case 0xda: case 0xdb: {
        Py_ssize_t w = (Py_ssize_t)1 << (b - 0xd9);
        if (UNLIKELY(left < 1 + w)) return truncated(d, h, (h - d->start) + 1 + w);
        n = w == 1 ? h[1] : w == 2 ? mpk__load16(h + 1) : (Py_ssize_t)mpk__load32(h + 1);
        if (check_len(d, h, 1 + w, n, T_STR, depth)) return NULL;
        d->p = h + 1 + w + n;
        return make_str(d, h, h + 1 + w, n);
    }
    case 0xc4: case 0xc5: case 0xc6: {
        Py_ssize_t w = (Py_ssize_t)1 << (b - 0xc4);
        if (UNLIKELY(left < 1 + w)) return truncated(d, h, (h - d->start) + 1 + w);
        n = w == 1 ? h[1] : w == 2 ? mpk__load16(h + 1) : (Py_ssize_t)mpk__load32(h + 1);
        if (check_len(d, h, 1 + w, n, T_BIN, depth)) return NULL;
        d->p = h + 1 + w + n;
        return PyBytes_FromStringAndSize((const char *)h + 1 + w, n);
    }
    case 0xdc: case 0xdd: {
        Py_ssize_t w = b == 0xdc ? 2 : 4;
        if (UNLIKELY(left < 1 + w)) return truncated(d, h, (h - d->start) + 1 + w);
        n = w == 2 ? mpk__load16(h + 1) : (Py_ssize_t)mpk__load32(h + 1);
        if (check_len(d, h, 1 + w, n, T_ARRAY, depth)) return NULL;
        return decode_array(d, n, depth);
    }
    case 0xde: case 0xdf: {
        Py_ssize_t w = b == 0xde ? 2 : 4;
        if (UNLIKELY(left < 1 + w)) return truncated(d, h, (h - d->start) + 1 + w);
        n = w == 2 ? mpk__load16(h + 1) : (Py_ssize_t)mpk__load32(h + 1);
        if (check_len(d, h, 1 + w, n, T_MAP, depth)) return NULL;
        return decode_map(d, n, depth);
    }
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: {
        n = (Py_ssize_t)1 << (b - 0xd4);
        if (UNLIKELY(left < 2)) return truncated(d, h, (h - d->start) + 2);
        if (check_len(d, h, 2, n, T_EXT, depth)) return NULL;
        d->p = h + 2 + n;
        return make_ext(d, h, (int8_t)h[1], h + 2, n);
    }
    case 0xc7: case 0xc8: case 0xc9: {
        Py_ssize_t w = (Py_ssize_t)1 << (b - 0xc7);
        if (UNLIKELY(left < 2 + w)) return truncated(d, h, (h - d->start) + 2 + w);
        n = w == 1 ? h[1] : w == 2 ? mpk__load16(h + 1) : (Py_ssize_t)mpk__load32(h + 1);
        if (check_len(d, h, 2 + w, n, T_EXT, depth)) return NULL;
        d->p = h + 2 + w + n;
        return make_ext(d, h, (int8_t)h[1 + w], h + 2 + w, n);
    }
    default: /* unreachable: every byte is covered above */
        return bad_byte(d, h);
    }
#undef NEED
}

PyObject *mpkpy_decode(mpkpy_decoder *d)
{
    d->small_lists_tracked = 0;
    d->owed = 0;
    d->nkv = 0;
    d->defer = 0;
    d->done = NULL;
    d->ndone = d->done_cap = 0;
    d->errors = d->o->unicode_errors ? PyUnicode_AsUTF8(d->o->unicode_errors) : NULL;
    if (d->o->unicode_errors && !d->errors) return NULL;
    if (d->errors && strcmp(d->errors, "strict") == 0) d->errors = NULL;
    /* Nesting is bounded by max_depth and, level by level, by the thread's C stack (check_len);
     * the interpreter's own recursion count is taken once for the decode */
    if (d->end - d->p <= 256) return decode_value(d, 0);
    if (Py_EnterRecursiveCall(" while unpacking")) return NULL;
    /* the containers being filled are untracked (fill_begin), and tracked when the value is
     * complete unless a hook may see them first: the collector stays as it is */
    const mpkpy_unpack_options *o = d->o;
    d->defer = MPKPY_DEFER_TRACKING && !o->object_hook && !o->object_pairs_hook && !o->list_hook;
    d->done = d->done_inline;
    d->done_cap = MPKPY_DONE_INLINE;
    d->freelist_lists = MPKPY_LIST_FREELIST;
    PyObject *r = decode_value(d, 0);
    if (d->defer) finish_tracking(d);
    Py_LeaveRecursiveCall();
    return r;
}

/* unpackb's decode under its default options (no unicode_errors handler). A small input — most
 * messages of an RPC — skips mpkpy_decode's option handling and, when it is a fixarray, the head
 * switch: its checks are those of check_len (the limit, the depth, one byte per element left), in
 * the same order; when one of them fails the switch runs and reports it. [1, 2]: 8% fewer
 * instructions per call. */
PyObject *mpkpy_decode_defaults(mpkpy_decoder *d)
{
    if (d->end - d->p > 256) return mpkpy_decode(d);
    d->small_lists_tracked = 1; /* no hook: see mpkpy_list_unfilled_tracked */
    d->owed = 0;
    d->nkv = 0;
    d->defer = 0;
    d->done = NULL;
    d->ndone = d->done_cap = 0;
    d->errors = NULL;
    const uint8_t *h = d->p;
    if (LIKELY(h < d->end) && (*h & 0xf0) == 0x90) {
        Py_ssize_t n = *h & 0x0f;
        if (LIKELY(n <= d->o->max_array && d->o->max_depth >= 1 && n <= d->end - h - 1)) {
            d->p = h + 1;
            return decode_array(d, n, 0);
        }
    }
    return decode_value(d, 0);
}

/* ================================================================================================
 * Skip: the same walk and checks without building objects (Unpacker.skip, and the completeness
 * probe of the stream, which must not call hooks on a value that is not all there yet).
 * ==============================================================================================*/

void mpkpy_walk_reset(mpkpy_walk *w)
{
    w->active = 0;
    w->top = 0;
}

void mpkpy_walk_free(mpkpy_walk *w)
{
    PyMem_Free(w->stack);
    w->stack = NULL;
    w->cap = 0;
    w->active = 0;
}

/* The strs among the complete tokens in [from, to) are checked for strict UTF-8 (w->utf8): the
 * stream's walk does not build strs, so without this an invalid str inside a value that is not all
 * there yet would be reported only once the value completes (or as the wrong error, a later bad
 * byte or `truncated`), where spec/README.md wants the first error in byte order as soon as its
 * bytes are in. Only run when a walk stops short of the value's end (suspended for more bytes, or
 * at an error): a value that the walk finds whole is decoded next, and the decoder checks its strs
 * in order, so the common case pays nothing. 0, or -1 with InvalidUTF8Error at the str's head. */
static int walk_check_strs(mpkpy_decoder *d, const uint8_t *from, const uint8_t *to)
{
    const uint8_t *p = from;
    while (p < to) {
        uint8_t b = *p;
        if (b <= 0x7f || b >= 0xe0) {
            p++;
            continue;
        }
        Py_ssize_t fields = (Py_ssize_t)mpk__head_size(b);
        mpk__head head;
        mpk__read_head(p, &head);
        if (head.kind == MPK__HEAD_SCALAR || head.kind == MPK__HEAD_ARRAY || head.kind == MPK__HEAD_MAP) {
            p += fields;
            continue;
        }
        const uint8_t *s = p + fields;
        Py_ssize_t n = (Py_ssize_t)head.n;
        if (head.kind == MPK__HEAD_STR && !mpk_utf8_valid(s, (size_t)n)) {
            /* the error as make_str raises it: CPython's decoder names the bad bytes (start, end,
             * reason), which mpkpy_raise_utf8 takes from the pending UnicodeDecodeError */
            PyObject *u = PyUnicode_DecodeUTF8((const char *)s, n, NULL);
            if (!u) {
                if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                    mpkpy_raise_utf8((const char *)s, n, OFF(d, p));
                return -1;
            }
            Py_DECREF(u);
        }
        p = s + n;
    }
    return 0;
}

/* walk_check_strs over what this pass of the walk went through, before the error it stops at (a
 * TruncatedError when it suspends) is let out: an invalid str there comes first. Always -1. */
static int walk_stop(mpkpy_decoder *d, mpkpy_walk *w, const uint8_t *from, const uint8_t *at)
{
    if (!w->utf8 || at <= from) return -1;
    PyObject *exc = take_error();
    if (walk_check_strs(d, from, at) < 0) {
        Py_XDECREF(exc); /* the str's error replaces the walk's */
        return -1;
    }
    give_error(exc);
    return -1;
}

/* Walks one value. The counts still owed by the open containers live in w->stack, so that when
 * the input ends inside the value the walk can stop at the head of the token that does not fit
 * and later resume there (the bytes before it cannot change): feeding a value in n pieces costs one
 * walk over it, not n. */
int mpkpy_skip(mpkpy_decoder *d, mpkpy_walk *w)
{
    Py_ssize_t owed = 1;
    if (w->active) {
        d->p = d->start + w->at;
        owed = w->owed;
    } else {
        w->top = 0;
    }
    w->active = 0;
    const uint8_t *from = d->p; /* where this pass starts: see walk_stop */
    for (;;) {
        while (owed == 0) {
            if (w->top == 0) return 0;
            owed = w->stack[--w->top];
        }
        const uint8_t *h = d->p;
        if (h >= d->end) {
            truncated(d, h, (Py_ssize_t)(h - d->start) + 1);
            goto suspend;
        }
        uint8_t b = *h;
        if (b <= 0x7f || b >= 0xe0) { /* fixints: most of a document's heads, without the call */
            d->p = h + 1;
            owed--;
            continue;
        }
        if (b == 0xc1) {
            bad_byte(d, h);
            return walk_stop(d, w, from, h);
        }
        /* every other head through the core's reader of heads (c/src/internal.h) */
        Py_ssize_t fields = (Py_ssize_t)mpk__head_size(b);
        if (d->end - h < fields) { truncated(d, h, (h - d->start) + fields); goto suspend; }
        mpk__head head;
        mpk__read_head(h, &head);
        if (head.kind == MPK__HEAD_SCALAR) {
            d->p = h + fields;
            owed--;
            continue;
        }
        Py_ssize_t n = (Py_ssize_t)head.n; /* at most 2^32 - 1 */
        int kind = head.kind == MPK__HEAD_STR ? T_STR : head.kind == MPK__HEAD_BIN ? T_BIN
                 : head.kind == MPK__HEAD_EXT ? T_EXT : head.kind == MPK__HEAD_ARRAY ? T_ARRAY : T_MAP;
        if (kind == T_ARRAY || kind == T_MAP) {
            /* The count is not checked against the bytes there: the elements are walked as they
             * come, so an error among them is reported as soon as its bytes arrive (a count the
             * stream cannot fill within max_buffer_size ends in BufferFull). The limit and the
             * depth are checked as everywhere, in the spec's order. */
            if (n > (kind == T_MAP ? d->o->max_map : d->o->max_array)) {
                over_limit(d, h, n, kind == T_MAP ? "max_map_len" : "max_array_len",
                           kind == T_MAP ? d->o->max_map : d->o->max_array);
                return walk_stop(d, w, from, h);
            }
            if (w->top + 1 > d->o->max_depth) {
                too_deep(d, h);
                return walk_stop(d, w, from, h);
            }
            d->p = h + fields;
        } else if (check_len(d, h, fields, n, kind, w->top)) {
            if (!PyErr_ExceptionMatches(mpkpy_TruncatedError)) return walk_stop(d, w, from, h);
            /* An ext -1 whose length no timestamp has is bad whatever its body: a stream says so
             * at its head, within the length limit, instead of buffering the body (spec/README.md:
             * a stream reports an error as soon as the bytes prove it). */
            if (kind == T_EXT && head.type == -1 && n != 4 && n != 8 && n != 12) {
                char what[64];
                PyErr_Clear();
                PyOS_snprintf(what, sizeof what, "invalid timestamp data (length %zd)", n);
                mpkpy_raise(MPK_ERR_INVALID_TIMESTAMP, OFF(d, h), what);
                return walk_stop(d, w, from, h);
            }
            goto suspend;
        }
        owed--;
        if (kind == T_ARRAY || kind == T_MAP) {
            if (w->top == w->cap) {
                Py_ssize_t cap = w->cap ? w->cap * 2 : 16;
                Py_ssize_t *bigger = PyMem_Realloc(w->stack, sizeof(Py_ssize_t) * (size_t)cap);
                if (!bigger) { PyErr_NoMemory(); return -1; }
                w->stack = bigger;
                w->cap = cap;
            }
            w->stack[w->top++] = owed;
            owed = kind == T_MAP ? 2 * n : n;
            continue;
        }
        if (kind == T_EXT && head.type == -1) {
            mpk_timestamp ts;
            if (!timestamp_valid(d, h, h + fields, n, &ts)) return walk_stop(d, w, from, h);
        }
        d->p = h + fields + n;
    }
suspend:
    /* stopped at the head of a token that is not all there: resume at it, unless a str before it
     * is already invalid */
    walk_stop(d, w, from, d->p);
    if (!PyErr_ExceptionMatches(mpkpy_TruncatedError)) return -1;
    w->active = 1;
    w->at = (Py_ssize_t)(d->p - d->start);
    w->owed = owed;
    return -1;
}

Py_ssize_t mpkpy_read_header(mpkpy_decoder *d, int want_map)
{
    const uint8_t *h = d->p;
    if (h >= d->end) {
        truncated(d, h, (h - d->start) + 1);
        return -1;
    }
    uint8_t b = *h;
    Py_ssize_t n, fields;
    int is_map;
    if ((b & 0xf0) == 0x90 || (b & 0xf0) == 0x80) {
        is_map = (b & 0xf0) == 0x80;
        n = b & 0x0f;
        fields = 1;
    } else if (b >= 0xdc && b <= 0xdf) {
        is_map = b >= 0xde;
        fields = (b & 1) ? 5 : 3;
        if (d->end - h < fields) {
            truncated(d, h, (h - d->start) + fields);
            return -1;
        }
        n = fields == 3 ? mpk__load16(h + 1) : (Py_ssize_t)mpk__load32(h + 1);
    } else {
        is_map = -1;
        n = fields = 0;
    }
    if (is_map != want_map) {
        PyErr_SetString(PyExc_ValueError, "Unexpected type header on stream");
        return -1;
    }
    /* The header alone is read: its elements follow in later calls, so only the limit is
     * checked here, not the bytes they will take. */
    Py_ssize_t limit = is_map ? d->o->max_map : d->o->max_array;
    if (n > limit) {
        over_limit(d, h, n, is_map ? "max_map_len" : "max_array_len", limit);
        return -1;
    }
    d->p = h + fields;
    return n;
}

const char *mpkpy_utf8_path(void)
{
    return mpkpy_strbuild_path();
}

int mpkpy_decoder_init_module(void)
{
    mpkpy_strbuild_init();
    if (small_ints_init() < 0) return -1;
    PyDateTime_IMPORT;
    return PyDateTimeAPI ? 0 : -1;
}
