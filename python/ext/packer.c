/* packer.c — Python objects to MessagePack: the encoder, the Packer type and packb.
 *
 * Output goes through the C core's mpk_writer (c/include/mpk/writer.h; packb's grows a bytes object
 * in place, the Packer's its own buffer), whose value calls
 * are inline and check capacity once. The encoder tests exact types in the order they occur in
 * typical documents — str, int, float, list, dict, then the singletons — and sends everything else
 * (subclasses, bytes, ext, timestamps, datetime, the opt-in extras, default) to one out-of-line
 * function. */
#include "mpk_py.h"

#include <datetime.h>

#include "mpk/writer.h"
#include "fast_paths.h"
#include "stack_guard.h"

/* msgpack-python packs 1024 nested containers and refuses the 1025th; so does mpk. */
#define PACK_NEST_LIMIT 1024

/* Opt-in conversions beyond msgpack-python, handled by mpk._extras.convert (flags must match). */
enum {
    EXTRA_DATACLASS = 1,
    EXTRA_ENUM = 2,
    EXTRA_UUID = 4,
    EXTRA_DATE = 8,
    EXTRA_NAIVE_UTC = 16,
};

typedef struct encoder_options {
    PyObject *default_fn;      /* owned or NULL */
    PyObject *unicode_errors;  /* owned str or NULL (strict) */
    int use_single_float, use_bin_type, strict_types, datetime, sort_keys;
    unsigned extras;
} encoder_options;

typedef struct encoder {
    mpk_writer *w;
    const encoder_options *o;
    const char *errors;
    int plain; /* str as UTF-8 with str 8 allowed, floats as float 64: put_small_scalar's bytes */
    /* Where a failure is, filled in only while an error unwinds (see "Where a value failed"):
     * `steps` is a list of path steps, innermost first (NULL until the first); `in_key` says the
     * innermost failure was a map key; `foreign` that the error came from the user's code (a
     * default hook), whose exception is given a note instead of a longer message. */
    PyObject *steps;
    int in_key, foreign;
} encoder;

/* ================================================================================================
 * The encoder
 * ==============================================================================================*/

static int pack_obj(encoder *e, PyObject *o, int depth);
static int pack_dict(encoder *e, PyObject *o, int depth);

static MPK__NOINLINE int no_memory(void)
{
    PyErr_NoMemory();
    return -1;
}

/* After a run of writes: the writer's only possible failure in growable mode is memory. */
static inline int writer_ok(encoder *e)
{
    return LIKELY(mpk_writer_error(e->w) == MPK_OK) ? 0 : no_memory();
}

/* ADAPTER, to move into c/include/mpk/writer.h: a str of any length (n <= 2^32-1, checked by the
 * caller) in one inline step — one room check for head and body, the head stored in place, the body
 * by memcpy — where the core's mpk_write_str inlines only fixstr and str 8 up to 127 bytes and sends
 * the rest through mpk__write_str_slow (its chunk-mode test, length check, head assembly and
 * framed copy: about 50 instructions per str before the copy). Measured with callgrind
 * (python/bench/callgrind.py) on the workload "strings of length 0..1023" (1024 ASCII strs, 768 of
 * them over 255 bytes), together with pack_list's long-str step (put_long_ascii_str): see
 * bench/README.md. Writes the same bytes; a writer without room for n + 5 takes the core's path,
 * which grows it or reports it full exactly. */
MPK__INLINE void write_str_fast(mpk_writer *w, const char *data, size_t n)
{
    if (LIKELY((size_t)(w->end - w->pos) >= n + 5)) {
        uint8_t *p = w->pos;
        if (n <= 31) {
            *p++ = (uint8_t)(0xa0 | n);
        } else if (n <= 0xff) {
            p[0] = 0xd9;
            p[1] = (uint8_t)n;
            p += 2;
        } else if (n <= 0xffff) {
            p[0] = 0xda;
            mpk__store16(p + 1, (uint16_t)n);
            p += 3;
        } else {
            p[0] = 0xdb;
            mpk__store32(p + 1, (uint32_t)n);
            p += 5;
        }
        if (n) memcpy(p, data, n);
        w->pos = p + n;
        return;
    }
    mpk_write_str(w, data, n);
}

/* msgpack-python's raw header without the bin type: no str 8, as the old spec had none. */
static void write_str_head(encoder *e, Py_ssize_t n)
{
    if (e->o->use_bin_type || n <= 31 || n > 0xffff) {
        mpk_write_str_head(e->w, (uint32_t)n);
        return;
    }
    uint8_t head[3] = {0xda, (uint8_t)(n >> 8), (uint8_t)n};
    mpk_write_bytes(e->w, head, 3);
}

static int pack_bytes_body(encoder *e, const char *data, Py_ssize_t n, const char *what)
{
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) {
        PyErr_Format(PyExc_ValueError, "%s is too large", what);
        return -1;
    }
    if (e->o->use_bin_type)
        mpk_write_bin_head(e->w, (uint32_t)n);
    else
        write_str_head(e, n);
    mpk_write_bytes(e->w, data, (size_t)n);
    return writer_ok(e);
}

static inline int pack_str(encoder *e, PyObject *o)
{
    const char *data;
    Py_ssize_t n;
    PyObject *encoded = NULL;
    if (LIKELY(e->errors == NULL)) {
        if (PyUnicode_IS_COMPACT_ASCII(o)) {
            data = (const char *)(((PyASCIIObject *)o) + 1);
            n = PyUnicode_GET_LENGTH(o);
        } else {
            data = PyUnicode_AsUTF8AndSize(o, &n);
            if (!data) return -1;
        }
    } else {
        encoded = PyUnicode_AsEncodedString(o, "utf-8", e->errors);
        if (!encoded) return -1;
        data = PyBytes_AS_STRING(encoded);
        n = PyBytes_GET_SIZE(encoded);
    }
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) {
        Py_XDECREF(encoded);
        PyErr_SetString(PyExc_ValueError, "unicode string is too large");
        return -1;
    }
    if (LIKELY(e->o->use_bin_type))
        write_str_fast(e->w, data, (size_t)n);
    else {
        write_str_head(e, n);
        mpk_write_bytes(e->w, data, (size_t)n);
    }
    Py_XDECREF(encoded);
    return 0; /* the writer's error is sticky: checked once at the end (writer_ok) */
}



/* ---- ints in a list without a branch on their width (int_form_of, put_int_form) ---------------
 * mpk_write_int picks the form by a chain of up to five comparisons; in a list of ints of mixed
 * widths or random signs (py_int_array: every width from fixint to int 64; rb_integers: +-2^31)
 * the chain is mispredicted about every other int, and the int array pack cells were the closest to
 * the peers on every version (0.88-1.18x msgspec, quiet bench). Here the form comes from one table
 * lookup on the value's sign and significant bits, the head byte is a masked select, and the body is
 * one 8-byte big-endian store of the value shifted so its low bytes come first: one path whatever
 * the width. put_int_form writes the same bytes as mpk_write_int (tests/test_fast_paths.py checks
 * every form), always stores 9 bytes at p (the caller leaves them) and returns p + 1 + body length.
 * Used by put_int_run below; measured in bench/README.md ("Session 7"). The portable build
 * (MPKPY_PORTABLE, its own suite) and compilers without __builtin_clzll keep mpk_write_int. */
#if !defined(MPKPY_PORTABLE) && (defined(__GNUC__) || defined(__clang__))
#define MPKPY_INT_TABLE 1
/* One entry per form, four bytes read at once: the head byte (0 for a fixint, whose head is the
 * value itself), the mask of the value's low byte ORed into it (0xff for a fixint), the bytes to
 * advance (1 + body length), and the shift that brings the body's bytes to the top of 64 bits. */
#define IF_FORM(head, len) ((uint32_t)(head) | (uint32_t)((len) ? 0 : 0xff) << 8 | \
                            (uint32_t)(1 + (len)) << 16 | (uint32_t)((64 - 8 * (len)) & 63) << 24)
/* a non-negative value of b significant bits: fixint, uint 8/16/32/64 */
#define IF_POS(b) ((b) <= 7 ? IF_FORM(0, 0) : (b) <= 8 ? IF_FORM(0xcc, 1) : (b) <= 16 ? IF_FORM(0xcd, 2) \
                   : (b) <= 32 ? IF_FORM(0xce, 4) : IF_FORM(0xcf, 8))
/* a negative value whose ~v (= -v - 1) has b significant bits: negative fixint, int 8/16/32/64 */
#define IF_NEG(b) ((b) <= 5 ? IF_FORM(0, 0) : (b) <= 7 ? IF_FORM(0xd0, 1) : (b) <= 15 ? IF_FORM(0xd1, 2) \
                   : (b) <= 31 ? IF_FORM(0xd2, 4) : IF_FORM(0xd3, 8))
#define IF_8(F, b) F(b), F(b + 1), F(b + 2), F(b + 3), F(b + 4), F(b + 5), F(b + 6), F(b + 7)
#define IF_65(F) F(0), IF_8(F, 1), IF_8(F, 9), IF_8(F, 17), IF_8(F, 25), IF_8(F, 33), IF_8(F, 41), \
                 IF_8(F, 49), IF_8(F, 57)
/* [bits] for v >= 0, [65 + bits] for v < 0 */
static const uint32_t int_forms[130] = {IF_65(IF_POS), IF_65(IF_NEG)};

MPK__INLINE uint32_t int_form_of(int64_t v)
{
    uint64_t sign = (uint64_t)(v >> 63);  /* all ones when negative */
    uint64_t mag = (uint64_t)v ^ sign;    /* v, or ~v = -v - 1 */
    unsigned bits = 64u - (unsigned)__builtin_clzll(mag | 1);
    return int_forms[(sign & 65) + bits];
}

MPK__INLINE uint8_t *put_int_form(uint8_t *p, int64_t v, uint32_t f)
{
    p[0] = (uint8_t)(f | ((uint32_t)v & (f >> 8)));
    /* a fixint shifts by 0 and stores 8 bytes that the next value overwrites */
    mpk__store64(p + 1, (uint64_t)v << (f >> 24));
    return p + ((f >> 16) & 0xff);
}


/* ---- put_int_run: a run of ints in a list, up to 16 at a time --------------------------------
 * The ints are read first (value and form, into locals), then written. When every int of the 16
 * has the same form — a sorted or narrow list, such as c_ints (0..65535) — they are written by a
 * loop for that one form, whose position advances by a constant and whose body store has the
 * form's width: put_int_form there was 1.6x slower than the core's branchy writer (each position
 * then waits for the previous int's form, and every int stores 9 bytes). Otherwise
 * (mixed widths) by put_int_form, without a branch per int. The test of the 16 forms is one
 * branch per 16 ints, predicted for a list that is either. Returns how many items it wrote (0:
 * items[i] is not such an int, or no room); *pp advanced. */
#define INT_RUN 16
#define INT_RUN_MIN 8 /* shorter runs (citm_catalog's lists of 1-3 ids) cost more in set-up than they save */

/* k <= 16 ints of one form f (the advance per int, f >> 16, names it) */
MPK__INLINE uint8_t *put_int_same(uint8_t *p, const int64_t *vals, Py_ssize_t k, uint32_t f)
{
    uint8_t head = (uint8_t)f;
    switch ((f >> 16) & 0xff) {
    case 1: /* fixint */
        for (Py_ssize_t j = 0; j < k; j++) p[j] = (uint8_t)vals[j];
        return p + k;
    case 2:
        for (Py_ssize_t j = 0; j < k; j++, p += 2) {
            p[0] = head;
            p[1] = (uint8_t)vals[j];
        }
        return p;
    case 3:
        for (Py_ssize_t j = 0; j < k; j++, p += 3) {
            p[0] = head;
            mpk__store16(p + 1, (uint16_t)vals[j]);
        }
        return p;
    case 5:
        for (Py_ssize_t j = 0; j < k; j++, p += 5) {
            p[0] = head;
            mpk__store32(p + 1, (uint32_t)vals[j]);
        }
        return p;
    default:
        for (Py_ssize_t j = 0; j < k; j++, p += 9) {
            p[0] = head;
            mpk__store64(p + 1, (uint64_t)vals[j]);
        }
        return p;
    }
}

static MPK__NOINLINE Py_ssize_t put_int_run(uint8_t **pp, const uint8_t *end, PyObject *const *items, Py_ssize_t i,
                                   Py_ssize_t n)
{
    uint8_t *p = *pp;
    Py_ssize_t done = 0;
    for (;;) {
        int64_t vals[INT_RUN];
        uint32_t forms[INT_RUN];
        Py_ssize_t m = n - i < INT_RUN ? n - i : INT_RUN, k = 0;
        if (end - p < 9 * m) m = (end - p) / 9;
        uint32_t differ = 0;
        for (; k < m; k++) {
            PyObject *o = items[i + k];
            long long v;
            if (Py_TYPE(o) != &PyLong_Type) break;
            if (LIKELY(mpkpy_small_long(o, &v))) {
                forms[k] = int_form_of(v);
            } else { /* 61 to 64 bits (three digits), in the run too: such ints are common */
                uint64_t u;
                int negative;
                if (!mpkpy_wide_long(o, &u, &negative) || (negative && u > (uint64_t)1 << 63)) break;
                v = negative ? (long long)(0 - u) : (long long)u;
                /* uint 64 from 2^63: the same 8 bytes as the int64 they read as */
                forms[k] = !negative && (u >> 63) ? IF_FORM(0xcf, 8) : int_form_of(v);
            }
            vals[k] = v;
            differ |= forms[k] ^ forms[0];
        }
        if (k > 0 && differ == 0)
            p = put_int_same(p, vals, k, forms[0]);
        else
            for (Py_ssize_t j = 0; j < k; j++) p = put_int_form(p, vals[j], forms[j]);
        done += k;
        i += k;
        if (k < m || m == 0 || i >= n) break;
    }
    *pp = p;
    return done;
}
#endif


/* A float 64 at p (9 bytes, room checked by the caller); returns the byte after it. */
MPK__INLINE uint8_t *put_float64(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    p[0] = 0xcb;
    mpk__store64(p + 1, bits);
    return p + 9;
}

/* ---- put_float_run: a run of floats in a list (coordinates, vertex arrays) ---------------------
 * written without the dispatch per item that tests str and int first: rb_model3d pack (30k floats
 * in two lists of 15,000), callgrind 3.12, see bench/README.md (session 7). Only under a plain
 * encoder (floats as float 64). Returns how many items it wrote (0: none, or no room); *pp
 * advanced. Portable code: every build runs it. */
static MPK__NOINLINE Py_ssize_t put_float_run(uint8_t **pp, const uint8_t *end, PyObject *const *items,
                                              Py_ssize_t i, Py_ssize_t n)
{
    uint8_t *p = *pp;
    Py_ssize_t j = i;
    while (j < n && end - p >= 9 && Py_TYPE(items[j]) == &PyFloat_Type) {
        p = put_float64(p, PyFloat_AS_DOUBLE(items[j]));
        j++;
    }
    *pp = p;
    return j - i;
}

/* A three-digit int (mpkpy_wide_long) written without a call: 1, or 0 when it is not one or does
 * not fit 64 bits (the caller takes the API). */
MPK__INLINE int write_wide_long(mpk_writer *w, PyObject *o)
{
    uint64_t u;
    int negative;
    if (!mpkpy_wide_long(o, &u, &negative)) return 0;
    if (!negative) {
        mpk_write_uint(w, u);
        return 1;
    }
    if (u > (uint64_t)1 << 63) return 0;
    mpk_write_int(w, (int64_t)(0 - u));
    return 1;
}

/* 1: packed; 0: out of int64/uint64 range (no error set); -1: error. */
static inline int pack_long(encoder *e, PyObject *o)
{
    long long small;
    if (LIKELY(mpkpy_small_long(o, &small))) {
        mpk_write_int(e->w, small);
        return 1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (LIKELY(!overflow)) {
        if (UNLIKELY(v == -1 && PyErr_Occurred())) return -1;
        mpk_write_int(e->w, v);
        return 1;
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
            return 0;
        }
        mpk_write_uint(e->w, u);
        return 1;
    }
    return 0;
}

static inline int pack_float(encoder *e, double v)
{
    if (e->o->use_single_float) {
        /* PyFloat_Pack4 raises OverflowError for finite values beyond float 32, as msgpack does */
        uint8_t out[5] = {0xca};
        if (PyFloat_Pack4(v, (char *)out + 1, 0) < 0) return -1;
        mpk_write_bytes(e->w, out, 5);
    } else
        mpk_write_float64(e->w, v);
    return 0;
}

static MPK__NOINLINE int nest_error(void)
{
    PyErr_SetString(PyExc_ValueError, "recursion limit exceeded.");
    return -1;
}

/* A container level the thread's C stack has no room for (stack_guard.h): the encoder recurses once
 * per level, and a thread may have far less stack than PACK_NEST_LIMIT levels take. */
static MPK__NOINLINE int stack_error(void)
{
    PyErr_SetString(PyExc_ValueError, "recursion limit exceeded: nested deeper than the C stack allows.");
    return -1;
}

/* ------------------------------------------------------------------------------------------------
 * Where a value failed. Each container level that sees a child fail adds one step to e->steps on
 * its way out (an index `[3]`, or a key `['name']`), and encode_finish_error turns them into the
 * path `$[3]['name']` once the error leaves the encoder. Nothing of it runs unless a value fails:
 * the loops only call these on their error branch. Building a step never replaces the error
 * being reported; if a step cannot be built (no memory), the path is left out.
 * ----------------------------------------------------------------------------------------------*/

static void add_step(encoder *e, PyObject *step)
{
    if (!step) return;
    if (!e->steps) e->steps = PyList_New(0);
    if (e->steps) (void)PyList_Append(e->steps, step);
    Py_DECREF(step);
}

/* Describes a map key without running the user's code: str, int, float, bool, None and bytes keys
 * by their repr (strs cut at 40 characters), any other key by its type. */
static PyObject *key_step(PyObject *k)
{
    PyTypeObject *t = Py_TYPE(k);
    if (t == &PyUnicode_Type && PyUnicode_GET_LENGTH(k) > 40) {
        PyObject *head = PyUnicode_Substring(k, 0, 40);
        if (!head) return NULL;
        PyObject *step = PyUnicode_FromFormat("[%R...]", head);
        Py_DECREF(head);
        return step;
    }
    if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type ||
        k == Py_None || (t == &PyBytes_Type && PyBytes_GET_SIZE(k) <= 40))
        return PyUnicode_FromFormat("[%R]", k);
    return PyUnicode_FromFormat("[<%s key>]", t->tp_name);
}

/* The child at `index` of an array (k NULL), or the value of key k of a map, failed: -1. */
static MPK__NOINLINE int fail_at(encoder *e, PyObject *k, Py_ssize_t index)
{
    PyObject *exc = take_error();
    add_step(e, k ? key_step(k) : PyUnicode_FromFormat("[%zd]", index));
    give_error(exc);
    return -1;
}

/* A key of the map failed: the path ends at the map, and steps inside the key are dropped. -1. */
static MPK__NOINLINE int fail_in_key(encoder *e)
{
    Py_CLEAR(e->steps);
    e->in_key = 1;
    return -1;
}

/* A key and its value packed by the general path, both held: packing the key may run a default
 * hook that changes the dict they came from. 0, or -1 with the error and its path set. */
static int pack_pair_held(encoder *e, PyObject *k, PyObject *v, int depth)
{
    int rc;
    Py_INCREF(k);
    Py_INCREF(v);
    rc = pack_obj(e, k, depth + 1);
    if (rc < 0) rc = fail_in_key(e);
    else if ((rc = pack_obj(e, v, depth + 1)) < 0) rc = fail_at(e, k, 0);
    Py_DECREF(k);
    Py_DECREF(v);
    return rc;
}

/* The value v, last returned by PyDict_Next(o, &pos, ...), failed. Its key is looked up again
 * rather than held across the value's packing (a reference per value costs 2-4% of a map-heavy
 * pack, measured with callgrind on 3.12): if a default hook changed the dict so that the entry
 * before pos no longer holds v, the step is left out. -1. */
static MPK__NOINLINE int fail_at_next(encoder *e, PyObject *o, Py_ssize_t pos, PyObject *v)
{
    Py_ssize_t at = pos - 1;
    PyObject *k, *found;
    if (at >= 0 && PyDict_Next(o, &at, &k, &found) && at == pos && found == v) return fail_at(e, k, 0);
    return -1;
}

#ifdef MPKPY_DICT_ENTRIES
/* The value of entry i of dict o failed. The key is read again from the entry, not held across
 * the value's packing (a reference per value costs 2-4% of a map-heavy pack, measured with
 * callgrind on 3.12): a default hook that changed the dict meanwhile leaves the step out. -1. */
static MPK__NOINLINE int fail_at_entry(encoder *e, PyObject *o, const void *keys_before, const void *entries,
                                       int general, Py_ssize_t i)
{
    if (((PyDictObject *)o)->ma_keys != keys_before || ((PyDictObject *)o)->ma_values != NULL) return -1;
    PyObject *k, *v;
    mpkpy_dict_entry(entries, general, i, &k, &v);
    return k ? fail_at(e, k, 0) : -1;
}
#endif

/* The error leaves the encoder: an error of mpk's own gets the path in its message and as `.path`
 * (`can not serialize 'set' object at $['a'][1]`; a failure of the value itself keeps
 * msgpack-python's message); an error from the user's code, or one whose message is not a plain
 * str (UnicodeEncodeError), keeps its message and gets a note naming the path. */
static MPK__NOINLINE void encode_finish_error(encoder *e)
{
    PyObject *steps = e->steps;
    int in_key = e->in_key, foreign = e->foreign;
    e->steps = NULL;
    e->in_key = e->foreign = 0;
    PyObject *exc = take_error();
    if (!exc) {
        Py_XDECREF(steps);
        return;
    }
    PyObject *path = NULL, *parts = NULL;
    Py_ssize_t n = steps ? PyList_GET_SIZE(steps) : 0;
    if (steps && PyList_Reverse(steps) < 0) goto done;
    if (n > 24) { /* a cycle makes a path of 1,024 steps: show its two ends */
        PyObject *head = PyList_GetSlice(steps, 0, 12), *tail = PyList_GetSlice(steps, n - 12, n);
        PyObject *dots = PyUnicode_FromString("...");
        parts = head && tail && dots ? PySequence_Concat(head, tail) : NULL;
        if (parts && PyList_Insert(parts, 12, dots) < 0) Py_CLEAR(parts);
        Py_XDECREF(head);
        Py_XDECREF(tail);
        Py_XDECREF(dots);
        if (!parts) goto done;
    } else {
        parts = steps ? Py_NewRef(steps) : PyList_New(0);
        if (!parts) goto done;
    }
    PyObject *sep = PyUnicode_FromString("");
    PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    if (!joined) goto done;
    path = PyUnicode_FromFormat("$%U", joined);
    Py_DECREF(joined);
    if (!path) goto done;
    PyObject *t = (PyObject *)Py_TYPE(exc);
    PyObject *args = PyObject_GetAttrString(exc, "args");
    int own = !foreign && args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1 && PyUnicode_CheckExact(PyTuple_GET_ITEM(args, 0)) &&
              (t == PyExc_TypeError || t == PyExc_ValueError || t == PyExc_OverflowError || t == PyExc_RuntimeError);
    if (own) {
        if (n > 0 || in_key) {
            /* msgpack-python's "recursion limit exceeded." loses its full stop before the path */
            PyObject *text = PyTuple_GET_ITEM(args, 0), *msg = NULL;
            Py_ssize_t len = PyUnicode_GET_LENGTH(text);
            if (len > 0 && PyUnicode_READ_CHAR(text, len - 1) == '.') text = PyUnicode_Substring(text, 0, len - 1);
            else Py_INCREF(text);
            if (text) msg = PyUnicode_FromFormat("%U%s at %U", text, in_key ? " in a map key" : "", path);
            Py_XDECREF(text);
            PyObject *new_args = msg ? PyTuple_Pack(1, msg) : NULL;
            if (new_args && PyObject_SetAttrString(exc, "args", new_args) < 0) PyErr_Clear();
            Py_XDECREF(msg);
            Py_XDECREF(new_args);
        }
        if (PyObject_SetAttrString(exc, "path", path) < 0) PyErr_Clear();
    } else if (n > 0 || in_key) {
        PyObject *note = PyUnicode_FromFormat("while packing %s%U", in_key ? "a map key at " : "the value at ", path);
        PyObject *r = note ? PyObject_CallMethod(exc, "add_note", "O", note) : NULL;
        Py_XDECREF(note);
        Py_XDECREF(r);
    }
    Py_XDECREF(args);
done:
    Py_XDECREF(parts);
    Py_XDECREF(path);
    Py_XDECREF(steps);
    give_error(exc);
}

/* Packs str, int and float inline (1), or returns 0 for anything else. These run no Python code,
 * so the caller need not hold a reference to the item while they run. */
MPK__INLINE int pack_scalar(encoder *e, PyObject *o, int *rc)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) {
        if (LIKELY(e->errors == NULL && e->o->use_bin_type && PyUnicode_IS_COMPACT_ASCII(o) &&
                   (uint64_t)PyUnicode_GET_LENGTH(o) <= 0xffffffffu)) {
            write_str_fast(e->w, (const char *)(((PyASCIIObject *)o) + 1), (size_t)PyUnicode_GET_LENGTH(o));
            *rc = 0;
        } else {
            *rc = pack_str(e, o);
        }
        return 1;
    }
    if (t == &PyLong_Type) {
        long long v;
        if (LIKELY(mpkpy_small_long(o, &v))) {
            mpk_write_int(e->w, v);
            *rc = 0;
            return 1;
        }
        if (write_wide_long(e->w, o)) {
            *rc = 0;
            return 1;
        }
        return 0;
    }
    if (t == &PyFloat_Type) {
        *rc = pack_float(e, PyFloat_AS_DOUBLE(o));
        return 1;
    }
    return 0;
}

/* msgpack-python refuses any object, scalars too, nested deeper than its limit; the scalars packed
 * inline in the container loops have no check of their own, so the container checks for them. */

#define CHILDREN_TOO_DEEP(depth, n) \
    (UNLIKELY((depth) >= PACK_NEST_LIMIT && (n) > 0) || UNLIKELY(mpkpy_stack_exhausted(depth)))

/* The body of an ASCII str of n <= 255 bytes, with one branch (the loop's) where mpkpy_copy_short
 * (fast_paths.h) has a
 * chain of them: the lengths of strs in a list follow no pattern, so each of those branches was
 * mispredicted about half the time. Whole 16-byte blocks go forward; the last n % 16 bytes are read
 * as the 16 bytes that end at src + n and shifted into place. Those 16 bytes lie inside the str
 * object even when n < 16 — its header (at least 40 bytes) comes right before its data — so no
 * byte outside it is read. Writes up to 15 bytes past dst + n: the caller leaves 16. */
#if !defined(MPKPY_PORTABLE) && defined(__SIZEOF_INT128__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define STR_BODY_SLACK 16
MPK__INLINE void copy_str_body(uint8_t *dst, const char *src, size_t n)
{
    size_t whole = n & ~(size_t)15;
    for (size_t i = 0; i < whole; i += 16) memcpy(dst + i, src + i, 16);
    uint64_t lo, hi;
    memcpy(&lo, src + n - 16, 8);
    memcpy(&hi, src + n - 8, 8);
    unsigned __int128 tail = ((unsigned __int128)hi << 64) | lo;
    unsigned drop = (unsigned)(16 - (n - whole)) * 8; /* 8..128 bits; a shift by 128 is undefined */
    /* one variable shift (0..120 bits) and one by the constant 8: two variable shifts (drop / 2,
     * then the rest) cost 23 instructions a str (str array (10k) pack, 3.13: 963k per call) */
    tail >>= drop - 8;
    tail >>= 8;
    memcpy(dst + whole, &tail, 16);
}
#else
/* the portable build (MPK_PORTABLE=1, a suite of its own) runs this fallback */
#define STR_BODY_SLACK 0
#define copy_str_body(dst, src, n) mpkpy_copy_short((char *)(dst), (const uint8_t *)(src), (n))
#endif

/* Writes o at p if it is a scalar that packs the same under every option of a "plain" encoder (see
 * encoder.plain) — an int of up to 60 bits, an ASCII str of up to 255 bytes, a float, None, a bool —
 * and, for a str, fits before end: the new position, or NULL. The caller leaves at least 9 bytes
 * after end, so ints and floats need no check. Used with a local position in the list loop and
 * for packb's short values, so the position stays in a register and no capacity check runs per
 * item beyond one comparison. */
MPK__INLINE uint8_t *put_small_scalar(uint8_t *p, const uint8_t *end, PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) {
        if (!PyUnicode_IS_COMPACT_ASCII(o)) return NULL;
        Py_ssize_t n = PyUnicode_GET_LENGTH(o);
        const char *data = (const char *)(((PyASCIIObject *)o) + 1);
        if (n > 255 || end - p < n + 2 + STR_BODY_SLACK) return NULL;
        /* fixstr or str 8, chosen without a branch (see copy_str_body) */
        Py_ssize_t str8 = n > 31;
        p[0] = str8 ? 0xd9 : (uint8_t)(0xa0 | n);
        p[1] = (uint8_t)n; /* overwritten by the body when it is a fixstr */
        p += 1 + str8;
        copy_str_body(p, data, (size_t)n);
        return p + n;
    }
    if (t == &PyLong_Type) {
        long long v;
        mpk_writer w; /* the caller leaves 9 bytes of room: the capacity checks all pass */
        w.pos = p;
        w.end = p + 9;
        if (!mpkpy_small_long(o, &v)) return write_wide_long(&w, o) ? w.pos : NULL;
        if (v >= -32 && v <= 127) {
            *p = (uint8_t)v;
            return p + 1;
        }
        mpk_write_int(&w, v);
        return w.pos;
    }
    if (t == &PyFloat_Type) {
        return put_float64(p, PyFloat_AS_DOUBLE(o));
    }
    if (o == Py_None) {
        *p = 0xc0;
        return p + 1;
    }
    if (t == &PyBool_Type) {
        *p = o == Py_True ? 0xc3 : 0xc2;
        return p + 1;
    }
    return NULL;
}

/* pack_list's step for the ASCII strs put_small_scalar leaves — over 255 bytes, or short of room —
 * under a plain encoder: written through write_str_fast with the writer's position set from the
 * loop's and read back, without the full dispatch (the reference taken around a call that may run
 * Python code, pack_obj, pack_scalar: about 35 instructions per str). 1: written (or the writer
 * failed to grow: its error is sticky and reported at the end, as for every write); 0: not such a
 * str, nothing written. Measured with write_str_fast, see there. */
MPK__INLINE int put_long_ascii_str(mpk_writer *w, uint8_t *p, PyObject *o)
{
    if (Py_TYPE(o) != &PyUnicode_Type || !PyUnicode_IS_COMPACT_ASCII(o)) return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(o);
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) return 0; /* pack_str raises for it */
    w->pos = p;
    write_str_fast(w, (const char *)(((PyASCIIObject *)o) + 1), (size_t)n);
    return 1;
}

/* ---- a dict's entries written at a local position (put_key, put_small_value) -------------------
 * citm_catalog is 10,937 dicts, 9,592 of them {"areaId": <int>, "blockIds": []}: per entry the
 * entry walk wrote the key and an int value through the writer (its position loaded from and
 * stored to memory around every write, a room check per write), and sent each empty or short list
 * value through pack_obj and pack_list (a reference taken, the depth and stack checks, the float
 * list test, the array head through the writer, the dict re-checked after it). Here, under a plain
 * encoder, an entry whose key and value put_small_scalar writes — or whose value is a list of up to
 * 15 such scalars — is written at the walk's local position as pack_list writes its items; another
 * value (a container, mostly) is written by the general path after the key, and another key, or
 * too little room, sends the whole entry there. No Python code runs on this path (exact types
 * only), so the dict need not be re-checked after it. Measured with callgrind (instructions per
 * packb, workload values, bench/README.md "Final ... (session 10)"): citm_catalog 3.13 5.64M ->
 * 4.11M with put_key, twitter 2.28M -> 1.66M. The portable build (MPKPY_PORTABLE, its own suite)
 * keeps the general path for every entry; tests/test_fast_paths.py checks the bytes on both. */
#ifndef MPKPY_PORTABLE
#define MPKPY_LOCAL_ENTRIES 1
#define LOCAL_ENTRIES_MAX 64 /* dicts of up to 64 entries (see pack_dict) */
#define SMALL_LIST_ITEMS 15

/* A list value of up to 15 scalars (a fixarray), at depth `depth`: the new position, or NULL with
 * nothing that counts written. The caller leaves 9 bytes after lim. A list at the nesting limit
 * goes to the general path, which raises for it exactly as before. */
MPK__INLINE uint8_t *put_small_list(uint8_t *p, const uint8_t *lim, PyObject *o, int depth)
{
    Py_ssize_t n = PyList_GET_SIZE(o);
    if (n > SMALL_LIST_ITEMS || depth >= PACK_NEST_LIMIT) return NULL;
    PyObject *const *items = ((PyListObject *)o)->ob_item;
    *p++ = (uint8_t)(0x90 | n);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p > lim) return NULL; /* after a long str: no room left for 9 bytes */
        p = put_small_scalar(p, lim, items[i]);
        if (!p) return NULL;
    }
    return p;
}

/* ---- map keys written from their encoded bytes (put_key) --------------------------------------
 * A document repeats its keys, and they are the same str objects from dict to dict (a literal,
 * json's and mpk's own decoders share them): writing one by put_small_scalar is about 60
 * instructions (type and ASCII tests, the length checks, the head chosen, the body's tail shifted
 * into place; callgrind, citm_catalog pack, 3.13). Here a short ASCII key (a fixstr: up to 31
 * bytes) met again is found by its address in a direct-mapped table of 512 slots, which holds its
 * encoded bytes (head and body, 32 bytes copied whatever the length) and a reference to it, so
 * that no other object can take that address while the slot holds it (strs are immutable: the
 * bytes stay right). A key takes a slot on its second miss in a row there (key_bytes_seen, an
 * address only, never read through), so keys that never repeat cost a compare and a store each
 * instead of a slot's refill (which made a dict of 20,000 distinct keys 39% slower). At most 512
 * keys are kept alive. Used for dicts of up to 64 entries (pack_dict). Any other key, and a miss,
 * are written by put_small_scalar. Measured with callgrind: see bench/README.md "Final ...
 * (session 10)". The portable build (and a free-threaded one) has no table: every key is written
 * by put_small_scalar; tests/test_fast_paths.py test_dict_keys_from_the_key_table runs on both. */
#if !defined(Py_GIL_DISABLED)
#define MPKPY_KEY_BYTES 1
#define KEY_BYTES_SLOTS 512
#define KEY_BYTES_ROOM 32    /* bytes put_key may store at p: a fixstr's head and 31 bytes */

static PyObject *key_bytes_key[KEY_BYTES_SLOTS];  /* strong references, or NULL */
static PyObject *key_bytes_seen[KEY_BYTES_SLOTS]; /* the last key that missed: an address only */
static uint8_t key_bytes_data[KEY_BYTES_SLOTS][KEY_BYTES_ROOM];

/* A key missed twice in a row in its slot, just written at p..q: a fixstr takes the slot. */
static MPK__NOINLINE void key_bytes_take(size_t i, PyObject *k, const uint8_t *p, const uint8_t *q)
{
    if (Py_TYPE(k) != &PyUnicode_Type || (p[0] & 0xe0) != 0xa0) return;
    PyObject *old = key_bytes_key[i];
    memset(key_bytes_data[i], 0, KEY_BYTES_ROOM);
    memcpy(key_bytes_data[i], p, (size_t)(q - p)); /* 1 + n <= 32 */
    key_bytes_key[i] = Py_NewRef(k);
    Py_XDECREF(old); /* a str: its deallocation runs no Python code */
}

/* A map key at p, with KEY_BYTES_ROOM bytes of room at p and 9 after lim: the new position, or
 * NULL (not a scalar put_small_scalar writes; nothing that counts written). */
MPK__INLINE uint8_t *put_key(uint8_t *p, const uint8_t *lim, PyObject *k)
{
    size_t i = ((uintptr_t)k >> 4) & (KEY_BYTES_SLOTS - 1);
    if (LIKELY(key_bytes_key[i] == k)) {
        memcpy(p, key_bytes_data[i], KEY_BYTES_ROOM);
        return p + 1 + (key_bytes_data[i][0] & 0x1f);
    }
    uint8_t *q = put_small_scalar(p, lim, k);
    if (UNLIKELY(key_bytes_seen[i] == k) && q != NULL) key_bytes_take(i, k, p, q);
    key_bytes_seen[i] = k;
    return q;
}
#else
#define KEY_BYTES_ROOM 0
#define put_key(p, lim, k) put_small_scalar((p), (lim), (k))
#endif

/* The value v of an entry of a dict at depth `depth`, its key written, at p before end: the new
 * position, or NULL (nothing that counts written: the caller writes v by the general path from p;
 * a container mostly, whose key is then not written twice: GeoJSON's "coordinates"). */
MPK__INLINE uint8_t *put_small_value(uint8_t *p, const uint8_t *end, PyObject *v, int depth)
{
    if (end - p < 9) return NULL;
    uint8_t *q = put_small_scalar(p, end - 9, v);
    if (q != NULL) return q;
    if (Py_TYPE(v) == &PyList_Type) return put_small_list(p, end - 9, v, depth + 1);
    return NULL;
}
#endif

static int pack_sequence_items(encoder *e, PyObject *const *items, Py_ssize_t n, int depth)
{
    if (CHILDREN_TOO_DEEP(depth, n)) return depth >= PACK_NEST_LIMIT ? nest_error() : stack_error();
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) {
        PyErr_SetString(PyExc_ValueError, "list is too large");
        return -1;
    }
    mpk_write_array(e->w, (uint32_t)n);
    for (Py_ssize_t i = 0; i < n; i++)
        if (UNLIKELY(pack_obj(e, items[i], depth + 1) < 0)) return fail_at(e, NULL, i);
    return 0;
}

/* ADAPTER, to move into c/include/mpk/writer.h (a float 64 run): a short list of floats only —
 * coordinates, vectors, matrix rows — in one capacity check and without a type dispatch per
 * item. 1: written; 0: not such a list, nothing written. Writes the same bytes. */
/* its head is a fixarray, which holds at most 15: with 16 here, a list of exactly 16 floats was
 * written as 0x90 (an empty array) followed by its 16 floats (tests/test_fast_paths.py,
 * test_float_runs[16]) */
#define FLOAT_RUN_MAX 15
MPK__INLINE int write_float_list(encoder *e, PyObject *const *items, Py_ssize_t n)
{
    if (n > FLOAT_RUN_MAX || e->o->use_single_float) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyFloat_CheckExact(items[i])) return 0;
    mpk_writer *w = e->w;
    if (UNLIKELY(!mpk__writer_room(w, 1 + 9 * (size_t)n))) return 0; /* the slow path reports it */
    uint8_t *p = w->pos;
    *p++ = (uint8_t)(0x90 | n);
    for (Py_ssize_t i = 0; i < n; i++) p = put_float64(p, PyFloat_AS_DOUBLE(items[i]));
    w->pos = p;
    return 1;
}

static int pack_list(encoder *e, PyObject *o, int depth)
{
    Py_ssize_t n = PyList_GET_SIZE(o);
    if (CHILDREN_TOO_DEEP(depth, n)) return depth >= PACK_NEST_LIMIT ? nest_error() : stack_error();
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) {
        PyErr_SetString(PyExc_ValueError, "list is too large");
        return -1;
    }
    if (write_float_list(e, ((PyListObject *)o)->ob_item, n)) return 0;
    mpk_writer *w = e->w;
    mpk_write_array(w, (uint32_t)n);
    /* the scalars go through put_small_scalar at a local position, written back to the writer
     * only around the other items: in a long list of strs the position would otherwise make a
     * chain through memory, stored and reloaded around every copy (str array 10k: 9% faster) */
    const int plain = e->plain;
    uint8_t *p = w->pos, *end = w->end;
    /* the list's size and item array in locals, read again only after the full dispatch (the only
     * step that can run Python code: a default hook may shrink the list while we walk it). The
     * compiler cannot keep them in registers itself: every byte stored through p may alias them.
     * 2 instructions per item of c_ints (callgrind, 3.12). */
    Py_ssize_t size = n;
    PyObject *const *items = ((PyListObject *)o)->ob_item;
    /* runs of ints or floats (put_int_run, put_float_run), looked for in lists of 8 or more that
     * start with one: a list of containers or strs pays one predictable test per item */
    const int runs = n >= 8 && (Py_TYPE(items[0]) == &PyFloat_Type || Py_TYPE(items[0]) == &PyLong_Type);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (UNLIKELY(i >= size)) {
            w->pos = p;
            PyErr_SetString(PyExc_RuntimeError, "list changed size during packing");
            return -1;
        }
        PyObject *item = items[i];
        if (runs) {
            Py_ssize_t k = 0;
            if (Py_TYPE(item) == &PyFloat_Type && LIKELY(plain))
                k = put_float_run(&p, end, items, i, size < n ? size : n);
#ifdef MPKPY_INT_TABLE
            else if (Py_TYPE(item) == &PyLong_Type && (size < n ? size : n) - i >= INT_RUN_MIN)
                k = put_int_run(&p, end, items, i, size < n ? size : n);
#endif
            if (k > 0) {
                i += k - 1;
                continue;
            }
        }
        if (LIKELY(plain) && LIKELY(end - p >= 9)) {
            uint8_t *next = put_small_scalar(p, end - 9, item);
            if (LIKELY(next != NULL)) {
                p = next;
                continue;
            }
        }
        if (LIKELY(plain) && put_long_ascii_str(w, p, item)) {
            p = w->pos;
            end = w->end;
            continue;
        }
        /* everything else — containers, and the scalars put_small_scalar leaves (wide ints,
         * non-ASCII strs, an encoder that is not plain) — through the full dispatch */
        w->pos = p;
        int rc;
        Py_INCREF(item);
        PyTypeObject *t = Py_TYPE(item);
        if (t == &PyDict_Type && LIKELY(depth + 1 < PACK_NEST_LIMIT + 1))
            rc = pack_dict(e, item, depth + 1); /* lists of records: no second dispatch */
        else if (t == &PyList_Type && LIKELY(depth + 1 < PACK_NEST_LIMIT + 1))
            rc = pack_list(e, item, depth + 1); /* lists of lists: no second dispatch */
        else
            rc = pack_obj(e, item, depth + 1);
        Py_DECREF(item);
        if (UNLIKELY(rc < 0)) return fail_at(e, NULL, i);
        p = w->pos;
        end = w->end;
        size = PyList_GET_SIZE(o);
        items = ((PyListObject *)o)->ob_item;
    }
    w->pos = p;
    return 0;
}

static int pack_pairs_list(encoder *e, PyObject *pairs, int depth);

#ifdef MPKPY_DICT_ENTRIES
/* One entry of the entry walk (the dict o of n entries when the walk began, at depth `depth`; k
 * and v from slot i of its entries), written by the general path: 0, or -1 with the error set. */
/* The value of that entry, its key written. */
MPK__INLINE int pack_entry_value(encoder *e, PyObject *o, Py_ssize_t n, PyObject *k, PyObject *v, int depth,
                                 const void *keys_before, const void *entries, int general, Py_ssize_t i)
{
    int rc;
    if (LIKELY(pack_scalar(e, v, &rc))) {
        if (UNLIKELY(rc < 0)) return fail_at(e, k, 0);
        return 0;
    }
    Py_INCREF(v);
    rc = pack_obj(e, v, depth + 1);
    Py_DECREF(v);
    if (UNLIKELY(rc < 0)) return fail_at_entry(e, o, keys_before, entries, general, i);
    /* packing a container may have run a default hook that changed this dict */
    if (UNLIKELY(((PyDictObject *)o)->ma_keys != keys_before || ((PyDictObject *)o)->ma_values != NULL ||
                 PyDict_GET_SIZE(o) != n)) {
        PyErr_SetString(PyExc_RuntimeError, "dict changed size during packing");
        return -1;
    }
    return 0;
}

MPK__INLINE int pack_entry(encoder *e, PyObject *o, Py_ssize_t n, PyObject *k, PyObject *v, int depth,
                           const void *keys_before, const void *entries, int general, Py_ssize_t i)
{
    int rc;
    if (LIKELY(pack_scalar(e, k, &rc))) {
        if (UNLIKELY(rc < 0)) return fail_in_key(e);
        return pack_entry_value(e, o, n, k, v, depth, keys_before, entries, general, i);
    } else {
        rc = pack_pair_held(e, k, v, depth);
    }
    if (UNLIKELY(rc < 0)) return -1;
    /* packing a container may have run a default hook that changed this dict */
    if (UNLIKELY(((PyDictObject *)o)->ma_keys != keys_before || ((PyDictObject *)o)->ma_values != NULL ||
                 PyDict_GET_SIZE(o) != n)) {
        PyErr_SetString(PyExc_RuntimeError, "dict changed size during packing");
        return -1;
    }
    return 0;
}
#endif

static int pack_dict(encoder *e, PyObject *o, int depth)
{
    Py_ssize_t n = PyDict_GET_SIZE(o);
    if (CHILDREN_TOO_DEEP(depth, n)) return depth >= PACK_NEST_LIMIT ? nest_error() : stack_error();
    if (UNLIKELY(e->o->sort_keys)) {
        PyObject *items = PyDict_Items(o);
        if (!items) return -1;
        int rc = PyList_Sort(items) < 0 ? -1 : pack_pairs_list(e, items, depth);
        Py_DECREF(items);
        return rc;
    }
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) {
        PyErr_SetString(PyExc_ValueError, "dict is too large");
        return -1;
    }
    mpk_write_map(e->w, (uint32_t)n);
    Py_ssize_t pos = 0, seen = 0;
    PyObject *k, *v;
#ifdef MPKPY_DICT_ENTRIES
    int general;
    Py_ssize_t slots;
    const void *entries = mpkpy_dict_entries(o, &general, &slots);
    if (LIKELY(entries != NULL)) {
        const void *keys_before = ((PyDictObject *)o)->ma_keys;
#ifdef MPKPY_LOCAL_ENTRIES
        /* records only: a larger dict is mostly a map of distinct keys (ids to records), whose
         * keys would only miss in put_key's table; its entries take the general path, which
         * writes a str key through write_str_fast (a dict of 20,000 distinct keys: 2.42M
         * instructions per packb, 2.56M through put_small_scalar, 2.92M with the table) */
        if (LIKELY(e->plain) && n <= LOCAL_ENTRIES_MAX) {
            /* the walk's position, as in pack_list: stored to the writer only around the
             * general path */
            mpk_writer *w = e->w;
            uint8_t *p = w->pos, *end = w->end;
            for (Py_ssize_t i = 0; i < slots; i++) {
                mpkpy_dict_entry(entries, general, i, &k, &v);
                if (v == NULL) continue; /* a deleted entry */
                seen++;
                uint8_t *q = end - p >= 9 + KEY_BYTES_ROOM ? put_key(p, end - 9, k) : NULL;
                if (LIKELY(q != NULL)) {
                    uint8_t *next = put_small_value(q, end, v, depth);
                    if (LIKELY(next != NULL)) {
                        p = next;
                        continue;
                    }
                    /* the key is written: the value by the general path (a container, mostly) */
                    w->pos = q;
                    if (UNLIKELY(pack_entry_value(e, o, n, k, v, depth, keys_before, entries, general, i) < 0))
                        return -1;
                } else {
                    w->pos = p;
                    if (UNLIKELY(pack_entry(e, o, n, k, v, depth, keys_before, entries, general, i) < 0))
                        return -1;
                }
                p = w->pos;
                end = w->end;
            }
            w->pos = p;
            goto done;
        }
#endif
        for (Py_ssize_t i = 0; i < slots; i++) {
            mpkpy_dict_entry(entries, general, i, &k, &v);
            if (v == NULL) continue; /* a deleted entry */
            seen++;
            if (UNLIKELY(pack_entry(e, o, n, k, v, depth, keys_before, entries, general, i) < 0)) return -1;
        }
        goto done;
    }
#endif
    while (PyDict_Next(o, &pos, &k, &v)) {
        int rc;
        seen++;
        if (LIKELY(pack_scalar(e, k, &rc))) {
            if (UNLIKELY(rc < 0)) return fail_in_key(e);
            if (LIKELY(pack_scalar(e, v, &rc))) {
                if (UNLIKELY(rc < 0)) return fail_at(e, k, 0);
                continue;
            }
            Py_INCREF(v);
            rc = pack_obj(e, v, depth + 1);
            if (UNLIKELY(rc < 0)) rc = fail_at_next(e, o, pos, v);
            Py_DECREF(v);
        } else {
            rc = pack_pair_held(e, k, v, depth);
        }
        if (UNLIKELY(rc < 0)) return -1;
    }
#ifdef MPKPY_DICT_ENTRIES
done:
#endif
    if (UNLIKELY(seen != n)) {
        PyErr_SetString(PyExc_RuntimeError, "dict changed size during packing");
        return -1;
    }
    return 0;
}

/* A list of (key, value) 2-tuples or 2-sequences: sorted dict items, pack_map_pairs. */
static int pack_pairs_list(encoder *e, PyObject *pairs, int depth)
{
    PyObject *seq = PySequence_Fast(pairs, "pairs must be a sequence of (key, value)");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (CHILDREN_TOO_DEEP(depth, n)) {
        Py_DECREF(seq);
        return depth >= PACK_NEST_LIMIT ? nest_error() : stack_error();
    }
    if (UNLIKELY((uint64_t)n > 0xffffffffu)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "dict is too large");
        return -1;
    }
    mpk_write_map(e->w, (uint32_t)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, i), "pair must be (key, value)");
        if (!pair) goto fail;
        if (PySequence_Fast_GET_SIZE(pair) != 2) {
            Py_DECREF(pair);
            PyErr_SetString(PyExc_ValueError, "pair must be (key, value)");
            goto fail;
        }
        int rc = pack_obj(e, PySequence_Fast_GET_ITEM(pair, 0), depth + 1);
        if (rc < 0) rc = fail_in_key(e);
        else if ((rc = pack_obj(e, PySequence_Fast_GET_ITEM(pair, 1), depth + 1)) < 0)
            rc = fail_at(e, PySequence_Fast_GET_ITEM(pair, 0), 0);
        Py_DECREF(pair);
        if (rc < 0) goto fail;
    }
    Py_DECREF(seq);
    return 0;
fail:
    Py_DECREF(seq);
    return -1;
}

static int pack_ext(encoder *e, PyObject *code_obj, PyObject *data)
{
    long code = PyLong_AsLong(code_obj);
    if (code == -1 && PyErr_Occurred()) return -1;
    if (code < -128 || code > 127) {
        PyErr_SetString(PyExc_ValueError, "ext code must be -128~127");
        return -1;
    }
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "ext data must be bytes");
        return -1;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    if ((uint64_t)n > 0xffffffffu) {
        PyErr_SetString(PyExc_ValueError, "EXT data is too large");
        return -1;
    }
    mpk_write_ext(e->w, (int8_t)code, PyBytes_AS_STRING(data), (size_t)n);
    return writer_ok(e);
}

static int pack_timestamp_parts(encoder *e, PyObject *sec_obj, PyObject *nsec_obj)
{
    int overflow;
    long long sec = PyLong_AsLongLongAndOverflow(sec_obj, &overflow);
    if (sec == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
        PyErr_SetString(PyExc_OverflowError, "timestamp seconds out of int64 range");
        return -1;
    }
    unsigned long nsec = PyLong_AsUnsignedLong(nsec_obj);
    if (nsec == (unsigned long)-1 && PyErr_Occurred()) return -1;
    if (nsec > 999999999ul) {
        PyErr_SetString(PyExc_ValueError, "timestamp nanoseconds out of range");
        return -1;
    }
    mpk_write_timestamp(e->w, sec, (uint32_t)nsec);
    return writer_ok(e);
}

static int pack_timestamp(encoder *e, PyObject *ts)
{
    PyObject *sec = PyObject_GetAttr(ts, mpkpy_str_seconds);
    if (!sec) return -1;
    PyObject *nsec = PyObject_GetAttr(ts, mpkpy_str_nanoseconds);
    if (!nsec) {
        Py_DECREF(sec);
        return -1;
    }
    int rc = pack_timestamp_parts(e, sec, nsec);
    Py_DECREF(sec);
    Py_DECREF(nsec);
    return rc;
}

/* An aware datetime as a timestamp: (dt - epoch) in whole days, seconds and microseconds, exact
 * (float seconds would round far from the epoch). */
static int pack_datetime(encoder *e, PyObject *dt)
{
    PyObject *delta = PyNumber_Subtract(dt, mpkpy_epoch);
    if (!delta) return -1;
    long long sec = (long long)PyDateTime_DELTA_GET_DAYS(delta) * 86400 +
                    PyDateTime_DELTA_GET_SECONDS(delta);
    uint32_t nsec = (uint32_t)PyDateTime_DELTA_GET_MICROSECONDS(delta) * 1000u;
    Py_DECREF(delta);
    mpk_write_timestamp(e->w, sec, nsec);
    return writer_ok(e);
}

static int is_instance(PyObject *o, PyObject *cls, int strict)
{
    if ((PyObject *)Py_TYPE(o) == cls) return 1;
    if (strict) return 0;
    return PyObject_IsInstance(o, cls);
}

/* msgpack-python's ExtType and Timestamp, in a code base that uses both libraries: packed as what they
 * are (an ext, a timestamp), not as the tuple and object they also are, so that moving half of the
 * calls to mpk does not change the bytes. The package is never imported here: only when it is in
 * sys.modules already are its classes looked up (again whenever the module object changes). */
static PyObject *foreign_module, *foreign_ext, *foreign_ts;

/* 1: msgpack.ExtType, 2: msgpack.Timestamp, 0: neither (or msgpack not loaded), -1: error */
static int foreign_kind(PyObject *o, int strict)
{
    static PyObject *name;
    if (!name && !(name = PyUnicode_InternFromString("msgpack"))) return -1;
    PyObject *m = PyImport_GetModule(name);
    if (!m) return PyErr_Occurred() ? -1 : 0;
    if (m != foreign_module) {
        PyObject *ext = PyObject_GetAttrString(m, "ExtType");
        if (!ext) PyErr_Clear();
        PyObject *ts = PyObject_GetAttrString(m, "Timestamp");
        if (!ts) PyErr_Clear();
        Py_XSETREF(foreign_ext, ext);
        Py_XSETREF(foreign_ts, ts);
        Py_XSETREF(foreign_module, Py_NewRef(m));
    }
    Py_DECREF(m);
    int rc;
    if (foreign_ext && PyType_Check(foreign_ext) && (rc = is_instance(o, foreign_ext, strict)) != 0)
        return rc < 0 ? -1 : 1;
    if (foreign_ts && PyType_Check(foreign_ts) && (rc = is_instance(o, foreign_ts, strict)) != 0)
        return rc < 0 ? -1 : 2;
    return 0;
}

static MPK__NOINLINE int pack_uncommon(encoder *e, PyObject *o, int depth)
{
    const encoder_options *opt = e->o;
    int strict = opt->strict_types, default_used = 0, rc;
    PyObject *converted = NULL; /* owns the object being packed after a conversion */

    if (depth > PACK_NEST_LIMIT) return nest_error();
    if (UNLIKELY(mpkpy_stack_exhausted(depth))) return stack_error();
    for (;;) {
        PyTypeObject *t = Py_TYPE(o);
        if (o == Py_None) {
            mpk_write_nil(e->w);
            rc = writer_ok(e);
            break;
        }
        if (t == &PyBool_Type) {
            mpk_write_bool(e->w, o == Py_True);
            rc = writer_ok(e);
            break;
        }
        if (t == &PyBytes_Type || (!strict && PyBytes_Check(o))) {
            rc = pack_bytes_body(e, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o), "bytes");
            break;
        }
        if (t == &PyByteArray_Type || (!strict && PyByteArray_Check(o))) {
            rc = pack_bytes_body(e, PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o), "bytearray");
            break;
        }
        if (t == &PyTuple_Type && !strict) {
            rc = pack_sequence_items(e, &PyTuple_GET_ITEM(o, 0), PyTuple_GET_SIZE(o), depth);
            break;
        }
        if ((PyObject *)t == mpkpy_ExtType || (!strict && PyObject_IsInstance(o, mpkpy_ExtType) == 1)) {
            rc = pack_ext(e, PyTuple_GET_ITEM(o, 0), PyTuple_GET_ITEM(o, 1));
            break;
        }
        if (is_instance(o, mpkpy_Timestamp, strict) == 1) {
            rc = pack_timestamp(e, o);
            break;
        }
        if (t != &PyTuple_Type && t != &PyDict_Type && t != &PyList_Type) {
            int foreign = foreign_kind(o, strict);
            if (foreign < 0) { rc = -1; break; }
            if (foreign == 1) {
                PyObject *code = PyObject_GetAttrString(o, "code"), *data = code ? PyObject_GetAttrString(o, "data") : NULL;
                rc = data ? pack_ext(e, code, data) : -1;
                Py_XDECREF(code);
                Py_XDECREF(data);
                break;
            }
            if (foreign == 2) {
                rc = pack_timestamp(e, o);
                break;
            }
        }
        if (!strict) {
            if (PyUnicode_Check(o)) { rc = pack_str(e, o); break; }
            if (PyLong_Check(o)) {
                rc = pack_long(e, o);
                if (rc == 0) goto int_overflow;
                rc = rc < 0 ? -1 : 0;
                break;
            }
            if (PyFloat_Check(o)) { rc = pack_float(e, PyFloat_AS_DOUBLE(o)); break; }
            if (PyList_Check(o) || PyTuple_Check(o)) {
                PyObject *seq = PySequence_Fast(o, "");
                if (!seq) { rc = -1; break; }
                rc = pack_sequence_items(e, PySequence_Fast_ITEMS(seq), PySequence_Fast_GET_SIZE(seq), depth);
                Py_DECREF(seq);
                break;
            }
            if (PyDict_Check(o)) {
                PyObject *items = PyMapping_Items(o);
                if (!items) { rc = -1; break; }
                if (e->o->sort_keys && PyList_Sort(items) < 0) rc = -1;
                else rc = pack_pairs_list(e, items, depth);
                Py_DECREF(items);
                break;
            }
            if (PyObject_CheckBuffer(o) && PyMemoryView_Check(o)) {
                Py_buffer view;
                if (mpkpy_get_view(o, &view) < 0) { rc = -1; break; }
                rc = pack_bytes_body(e, view.buf, view.len, "memoryview");
                PyBuffer_Release(&view);
                break;
            }
        } else if (t == &PyMemoryView_Type) {
            Py_buffer view;
            if (mpkpy_get_view(o, &view) < 0) { rc = -1; break; }
            rc = pack_bytes_body(e, view.buf, view.len, "memoryview");
            PyBuffer_Release(&view);
            break;
        }
        if (opt->datetime && PyDateTime_Check(o) &&
            ((PyDateTime_DateTime *)o)->hastzinfo && ((PyDateTime_DateTime *)o)->tzinfo != Py_None) {
            rc = pack_datetime(e, o);
            break;
        }
        if (opt->extras) {
            PyObject *r = PyObject_CallFunction(mpkpy_extras_convert, "OI", o, opt->extras);
            if (!r) { e->foreign = 1; rc = -1; break; }
            if (r != Py_NotImplemented) {
                Py_XSETREF(converted, r);
                o = r;
                continue;
            }
            Py_DECREF(r);
        }
        if (opt->default_fn && !default_used) {
            PyObject *r = PyObject_CallOneArg(opt->default_fn, o);
            if (!r) { e->foreign = 1; rc = -1; break; }
            default_used = 1;
            Py_XSETREF(converted, r);
            o = r;
            /* the result goes through the fast path too */
            t = Py_TYPE(o);
            if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyFloat_Type ||
                t == &PyList_Type || t == &PyDict_Type) {
                rc = pack_obj(e, o, depth);
                break;
            }
            continue;
        }
        if (opt->datetime && PyDateTime_Check(o)) {
            PyErr_Format(PyExc_ValueError, "can not serialize '%.200s' object where tzinfo=None",
                         Py_TYPE(o)->tp_name);
        } else {
            PyErr_Format(PyExc_TypeError, "can not serialize '%.200s' object", Py_TYPE(o)->tp_name);
        }
        rc = -1;
        break;
    int_overflow:
        if (opt->default_fn && !default_used) {
            PyObject *r = PyObject_CallOneArg(opt->default_fn, o);
            if (!r) { e->foreign = 1; rc = -1; break; }
            default_used = 1;
            Py_XSETREF(converted, r);
            o = r;
            continue;
        }
        PyErr_SetString(PyExc_OverflowError, "Integer value out of range");
        rc = -1;
        break;
    }
    Py_XDECREF(converted);
    return rc;
}

static int pack_obj(encoder *e, PyObject *o, int depth)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) return pack_str(e, o);
    if (t == &PyLong_Type) {
        int rc = pack_long(e, o);
        if (LIKELY(rc > 0)) return 0;
        if (rc < 0) return -1;
        return pack_uncommon(e, o, depth); /* out of range: default, or OverflowError */
    }
    if (t == &PyFloat_Type) return pack_float(e, PyFloat_AS_DOUBLE(o));
    if (t == &PyList_Type) {
        if (UNLIKELY(depth >= PACK_NEST_LIMIT + 1)) return nest_error();
        return pack_list(e, o, depth);
    }
    if (t == &PyDict_Type) {
        if (UNLIKELY(depth >= PACK_NEST_LIMIT + 1)) return nest_error();
        return pack_dict(e, o, depth);
    }
    return pack_uncommon(e, o, depth);
}

/* ================================================================================================
 * Options
 * ==============================================================================================*/

static void encoder_options_clear(encoder_options *o)
{
    Py_CLEAR(o->default_fn);
    Py_CLEAR(o->unicode_errors);
}

static char *packer_kwlist[] = {"default", "use_single_float", "autoreset", "use_bin_type",
                                "strict_types", "datetime", "unicode_errors", "buf_size",
                                "sort_keys", "dataclass", "enum", "uuid", "date", "naive_utc", NULL};

/* buf_size as msgpack-python reads it: None (the default), or an int (a float is truncated) that
 * becomes the buffer's first capacity; TypeError for anything else, OverflowError below 0. */
static int buf_size_arg(PyObject *buf_size, size_t *out)
{
    *out = 0;
    if (buf_size == Py_None) return 0;
    PyObject *n = PyFloat_Check(buf_size) ? PyNumber_Long(buf_size) : NULL;
    if (!n && PyErr_Occurred()) return -1;
    if (!n && !PyLong_Check(buf_size)) {
        PyErr_SetString(PyExc_TypeError, "an integer is required");
        return -1;
    }
    size_t v = PyLong_AsSize_t(n ? n : buf_size);
    Py_XDECREF(n);
    if (v == (size_t)-1 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

/* Parses Packer's keywords (args must be empty). autoreset goes to *autoreset, buf_size to
 * *initial (0: the default). */
static int encoder_options_parse(encoder_options *o, int *autoreset, size_t *initial, PyObject *args,
                                 PyObject *kwargs, const char *fname)
{
    PyObject *default_fn = Py_None, *unicode_errors = Py_None, *buf_size = Py_None;
    int use_single_float = 0, ar = 1, use_bin_type = 1, strict_types = 0, datetime = 0, sort_keys = 0;
    int dataclass = 0, enum_ = 0, uuid = 0, date = 0, naive_utc = 0;
    char fmt[64];
    PyOS_snprintf(fmt, sizeof fmt, "|$OpppppOOpppppp:%s", fname);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, fmt, packer_kwlist, &default_fn,
                                     &use_single_float, &ar, &use_bin_type, &strict_types,
                                     &datetime, &unicode_errors, &buf_size, &sort_keys, &dataclass,
                                     &enum_, &uuid, &date, &naive_utc))
        return -1;
    size_t buf_size_v;
    if (buf_size_arg(buf_size, &buf_size_v) < 0) return -1;
    if (initial) *initial = buf_size_v;
    if (default_fn != Py_None && !PyCallable_Check(default_fn)) {
        PyErr_SetString(PyExc_TypeError, "default must be a callable.");
        return -1;
    }
    if (unicode_errors != Py_None && !PyUnicode_Check(unicode_errors)) {
        PyErr_SetString(PyExc_TypeError, "unicode_errors must be a str or None");
        return -1;
    }
    memset(o, 0, sizeof *o);
    if (default_fn != Py_None) o->default_fn = Py_NewRef(default_fn);
    if (unicode_errors != Py_None) o->unicode_errors = Py_NewRef(unicode_errors);
    o->use_single_float = use_single_float;
    o->use_bin_type = use_bin_type;
    o->strict_types = strict_types;
    o->datetime = datetime;
    o->sort_keys = sort_keys;
    o->extras = (dataclass ? EXTRA_DATACLASS : 0) | (enum_ ? EXTRA_ENUM : 0) |
                (uuid ? EXTRA_UUID : 0) | (date ? EXTRA_DATE : 0) | (naive_utc ? EXTRA_NAIVE_UTC : 0);
    if (autoreset) *autoreset = ar;
    return 0;
}

static const encoder_options default_options = {NULL, NULL, 0, 1, 0, 0, 0, 0};

static int encoder_start(encoder *e, const encoder_options *o)
{
    e->o = o;
    e->errors = NULL;
    e->steps = NULL;
    e->in_key = e->foreign = 0;
    if (o->unicode_errors) {
        e->errors = PyUnicode_AsUTF8(o->unicode_errors);
        if (!e->errors) return -1;
    }
    e->plain = e->errors == NULL && o->use_bin_type && !o->use_single_float;
    return 0;
}

/* Packs one object. The C recursion is bounded by PACK_NEST_LIMIT, so no interpreter recursion
 * guard is needed; a default hook that recurses in Python meets Python's own. */
static int encode_top(encoder *e, PyObject *obj)
{
    int rc = pack_obj(e, obj, 0);
    if (UNLIKELY(rc < 0)) {
        encode_finish_error(e);
        return -1;
    }
    return writer_ok(e);
}

/* ================================================================================================
 * packb
 * ==============================================================================================*/

/* packb builds a large result in place: once the output outgrows a static scratch buffer, the
 * writer grows a bytes object of ours (refcount 1, not yet seen by anyone) through _PyBytes_Resize,
 * so a large output is never copied whole into a new object at the end (the bench's 10k-str array,
 * 246 KB: 123 -> 115 us per packb, 0.91-0.93x -> 0.96-0.99x msgspec). A small output stays in the scratch buffer, which is hot in
 * the cache and needs no allocation, and is copied into an exact-size object (measured: starting
 * every call in a fresh bytes object made small messages 10-30% slower). A default hook that calls
 * packb again finds the scratch busy and starts in a bytes object of its own. */
#define PACKB_SCRATCH 4096
#define PACKB_NESTED_INITIAL 256
/* Why packb's scratch, its writer and packb_size_hint (below) are C statics and not module state:
 * the module is single-phase (module_def.m_size -1, module.c) and everything else it holds is
 * process-wide too — the static Packer and Unpacker types, the exception classes, the decoder's key
 * cache — so these two in module state would not make it per-interpreter, and the GIL serialises
 * every packb (a free-threaded build re-enables the GIL for a single-phase module; a nested call
 * from a default hook finds packb_scratch_busy set and takes its own buffer). Reaching the state
 * costs a call per packb: PyModule_GetState added 15 instructions to a 1,625-instruction packb of
 * Product (callgrind, 3.12, session 7). They move with the rest if the module goes multi-phase. */
static uint8_t packb_scratch[PACKB_SCRATCH];
static int packb_scratch_busy;

typedef struct packb_output {
    PyObject *bytes; /* NULL while the output is in packb_scratch (or nowhere yet) */
    int scratch;     /* the first buffer is packb_scratch */
    const mpk_writer *w; /* the writer it serves: how much of the scratch is used */
} packb_output;

static void *grow_output(void *ctx, void *old, size_t size)
{
    packb_output *out = (packb_output *)ctx;
    if (size > (size_t)PY_SSIZE_T_MAX - 1) return NULL;
    if (!old && out->scratch) return packb_scratch; /* size is PACKB_SCRATCH */
    if (!out->bytes) {
        out->bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
        if (!out->bytes) return NULL;
        /* old is the scratch: only what is written is copied. A large body that outgrows it (an
         * 8 KiB bytes value behind a few head bytes) then costs one copy, into the object that
         * becomes the result (the writer asks for at least what the body needs), instead of a
         * copy of the whole 4 KiB scratch first (Test3, one 8 KiB bin, 3.12: see bench/README.md) */
        if (old) memcpy(PyBytes_AS_STRING(out->bytes), old, mpk_writer_size(out->w));
        return PyBytes_AS_STRING(out->bytes);
    }
    /* on failure _PyBytes_Resize frees the object and sets out->bytes to NULL; the writer forgets it */
    if (_PyBytes_Resize(&out->bytes, (Py_ssize_t)size) < 0) return NULL;
    return PyBytes_AS_STRING(out->bytes);
}

/* Cuts the grown object to the bytes written. Moving it to a smaller block would cost, for a large
 * result in its own mapping, an mremap whose smaller block, once freed, keeps glibc's adaptive mmap
 * threshold below the next call's peak: every call then maps, faults in and unmaps its buffer
 * again (measured: 264 KB and 524 KB results packed at 0.56-0.59x msgspec's speed instead of
 * 1.1-1.3x). So the size is just set, leaving idle the unused tail of the last doubling (under half
 * of the block), unless more than half of it is idle (one large body from a default hook, say). */
static PyObject *finish_bytes(PyObject *out, size_t size)
{
    size_t cap = (size_t)PyBytes_GET_SIZE(out);
    if (size >= cap / 2) {
        Py_SET_SIZE(out, (Py_ssize_t)size);
        PyBytes_AS_STRING(out)[size] = '\0';
        return out;
    }
    if (_PyBytes_Resize(&out, (Py_ssize_t)size) < 0) return NULL;
    return out;
}

/* The first buffer is the scratch: the writer is set up once and reused (initialising one per
 * call, about 100 instructions with two memsets, measured 90 -> 120 ns on [1, 2]); it is set up again
 * only after a call left the scratch or failed. */
static mpk_writer packb_writer;
static packb_output packb_out;
static int packb_writer_ready;

static void packb_writer_setup(void)
{
    packb_out.bytes = NULL;
    packb_out.scratch = 1;
    packb_out.w = &packb_writer;
    mpk_writer_init_alloc(&packb_writer, PACKB_SCRATCH, grow_output, &packb_out);
    packb_writer_ready = 1;
}

static PyObject *packb_into(mpk_writer *w, packb_output *out, PyObject *obj, const encoder_options *opt)
{
    encoder e;
    e.w = w;
    /* encode_top has checked the writer's error. mpk_writer_finish is not called: in this mode it
     * only fences streaming stores for other threads, and the bytes object reaches another thread
     * only through the interpreter's locking, itself a full fence. */
    int ok = encoder_start(&e, opt) == 0 && encode_top(&e, obj) == 0;
    size_t size = mpk_writer_size(w);
    if (!ok) {
        Py_CLEAR(out->bytes);
        return NULL;
    }
    if (!out->bytes) return mpkpy_bytes_copy(packb_scratch, (Py_ssize_t)size);
    PyObject *result = finish_bytes(out->bytes, size);
    out->bytes = NULL;
    return result;
}

/* ---- the size of the last large result ------------------------------------------------------
 * A result that outgrows the scratch grows by doublings (the core's writer asks for twice the
 * capacity), each a realloc, which glibc serves by copying whenever the block cannot grow where it
 * lies: a neighbour in the way, or the top of the heap too short (it does not extend the heap in
 * place). How much is copied depends on the state of the heap, which the rest of the process sets:
 * measured with callgrind on CPython 3.12, packb of `strings of length 0..1023` (1024 ASCII strs,
 * 527 KB) spent 336k instructions per call in realloc's copies in a fresh process, and 827k after
 * bench.py's earlier datasets had shaped the heap (the strs' own copies: 70k; msgspec in the same
 * two states: 510k and 890k per call in all), which is why the bench had it at 0.64x msgspec where a
 * fresh process had it level. Programs pack runs of messages of similar sizes, so a call that
 * follows a large result starts in an object sized for that result plus an eighth, where the
 * writer knows the whole capacity: a repeated size is written once, into its final object, with no
 * realloc (3.12, same value: 151k instructions per call in both states). A larger result grows from
 * there as before; a smaller one is cut down at the end (finish_bytes: a shrink in place). The hint
 * is the size of the last top-level result, so it is cleared by the first small one: after one huge
 * result, the next call alone allocates that much once more. Portable code: every build runs it. */
static size_t packb_size_hint;

/* packb into its own object of `initial` bytes (a nested call, or after a large result), or NULL
 * with *tried 0 when that first object could not be had (the caller falls back, no error left). */
static PyObject *packb_own(PyObject *obj, const encoder_options *opt, size_t initial, int *tried)
{
    mpk_writer own;
    packb_output own_out = {NULL, 0, &own};
    mpk_writer_init_alloc(&own, initial, grow_output, &own_out);
    if (UNLIKELY(mpk_writer_error(&own) != MPK_OK)) {
        PyErr_Clear();
        *tried = 0;
        return NULL;
    }
    *tried = 1;
    PyObject *result = packb_into(&own, &own_out, obj, opt);
    mpk_writer_destroy(&own); /* frees nothing: the buffer was own_out's bytes object */
    return result;
}

static PyObject *packb_with(PyObject *obj, const encoder_options *opt)
{
    int tried;
    if (UNLIKELY(packb_scratch_busy)) {
        PyObject *result = packb_own(obj, opt, PACKB_NESTED_INITIAL, &tried);
        return tried ? result : PyErr_NoMemory();
    }
    packb_scratch_busy = 1; /* a nested call (a default hook's) takes the path above */
    PyObject *result;
    if (UNLIKELY(packb_size_hint > PACKB_SCRATCH)) {
        size_t hinted = packb_size_hint + packb_size_hint / 8;
        result = packb_own(obj, opt, hinted, &tried);
        if (tried) {
            packb_size_hint = result ? (size_t)PyBytes_GET_SIZE(result) : 0;
            packb_scratch_busy = 0;
            return result;
        }
    }
    if (UNLIKELY(!packb_writer_ready)) packb_writer_setup();
    result = packb_into(&packb_writer, &packb_out, obj, opt);
    packb_size_hint = result ? (size_t)PyBytes_GET_SIZE(result) : 0;
    if (LIKELY(packb_writer.buf == packb_scratch && mpk_writer_error(&packb_writer) == MPK_OK))
        packb_writer.pos = packb_writer.buf; /* what mpk_writer_reset does here, without the call */
    else
        packb_writer_setup();
    packb_scratch_busy = 0;
    return result;
}

/* ---- short flat values ------------------------------------------------------------------------
 * Small messages — a request [id, "method", arg], a pair of coordinates, a lone scalar — cost
 * mostly the call and the result object, and the general path's layers (the writer, its capacity
 * checks, the dispatch per level) were as much again as the encoding (measured on [1, 2]: 210
 * instructions besides the bytes object). With the default options, a scalar or a list or tuple of
 * up to 15 scalars (ints of up to 60 bits, str, float, None, bool) is written straight into a stack
 * buffer; anything else — a container inside, a str that does not fit, another type — gives up
 * before the first call into Python, and the general path starts over. */
#define SMALL_ITEMS 15
#define SMALL_BUF 512

/* packb(o) with the default options for a short flat value, or NULL (no error set) to say "use the
 * general path". */
static inline PyObject *packb_small(PyObject *o)
{
    uint8_t buf[SMALL_BUF];
    /* ints, floats and the singletons take at most 9 bytes; a str checks its own length */
    const uint8_t *end = buf + SMALL_BUF - 9;
    uint8_t *p = buf;
    PyObject *const *items;
    Py_ssize_t n;
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyList_Type) {
        items = ((PyListObject *)o)->ob_item;
        n = PyList_GET_SIZE(o);
    } else if (t == &PyTuple_Type) {
        items = ((PyTupleObject *)o)->ob_item;
        n = PyTuple_GET_SIZE(o);
    } else {
        p = put_small_scalar(p, end, o);
        return p ? mpkpy_bytes_copy(buf, p - buf) : NULL;
    }
    if (n > SMALL_ITEMS) return NULL;
    *p++ = (uint8_t)(0x90 | n);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p > end) return NULL; /* after a long str: no room left for 9 bytes */
        p = put_small_scalar(p, end, items[i]);
        if (!p) return NULL;
    }
    return mpkpy_bytes_copy(buf, p - buf);
}

PyObject *mpkpy_packb(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "packb() takes exactly one positional argument");
        return NULL;
    }
    if (LIKELY(kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0)) {
        PyObject *r = packb_small(args[0]);
        if (LIKELY(r != NULL) || PyErr_Occurred()) return r;
        return packb_with(args[0], &default_options);
    }
    PyObject *kwargs = PyDict_New(), *empty = PyTuple_New(0);
    PyObject *result = NULL;
    if (kwargs && empty) {
        Py_ssize_t nk = PyTuple_GET_SIZE(kwnames), i;
        for (i = 0; i < nk; i++)
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) break;
        encoder_options opt;
        if (i == nk && encoder_options_parse(&opt, NULL, NULL, empty, kwargs, "packb") == 0) {
            result = packb_with(args[0], &opt);
            encoder_options_clear(&opt);
        }
    }
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    return result;
}

/* ================================================================================================
 * Packer
 * ==============================================================================================*/

typedef struct {
    PyObject_HEAD
    encoder_options opt;
    mpk_writer w;
    int autoreset;
    Py_ssize_t exports; /* live memoryviews from getbuffer(): the buffer must not move */
    int busy;           /* a pack runs: a hook (default, a dataclass field...) may call us back */
} Packer;

/* A call made while a pack runs - from its `default` hook, or from another thread while the hook
 * has let the GIL go - would write into the middle of the value being packed, empty or re-create
 * the buffer under it, or export a view of memory the pack is about to move: refused, and the
 * running pack goes on unharmed. */
static int check_not_busy(Packer *self)
{
    if (UNLIKELY(self->busy)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Packer is already running a call (called again from a hook or another thread)");
        return -1;
    }
    return 0;
}

/* Before a call that writes, empties or re-creates the buffer: no pack runs (check_not_busy) and
 * no memoryview from getbuffer() is alive (the buffer must not move under it). */
static int check_writable(Packer *self)
{
    if (check_not_busy(self) < 0) return -1;
    if (self->exports > 0) {
        PyErr_SetString(PyExc_BufferError, "Existing exports of data: object cannot be re-sized");
        return -1;
    }
    return 0;
}

static int Packer_init(Packer *self, PyObject *args, PyObject *kwargs)
{
    encoder_options opt;
    int autoreset = 1;
    if (PyTuple_GET_SIZE(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "Packer() takes no positional arguments");
        return -1;
    }
    size_t initial = 0;
    if (check_not_busy(self) < 0) return -1;
    if (encoder_options_parse(&opt, &autoreset, &initial, args, kwargs, "Packer") < 0) return -1;
    if (check_writable(self) < 0) {
        encoder_options_clear(&opt);
        return -1;
    }
    encoder_options_clear(&self->opt);
    self->opt = opt;
    self->autoreset = autoreset;
    mpk_writer_destroy(&self->w);
    mpk_writer_init_growable(&self->w, initial ? initial : 1024);
    if (mpk_writer_error(&self->w) != MPK_OK) {
        mpk_writer_init_growable(&self->w, 1024);
        PyErr_SetString(PyExc_MemoryError, "Unable to allocate internal buffer.");
        return -1;
    }
    return 0;
}

static PyObject *Packer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Packer *self = (Packer *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->opt = default_options;
    self->autoreset = 1;
    mpk_writer_init_growable(&self->w, 1024);
    return (PyObject *)self;
}

static void Packer_dealloc(Packer *self)
{
    PyObject_GC_UnTrack(self);
    encoder_options_clear(&self->opt);
    mpk_writer_destroy(&self->w);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Packer_traverse(Packer *self, visitproc visit, void *arg)
{
    Py_VISIT(self->opt.default_fn);
    return 0;
}

static int Packer_clear(Packer *self)
{
    Py_CLEAR(self->opt.default_fn);
    return 0;
}

/* Drops what was written after `mark` bytes, and a write error with it (growable mode: the bytes
 * before the mark are intact whether or not a growth failed): the core's mpk_writer_rewind. */
static void writer_rewind(mpk_writer *w, size_t mark)
{
    /* the Packer's writer is growable and mark is a size it reported, so the core's rewind cannot
     * refuse; should it ever, the buffer is emptied rather than left in an unknown state */
    if (mpk_writer_rewind(w, mark) != MPK_OK) mpk_writer_reset(w);
}

/* The end of every public write: with autoreset, hand back the bytes and empty the buffer. On an
 * error the half-written value is dropped and what the buffer held before the call stays (with
 * autoreset=False, the values packed by earlier calls). */
static PyObject *finish_write(Packer *self, int rc, size_t mark)
{
    if (rc < 0 || mpk_writer_error(&self->w) != MPK_OK) {
        if (rc >= 0) PyErr_NoMemory();
        writer_rewind(&self->w, mark);
        return NULL;
    }
    if (!self->autoreset) Py_RETURN_NONE;
    PyObject *r = PyBytes_FromStringAndSize((const char *)mpk_writer_data(&self->w), (Py_ssize_t)mpk_writer_size(&self->w));
    mpk_writer_reset(&self->w);
    return r;
}

static PyObject *Packer_pack(Packer *self, PyObject *obj)
{
    if (check_writable(self) < 0) return NULL;
    size_t mark = mpk_writer_size(&self->w);
    encoder e;
    e.w = &self->w;
    self->busy = 1;
    int rc = encoder_start(&e, &self->opt);
    if (rc == 0) rc = encode_top(&e, obj);
    self->busy = 0;
    return finish_write(self, rc, mark);
}

static int count_arg(PyObject *arg, const char *what, uint32_t *out)
{
    unsigned long long n;
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s size must be an integer", what);
        return -1;
    }
    if (_PyLong_Sign(arg) < 0) {
        PyErr_Format(PyExc_ValueError, "%s size must be non-negative", what);
        return -1;
    }
    n = PyLong_AsUnsignedLongLong(arg);
    if ((n == (unsigned long long)-1 && PyErr_Occurred()) || n > 0xffffffffull) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s too large", what);
        return -1;
    }
    *out = (uint32_t)n;
    return 0;
}

static PyObject *Packer_pack_array_header(Packer *self, PyObject *arg)
{
    uint32_t n;
    if (check_writable(self) < 0 || count_arg(arg, "array", &n) < 0) return NULL;
    size_t mark = mpk_writer_size(&self->w);
    mpk_write_array(&self->w, n);
    return finish_write(self, 0, mark);
}

static PyObject *Packer_pack_map_header(Packer *self, PyObject *arg)
{
    uint32_t n;
    if (check_writable(self) < 0 || count_arg(arg, "map", &n) < 0) return NULL;
    size_t mark = mpk_writer_size(&self->w);
    mpk_write_map(&self->w, n);
    return finish_write(self, 0, mark);
}

static PyObject *Packer_pack_map_pairs(Packer *self, PyObject *pairs)
{
    if (check_writable(self) < 0) return NULL;
    size_t mark = mpk_writer_size(&self->w);
    encoder e;
    e.w = &self->w;
    self->busy = 1;
    int rc = encoder_start(&e, &self->opt);
    if (rc == 0) rc = pack_pairs_list(&e, pairs, 0);
    if (rc < 0) encode_finish_error(&e);
    self->busy = 0;
    return finish_write(self, rc, mark);
}

static PyObject *Packer_pack_ext_type(Packer *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "pack_ext_type(typecode, data) takes 2 arguments");
        return NULL;
    }
    if (!PyLong_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "typecode must have int type.");
        return NULL;
    }
    if (!PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "data must have bytes type");
        return NULL;
    }
    if (check_writable(self) < 0) return NULL;
    size_t mark = mpk_writer_size(&self->w);
    encoder e;
    e.w = &self->w;
    e.o = &self->opt;
    e.errors = NULL;
    e.plain = 0;
    e.steps = NULL;
    e.in_key = e.foreign = 0;
    int rc = pack_ext(&e, args[0], args[1]);
    return finish_write(self, rc, mark);
}

static PyObject *Packer_bytes(Packer *self, PyObject *unused)
{
    return PyBytes_FromStringAndSize((const char *)mpk_writer_data(&self->w), (Py_ssize_t)mpk_writer_size(&self->w));
}

static PyObject *Packer_reset(Packer *self, PyObject *unused)
{
    if (check_writable(self) < 0) return NULL;
    mpk_writer_reset(&self->w);
    Py_RETURN_NONE;
}

static PyObject *Packer_getbuffer(Packer *self, PyObject *unused)
{
    return PyMemoryView_FromObject((PyObject *)self);
}

static int Packer_getbuf(Packer *self, Py_buffer *view, int flags)
{
    static char empty[1];
    if (check_not_busy(self) < 0) {
        view->obj = NULL;
        return -1;
    }
    void *data = self->w.buf ? (void *)self->w.buf : (void *)empty;
    if (PyBuffer_FillInfo(view, (PyObject *)self, data, (Py_ssize_t)mpk_writer_size(&self->w), 1, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void Packer_releasebuf(Packer *self, Py_buffer *view)
{
    self->exports--;
}

static PyBufferProcs Packer_as_buffer = {(getbufferproc)Packer_getbuf, (releasebufferproc)Packer_releasebuf};

PyDoc_STRVAR(Packer__doc__,
"Packer(*, default=None, use_single_float=False, autoreset=True, use_bin_type=True,\n"
"       strict_types=False, datetime=False, unicode_errors=None, buf_size=None,\n"
"       sort_keys=False, dataclass=False, enum=False, uuid=False, date=False, naive_utc=False)\n"
"--\n\n"
"MessagePack writer, compatible with msgpack.Packer.\n\n"
"default: called with an object of an unsupported type; returns something packable.\n"
"use_single_float: write floats as float 32.\n"
"autoreset: pack() returns the bytes and empties the buffer (else use bytes()/reset()).\n"
"use_bin_type: bytes as bin and str 8 allowed (False: the old raw-only format).\n"
"strict_types: exact types only (subclasses and tuples go to default).\n"
"datetime: an aware datetime is written as a timestamp.\n"
"unicode_errors: error handler for encoding str (default strict).\n"
"buf_size: accepted for compatibility; ignored.\n"
"mpk extras: sort_keys (dict keys in sorted order), dataclass (instances as maps of\n"
"their fields), enum (members as their value), uuid (as the 36-character str),\n"
"date (datetime.date as 'YYYY-MM-DD'), naive_utc (with datetime=True, a naive\n"
"datetime is taken as UTC instead of an error).");

static PyMethodDef Packer_methods[] = {
    {"pack", (PyCFunction)Packer_pack, METH_O, "pack(obj): pack one object."},
    {"pack_array_header", (PyCFunction)Packer_pack_array_header, METH_O, "pack_array_header(n)"},
    {"pack_map_header", (PyCFunction)Packer_pack_map_header, METH_O, "pack_map_header(n)"},
    {"pack_map_pairs", (PyCFunction)Packer_pack_map_pairs, METH_O, "pack_map_pairs(pairs): a map from a sequence of (key, value)."},
    {"pack_ext_type", (PyCFunction)(void (*)(void))Packer_pack_ext_type, METH_FASTCALL, "pack_ext_type(typecode, data)"},
    {"bytes", (PyCFunction)Packer_bytes, METH_NOARGS, "The buffer's content as bytes."},
    {"reset", (PyCFunction)Packer_reset, METH_NOARGS, "Empty the buffer."},
    {"getbuffer", (PyCFunction)Packer_getbuffer, METH_NOARGS, "A memoryview of the buffer."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject mpkpy_PackerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mpk.Packer",
    .tp_basicsize = sizeof(Packer),
    .tp_dealloc = (destructor)Packer_dealloc,
    .tp_as_buffer = &Packer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = Packer__doc__,
    .tp_traverse = (traverseproc)Packer_traverse,
    .tp_clear = (inquiry)Packer_clear,
    .tp_methods = Packer_methods,
    .tp_init = (initproc)Packer_init,
    .tp_new = Packer_new,
};

int mpkpy_packer_init_module(void)
{
    PyDateTime_IMPORT;
    return PyDateTimeAPI ? 0 : -1;
}
