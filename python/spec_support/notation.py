"""spec/ typed values <-> mpk, for the interop driver and the corpus tests.

Encoding goes through mpk's public API only: ``Packer.pack`` for scalars, the header calls for
typed arrays and maps (so duplicate keys and key order survive), ``use_single_float`` for float 32
and ``unicode_errors="surrogateescape"`` for a str whose bytes are not UTF-8. Decoding uses
``unpackb`` with ``object_pairs_hook`` (keeps order and duplicates), ``strict_map_key=False``,
``unicode_errors="surrogateescape"`` (invalid UTF-8 comes back byte-exact, never U+FFFD) and the
private ``_float32_type`` hook that marks float 32 values, which Python's float cannot tell apart.
"""
import math

import mpk

MAX_SAFE = 2**53 - 1
KINDS = ("truncated", "invalid_byte", "depth_limit", "length_limit", "invalid_timestamp",
         "invalid_utf8", "trailing_bytes")


class Float32(float):
    """A float decoded from float 32."""


class Pairs(list):
    """A decoded map, as its list of (key, value) pairs."""


def unhex(text):
    return bytes.fromhex(text.replace("-", ""))


def _int(member):
    if isinstance(member, bool):
        raise ValueError("bool is not an int")
    return int(member)


def _float(member):
    if isinstance(member, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[member]
    return float(member)


_packer = mpk.Packer()
_single = mpk.Packer(use_single_float=True)
_escaped = mpk.Packer(unicode_errors="surrogateescape")


def encode(typed):
    """The MessagePack bytes of a typed value (any form of spec/README.md)."""
    ((key, v),) = typed.items()
    if key == "nil":
        return _packer.pack(None)
    if key == "bool":
        if not isinstance(v, bool):
            raise ValueError("bool member must be true or false")
        return _packer.pack(v)
    if key == "number":
        return _packer.pack(v if isinstance(v, int) and not isinstance(v, bool) else _float(v))
    if key in ("int", "bignum"):
        return _packer.pack(_int(v))
    if key == "float32":
        return _single.pack(_float(v))
    if key == "float64":
        return _packer.pack(_float(v))
    if key == "string":
        return _packer.pack(v)
    if key == "string_hex":
        return _escaped.pack(unhex(v).decode("utf-8", "surrogateescape"))
    if key == "binary":
        return _packer.pack(unhex(v))
    if key in ("array", "map"):
        # plain JSON is already the Python value: dict (ordered), list, str, int, float, bool, None
        return _packer.pack(v)
    if key == "typed_array":
        return _packer.pack_array_header(len(v)) + b"".join(encode(x) for x in v)
    if key == "typed_map":
        return _packer.pack_map_header(len(v)) + b"".join(encode(k) + encode(x) for k, x in v)
    if key == "ext":
        return _packer.pack(mpk.ExtType(int(v[0]), unhex(v[1])))
    if key == "timestamp":
        return _packer.pack(mpk.Timestamp(_int(v[0]), _int(v[1])))
    raise ValueError(f"unknown typed value {key!r}")


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


def _int_json(n):
    return n if -MAX_SAFE <= n <= MAX_SAFE else str(n)


def _float_json(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def canonical(v):
    """The canonical typed value of a Python value decoded with decode_options()."""
    if v is None:
        return {"nil": None}
    if v is True or v is False:
        return {"bool": v}
    if isinstance(v, int):
        return {"int": _int_json(v)}
    if isinstance(v, Float32):
        return {"float32": _float_json(float(v))}
    if isinstance(v, float):
        return {"float64": _float_json(v)}
    if isinstance(v, str):
        try:
            return {"string": v.encode("utf-8").decode("utf-8")}
        except UnicodeEncodeError:
            return {"string_hex": v.encode("utf-8", "surrogateescape").hex()}
    if isinstance(v, bytes):
        return {"binary": v.hex()}
    if isinstance(v, Pairs):
        return {"typed_map": [[canonical(k), canonical(x)] for k, x in v]}
    if isinstance(v, (list, tuple)) and not isinstance(v, mpk.ExtType):
        return {"typed_array": [canonical(x) for x in v]}
    if isinstance(v, mpk.ExtType):
        return {"ext": [v.code, v.data.hex()]}
    if isinstance(v, mpk.Timestamp):
        return {"timestamp": [_int_json(v.seconds), v.nanoseconds]}
    raise TypeError(f"no typed form for {type(v).__name__}")
