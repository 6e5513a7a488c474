"""spec/ typed values <-> mpk, for the interop driver and the corpus tests.

The notation is read and written by spec/reference.py, imported here by its path (exported as
``ref``): ``ref.parse`` turns a typed value into the reference's neutral form, which this module
packs with mpk's public API, and a value unpacked by mpk is turned back into the neutral form,
which ``ref.canonical`` writes out. Only the mpk side lives here:

- packing: ``Packer.pack`` for scalars and for the plain-JSON ``array`` and ``map`` forms (Python
  lists and dicts), the header calls for typed arrays and maps (so duplicate keys and key order
  survive), ``use_single_float`` for float 32 and ``unicode_errors="surrogateescape"`` for a str
  whose bytes are not UTF-8. A value mpk refuses raises ``ref.EncodeError`` with the spec's kind,
  chained to mpk's own exception.
- unpacking: ``unpackb`` with ``object_pairs_hook`` (keeps order and duplicates),
  ``strict_map_key=False``, ``unicode_errors="surrogateescape"`` (invalid UTF-8 comes back
  byte-exact, never U+FFFD) and the private ``_float32_type`` hook that marks float 32 values,
  which Python's float cannot tell apart.
"""
import importlib.util
import os
import sys

import mpk

REFERENCE_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "spec", "reference.py")


def _load_reference():
    # one module object whoever imports it first, so that ref.EncodeError is one class
    if "reference" not in sys.modules:
        spec = importlib.util.spec_from_file_location("reference", REFERENCE_PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules["reference"] = module
        spec.loader.exec_module(module)
    return sys.modules["reference"]


ref = _load_reference()


class Float32(float):
    """A float decoded from float 32."""


class Pairs(list):
    """A decoded map, as its list of (key, value) pairs."""


_packer = mpk.Packer()
_single = mpk.Packer(use_single_float=True)
_escaped = mpk.Packer(unicode_errors="surrogateescape")


def _pack_int(n):
    try:
        return _packer.pack(n)
    except OverflowError as e:  # mpk's (and msgpack-python's) error for an int beyond 64 bits
        raise ref.EncodeError("bad_request", str(e)) from e


def _pack_neutral(v):
    t = v[0]
    if t == "nil":
        return _packer.pack(None)
    if t == "bool":
        return _packer.pack(v[1])
    if t == "int":
        return _pack_int(v[1])
    if t == "number":
        x = v[1]
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise ValueError(f"number must be a JSON number, not {x!r}")
        return _pack_int(x) if isinstance(x, int) else _packer.pack(x)
    if t == "f32":
        return _single.pack(v[1])
    if t == "f64":
        return _packer.pack(v[1])
    if t == "str":
        try:
            return _packer.pack(v[1].decode("utf-8"))
        except UnicodeDecodeError:
            return _escaped.pack(v[1].decode("utf-8", "surrogateescape"))
    if t == "bin":
        return _packer.pack(v[1])
    if t == "array":
        # loops, not join() over a generator: C calls count against CPython 3.12+'s fixed C recursion
        # limit (see same_neutral in spec/reference.py)
        parts = [_packer.pack_array_header(len(v[1]))]
        for x in v[1]:
            parts.append(_pack_neutral(x))
        return b"".join(parts)
    if t == "map":
        parts = [_packer.pack_map_header(len(v[1]))]
        for k, x in v[1]:
            parts.append(_pack_neutral(k))
            parts.append(_pack_neutral(x))
        return b"".join(parts)
    if t == "ext":
        try:
            ext = mpk.ExtType(v[1], v[2])
        except ValueError as e:  # a code outside -128..127
            raise ref.EncodeError("bad_request", str(e)) from e
        return _packer.pack(ext)
    if t == "ts":
        try:
            return _packer.pack(mpk.Timestamp(v[1], v[2]))
        except OverflowError as e:  # seconds beyond int64: not a value the format can carry
            raise ref.EncodeError("bad_request", str(e)) from e
        except ValueError as e:  # nanoseconds outside 0..999999999
            raise ref.EncodeError("invalid_timestamp", str(e)) from e
    raise ValueError(f"unknown neutral value {t!r}")


def encode(typed):
    """The MessagePack bytes of a typed value (any form of spec/README.md), packed by mpk."""
    key = ref.value_key(typed)
    if key in ("array", "map"):
        # plain JSON is already the Python value: dict (ordered), list, str, int, float, bool, None
        try:
            return _packer.pack(typed[key])
        except OverflowError as e:
            raise ref.EncodeError("bad_request", str(e)) from e
    return _pack_neutral(ref.parse(typed))


def decode_options(limits=None, strict_utf8=False):
    kw = {
        "object_pairs_hook": Pairs,
        "strict_map_key": False,
        "unicode_errors": "strict" if strict_utf8 else "surrogateescape",
        "_float32_type": Float32,
    }
    for name, n in (limits or {}).items():
        kw["max_depth" if name == "depth" else f"max_{name}_len"] = n
    return kw


def decode(data, limits=None, strict_utf8=False):
    """The canonical typed value of one MessagePack value (raises mpk's decode errors)."""
    return canonical(mpk.unpackb(data, **decode_options(limits, strict_utf8)))


def neutral(v):
    """The reference's neutral form of a Python value decoded with decode_options()."""
    if v is None:
        return ("nil",)
    if v is True or v is False:
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, Float32):
        return ("f32", float(v))
    if isinstance(v, float):
        return ("f64", v)
    if isinstance(v, str):
        return ("str", v.encode("utf-8", "surrogateescape"))
    if isinstance(v, bytes):
        return ("bin", v)
    if isinstance(v, Pairs):
        return ("map", [(neutral(k), neutral(x)) for k, x in v])
    if isinstance(v, mpk.ExtType):
        return ("ext", v.code, v.data)
    if isinstance(v, (list, tuple)):
        return ("array", [neutral(x) for x in v])
    if isinstance(v, mpk.Timestamp):
        return ("ts", v.seconds, v.nanoseconds)
    raise TypeError(f"no typed form for {type(v).__name__}")


def canonical(v):
    """The canonical typed value of a Python value decoded with decode_options()."""
    return ref.canonical(neutral(v))
