/* unpacker.c — unpackb (one buffer, one value) and Unpacker (the stream: fed chunks or a file).
 *
 * The stream keeps the bytes not yet consumed in one buffer and decodes values out of it. Before it
 * builds a value it walks it once without building anything (mpkpy_skip): if the value is not all
 * there, nothing was created and no hook ran, so the next attempt starts clean from the same byte.
 * The walk also reports how many bytes the value needs at least, and the stream does not try again
 * until that many have arrived — a large str fed a byte at a time costs one walk, not one per byte. */
#include "decoder.h"

/* ================================================================================================
 * Options
 * ==============================================================================================*/

static char *unpackb_kwlist[] = {
    "object_hook", "list_hook", "use_list", "raw", "timestamp", "strict_map_key", "unicode_errors",
    "object_pairs_hook", "ext_hook", "max_str_len", "max_bin_len", "max_array_len", "max_map_len",
    "max_ext_len", "max_depth", "_float32_type", NULL};

static char *unpacker_kwlist[] = {
    "file_like", "read_size", "use_list", "raw", "timestamp", "strict_map_key", "object_hook",
    "object_pairs_hook", "list_hook", "unicode_errors", "max_buffer_size", "ext_hook",
    "max_str_len", "max_bin_len", "max_array_len", "max_map_len", "max_ext_len", "max_depth",
    "_float32_type", NULL};

static PyObject *none_to_null(PyObject *o) { return o == Py_None ? NULL : Py_NewRef(o); }

/* Fills *o from the parsed values; the limit -1 means "the default" given in `dflt`. */
static int fill_options(mpkpy_unpack_options *o, PyObject *object_hook, PyObject *list_hook,
                        int use_list, int raw, int timestamp, int strict_map_key,
                        PyObject *unicode_errors, PyObject *object_pairs_hook, PyObject *ext_hook,
                        Py_ssize_t lim[5], Py_ssize_t dflt[5], Py_ssize_t max_depth,
                        PyObject *float32_type)
{
    mpkpy_unpack_options_default(o);
    o->use_list = use_list;
    o->raw = raw;
    o->timestamp = timestamp;
    o->strict_map_key = strict_map_key;
    o->object_hook = none_to_null(object_hook);
    o->list_hook = none_to_null(list_hook);
    o->object_pairs_hook = none_to_null(object_pairs_hook);
    o->ext_hook = ext_hook == mpkpy_ExtType ? NULL : none_to_null(ext_hook);
    o->unicode_errors = none_to_null(unicode_errors);
    o->float32_type = none_to_null(float32_type);
    Py_ssize_t *dst[5] = {&o->max_str, &o->max_bin, &o->max_array, &o->max_map, &o->max_ext};
    for (int i = 0; i < 5; i++) *dst[i] = lim[i] < 0 ? dflt[i] : lim[i];
    o->max_depth = max_depth;
    if (ext_hook == Py_None) {
        PyErr_SetString(PyExc_TypeError, "ext_hook must be a callable.");
        return -1;
    }
    return mpkpy_unpack_options_check(o);
}

/* ================================================================================================
 * unpackb
 * ==============================================================================================*/

static mpkpy_unpack_options unpackb_defaults;

static PyObject *unpackb_with(Py_buffer *view, const mpkpy_unpack_options *o)
{
    mpkpy_decoder d;
    d.start = d.p = (const uint8_t *)view->buf;
    d.end = d.start + view->len;
    d.base = 0;
    d.o = o;
    PyObject *value = mpkpy_decode(&d);
    if (value && d.p != d.end) {
        mpkpy_raise_extra(value, (const char *)d.p, d.end - d.p, d.p - d.start);
        Py_CLEAR(value);
    }
    return value;
}

PyObject *mpkpy_unpackb(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "unpackb() takes exactly one positional argument");
        return NULL;
    }
    Py_buffer view;
    PyObject *packed = args[0];
    if (LIKELY(PyBytes_CheckExact(packed))) {
        /* no buffer export needed: bytes are immutable and we hold a reference */
        view.buf = PyBytes_AS_STRING(packed);
        view.len = PyBytes_GET_SIZE(packed);
        view.obj = NULL;
    } else if (mpkpy_get_view(packed, &view) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    if (LIKELY(kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0)) {
        mpkpy_decoder d;
        d.start = d.p = (const uint8_t *)view.buf;
        d.end = d.start + view.len;
        d.base = 0;
        d.o = &unpackb_defaults;
        result = mpkpy_decode_defaults(&d);
        if (result && d.p != d.end) {
            mpkpy_raise_extra(result, (const char *)d.p, d.end - d.p, d.p - d.start);
            Py_CLEAR(result);
        }
    } else {
        PyObject *kwargs = PyDict_New(), *empty = PyTuple_New(0);
        Py_ssize_t nk = PyTuple_GET_SIZE(kwnames), i = 0;
        if (kwargs && empty) {
            for (; i < nk; i++)
                if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) break;
        }
        PyObject *object_hook = Py_None, *list_hook = Py_None, *unicode_errors = Py_None,
                 *object_pairs_hook = Py_None, *ext_hook = mpkpy_ExtType, *float32_type = Py_None;
        int use_list = 1, raw = 0, timestamp = 0, strict_map_key = 1;
        Py_ssize_t lim[5] = {-1, -1, -1, -1, -1}, max_depth = MPK_DEFAULT_DEPTH;
        Py_ssize_t dflt[5] = {MPK_DEFAULT_LENGTH, MPK_DEFAULT_LENGTH, MPK_DEFAULT_LENGTH,
                              MPK_DEFAULT_LENGTH, MPK_DEFAULT_LENGTH};
        if (kwargs && empty && i == nk &&
            PyArg_ParseTupleAndKeywords(empty, kwargs, "|$OOppipOOOnnnnnnO:unpackb", unpackb_kwlist,
                                        &object_hook, &list_hook, &use_list, &raw, &timestamp,
                                        &strict_map_key, &unicode_errors, &object_pairs_hook,
                                        &ext_hook, &lim[0], &lim[1], &lim[2], &lim[3], &lim[4],
                                        &max_depth, &float32_type)) {
            mpkpy_unpack_options o;
            if (fill_options(&o, object_hook, list_hook, use_list, raw, timestamp, strict_map_key,
                             unicode_errors, object_pairs_hook, ext_hook, lim, dflt, max_depth,
                             float32_type) == 0)
                result = unpackb_with(&view, &o);
            mpkpy_unpack_options_clear(&o);
        }
        Py_XDECREF(kwargs);
        Py_XDECREF(empty);
    }
    if (view.obj) PyBuffer_Release(&view);
    return result;
}

/* ================================================================================================
 * Unpacker
 * ==============================================================================================*/

typedef struct {
    PyObject_HEAD
    mpkpy_unpack_options opt;
    char *buf;
    Py_ssize_t len, cap;      /* bytes held, bytes allocated */
    Py_ssize_t pos;           /* first byte not consumed */
    Py_ssize_t buf_offset;    /* stream offset of buf[0] */
    Py_ssize_t need;          /* don't try to decode before len - pos reaches this */
    mpkpy_walk walk;          /* the completeness walk over the value at pos, resumable */
    PyObject *file_read;      /* file_like.read, or NULL when fed */
    Py_ssize_t read_size, max_buffer_size;
    int ready;
    int busy;                 /* a call is running: a hook or file_like.read() may call us back */
} Unpacker;

enum { WANT_VALUE, WANT_SKIP, WANT_ARRAY, WANT_MAP };

/* Makes room for n more bytes, dropping the consumed prefix first. */
static int reserve(Unpacker *self, Py_ssize_t n)
{
    if (self->pos > 0 && self->cap - self->len < n) {
        memmove(self->buf, self->buf + self->pos, (size_t)(self->len - self->pos));
        self->len -= self->pos;
        self->buf_offset += self->pos;
        self->pos = 0;
    }
    if (self->cap - self->len >= n) return 0;
    Py_ssize_t cap = self->cap ? self->cap : 4096;
    while (cap - self->len < n) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *bigger = PyMem_Realloc(self->buf, (size_t)cap);
    if (!bigger) {
        PyErr_NoMemory();
        return -1;
    }
    self->buf = bigger;
    self->cap = cap;
    return 0;
}

static int append(Unpacker *self, const char *data, Py_ssize_t n)
{
    if (n == 0) return 0; /* nothing to copy, and the buffer may not exist yet */
    if ((self->len - self->pos) + n > self->max_buffer_size) {
        PyErr_SetNone(mpkpy_BufferFull);
        return -1;
    }
    if (reserve(self, n) < 0) return -1;
    memcpy(self->buf + self->len, data, (size_t)n);
    self->len += n;
    return 0;
}

static int check_ready(Unpacker *self)
{
    if (!self->ready) {
        PyErr_SetString(PyExc_AssertionError, "Unpacker.__init__() was not called");
        return -1;
    }
    return 0;
}

/* A call made while another runs — from a hook, or from file_like.read() — would move or refill the
 * buffer the running decode reads: refused, and the running call goes on unharmed. */
static int check_not_busy(Unpacker *self)
{
    if (UNLIKELY(self->busy)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Unpacker is already running a call (called again from a hook or from "
                        "file_like.read())");
        return -1;
    }
    return 0;
}

/* Strs decode only as valid UTF-8 (no raw, no error handler but "strict"). */
static int strict_utf8(const mpkpy_unpack_options *o)
{
    return !o->raw && (!o->unicode_errors || PyUnicode_CompareWithASCIIString(o->unicode_errors, "strict") == 0);
}

/* Reads more from the file: 1 if bytes came, 0 at the end of the file, -1 on error. */
static int read_more(Unpacker *self, Py_ssize_t at_least)
{
    Py_ssize_t n = self->read_size > at_least ? self->read_size : at_least;
    Py_ssize_t room = self->max_buffer_size - (self->len - self->pos);
    if (n > room) n = room;
    if (n <= 0) {
        PyErr_SetNone(mpkpy_BufferFull);
        return -1;
    }
    PyObject *data = PyObject_CallFunction(self->file_read, "n", n);
    if (!data) return -1;
    Py_buffer view;
    if (mpkpy_get_view(data, &view) < 0) {
        Py_DECREF(data);
        return -1;
    }
    int rc = view.len == 0 ? 0 : (append(self, view.buf, view.len) < 0 ? -1 : 1);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return rc;
}

/* One step of the stream. Returns the value (a new reference; for headers an int), or NULL with an
 * exception, or NULL with no exception when the value is not all there yet (out of data). */
static PyObject *stream_step(Unpacker *self, int want)
{
    for (;;) {
        Py_ssize_t avail = self->len - self->pos;
        if (avail > 0 && avail >= self->need) {
            mpkpy_decoder d;
            d.start = d.p = (const uint8_t *)self->buf + self->pos;
            d.end = (const uint8_t *)self->buf + self->len;
            d.base = self->buf_offset + self->pos;
            d.o = &self->opt;
            d.need = 0;
            PyObject *result = NULL;
            int rc;
            if (want == WANT_ARRAY || want == WANT_MAP) {
                Py_ssize_t n = mpkpy_read_header(&d, want == WANT_MAP);
                rc = n < 0 ? -1 : 0;
                if (rc == 0 && !(result = PyLong_FromSsize_t(n))) return NULL;
            } else {
                /* a value's strs are checked by the walk where it stops short (see
                 * walk_check_strs); a skip does not check them */
                self->walk.utf8 = want == WANT_VALUE && strict_utf8(&self->opt);
                rc = mpkpy_skip(&d, &self->walk);
                if (rc == 0 && want == WANT_VALUE) {
                    d.p = d.start;
                    if (!(result = mpkpy_decode(&d))) return NULL;
                }
                if (rc == 0 && want == WANT_SKIP) result = Py_NewRef(Py_None);
            }
            if (rc == 0) {
                self->pos = (Py_ssize_t)((const char *)d.p - self->buf);
                self->need = 0;
                mpkpy_walk_reset(&self->walk);
                return result;
            }
            if (!PyErr_ExceptionMatches(mpkpy_TruncatedError)) {
                mpkpy_walk_reset(&self->walk);
                return NULL;
            }
            PyErr_Clear();
            self->need = d.need > avail ? d.need : avail + 1;
        }
        if (!self->file_read) return NULL;
        Py_ssize_t more = self->need - avail;
        int got = read_more(self, more > 0 ? more : 1);
        if (got < 0) return NULL;
        if (got == 0) return NULL;
    }
}

static PyObject *stream_next(Unpacker *self, int want)
{
    if (check_ready(self) < 0 || check_not_busy(self) < 0) return NULL;
    self->busy = 1;
    PyObject *r = stream_step(self, want);
    self->busy = 0;
    return r;
}

static int Unpacker_init(Unpacker *self, PyObject *args, PyObject *kwargs)
{
    if (check_not_busy(self) < 0) return -1;
    PyObject *file_like = Py_None, *object_hook = Py_None, *list_hook = Py_None,
             *unicode_errors = Py_None, *object_pairs_hook = Py_None, *ext_hook = mpkpy_ExtType,
             *float32_type = Py_None;
    Py_ssize_t read_size = 0, max_buffer_size = 100 * 1024 * 1024, max_depth = MPK_DEFAULT_DEPTH;
    int use_list = 1, raw = 0, timestamp = 0, strict_map_key = 1;
    Py_ssize_t lim[5] = {-1, -1, -1, -1, -1};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$nppipOOOOnOnnnnnnO:Unpacker", unpacker_kwlist,
                                     &file_like, &read_size, &use_list, &raw, &timestamp,
                                     &strict_map_key, &object_hook, &object_pairs_hook, &list_hook,
                                     &unicode_errors, &max_buffer_size, &ext_hook, &lim[0], &lim[1],
                                     &lim[2], &lim[3], &lim[4], &max_depth, &float32_type))
        return -1;
    /* msgpack-python's defaults: the limits follow max_buffer_size (0 means 2^31-1) */
    if (max_buffer_size < 0 || read_size < 0) {
        PyErr_SetString(PyExc_ValueError, "read_size and max_buffer_size must be non-negative");
        return -1;
    }
    if (max_buffer_size == 0) max_buffer_size = 0x7fffffff;
    Py_ssize_t dflt[5] = {max_buffer_size, max_buffer_size, max_buffer_size, max_buffer_size / 2,
                          max_buffer_size};
    if (read_size > max_buffer_size) {
        PyErr_SetString(PyExc_ValueError, "read_size should be less or equal to max_buffer_size");
        return -1;
    }
    mpkpy_unpack_options opt;
    if (fill_options(&opt, object_hook, list_hook, use_list, raw, timestamp, strict_map_key,
                     unicode_errors, object_pairs_hook, ext_hook, lim, dflt, max_depth,
                     float32_type) < 0) {
        mpkpy_unpack_options_clear(&opt);
        return -1;
    }
    PyObject *file_read = NULL;
    if (file_like != Py_None) {
        file_read = PyObject_GetAttr(file_like, mpkpy_str_read);
        if (!file_read) { /* AttributeError, as msgpack-python */
            mpkpy_unpack_options_clear(&opt);
            return -1;
        }
        if (!PyCallable_Check(file_read)) {
            Py_DECREF(file_read);
            mpkpy_unpack_options_clear(&opt);
            PyErr_SetString(PyExc_TypeError, "`file_like.read` must be a callable.");
            return -1;
        }
    }
    mpkpy_unpack_options_clear(&self->opt);
    self->opt = opt;
    Py_XSETREF(self->file_read, file_read);
    self->max_buffer_size = max_buffer_size;
    self->read_size = read_size ? read_size : (max_buffer_size < 16384 ? max_buffer_size : 16384);
    self->len = self->pos = self->buf_offset = self->need = 0;
    mpkpy_walk_reset(&self->walk);
    self->ready = 1;
    return 0;
}

static void Unpacker_dealloc(Unpacker *self)
{
    PyObject_GC_UnTrack(self);
    mpkpy_unpack_options_clear(&self->opt);
    Py_CLEAR(self->file_read);
    PyMem_Free(self->buf);
    mpkpy_walk_free(&self->walk);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Unpacker_traverse(Unpacker *self, visitproc visit, void *arg)
{
    Py_VISIT(self->opt.object_hook);
    Py_VISIT(self->opt.object_pairs_hook);
    Py_VISIT(self->opt.list_hook);
    Py_VISIT(self->opt.ext_hook);
    Py_VISIT(self->opt.float32_type);
    Py_VISIT(self->file_read);
    return 0;
}

static int Unpacker_clear(Unpacker *self)
{
    Py_CLEAR(self->opt.object_hook);
    Py_CLEAR(self->opt.object_pairs_hook);
    Py_CLEAR(self->opt.list_hook);
    Py_CLEAR(self->opt.ext_hook);
    Py_CLEAR(self->opt.float32_type);
    Py_CLEAR(self->file_read);
    return 0;
}

static PyObject *Unpacker_feed(Unpacker *self, PyObject *data)
{
    if (check_ready(self) < 0 || check_not_busy(self) < 0) return NULL;
    if (self->file_read) {
        PyErr_SetString(PyExc_AssertionError, "unpacker.feed() is not be able to use with `file_like`.");
        return NULL;
    }
    Py_buffer view;
    if (mpkpy_get_view(data, &view) < 0) return NULL;
    int rc = append(self, view.buf, view.len);
    PyBuffer_Release(&view);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *out_of_data(void)
{
    if (!PyErr_Occurred()) PyErr_SetString(mpkpy_OutOfData, "No more data to unpack.");
    return NULL;
}

static PyObject *Unpacker_unpack(Unpacker *self, PyObject *unused)
{
    PyObject *r = stream_next(self, WANT_VALUE);
    return r ? r : out_of_data();
}

static PyObject *Unpacker_skip(Unpacker *self, PyObject *unused)
{
    PyObject *r = stream_next(self, WANT_SKIP);
    return r ? r : out_of_data();
}

static PyObject *Unpacker_read_array_header(Unpacker *self, PyObject *unused)
{
    PyObject *r = stream_next(self, WANT_ARRAY);
    return r ? r : out_of_data();
}

static PyObject *Unpacker_read_map_header(Unpacker *self, PyObject *unused)
{
    PyObject *r = stream_next(self, WANT_MAP);
    return r ? r : out_of_data();
}

static PyObject *Unpacker_iternext(Unpacker *self)
{
    /* NULL without an exception ends the iteration (StopIteration) */
    return stream_next(self, WANT_VALUE);
}

static PyObject *read_bytes(Unpacker *self, PyObject *arg);

static PyObject *Unpacker_read_bytes(Unpacker *self, PyObject *arg)
{
    if (check_ready(self) < 0 || check_not_busy(self) < 0) return NULL;
    self->busy = 1;
    PyObject *r = read_bytes(self, arg);
    self->busy = 0;
    return r;
}

static PyObject *read_bytes(Unpacker *self, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "read_bytes() needs a non-negative count");
        return NULL;
    }
    Py_ssize_t avail = self->len - self->pos, take = n < avail ? n : avail;
    PyObject *r = PyBytes_FromStringAndSize(self->buf + self->pos, take);
    if (!r) return NULL;
    self->pos += take;
    self->need = 0;
    mpkpy_walk_reset(&self->walk);
    if (take < n && self->file_read) {
        PyObject *more = PyObject_CallFunction(self->file_read, "n", n - take);
        if (!more) {
            Py_DECREF(r);
            return NULL;
        }
        if (!PyBytes_Check(more)) {
            Py_DECREF(more);
            Py_DECREF(r);
            PyErr_SetString(PyExc_TypeError, "file_like.read() must return bytes");
            return NULL;
        }
        /* these bytes never enter the buffer, so the stream offset moves past them here */
        self->buf_offset += PyBytes_GET_SIZE(more);
        PyBytes_ConcatAndDel(&r, more);
    }
    return r;
}

static PyObject *Unpacker_tell(Unpacker *self, PyObject *unused)
{
    return PyLong_FromSsize_t(self->buf_offset + self->pos);
}

PyDoc_STRVAR(Unpacker__doc__,
"Unpacker(file_like=None, *, read_size=0, use_list=True, raw=False, timestamp=0,\n"
"         strict_map_key=True, object_hook=None, object_pairs_hook=None, list_hook=None,\n"
"         unicode_errors=None, max_buffer_size=100*1024*1024, ext_hook=ExtType,\n"
"         max_str_len=-1, max_bin_len=-1, max_array_len=-1, max_map_len=-1,\n"
"         max_ext_len=-1, max_depth=1024)\n"
"--\n\n"
"Streaming MessagePack reader, compatible with msgpack.Unpacker: feed() it bytes\n"
"(or give it a file_like with read()) and iterate, or call unpack(), skip(),\n"
"read_array_header(), read_map_header(), read_bytes(n), tell().\n\n"
"use_list: arrays as list (else tuple). raw: str as bytes. timestamp: ext -1 as\n"
"0 Timestamp, 1 float seconds, 2 int nanoseconds, 3 UTC datetime.\n"
"strict_map_key: only str/bytes map keys. object_hook / object_pairs_hook /\n"
"list_hook / ext_hook: called with each dict / list of pairs / list / (code, data).\n"
"unicode_errors: handler for decoding str (default strict: InvalidUTF8Error).\n"
"max_buffer_size: bytes held at most (BufferFull); the max_*_len limits default\n"
"to it (max_map_len to half of it). max_depth: nesting limit (StackError).");

static PyMethodDef Unpacker_methods[] = {
    {"feed", (PyCFunction)Unpacker_feed, METH_O, "feed(data): append bytes to the stream."},
    {"unpack", (PyCFunction)Unpacker_unpack, METH_NOARGS, "The next value; OutOfData if none is complete."},
    {"skip", (PyCFunction)Unpacker_skip, METH_NOARGS, "Skip the next value."},
    {"read_array_header", (PyCFunction)Unpacker_read_array_header, METH_NOARGS, "The count of the next array head."},
    {"read_map_header", (PyCFunction)Unpacker_read_map_header, METH_NOARGS, "The count of the next map head."},
    {"read_bytes", (PyCFunction)Unpacker_read_bytes, METH_O, "read_bytes(n): up to n raw bytes."},
    {"tell", (PyCFunction)Unpacker_tell, METH_NOARGS, "Stream offset of the next unread byte."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject mpkpy_UnpackerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mpk.Unpacker",
    .tp_basicsize = sizeof(Unpacker),
    .tp_dealloc = (destructor)Unpacker_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = Unpacker__doc__,
    .tp_traverse = (traverseproc)Unpacker_traverse,
    .tp_clear = (inquiry)Unpacker_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)Unpacker_iternext,
    .tp_methods = Unpacker_methods,
    .tp_init = (initproc)Unpacker_init,
    .tp_new = PyType_GenericNew,
};

void mpkpy_unpackb_init_defaults(void) { mpkpy_unpack_options_default(&unpackb_defaults); }
