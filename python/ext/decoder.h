/* decoder.h — the reader that turns MessagePack bytes into Python objects, shared by unpackb and
 * Unpacker. One contiguous input; recursion bounded by max_depth; every declared length checked
 * against the bytes left before anything is allocated (spec/README.md, "Error kinds and offsets"). */
#ifndef MPKPY_DECODER_H
#define MPKPY_DECODER_H

#include "mpk_py.h"

/* The options of unpackb / Unpacker, as parsed from keywords. References are owned. */
typedef struct mpkpy_unpack_options {
    int use_list, raw, strict_map_key, timestamp;
    PyObject *unicode_errors;   /* str or NULL (strict) */
    PyObject *object_hook, *object_pairs_hook, *list_hook, *ext_hook; /* NULL when not given */
    PyObject *float32_type;     /* private (_float32_type): float 32 values are built with it */
    Py_ssize_t max_str, max_bin, max_array, max_map, max_ext;
    Py_ssize_t max_depth;
} mpkpy_unpack_options;

/* deferred containers held in the decoder itself before a block is allocated: a value with a few
 * containers around large strs or bins (Test4: three lists) then costs no allocation for them */
#define MPKPY_DONE_INLINE 16

/* the decoded keys and values of the open maps that are built from a template (decoder.c,
 * decode_map_kv), a stack shared by the levels: a map whose pairs do not fit is built by inserts */
#define MPKPY_KV_STACK 256

typedef struct mpkpy_decoder {
    const uint8_t *start, *p, *end;
    Py_ssize_t base;            /* stream offset of `start`, added to every reported offset */
    const mpkpy_unpack_options *o;
    const char *errors;         /* unicode_errors as a C string, NULL = strict */
    Py_ssize_t need;            /* after `truncated`: a lower bound on the input length needed */
    Py_ssize_t owed;            /* values the open containers still owe after the one being read:
                                 * each takes a byte at least, so they are charged against the
                                 * bytes left before a container is presized (decode_array) */
    /* containers complete but not yet tracked by the cyclic GC, each with a reference of ours
     * (see fill_end in decoder.c); `defer` 0: each is tracked as soon as it is complete */
    int defer;
    PyObject **done;            /* done_inline, or a PyMem block once more are deferred */
    Py_ssize_t ndone, done_cap;
    PyObject *done_inline[MPKPY_DONE_INLINE];
    Py_ssize_t freelist_lists;  /* a large decode's lists still taken from CPython's freelist
                                 * (decode_array, mpkpy_list_unfilled's `fresh`) */
    int small_lists_tracked;    /* a small decode's lists stay tracked while filled (decode_array:
                                 * unpackb's default options, which run no hook) */
    Py_ssize_t nkv;             /* the slots of kv in use */
    PyObject *kv[MPKPY_KV_STACK];
} mpkpy_decoder;

/* Defaults of unpackb: the spec's limits (depth 1024, lengths 2^32-1). */
void mpkpy_unpack_options_default(mpkpy_unpack_options *o);
void mpkpy_unpack_options_clear(mpkpy_unpack_options *o);
/* Checks hooks for callability and the timestamp mode; raises TypeError/ValueError. */
int mpkpy_unpack_options_check(mpkpy_unpack_options *o);

/* Decodes one value at d->p, advancing it. NULL with an exception on error. */
PyObject *mpkpy_decode(mpkpy_decoder *d);
/* The same when d->o has no unicode_errors (unpackb's defaults); faster on small inputs. */
PyObject *mpkpy_decode_defaults(mpkpy_decoder *d);
/* The state of a walk over a value that may not be all there yet (see mpkpy_skip). */
typedef struct mpkpy_walk {
    int active;           /* a walk stopped at `at` and can resume */
    Py_ssize_t at;        /* offset from the value's first byte of the token to resume at */
    Py_ssize_t owed;      /* values still owed by the innermost open container (or the top) */
    Py_ssize_t top;       /* open containers */
    Py_ssize_t *stack;    /* the owed counts of the outer open containers */
    Py_ssize_t cap;
    int utf8;             /* set by the caller: strs are strict UTF-8 (see walk_check_strs) */
} mpkpy_walk;

void mpkpy_walk_reset(mpkpy_walk *w);
void mpkpy_walk_free(mpkpy_walk *w);

/* Walks one value at d->p without building it (same checks but UTF-8, which w->utf8 adds when
 * the walk stops short of the value's end: see walk_check_strs). 0, or -1 with an exception; on
 * TruncatedError the walk is suspended in *w and the next call resumes it. */
int mpkpy_skip(mpkpy_decoder *d, mpkpy_walk *w);
/* Reads an array (want_map 0) or map (1) head at d->p: its count, or -1 with an exception
 * (ValueError "Unexpected type header on stream" when the head is another type). */
Py_ssize_t mpkpy_read_header(mpkpy_decoder *d, int want_map);
/* "avx2" or "portable": how long non-ASCII strs are decoded (strbuild.h, utf8_avx2.h) */
const char *mpkpy_utf8_path(void);

#endif
