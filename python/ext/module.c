/* module.c — the mpk._mpk module: its functions, the Python objects it looks up once, and the one
 * place where the C core's error kinds become Python exceptions. */
#include "mpk_py.h"
#include "fast_paths.h"
#include "decoder.h"

#include <datetime.h>

PyObject *mpkpy_ExtType, *mpkpy_Timestamp, *mpkpy_ExtraData, *mpkpy_FormatError,
    *mpkpy_StackError, *mpkpy_OutOfData, *mpkpy_BufferFull, *mpkpy_TruncatedError,
    *mpkpy_LengthLimitError, *mpkpy_InvalidTimestampError, *mpkpy_InvalidUTF8Error, *mpkpy_epoch,
    *mpkpy_extras_convert;
PyObject *mpkpy_str_seconds, *mpkpy_str_nanoseconds, *mpkpy_str_kind, *mpkpy_str_offset,
    *mpkpy_str_items, *mpkpy_str_tzinfo, *mpkpy_str_read;

/* ================================================================================================
 * Errors
 * ==============================================================================================*/

static int set_position(PyObject *exc, mpk_error_kind kind, Py_ssize_t offset)
{
    PyObject *k = PyUnicode_FromString(mpk_error_name(kind));
    PyObject *o = PyLong_FromSsize_t(offset);
    int rc = -1;
    if (k && o && PyObject_SetAttr(exc, mpkpy_str_kind, k) == 0 &&
        PyObject_SetAttr(exc, mpkpy_str_offset, o) == 0)
        rc = 0;
    Py_XDECREF(k);
    Py_XDECREF(o);
    return rc;
}

PyObject *mpkpy_raise(mpk_error_kind kind, Py_ssize_t offset, const char *what)
{
    PyObject *cls;
    switch (kind) {
    case MPK_ERR_TRUNCATED: cls = mpkpy_TruncatedError; break;
    case MPK_ERR_INVALID_BYTE: cls = mpkpy_FormatError; break;
    case MPK_ERR_DEPTH_LIMIT: cls = mpkpy_StackError; break;
    case MPK_ERR_LENGTH_LIMIT: cls = mpkpy_LengthLimitError; break;
    case MPK_ERR_INVALID_TIMESTAMP: cls = mpkpy_InvalidTimestampError; break;
    default: cls = PyExc_ValueError; break;
    }
    PyObject *msg = PyUnicode_FromFormat("%s at byte %zd", what, offset);
    if (!msg) return NULL;
    PyObject *exc = PyObject_CallOneArg(cls, msg);
    Py_DECREF(msg);
    if (!exc) return NULL;
    if (set_position(exc, kind, offset) < 0) goto fail;
    PyErr_SetObject(cls, exc);
fail:
    Py_DECREF(exc);
    return NULL;
}

int mpkpy_get_view(PyObject *obj, Py_buffer *view)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) == 0) return 0;
    if (!PyErr_ExceptionMatches(PyExc_BufferError) || !PyObject_CheckBuffer(obj)) return -1;
    /* not contiguous: PyBytes_FromObject copies through PyBuffer_ToContiguous */
    PyErr_Clear();
    PyObject *copy = PyBytes_FromObject(obj);
    if (!copy) return -1;
    int rc = PyObject_GetBuffer(copy, view, PyBUF_SIMPLE);
    Py_DECREF(copy); /* the view holds it */
    return rc;
}

PyObject *mpkpy_raise_extra(PyObject *unpacked, const char *extra, Py_ssize_t n, Py_ssize_t offset)
{
    PyObject *bytes = PyBytes_FromStringAndSize(extra, n);
    if (!bytes) return NULL;
    PyObject *off = PyLong_FromSsize_t(offset);
    if (!off) {
        Py_DECREF(bytes);
        return NULL;
    }
    PyObject *exc = PyObject_CallFunctionObjArgs(mpkpy_ExtraData, unpacked, bytes, off, NULL);
    Py_DECREF(bytes);
    Py_DECREF(off);
    if (!exc) return NULL;
    PyErr_SetObject(mpkpy_ExtraData, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *mpkpy_raise_utf8(const char *data, Py_ssize_t n, Py_ssize_t offset)
{
    /* keep the codec's own start/end/reason, relative to the str's bytes as in msgpack-python */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_ssize_t start = 0, end = 1;
    const char *reason = "invalid utf-8";
    PyObject *reason_obj = NULL;
    if (value) {
        PyUnicodeDecodeError_GetStart(value, &start);
        PyUnicodeDecodeError_GetEnd(value, &end);
        reason_obj = PyUnicodeDecodeError_GetReason(value);
        if (reason_obj) reason = PyUnicode_AsUTF8(reason_obj);
        if (!reason) {
            PyErr_Clear();
            reason = "invalid utf-8";
        }
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyObject *bytes = PyBytes_FromStringAndSize(data, n);
    PyObject *exc = NULL;
    if (bytes)
        exc = PyObject_CallFunction(mpkpy_InvalidUTF8Error, "sOnns", "utf-8", bytes, start, end, reason);
    Py_XDECREF(reason_obj);
    Py_XDECREF(bytes);
    if (!exc) return NULL;
    if (set_position(exc, MPK_ERR_INVALID_UTF8, offset) == 0)
        PyErr_SetObject(mpkpy_InvalidUTF8Error, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ================================================================================================
 * Module
 * ==============================================================================================*/

PyDoc_STRVAR(packb__doc__,
"packb(o, /, **options)\n--\n\n"
"Pack ``o`` and return the bytes. The options are those of :class:`Packer`.");
PyDoc_STRVAR(unpackb__doc__,
"unpackb(packed, /, **options)\n--\n\n"
"Unpack one value from the bytes-like ``packed``.\n\n"
"Raises ExtraData when bytes remain after the value, a ValueError subclass\n"
"(TruncatedError) when the input ends inside it, FormatError on the byte 0xc1,\n"
"StackError when it nests deeper than max_depth. Every such error has ``kind``\n"
"and ``offset``. The options are those of :class:`Unpacker`.");

static PyMethodDef module_methods[] = {
    {"packb", (PyCFunction)(void (*)(void))mpkpy_packb, METH_FASTCALL | METH_KEYWORDS, packb__doc__},
    {"unpackb", (PyCFunction)(void (*)(void))mpkpy_unpackb, METH_FASTCALL | METH_KEYWORDS, unpackb__doc__},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "mpk._mpk", "The C half of mpk (use the mpk package).", -1, module_methods,
};

static PyObject *attr(PyObject *module, const char *name)
{
    return PyObject_GetAttrString(module, name);
}

PyMODINIT_FUNC PyInit__mpk(void)
{
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return NULL;
    PyObject *exceptions = PyImport_ImportModule("mpk.exceptions");
    PyObject *ext = exceptions ? PyImport_ImportModule("mpk.ext") : NULL;
    PyObject *extras = ext ? PyImport_ImportModule("mpk._extras") : NULL;
    if (!extras) {
        Py_XDECREF(exceptions);
        Py_XDECREF(ext);
        return NULL;
    }
    mpkpy_ExtType = attr(ext, "ExtType");
    mpkpy_Timestamp = attr(ext, "Timestamp");
    mpkpy_epoch = attr(ext, "_EPOCH");
    mpkpy_ExtraData = attr(exceptions, "ExtraData");
    mpkpy_FormatError = attr(exceptions, "FormatError");
    mpkpy_StackError = attr(exceptions, "StackError");
    mpkpy_OutOfData = attr(exceptions, "OutOfData");
    mpkpy_BufferFull = attr(exceptions, "BufferFull");
    mpkpy_TruncatedError = attr(exceptions, "TruncatedError");
    mpkpy_LengthLimitError = attr(exceptions, "LengthLimitError");
    mpkpy_InvalidTimestampError = attr(exceptions, "InvalidTimestampError");
    mpkpy_InvalidUTF8Error = attr(exceptions, "InvalidUTF8Error");
    mpkpy_extras_convert = attr(extras, "convert");
    Py_DECREF(exceptions);
    Py_DECREF(ext);
    Py_DECREF(extras);
    mpkpy_str_seconds = PyUnicode_InternFromString("seconds");
    mpkpy_str_nanoseconds = PyUnicode_InternFromString("nanoseconds");
    mpkpy_str_kind = PyUnicode_InternFromString("kind");
    mpkpy_str_offset = PyUnicode_InternFromString("offset");
    mpkpy_str_items = PyUnicode_InternFromString("items");
    mpkpy_str_tzinfo = PyUnicode_InternFromString("tzinfo");
    mpkpy_str_read = PyUnicode_InternFromString("read");
    if (PyErr_Occurred()) return NULL;
    if (mpkpy_packer_init_module() < 0 || mpkpy_decoder_init_module() < 0) return NULL;
    mpkpy_unpackb_init_defaults();
    if (PyType_Ready(&mpkpy_PackerType) < 0 || PyType_Ready(&mpkpy_UnpackerType) < 0) return NULL;

    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&mpkpy_PackerType);
    Py_INCREF(&mpkpy_UnpackerType);
    if (PyModule_AddObject(m, "Packer", (PyObject *)&mpkpy_PackerType) < 0 ||
        PyModule_AddObject(m, "Unpacker", (PyObject *)&mpkpy_UnpackerType) < 0 ||
        PyModule_AddStringConstant(m, "core_version", mpk_version()) < 0 ||
        /* which build this is: 1 when MPK_PORTABLE=1 turned the fast paths of fast_paths.h off */
        PyModule_AddIntConstant(m, "_portable", MPKPY_PORTABLE_BUILD) < 0 ||
        /* "avx2" when long non-ASCII strs take ext/utf8_avx2.h, else "portable" */
        PyModule_AddStringConstant(m, "_utf8_path", mpkpy_utf8_path()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
