/* dict_entries.h — walking a dict's entry array directly, CPython 3.11 only.
 *
 * PyDict_Next costs a call and several checks per item, about a quarter of packing a dict-heavy
 * document (perf on twitter.json). On 3.11 the combined-table layout below (from CPython's
 * internal dict headers, which an extension cannot include without Py_BUILD_CORE; the field names
 * here are ours, only the sizes and order must match) lets the encoder read the entries in order. Any other version, and split tables (instance dicts),
 * keep using PyDict_Next. The caller must re-check the dict after running Python code. */
#ifndef MPKPY_DICT_ENTRIES_H
#define MPKPY_DICT_ENTRIES_H

#include "mpk_py.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API)
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
#endif

#endif
