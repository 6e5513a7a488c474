"""A small, slow, obviously-correct MessagePack codec: the executable form of spec/README.md.

It works on typed values (the notation of spec/README.md) directly: `encode` accepts every form,
`decode` returns the canonical form, and `same` compares two typed values by meaning. The vector
generator checks every case against it, and the interop runner uses it to check what drivers say.
Standard library only.
"""
import json
import math
import struct
import sys

sys.setrecursionlimit(20000)

KINDS = ("truncated", "invalid_byte", "depth_limit", "length_limit", "invalid_timestamp",
         "invalid_utf8", "trailing_bytes")

DEFAULT_LIMITS = {"depth": 1024, "str": 0xFFFFFFFF, "bin": 0xFFFFFFFF, "ext": 0xFFFFFFFF,
                  "array": 0xFFFFFFFF, "map": 0xFFFFFFFF}

VALUE_KEYS = ("nil", "bool", "number", "bignum", "string", "binary", "array", "map", "ext",
              "timestamp", "int", "float32", "float64", "string_hex", "typed_array", "typed_map")

MAX_SAFE = 2**53 - 1


class DecodeError(Exception):
    def __init__(self, kind, offset):
        super().__init__(f"{kind} at byte {offset}")
        self.kind = kind
        self.offset = offset


class EncodeError(Exception):
    def __init__(self, kind, why):
        super().__init__(why)
        self.kind = kind


def unhex(text):
    return bytes.fromhex(text.replace("-", ""))


def value_key(obj):
    """The type key of a typed value (or of a case, which holds one among other keys)."""
    keys = [k for k in obj if k in VALUE_KEYS]
    if len(keys) != 1:
        raise ValueError(f"expected one typed-value key in {sorted(obj)}")
    return keys[0]


# ----------------------------------------------------------------------------------------------
# Reading the notation into a neutral form: ("nil",) ("bool", b) ("int", n) ("number", x)
# ("f32", x) ("f64", x) ("str", bytes) ("bin", bytes) ("array", [..]) ("map", [(k, v)..])
# ("ext", type, bytes) ("ts", sec, nsec)
# ----------------------------------------------------------------------------------------------

def _float(member):
    if isinstance(member, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[member]
    return float(member)


def _plain(v):
    if v is None:
        return ("nil",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("number", v)
    if isinstance(v, str):
        return ("str", v.encode("utf-8"))
    if isinstance(v, list):
        return ("array", [_plain(x) for x in v])
    if isinstance(v, dict):
        return ("map", [(("str", k.encode("utf-8")), _plain(x)) for k, x in v.items()])
    raise ValueError(f"not plain JSON: {v!r}")


def _integer(member):
    """An integer member: a JSON integer or a decimal string (never a bool or a fraction)."""
    if isinstance(member, bool) or not isinstance(member, (int, str)):
        raise ValueError(f"integer member {member!r}")
    return int(member)


def parse(typed):
    """Typed value (any form) -> neutral form."""
    key = value_key(typed)
    m = typed[key]
    if key == "nil":
        return ("nil",)
    if key == "bool":
        if not isinstance(m, bool):
            raise ValueError(f"bool member {m!r}")
        return ("bool", m)
    if key == "number":
        return ("number", m)
    if key in ("bignum", "int"):
        return ("int", _integer(m))
    if key == "float32":
        return ("f32", _float(m))
    if key == "float64":
        return ("f64", _float(m))
    if key == "string":
        return ("str", m.encode("utf-8"))
    if key == "string_hex":
        return ("str", unhex(m))
    if key == "binary":
        return ("bin", unhex(m))
    if key == "array":
        return ("array", [_plain(x) for x in m])
    if key == "map":
        return _plain(m)
    if key == "typed_array":
        return ("array", [parse(x) for x in m])
    if key == "typed_map":
        return ("map", [(parse(k), parse(v)) for k, v in m])
    if key == "ext":
        return ("ext", _integer(m[0]), unhex(m[1]))
    if key == "timestamp":
        return ("ts", _integer(m[0]), _integer(m[1]))
    raise ValueError(key)


def int_json(n):
    """An int as the notation writes it: a JSON number within ±(2^53−1), else a decimal string."""
    return n if -MAX_SAFE <= n <= MAX_SAFE else str(n)


def float_json(x):
    """A float as the notation writes it: a JSON number, or "NaN", "Infinity", "-Infinity"."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def canonical(neutral):
    """Neutral form -> canonical typed value (what a driver answers)."""
    t = neutral[0]
    if t == "nil":
        return {"nil": None}
    if t == "bool":
        return {"bool": neutral[1]}
    if t == "int":
        return {"int": int_json(neutral[1])}
    if t == "number":
        n = neutral[1]
        return {"int": int_json(n)} if isinstance(n, int) else {"float64": float_json(n)}
    if t == "f32":
        return {"float32": float_json(neutral[1])}
    if t == "f64":
        return {"float64": float_json(neutral[1])}
    if t == "str":
        try:
            return {"string": neutral[1].decode("utf-8")}
        except UnicodeDecodeError:
            return {"string_hex": neutral[1].hex()}
    if t == "bin":
        return {"binary": neutral[1].hex()}
    if t == "array":
        return {"typed_array": [canonical(x) for x in neutral[1]]}
    if t == "map":
        return {"typed_map": [[canonical(k), canonical(v)] for k, v in neutral[1]]}
    if t == "ext":
        return {"ext": [neutral[1], neutral[2].hex()]}
    if t == "ts":
        return {"timestamp": [int_json(neutral[1]), neutral[2]]}
    raise ValueError(t)


def _float_same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def same_neutral(expected, actual):
    """Compare by meaning; `expected` may hold loose numbers."""
    te, ta = expected[0], actual[0]
    if te == "number":
        n = expected[1]
        if ta == "int":
            return n == actual[1]
        if ta in ("f32", "f64"):
            return _float_same(float(n), actual[1]) if isinstance(n, float) else n == actual[1]
        return False
    if te == "int" and ta in ("f32", "f64"):
        return False
    if te != ta:
        return False
    if te in ("f32", "f64"):
        return _float_same(expected[1], actual[1])
    # Plain loops, not all() over a generator: that costs two C calls per level, and CPython 3.12+
    # counts C calls against a fixed limit (about 1,500, whatever sys.setrecursionlimit says), which
    # the corpus's 1,025-deep case passes. Python-to-Python calls do not count there.
    if te in ("array", "map"):
        if len(expected[1]) != len(actual[1]):
            return False
        if te == "array":
            for e, a in zip(expected[1], actual[1]):
                if not same_neutral(e, a):
                    return False
            return True
        for (ek, ev), (ak, av) in zip(expected[1], actual[1]):
            if not (same_neutral(ek, ak) and same_neutral(ev, av)):
                return False
        return True
    return expected == actual


def same(expected_typed, actual_typed):
    """True when two typed values (any forms) mean the same; `expected` may be loose."""
    try:
        return same_neutral(parse(expected_typed), parse(actual_typed))
    except (ValueError, KeyError, TypeError, IndexError):
        return False


# ----------------------------------------------------------------------------------------------
# Encoding (shortest form)
# ----------------------------------------------------------------------------------------------

def _head_len(count, fix_base, fix_max, codes):
    """Header for str/bin/array/map lengths: fix form when allowed, else the smallest of codes."""
    if fix_base is not None and count <= fix_max:
        return bytes([fix_base | count])
    for code, size in codes:
        if count < 1 << (8 * size):
            return bytes([code]) + count.to_bytes(size, "big")
    raise EncodeError("bad_request", f"length {count} too large")


def encode_int(n):
    if 0 <= n <= 0x7F:
        return bytes([n])
    if -32 <= n < 0:
        return bytes([n & 0xFF])
    if n >= 0:
        for code, size in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
            if n < 1 << (8 * size):
                return bytes([code]) + n.to_bytes(size, "big")
        raise EncodeError("bad_request", f"int {n} beyond uint64")
    for code, size in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
        if n >= -(1 << (8 * size - 1)):
            return bytes([code]) + n.to_bytes(size, "big", signed=True)
    raise EncodeError("bad_request", f"int {n} beyond int64")


def encode_ext_head(ext_type, length):
    fixed = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}
    t = (ext_type & 0xFF).to_bytes(1, "big")
    if length in fixed:
        return bytes([fixed[length]]) + t
    return _head_len(length, None, 0, ((0xC7, 1), (0xC8, 2), (0xC9, 4))) + t


def timestamp_payload(sec, nsec):
    if not -(1 << 63) <= sec < 1 << 63:
        raise EncodeError("bad_request", f"timestamp seconds {sec} beyond int64")
    if not 0 <= nsec <= 999_999_999:
        raise EncodeError("invalid_timestamp", f"timestamp nsec {nsec} out of range")
    if nsec == 0 and 0 <= sec < 1 << 32:
        return sec.to_bytes(4, "big")
    if 0 <= sec < 1 << 34:
        return ((nsec << 34) | sec).to_bytes(8, "big")
    return nsec.to_bytes(4, "big") + sec.to_bytes(8, "big", signed=True)


def encode_neutral(v, out):
    t = v[0]
    if t == "nil":
        out += b"\xc0"
    elif t == "bool":
        out += b"\xc3" if v[1] else b"\xc2"
    elif t == "int":
        out += encode_int(v[1])
    elif t == "number" and isinstance(v[1], int):
        out += encode_int(v[1])
    elif t in ("number", "f64"):
        out += b"\xcb" + struct.pack(">d", v[1])
    elif t == "f32":
        out += b"\xca" + struct.pack(">f", v[1])
    elif t == "str":
        out += _head_len(len(v[1]), 0xA0, 31, ((0xD9, 1), (0xDA, 2), (0xDB, 4))) + v[1]
    elif t == "bin":
        out += _head_len(len(v[1]), None, 0, ((0xC4, 1), (0xC5, 2), (0xC6, 4))) + v[1]
    elif t == "array":
        out += _head_len(len(v[1]), 0x90, 15, ((0xDC, 2), (0xDD, 4)))
        for x in v[1]:
            encode_neutral(x, out)
    elif t == "map":
        out += _head_len(len(v[1]), 0x80, 15, ((0xDE, 2), (0xDF, 4)))
        for k, x in v[1]:
            encode_neutral(k, out)
            encode_neutral(x, out)
    elif t == "ext":
        if not -128 <= v[1] <= 127:
            raise EncodeError("bad_request", f"ext type {v[1]} out of range")
        out += encode_ext_head(v[1], len(v[2])) + v[2]
    elif t == "ts":
        payload = timestamp_payload(v[1], v[2])
        out += encode_ext_head(-1, len(payload)) + payload
    else:
        raise ValueError(t)


def encode(typed):
    out = bytearray()
    encode_neutral(parse(typed), out)
    return bytes(out)


# ----------------------------------------------------------------------------------------------
# Decoding (one-shot, with the check order of spec/README.md)
# ----------------------------------------------------------------------------------------------

class _Reader:
    # Whether an ext -1 of a length no timestamp has is refused from its head alone, before its
    # payload is there: a stream does (it reports an error as soon as the bytes prove it), one-shot
    # decoding checks the bytes present first (check 5 before check 6).
    ts_length_at_head = False

    def __init__(self, data, limits, strict_utf8):
        self.data = data
        self.limits = dict(DEFAULT_LIMITS, **(limits or {}))
        self.strict = strict_utf8

    def room(self, head, end):
        """The value whose head is at `head` needs the bytes up to `end`: truncated at the head
        when they are not all there."""
        if end > len(self.data):
            raise DecodeError("truncated", head)

    def count_fits(self, head, start, need):
        """A container's `need` elements take a byte each at least: a count the bytes after
        `start` cannot hold is truncated at the head, before any element is read."""
        self.room(head, start + need)

    def fields(self, head, size):
        """The fixed fields after a head byte; truncated at the head when cut off."""
        end = head + 1 + size
        self.room(head, end)
        return self.data[head + 1:end], end

    def limit(self, head, length, limit_name):
        if length > self.limits[limit_name]:
            raise DecodeError("length_limit", head)

    def sized(self, head, start, length, limit_name, need):
        """Limit check, then check that `need` bytes fit after `start`."""
        self.limit(head, length, limit_name)
        self.room(head, start + need)

    def container(self, head, start, count, kind, depth):
        if count > self.limits[kind]:
            raise DecodeError("length_limit", head)
        if depth + 1 > self.limits["depth"]:
            raise DecodeError("depth_limit", head)
        self.count_fits(head, start, count * (2 if kind == "map" else 1))
        pos = start
        if kind == "array":
            items = []
            for _ in range(count):
                item, pos = self.value(pos, depth + 1)
                items.append(item)
            return ("array", items), pos
        pairs = []
        for _ in range(count):
            k, pos = self.value(pos, depth + 1)
            v, pos = self.value(pos, depth + 1)
            pairs.append((k, v))
        return ("map", pairs), pos

    def string(self, head, start, length):
        self.sized(head, start, length, "str", length)
        raw = self.data[start:start + length]
        if self.strict:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DecodeError("invalid_utf8", head)
        return ("str", raw), start + length

    def ext(self, head, start, length):
        """`start` points at the ext type byte, which is already known to be present."""
        ext_type = int.from_bytes(self.data[start:start + 1], "big", signed=True)
        body = start + 1
        self.limit(head, length, "ext")
        if self.ts_length_at_head and ext_type == -1 and length not in (4, 8, 12):
            raise DecodeError("invalid_timestamp", head)
        self.room(head, body + length)
        payload = self.data[body:body + length]
        end = body + length
        if ext_type != -1:
            return ("ext", ext_type, payload), end
        if length == 4:
            return ("ts", int.from_bytes(payload, "big"), 0), end
        if length == 8:
            word = int.from_bytes(payload, "big")
            nsec, sec = word >> 34, word & ((1 << 34) - 1)
        elif length == 12:
            nsec = int.from_bytes(payload[:4], "big")
            sec = int.from_bytes(payload[4:], "big", signed=True)
        else:
            raise DecodeError("invalid_timestamp", head)
        if nsec > 999_999_999:
            raise DecodeError("invalid_timestamp", head)
        return ("ts", sec, nsec), end

    def value(self, pos, depth):
        data = self.data
        self.room(pos, pos + 1)
        b = data[pos]
        if b <= 0x7F:
            return ("int", b), pos + 1
        if b >= 0xE0:
            return ("int", b - 0x100), pos + 1
        if b <= 0x8F:
            return self.container(pos, pos + 1, b & 0x0F, "map", depth)
        if b <= 0x9F:
            return self.container(pos, pos + 1, b & 0x0F, "array", depth)
        if b <= 0xBF:
            return self.string(pos, pos + 1, b & 0x1F)
        if b == 0xC0:
            return ("nil",), pos + 1
        if b == 0xC1:
            raise DecodeError("invalid_byte", pos)
        if b in (0xC2, 0xC3):
            return ("bool", b == 0xC3), pos + 1
        if b in (0xC4, 0xC5, 0xC6):
            f, end = self.fields(pos, 1 << (b - 0xC4))
            n = int.from_bytes(f, "big")
            self.sized(pos, end, n, "bin", n)
            return ("bin", data[end:end + n]), end + n
        if b in (0xC7, 0xC8, 0xC9):
            size = 1 << (b - 0xC7)
            f, end = self.fields(pos, size + 1)
            return self.ext(pos, end - 1, int.from_bytes(f[:size], "big"))
        if b == 0xCA:
            f, end = self.fields(pos, 4)
            return ("f32", struct.unpack(">f", f)[0]), end
        if b == 0xCB:
            f, end = self.fields(pos, 8)
            return ("f64", struct.unpack(">d", f)[0]), end
        if 0xCC <= b <= 0xCF:
            f, end = self.fields(pos, 1 << (b - 0xCC))
            return ("int", int.from_bytes(f, "big")), end
        if 0xD0 <= b <= 0xD3:
            f, end = self.fields(pos, 1 << (b - 0xD0))
            return ("int", int.from_bytes(f, "big", signed=True)), end
        if 0xD4 <= b <= 0xD8:
            self.fields(pos, 1)
            return self.ext(pos, pos + 1, 1 << (b - 0xD4))
        if b in (0xD9, 0xDA, 0xDB):
            f, end = self.fields(pos, 1 << (b - 0xD9))
            return self.string(pos, end, int.from_bytes(f, "big"))
        if b in (0xDC, 0xDD):
            f, end = self.fields(pos, 2 if b == 0xDC else 4)
            return self.container(pos, end, int.from_bytes(f, "big"), "array", depth)
        f, end = self.fields(pos, 2 if b == 0xDE else 4)
        return self.container(pos, end, int.from_bytes(f, "big"), "map", depth)


# ----------------------------------------------------------------------------------------------
# Stream decoding (spec/README.md, "Error kinds and offsets", the stream paragraphs)
# ----------------------------------------------------------------------------------------------

class _End(Exception):
    """The bytes ran out inside a value (a stream would wait for more)."""


class _StreamReader(_Reader):
    """Reads like a stream that has been fed `data` and then told the input ended: declared sizes
    are not checked against the bytes present (more could come), every error the bytes prove is
    raised where the walk meets it, and running out of bytes raises _End. A str's UTF-8, like a
    timestamp's nsec, is judged once its whole payload is in (check 6)."""

    ts_length_at_head = True

    def room(self, head, end):
        if end > len(self.data):
            raise _End()

    def count_fits(self, head, start, need):
        pass  # the elements are walked as they come


def decode_stream(data, limits=None, strict_utf8=False):
    """What a streaming decoder fed `data` (in any chunks) and then told the input ended gives:
    (the canonical values it completed, in order; None, or (kind, offset) of the error it reports).
    Offsets count from the stream's first byte. Within a value a declared count is not checked
    against the bytes present; when the bytes run out inside a value, the error is `truncated` at
    the offset one-shot decoding of that value's bytes gives."""
    data = bytes(data)
    reader = _StreamReader(data, limits, strict_utf8)
    values = []
    pos = 0
    while pos < len(data):
        try:
            value, pos = reader.value(pos, 0)
        except DecodeError as e:
            return values, (e.kind, e.offset)
        except _End:
            try:
                decode_neutral(data[pos:], limits, strict_utf8)
            except DecodeError as e:
                assert e.kind == "truncated", (data.hex(), pos, e.kind)
                return values, ("truncated", pos + e.offset)
            raise AssertionError(f"one-shot decoded what the stream could not: {data[pos:].hex()}")
        values.append(canonical(value))
    return values, None


def decode_neutral(data, limits=None, strict_utf8=False):
    reader = _Reader(bytes(data), limits, strict_utf8)
    value, end = reader.value(0, 0)
    if end != len(data):
        raise DecodeError("trailing_bytes", end)
    return value


def decode(data, limits=None, strict_utf8=False):
    """Bytes -> canonical typed value; raises DecodeError(kind, offset)."""
    return canonical(decode_neutral(data, limits, strict_utf8))


def dumps(obj):
    """JSON text for the corpus: compact, keys in the order given, -0.0 kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
