/* mpk_py.h — what the extension's files share: the module's references to Python objects, the
 * house error kinds, and the helpers that raise decode errors with kind and offset.
 *
 * The module keeps its references in plain globals rather than per-module state: the hot paths
 * read them on every value and a global load is one instruction, and the module is not meant to
 * be loaded into several interpreters (it declares no multi-phase init). */
#ifndef MPK_PY_H
#define MPK_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "mpk/common.h"

#define LIKELY MPK__LIKELY
#define UNLIKELY MPK__UNLIKELY

/* ---- objects looked up once at import (module.c) ---------------------------------------------*/
extern PyObject *mpkpy_ExtType;         /* mpk.ext.ExtType */
extern PyObject *mpkpy_Timestamp;       /* mpk.ext.Timestamp */
extern PyObject *mpkpy_ExtraData;       /* mpk.exceptions.* */
extern PyObject *mpkpy_FormatError;
extern PyObject *mpkpy_StackError;
extern PyObject *mpkpy_OutOfData;
extern PyObject *mpkpy_BufferFull;
extern PyObject *mpkpy_TruncatedError;
extern PyObject *mpkpy_LengthLimitError;
extern PyObject *mpkpy_InvalidTimestampError;
extern PyObject *mpkpy_InvalidUTF8Error;
extern PyObject *mpkpy_epoch;           /* datetime(1970, 1, 1, tzinfo=utc) */
extern PyObject *mpkpy_extras_convert;  /* mpk._extras.convert(obj, flags) */
extern PyObject *mpkpy_str_seconds, *mpkpy_str_nanoseconds, *mpkpy_str_kind, *mpkpy_str_offset,
    *mpkpy_str_items, *mpkpy_str_tzinfo, *mpkpy_str_read;

/* ---- decode errors ---------------------------------------------------------------------------*/

/* Raises the exception of `kind` (a corpus kind) with a message ending "at byte <offset>" and the
 * attributes kind and offset set. Always returns NULL. */
PyObject *mpkpy_raise(mpk_error_kind kind, Py_ssize_t offset, const char *what);

/* Raises ExtraData(unpacked, extra) for trailing bytes at `offset`. Returns NULL. */
PyObject *mpkpy_raise_extra(PyObject *unpacked, const char *extra, Py_ssize_t n, Py_ssize_t offset);

/* Replaces the pending UnicodeDecodeError by InvalidUTF8Error naming the str at `offset`. */
PyObject *mpkpy_raise_utf8(const char *data, Py_ssize_t n, Py_ssize_t offset);

/* A read-only view of any buffer-protocol object. One that is not C-contiguous (a strided
 * memoryview, say) is copied into a bytes object first, which the view then holds. Release with
 * PyBuffer_Release. 0, or -1 with an exception. */
int mpkpy_get_view(PyObject *obj, Py_buffer *view);

/* ---- shared between files --------------------------------------------------------------------*/
extern PyTypeObject mpkpy_PackerType;
extern PyTypeObject mpkpy_UnpackerType;
PyObject *mpkpy_packb(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *mpkpy_unpackb(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
int mpkpy_packer_init_module(void);
int mpkpy_decoder_init_module(void);
void mpkpy_unpackb_init_defaults(void);

/* The raised exception as one object (normalized, its traceback attached), taken off the error
 * indicator so that building a step or a message cannot disturb it; NULL if none is raised. */
static inline PyObject *take_error(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    if (tb && exc) PyException_SetTraceback(exc, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return exc;
#endif
}

/* Raises exc again (a reference taken by take_error), dropping whatever was raised meanwhile. */
static inline void give_error(PyObject *exc)
{
    PyErr_Clear();
    if (!exc) return;
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}

#endif
