#!/usr/bin/env python3
"""Write spec/vectors/*.json, the conformance corpus (see spec/README.md).

Deterministic: the same script gives the same files. Every case is checked against reference.py
before anything is written: each listed encoding decodes to the case's value, the value encodes to
the first listed form, and each negative case fails with its kind at its offset.
"""
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as ref  # noqa: E402

OUT = os.environ.get("MPK_VECTORS_OUT") or os.path.join(HERE, "vectors")


# ----------------------------------------------------------------------------------------------
# Helpers to build values and their alternative encodings
# ----------------------------------------------------------------------------------------------

def int_forms(n):
    """Every encoding of the integer n, shortest first."""
    forms = [ref.encode_int(n)]
    if 0 <= n <= 0x7F:
        forms.append(bytes([n]))
    if -32 <= n < 0:
        forms.append(bytes([n & 0xFF]))
    for code, size in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
        if 0 <= n < 1 << (8 * size):
            forms.append(bytes([code]) + n.to_bytes(size, "big"))
    for code, size in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
        if -(1 << (8 * size - 1)) <= n < 1 << (8 * size - 1):
            forms.append(bytes([code]) + n.to_bytes(size, "big", signed=True))
    return dedupe(forms)


def dedupe(forms):
    seen, out = set(), []
    for f in forms:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def len_forms(n, fix_base, fix_max, codes):
    """Every header that can carry length n: the fix form, then each sized code that holds it."""
    out = []
    if fix_base is not None and n <= fix_max:
        out.append(bytes([fix_base | n]))
    for code, size in codes:
        if n < 1 << (8 * size):
            out.append(bytes([code]) + n.to_bytes(size, "big"))
    return out


STR_CODES = ((0xD9, 1), (0xDA, 2), (0xDB, 4))
BIN_CODES = ((0xC4, 1), (0xC5, 2), (0xC6, 4))
ARRAY_CODES = ((0xDC, 2), (0xDD, 4))
MAP_CODES = ((0xDE, 2), (0xDF, 4))
EXT_CODES = ((0xC7, 1), (0xC8, 2), (0xC9, 4))
FIXEXT = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}


def str_forms(raw):
    return [h + raw for h in len_forms(len(raw), 0xA0, 31, STR_CODES)]


def bin_forms(raw):
    return [h + raw for h in len_forms(len(raw), None, 0, BIN_CODES)]


def ext_forms(ext_type, payload):
    t = bytes([ext_type & 0xFF])
    heads = []
    if len(payload) in FIXEXT:
        heads.append(bytes([FIXEXT[len(payload)]]))
    heads += len_forms(len(payload), None, 0, EXT_CODES)
    return [h + t + payload for h in heads]


def f32(x):
    """The binary32 value nearest to x, as a Python float."""
    return struct.unpack(">f", struct.pack(">f", x))[0]


def hexes(forms):
    return [f.hex() for f in forms]


class Corpus:
    def __init__(self):
        self.files = {}

    def add(self, file, case):
        self.files.setdefault(file, []).append(case)

    def ok(self, file, name, value, forms, limits=None):
        case = {"name": name}
        case.update(value)
        case["msgpack"] = hexes(forms) if not isinstance(forms[0], str) else forms
        if limits:
            case["limits"] = limits
        self.add(file, case)

    def unencodable(self, file, name, value, kind):
        """A value MessagePack cannot carry: encoders refuse it with this kind and write nothing."""
        case = {"name": name}
        case.update(value)
        case["encode_error"] = kind
        self.add(file, case)

    def bad(self, file, name, data, limits=None, strict_utf8=False, kind=None, offset=None):
        """A negative case; kind/offset come from the reference unless given (then cross-checked)."""
        try:
            ref.decode(data, limits, strict_utf8)
        except ref.DecodeError as e:
            if kind is not None and (e.kind, e.offset) != (kind, offset):
                raise AssertionError(f"{name}: reference says {e.kind}@{e.offset}, "
                                     f"expected {kind}@{offset}")
            case = {"name": name, "msgpack": data.hex(), "error": e.kind, "offset": e.offset}
            if limits:
                case["limits"] = limits
            if strict_utf8:
                case["strict_utf8"] = True
            self.add(file, case)
            return
        raise AssertionError(f"{name}: {data.hex()} decodes without error")


def check(files):
    """Every case against the reference codec."""
    for file, cases in files.items():
        for c in cases:
            where = f"{file}: {c.get('name')}"
            if "encode_error" in c:
                key = ref.value_key(c)
                try:
                    ref.encode({key: c[key]})
                except ref.EncodeError as e:
                    assert e.kind == c["encode_error"], f"{where}: reference says {e.kind}"
                    continue
                raise AssertionError(f"{where}: encodes without error")
            if "error" in c:
                try:
                    ref.decode(ref.unhex(c["msgpack"]), c.get("limits"), c.get("strict_utf8", False))
                except ref.DecodeError as e:
                    assert (e.kind, e.offset) == (c["error"], c["offset"]), where
                    continue
                raise AssertionError(f"{where}: no error")
            key = ref.value_key(c)
            value = {key: c[key]}
            for h in c["msgpack"]:
                got = ref.decode(ref.unhex(h), c.get("limits"))
                assert ref.same(value, got), f"{where}: {h} decoded to {got}"
            enc = ref.encode(value).hex()
            listed = [h.replace("-", "") for h in c["msgpack"]]
            if key == "number":
                assert enc in listed, f"{where}: encodes to {enc}"
            else:
                assert enc == listed[0], f"{where}: encodes to {enc}, listed {listed[0]}"


# ----------------------------------------------------------------------------------------------
# The families
# ----------------------------------------------------------------------------------------------

INT_EDGES = [0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
             2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1,
             -1, -31, -32, -33, -127, -128, -129, -32767, -32768, -32769, -2**31 + 1, -2**31,
             -2**31 - 1, -2**53 + 1, -2**53, -2**53 - 1, -2**63 + 1, -2**63,
             42, 300, 70000, 5000000000, -100, -1000, -100000, -5000000000]


def gen_ints(c):
    for n in INT_EDGES:
        c.ok("int.json", f"int {n}", {"int": ref.int_json(n)}, int_forms(n))
    for n in (2**64 - 1, 2**63, -2**63, 2**53 + 1):
        c.ok("int.json", f"bignum {n}", {"bignum": str(n)}, int_forms(n))


FLOAT32S = [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 0.1, 3.141592653589793, 100000.0, 16777216.0,
            16777217.0, 3.4028234663852886e38, -3.4028234663852886e38, 1.1754943508222875e-38,
            1.401298464324817e-45, -1.401298464324817e-45, 5.877471754111438e-39, math.inf,
            -math.inf, math.nan, 65504.0, 1e-10, 123456.789]
FLOAT64S = [0.0, -0.0, 1.0, -1.0, 1.5, 0.1, -0.1, 3.141592653589793, 2.718281828459045, 1e300,
            -1e300, 1.7976931348623157e308, -1.7976931348623157e308, 2.2250738585072014e-308,
            2.225073858507201e-308, 5e-324, -5e-324, 9007199254740993.0, 4294967296.5, math.inf,
            -math.inf, math.nan, 1e-7, 123456789.123456789, 0.30000000000000004, 1.0000000000000002]


def gen_floats(c):
    for x in FLOAT32S:
        v = f32(x)
        c.ok("float.json", f"float32 {ref.float_json(v)}", {"float32": ref.float_json(v)},
             [b"\xca" + struct.pack(">f", v)])
    for x in FLOAT64S:
        c.ok("float.json", f"float64 {ref.float_json(x)}", {"float64": ref.float_json(x)},
             [b"\xcb" + struct.pack(">d", x)])


def text(n, seed=0):
    """A deterministic ASCII string of n bytes."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_."
    return "".join(alphabet[(i * 7 + seed) % len(alphabet)] for i in range(n))


INVALID_UTF8 = [
    ("lone continuation byte", "80"),
    ("0xff", "ff"),
    ("overlong NUL c0 80", "c080"),
    ("overlong slash e0 80 af", "e080af"),
    ("surrogate U+D800", "eda080"),
    ("surrogate U+DFFF", "edbfbf"),
    ("beyond U+10FFFF", "f4908080"),
    ("f5 lead byte", "f5808080"),
    ("bad continuation e2 28 a1", "e228a1"),
    ("sequence cut at the end", "61e282"),
    ("valid then invalid", "68656c6c6fff"),
]


def gen_strings(c):
    for n in (0, 1, 2, 31, 32, 33, 255, 256, 65535, 65536):
        s = text(n, n)
        c.ok("str.json", f"str length {n}", {"string": s}, str_forms(s.encode()))
    samples = [("two-byte", "é"), ("three-byte", "日本語"), ("four-byte", "😀"),
               ("mixed", "aé日😀z"), ("NUL inside", "a\u0000b"), ("U+FFFF", "\uffff"),
               ("U+10FFFF", "\U0010ffff"), ("U+FFFD itself", "\ufffd"),
               ("31 bytes of multibyte", "é" * 15 + "a"), ("32 bytes of multibyte", "é" * 16),
               ("quote and backslash", "\"\\/\n\t"), ("control bytes", "\u0001\u001f\u007f")]
    for label, s in samples:
        c.ok("str.json", f"str {label}", {"string": s}, str_forms(s.encode()))
    for label, h in INVALID_UTF8:
        raw = bytes.fromhex(h)
        c.ok("str.json", f"str invalid UTF-8 kept as bytes: {label}", {"string_hex": h},
             str_forms(raw))
        c.bad("utf8_strict.json", f"strict UTF-8: {label}", str_forms(raw)[0], strict_utf8=True,
              kind="invalid_utf8", offset=0)
    # Strict mode points at the str head, wherever it sits.
    c.bad("utf8_strict.json", "strict UTF-8: invalid str inside an array", bytes.fromhex("92a161a1ff"),
          strict_utf8=True, kind="invalid_utf8", offset=3)
    c.bad("utf8_strict.json", "strict UTF-8: invalid map key", bytes.fromhex("81a2c080c0"),
          strict_utf8=True, kind="invalid_utf8", offset=1)
    c.bad("utf8_strict.json", "strict UTF-8: invalid str 8", bytes.fromhex("91d902eda0"),
          strict_utf8=True, kind="invalid_utf8", offset=1)
    for label, s in samples:
        c.ok("utf8_strict.json", f"strict UTF-8 accepts {label}", {"string": s},
             str_forms(s.encode())[:1])


def gen_bins(c):
    for n in (0, 1, 2, 31, 32, 255, 256, 65535, 65536):
        raw = bytes((i * 31 + n) & 0xFF for i in range(n))
        c.ok("bin.json", f"bin length {n}", {"binary": raw.hex()}, bin_forms(raw))
    c.ok("bin.json", "bin with dash-separated hex", {"binary": "00-ff-10"},
         [bytes.fromhex("c40300ff10")])


def gen_arrays(c):
    for n in (0, 1, 2, 15, 16, 17, 255, 256, 65535, 65536):
        items = [i % 128 for i in range(n)]
        body = bytes(items)
        forms = [h + body for h in len_forms(n, 0x90, 15, ARRAY_CODES)]
        if n <= 16:
            c.ok("array.json", f"array of {n} ints (typed)",
                 {"typed_array": [{"int": i} for i in items]}, forms)
        c.ok("array.json", f"array of {n} ints (plain JSON)", {"array": items}, forms)
    c.ok("array.json", "array of mixed scalars", {"typed_array": [
        {"nil": None}, {"bool": True}, {"bool": False}, {"int": -1}, {"float32": 1.5},
        {"float64": -0.0}, {"string": "x"}, {"binary": "01"}]},
        [bytes.fromhex("98c0c3c2ffca3fc00000cb8000000000000000a178c40101")])
    # An element in a non-shortest form inside a shortest container: still the same value.
    c.ok("array.json", "array whose elements use wide forms", {"typed_array": [{"int": 1}, {"string": "a"}]},
         [bytes.fromhex("9201a161"), bytes.fromhex("92cc01d90161"), bytes.fromhex("dc0002d30000000000000001a161")])



RUN_LENGTHS = list(range(0, 21)) + [31, 32, 33, 47, 48, 49, 64, 65]
RUN_INTS = [0, -1, 127, -32, 128, -33, 255, -128, 256, -129, 65535, -32768, 65536, -32769,
            2**32 - 1, -2**31, 2**32, -2**31 - 1, 2**63 - 1, -2**63, 2**64 - 1]


def gen_runs(c):
    """Containers of every length around the fix/16/32 boundaries and the lengths fast paths batch
    by (8, 16, 32, 64), each holding one scalar kind: a writer that packs runs of floats, ints or
    strs in blocks must give the same bytes at every length (a 16-float list once came out as an
    empty fixarray followed by its floats)."""
    kinds = {
        "float64": lambda i: {"float64": ref.float_json(i + 0.5 if i % 3 else -i - 0.25)},
        "float32": lambda i: {"float32": ref.float_json(f32(i + 0.25))},
        "int of every width": lambda i: {"int": ref.int_json(RUN_INTS[i % len(RUN_INTS)])},
        "small int": lambda i: {"int": i % 128},
        "str": lambda i: {"string": "x" * (i % 40)},
        "bool and nil": lambda i: {"bool": i % 2 == 0} if i % 3 else {"nil": None},
    }
    for kind, item in kinds.items():
        for n in RUN_LENGTHS:
            items = [item(i) for i in range(n)]
            body = b"".join(ref.encode(x) for x in items)
            c.ok("runs.json", f"array of {n}: {kind}", {"typed_array": items},
                 [h + body for h in len_forms(n, 0x90, 15, ARRAY_CODES)])
    for n in RUN_LENGTHS:
        pairs = [[{"string": f"k{i}"}, {"float64": ref.float_json(i + 0.5)}] for i in range(n)]
        body = b"".join(ref.encode(k) + ref.encode(v) for k, v in pairs)
        c.ok("runs.json", f"map of {n}: str keys, float64 values", {"typed_map": pairs}, map_forms(body, n))
        pairs = [[{"int": i}, {"int": ref.int_json(RUN_INTS[i % len(RUN_INTS)])}] for i in range(n)]
        body = b"".join(ref.encode(k) + ref.encode(v) for k, v in pairs)
        c.ok("runs.json", f"map of {n}: int keys, ints of every width", {"typed_map": pairs}, map_forms(body, n))


RECORD_LENGTHS = [0, 1, 2, 3, 8, 15, 16, 17, 31, 32, 33, 64]


def record(i, keys=("id", "name", "score", "active", "tags")):
    """One row of a table: the same key set every time, values varying with i."""
    vals = [
        {"int": ref.int_json(i * 7919 - 50)},
        {"string": f"user {i}" if i % 4 else ""},
        {"float64": ref.float_json(i / 8 - 1.0)},
        {"bool": i % 2 == 0} if i % 5 else {"nil": None},
        {"typed_array": [{"string": t} for t in ("a", "bb", "ccc")[: i % 4]]},
    ]
    return [[{"string": k} if isinstance(k, str) else k, v] for k, v in zip(keys, vals)]


def gen_records(c):
    """Arrays of maps that share one key set (tables, API responses, log lines) and maps of arrays:
    the shape that decoders speed up with key caches, dict templates or hidden classes, and that
    encoders speed up by remembering encoded keys. Each case breaks the pattern in one way a cache
    must notice (a missing, extra, repeated, reordered or lookalike key) at a row past the first,
    so a decoder that copies the first row's layout must still give every row its own keys."""
    def rows(name, items):
        body = b"".join(ref.encode({"typed_map": r}) for r in items)
        c.ok("records.json", name, {"typed_array": [{"typed_map": r} for r in items]},
             [h + body for h in len_forms(len(items), 0x90, 15, ARRAY_CODES)])

    for n in RECORD_LENGTHS:
        rows(f"array of {n} records with the same keys", [record(i) for i in range(n)])
    base = [record(i) for i in range(20)]

    def changed(at, f):
        out = [list(r) for r in base]
        out[at] = f(out[at])
        return out
    rows("20 records, row 10 has its keys in another order", changed(10, lambda r: r[::-1]))
    rows("20 records, every row rotates its key order", [r[i % 5:] + r[:i % 5] for i, r in enumerate(base)])
    rows("20 records, row 10 lacks a key", changed(10, lambda r: r[:2] + r[3:]))
    rows("20 records, row 10 has an extra key", changed(10, lambda r: r + [[{"string": "extra"}, {"int": 1}]]))
    rows("20 records, row 1 has an extra key", changed(1, lambda r: r + [[{"string": "extra"}, {"int": 1}]]))
    rows("20 records, row 10 repeats a key (the last pair wins a lookup)",
         changed(10, lambda r: r + [[{"string": "id"}, {"int": -1}]]))
    rows("20 records, row 0 repeats a key", changed(0, lambda r: r[:1] + r + [[{"string": "name"}, {"nil": None}]]))
    rows("20 records, row 10 has an int key where the others have a str",
         changed(10, lambda r: [[{"int": 2}, r[2][1]]] + r[:2] + r[3:]))
    rows("20 records, row 10 has a key of the same length differing in its last byte",
         changed(10, lambda r: [[{"string": "nama"}, r[1][1]] if k == 1 else p for k, p in enumerate(r)]))
    rows("20 records, row 10 has a key that is a prefix of the usual one",
         changed(10, lambda r: [[{"string": "nam"}, r[1][1]] if k == 1 else p for k, p in enumerate(r)]))
    rows("20 records, row 10 has an empty map", changed(10, lambda r: []))
    rows("20 records, row 10 has a special key (__proto__)",
         changed(10, lambda r: [[{"string": "__proto__"}, {"int": 5}]] + r))
    rows("20 records, values that are keys elsewhere",
         [[[k, {"string": ("id", "name", "score")[i % 3]}] for k, _ in r] for i, r in enumerate(base)])
    edge = ("", "k" * 31, "k" * 32, "\u00e9t\u00e9", "\U0001f511")
    rows("20 records with keys of 0, 31 and 32 bytes and non-ASCII keys",
         [record(i, edge) for i in range(20)])
    rows("20 records, two key sets taking turns",
         [record(i, ("id", "name", "score", "active", "tags") if i % 2 else ("ID", "NAME", "SCORE", "ACTIVE", "TAGS"))
          for i in range(20)])
    rows("20 records of records",
         [r + [[{"string": "child"}, {"typed_map": record(i + 100)}]] for i, r in enumerate(base)])
    rows("20 records whose values are all nil", [[[k, {"nil": None}] for k, _ in r] for r in base])

    for n in (15, 16, 17):
        pairs = [[{"string": f"col{j}"}, {"typed_array": [{"int": ref.int_json(RUN_INTS[(i + j) % len(RUN_INTS)])}
                                                          for i in range(n)]}] for j in range(n)]
        c.ok("records.json", f"map of {n} columns of {n} ints", {"typed_map": pairs},
             map_forms(b"".join(ref.encode(k) + ref.encode(v) for k, v in pairs), n))
        grid = [{"typed_array": [{"float64": ref.float_json(i * n + j + 0.5)} for j in range(i)]} for i in range(n)]
        body = b"".join(ref.encode(g) for g in grid)
        c.ok("records.json", f"array of {n} arrays of 0..{n - 1} floats", {"typed_array": grid},
             [h + body for h in len_forms(n, 0x90, 15, ARRAY_CODES)])


def map_forms(body_pairs_bytes, n):
    return [h + body_pairs_bytes for h in len_forms(n, 0x80, 15, MAP_CODES)]


def gen_maps(c):
    for n in (0, 1, 2, 15, 16, 17, 65535, 65536):
        keys = [f"{i:x}" for i in range(n)]  # short keys keep the 65536-pair case small
        body = b"".join(ref.encode({"string": k}) + ref.encode_int(i % 100) for i, k in enumerate(keys))
        forms = map_forms(body, n)
        c.ok("map.json", f"map of {n} str keys (plain JSON)", {"map": {k: i % 100 for i, k in enumerate(keys)}},
             forms)
        if n <= 16:
            c.ok("map.json", f"map of {n} int keys (typed)",
                 {"typed_map": [[{"int": i}, {"string": k}] for i, k in enumerate(keys)]},
                 map_forms(b"".join(ref.encode_int(i) + ref.encode({"string": k}) for i, k in enumerate(keys)), n))
    odd_keys = [
        ("nil key", [[{"nil": None}, {"int": 1}]]),
        ("bool keys", [[{"bool": True}, {"int": 1}], [{"bool": False}, {"int": 0}]]),
        ("negative int key", [[{"int": -5}, {"string": "minus five"}]]),
        ("uint64 key", [[{"int": "18446744073709551615"}, {"nil": None}]]),
        ("float keys", [[{"float64": 1.5}, {"int": 1}], [{"float32": -0.0}, {"int": 2}]]),
        ("bin key", [[{"binary": "00ff"}, {"int": 1}]]),
        ("array key", [[{"typed_array": [{"int": 1}, {"int": 2}]}, {"string": "pair"}]]),
        ("map key", [[{"typed_map": [[{"string": "a"}, {"int": 1}]]}, {"nil": None}]]),
        ("ext key", [[{"ext": [5, "aa"]}, {"int": 1}]]),
        ("timestamp key", [[{"timestamp": [1, 0]}, {"int": 1}]]),
        ("duplicate str keys, order kept", [[{"string": "a"}, {"int": 1}], [{"string": "a"}, {"int": 2}]]),
        ("duplicate int keys", [[{"int": 1}, {"int": 1}], [{"int": 1}, {"int": 2}], [{"int": 1}, {"int": 3}]]),
        ("keys out of sorted order", [[{"string": "z"}, {"int": 1}], [{"string": "a"}, {"int": 2}],
                                      [{"string": "m"}, {"int": 3}]]),
        ("mixed key types", [[{"string": "1"}, {"int": 1}], [{"int": 1}, {"int": 2}], [{"float64": 1.0}, {"int": 3}]]),
        ("invalid UTF-8 str key", [[{"string_hex": "ff"}, {"int": 1}]]),
        ("special keys that JavaScript objects treat specially",
         [[{"string": "__proto__"}, {"int": 1}], [{"string": "constructor"}, {"int": 2}],
          [{"string": "prototype"}, {"int": 3}]]),
    ]
    for label, pairs in odd_keys:
        value = {"typed_map": pairs}
        enc = ref.encode(value)
        n = len(pairs)
        body = enc[1:]
        c.ok("map.json", f"map with {label}", value, map_forms(body, n))


def gen_exts(c):
    for ext_type in (0, 1, 42, 127, -2, -128):
        for n in (1, 2, 4, 8, 16, 0, 3, 17, 255, 256, 65535, 65536):
            if n > 1000 and ext_type not in (1,):
                continue
            payload = bytes((i * 13 + ext_type) & 0xFF for i in range(n))
            c.ok("ext.json", f"ext type {ext_type} length {n}", {"ext": [ext_type, payload.hex()]},
                 ext_forms(ext_type, payload))
    c.ok("ext.json", "ext with dash-separated hex", {"ext": [1, "10-20"]}, [bytes.fromhex("d5011020")])


def ts_forms(sec, nsec):
    """Every encoding of a timestamp: each of the three payloads that can hold it, in every ext head."""
    payloads = []
    if nsec == 0 and 0 <= sec < 1 << 32:
        payloads.append(sec.to_bytes(4, "big"))
    if 0 <= sec < 1 << 34:
        payloads.append(((nsec << 34) | sec).to_bytes(8, "big"))
    payloads.append(nsec.to_bytes(4, "big") + sec.to_bytes(8, "big", signed=True))
    forms = [ref.encode({"timestamp": [sec, nsec]})]
    for p in payloads:
        forms += ext_forms(-1, p)
    return dedupe(forms)


TIMESTAMPS = [(0, 0), (1, 0), (1514862245, 0), (2**32 - 1, 0), (2**32, 0), (0, 1), (1, 999999999),
              (2**32 - 1, 999999999), (2**34 - 1, 0), (2**34 - 1, 999999999), (2**34, 0),
              (2**34, 1), (-1, 0), (-1, 999999999), (-2**31, 0), (-2**63, 0), (2**63 - 1, 999999999),
              (-2**63, 999999999), (1700000000, 123456789), (-62135596800, 0), (253402300799, 999999999)]


def gen_timestamps(c):
    for sec, nsec in TIMESTAMPS:
        c.ok("timestamp.json", f"timestamp {sec} s {nsec} ns", {"timestamp": [ref.int_json(sec), nsec]},
             ts_forms(sec, nsec))
    bad_payloads = [("fixext 1", "d4ff00"), ("fixext 2", "d5ff0000"), ("fixext 16", "d8ff" + "00" * 16),
                    ("ext 8 length 0", "c700ff"), ("ext 8 length 5", "c705ff" + "00" * 5),
                    ("ext 8 length 13", "c70dff" + "00" * 13), ("ext 16 length 3", "c80003ff" + "00" * 3),
                    ("timestamp 64 nsec 10^9", "d7ff" + ((10**9 << 34) | 1).to_bytes(8, "big").hex()),
                    ("timestamp 64 nsec 2^30-1", "d7ff" + (((1 << 30) - 1) << 34).to_bytes(8, "big").hex()),
                    ("timestamp 96 nsec 10^9", "c70cff" + (10**9).to_bytes(4, "big").hex() + "00" * 8),
                    ("timestamp 96 nsec 2^32-1", "c70cff" + "ffffffff" + "00" * 8),
                    ("timestamp 64 in ext 16", "c80008ff" + ((10**9 << 34)).to_bytes(8, "big").hex())]
    for label, h in bad_payloads:
        c.bad("timestamp_invalid.json", f"invalid timestamp: {label}", bytes.fromhex(h),
              kind="invalid_timestamp", offset=0)
        c.bad("timestamp_invalid.json", f"invalid timestamp nested in an array: {label}",
              bytes.fromhex("92c0" + h), kind="invalid_timestamp", offset=2)
    c.bad("timestamp_invalid.json", "invalid timestamp length, payload cut off: truncated first",
          bytes.fromhex("c705ff0000"), kind="truncated", offset=0)


# Head byte -> a value whose encodings include a form starting with that byte.
def first_byte_case(b):
    if b <= 0x7F:
        return {"int": b}, [bytes([b])]
    if b >= 0xE0:
        return {"int": b - 256}, [bytes([b])]
    if b <= 0x8F:
        n = b & 0x0F
        pairs = [[{"int": i}, {"int": -i - 1}] for i in range(n)]
        return {"typed_map": pairs}, [ref.encode({"typed_map": pairs})]
    if b <= 0x9F:
        n = b & 0x0F
        items = [{"string": chr(97 + i)} for i in range(n)]
        return {"typed_array": items}, [ref.encode({"typed_array": items})]
    if b <= 0xBF:
        s = text(b & 0x1F, b)
        return {"string": s}, [ref.encode({"string": s})]
    fixed = {
        0xC0: ({"nil": None}, "c0"), 0xC2: ({"bool": False}, "c2"), 0xC3: ({"bool": True}, "c3"),
        0xC4: ({"binary": "0102"}, "c4020102"), 0xC5: ({"binary": "0102"}, "c500020102"),
        0xC6: ({"binary": "0102"}, "c6000000020102"),
        0xC7: ({"ext": [7, "010203"]}, "c70307010203"), 0xC8: ({"ext": [7, "010203"]}, "c8000307010203"),
        0xC9: ({"ext": [7, "010203"]}, "c90000000307010203"),
        0xCA: ({"float32": 0.5}, "ca3f000000"), 0xCB: ({"float64": 0.5}, "cb3fe0000000000000"),
        0xCC: ({"int": 200}, "ccc8"), 0xCD: ({"int": 200}, "cd00c8"), 0xCE: ({"int": 200}, "ce000000c8"),
        0xCF: ({"int": 200}, "cf00000000000000c8"), 0xD0: ({"int": -100}, "d09c"),
        0xD1: ({"int": -100}, "d1ff9c"), 0xD2: ({"int": -100}, "d2ffffff9c"),
        0xD3: ({"int": -100}, "d3ffffffffffffff9c"),
        0xD4: ({"ext": [3, "aa"]}, "d403aa"), 0xD5: ({"ext": [3, "aabb"]}, "d503aabb"),
        0xD6: ({"ext": [3, "aabbccdd"]}, "d603aabbccdd"), 0xD7: ({"ext": [3, "00" * 8]}, "d703" + "00" * 8),
        0xD8: ({"ext": [3, "11" * 16]}, "d803" + "11" * 16),
        0xD9: ({"string": "hi"}, "d9026869"), 0xDA: ({"string": "hi"}, "da00026869"),
        0xDB: ({"string": "hi"}, "db000000026869"),
        0xDC: ({"typed_array": [{"nil": None}]}, "dc0001c0"), 0xDD: ({"typed_array": [{"nil": None}]}, "dd00000001c0"),
        0xDE: ({"typed_map": [[{"nil": None}, {"nil": None}]]}, "de0001c0c0"),
        0xDF: ({"typed_map": [[{"nil": None}, {"nil": None}]]}, "df00000001c0c0"),
    }
    value, h = fixed[b]
    forms = dedupe([ref.encode(value), bytes.fromhex(h)])
    return value, forms


def gen_first_bytes(c):
    for b in range(256):
        if b == 0xC1:
            c.bad("first_byte.json", "0xc1 is never used", b"\xc1", kind="invalid_byte", offset=0)
            continue
        value, forms = first_byte_case(b)
        c.ok("first_byte.json", f"first byte 0x{b:02x}", value, forms)


def gen_nested(c):
    ts = {"timestamp": [1700000000, 5]}
    doc = {"typed_map": [
        [{"string": "id"}, {"int": 191919191919}],
        [{"string": "tags"}, {"typed_array": [{"string": "a"}, {"binary": "beef"}, ts, {"ext": [9, "00"]}]}],
        [{"string": "nested"}, {"typed_map": [[{"int": 1}, {"typed_array": [{"typed_array": []}, {"typed_map": []}]}]]}],
        [{"string": "f"}, {"typed_array": [{"float32": 0.25}, {"float64": "NaN"}, {"float64": "-Infinity"}]}],
    ]}
    c.ok("nested.json", "document mixing every family", doc, [ref.encode(doc)])
    c.ok("nested.json", "bin, ext and timestamp inside an array inside a map",
         {"typed_map": [[{"binary": "00"}, {"typed_array": [ts, {"ext": [-5, "0102"]}, {"binary": ""}]}]]},
         [ref.encode({"typed_map": [[{"binary": "00"}, {"typed_array": [ts, {"ext": [-5, "0102"]}, {"binary": ""}]}]]})])
    plain = {"map": {"name": "mpk", "list": [1, -2, 3.5, None, True, "x", [], {}], "deep": {"a": {"b": {"c": [[[]]]}}}}}
    c.ok("nested.json", "plain JSON map (community notation)", plain, [ref.encode(plain)])
    for depth in (1, 2, 10, 100):
        value = {"nil": None}
        for _ in range(depth):
            value = {"typed_array": [value]}
        c.ok("nested.json", f"arrays nested {depth} deep", value, [ref.encode(value)])
        mvalue = {"int": 1}
        for _ in range(depth):
            mvalue = {"typed_map": [[{"int": 0}, mvalue]]}
        c.ok("nested.json", f"maps nested {depth} deep", mvalue, [ref.encode(mvalue)])
    # The depth limit itself. The JSON of the 1024-deep value nests 2049 levels: readers of the
    # case files need a JSON depth limit of at least 4096.
    value = {"nil": None}
    for _ in range(1024):
        value = {"typed_array": [value]}
    c.ok("depth.json", "1024 nested arrays: exactly the default depth limit", value,
         [b"\x91" * 1024 + b"\xc0"])
    c.bad("depth.json", "1025 nested arrays: one over the default depth limit", b"\x91" * 1025 + b"\xc0",
          kind="depth_limit", offset=1024)
    c.bad("depth.json", "1025 nested maps as values", b"\x81\xc0" * 1025 + b"\xc0",
          kind="depth_limit", offset=2048)
    c.bad("depth.json", "1025 nested, the innermost empty", b"\x91" * 1024 + b"\x90",
          kind="depth_limit", offset=1024)
    c.bad("depth.json", "100000 nested arrays (no stack overflow)", b"\x91" * 100000 + b"\xc0",
          kind="depth_limit", offset=1024)
    for limit in (1, 2, 5):
        v = {"nil": None}
        for _ in range(limit):
            v = {"typed_array": [v]}
        c.ok("depth.json", f"{limit} nested arrays with depth limit {limit}", v,
             [b"\x91" * limit + b"\xc0"], limits={"depth": limit})
        c.bad("depth.json", f"{limit + 1} nested arrays with depth limit {limit}",
              b"\x91" * (limit + 1) + b"\xc0", limits={"depth": limit}, kind="depth_limit", offset=limit)
        c.bad("depth.json", f"map key array over depth limit {limit}",
              b"\x81" * limit + b"\x90\xc0", limits={"depth": limit}, kind="depth_limit", offset=limit)
    c.ok("depth.json", "scalars need no depth: depth limit 0", {"int": 1}, [b"\x01"], limits={"depth": 0})
    c.bad("depth.json", "empty array with depth limit 0", b"\x90", limits={"depth": 0},
          kind="depth_limit", offset=0)


def gen_limits(c):
    fams = [
        ("str", lambda n: ref.encode({"string": "a" * n})),
        ("bin", lambda n: ref.encode({"binary": "ab" * n})),
        ("ext", lambda n: ref.encode({"ext": [1, "cd" * n]})),
        ("array", lambda n: ref.encode({"typed_array": [{"nil": None}] * n})),
        ("map", lambda n: ref.encode({"typed_map": [[{"int": i}, {"nil": None}] for i in range(n)]})),
    ]
    for name, make in fams:
        for n in (0, 1, 4, 15, 16, 32, 300):
            data = make(n)
            value = ref.decode(data)
            c.ok("limits.json", f"{name} of {n} at a limit of {n}", value, [data], limits={name: n})
            if n > 0:
                c.bad("limits.json", f"{name} of {n} over a limit of {n - 1}", data,
                      limits={name: n - 1}, kind="length_limit", offset=0)
                # The wrapper is of another family, so only the nested value breaks the limit.
                wrapper = b"\x81\xc0" if name == "array" else b"\x91"
                c.bad("limits.json", f"{name} of {n} nested, over a limit of {n - 1}",
                      wrapper + data, limits={name: n - 1}, kind="length_limit", offset=len(wrapper))
    # Timestamps are exts for the ext limit.
    c.bad("limits.json", "timestamp 32 over an ext limit of 3", bytes.fromhex("d6ff00000001"),
          limits={"ext": 3}, kind="length_limit", offset=0)
    # The limit is checked before the bytes are: a huge declared length over a limit is length_limit.
    for h in ("dbffffffff", "c6ffffffff", "c9ffffffff01", "ddffffffff", "dfffffffff"):
        fam = {"db": "str", "c6": "bin", "c9": "ext", "dd": "array", "df": "map"}[h[:2]]
        c.bad("limits.json", f"{h[:2]} declaring 2^32-1, over a limit of 10", bytes.fromhex(h),
              limits={fam: 10}, kind="length_limit", offset=0)
    # The limit of one family does not apply to another.
    c.ok("limits.json", "a str limit leaves bin alone", {"binary": "000102"}, [bytes.fromhex("c403000102")],
         limits={"str": 1})
    c.ok("limits.json", "an array limit leaves maps alone",
         {"typed_map": [[{"int": 1}, {"int": 2}], [{"int": 3}, {"int": 4}]]}, [bytes.fromhex("8201020304")],
         limits={"array": 1})
    # Count limit first, then depth.
    c.bad("limits.json", "length limit is checked before depth", bytes.fromhex("9191dc0005c0c0c0c0c0"),
          limits={"array": 3, "depth": 2}, kind="length_limit", offset=2)


VALID_FOR_TRUNCATION = [
    "c0", "cc80", "cd0100", "ce00010000", "cf0000000100000000", "d0ff", "d1ff00", "d2ff000000",
    "d3ff00000000000000", "ca3fc00000", "cb3ff8000000000000", "a3616263", "d903616263",
    "da0003616263", "db00000003616263", "c403010203", "c50003010203", "c600000003010203",
    "d40101", "d5010102", "d60101020304", "d7010102030405060708", "d80100112233445566778899aabbccddeeff",
    "c70301010203", "c8000301010203", "c90000000301010203", "d6ff5a4af6a5",
    "d7ff0000000100000001", "c70cff000000010000000000000001", "93010203", "dc0003010203",
    "dd00000003010203", "82a161c0a162c3", "de0001a161c0", "df00000001a161c0",
    "9291a16192c0c3", "81a16181a162c0", "92c4020102d40101", "92d6ff00000001a3616263",
]


def gen_truncation(c):
    for h in VALID_FOR_TRUNCATION:
        data = bytes.fromhex(h)
        ref.decode(data)  # must be valid as a whole
        for cut in range(len(data)):
            c.bad("truncated.json", f"{h} cut to {cut} bytes", data[:cut])
    # Declared lengths and counts far larger than the input, in every family.
    huge = ["d9ff", "daffff", "dbffffffff", "c4ff", "c5ffff", "c6ffffffff", "c7ff01", "c8ffff01",
            "c9ffffffff01", "dcffff", "ddffffffff", "deffff", "dfffffffff", "a5616263", "9301",
            "8301c0", "8f", "9f", "bf", "d8ff0000", "dbffffffff61", "c6ffffffff00", "ddffffffffc0",
            "dfffffffffc0c0"]
    for h in huge:
        c.bad("truncated.json", f"{h}: declared size beyond the input", bytes.fromhex(h))
    # The check order of spec/README.md.
    c.bad("truncated.json", "92 c1: two elements cannot fit in one byte", bytes.fromhex("92c1"),
          kind="truncated", offset=0)
    c.bad("truncated.json", "92 92 c0: the inner array cannot fit", bytes.fromhex("9292c0"),
          kind="truncated", offset=1)
    c.bad("truncated.json", "92 92 c0 c0: input ends between tokens", bytes.fromhex("9292c0c0"),
          kind="truncated", offset=4)
    c.bad("truncated.json", "empty input", b"", kind="truncated", offset=0)


def gen_invalid(c):
    cases = [
        ("0xc1 alone", "c1", 0), ("0xc1 in an array", "91c1", 1), ("0xc1 after an element", "92c0c1", 2),
        ("0xc1 as a map key", "81c1c0", 1), ("0xc1 as a map value", "81c0c1", 2),
        ("0xc1 deep inside", "9191918100c1", 5), ("0xc1 after a str", "92a161c1", 3),
        ("0xc1 in array 16", "dc0002c0c1", 4), ("0xc1 in map 32", "df00000001c1c0", 5),
        ("0xc1 followed by more", "91c1c0c0", 1),
    ]
    for label, h, off in cases:
        c.bad("invalid_byte.json", label, bytes.fromhex(h), kind="invalid_byte", offset=off)
    trailing = [("nil then nil", "c0c0", 1), ("array then int", "910102", 2), ("str then NUL", "a16100", 2),
                ("int then 0xc1", "01c1", 1), ("map then truncated str", "80a5", 1),
                ("timestamp then byte", "d6ff0000000100", 6)]
    for label, h, off in trailing:
        c.bad("trailing.json", f"trailing bytes: {label}", bytes.fromhex(h), kind="trailing_bytes", offset=off)


def gen_community(c):
    """Cases in the msgpack-test-suite notation (loose numbers, dash-separated hex), written here."""
    f = "community_notation.json"
    c.add(f, {"nil": None, "msgpack": ["c0"]})
    c.add(f, {"bool": False, "msgpack": ["c2"]})
    c.add(f, {"bool": True, "msgpack": ["c3"]})
    for n in (0, 1, 127, 128, 255, 256, -1, -32, -33, 65535, -32768):
        forms = [x.hex("-") for x in int_forms(n)]
        forms += [(b"\xca" + struct.pack(">f", float(n))).hex("-"), (b"\xcb" + struct.pack(">d", float(n))).hex("-")]
        c.add(f, {"number": n, "msgpack": forms})
    for x in (0.5, -0.5, 1.5, -2.25):
        c.add(f, {"number": x, "msgpack": [(b"\xca" + struct.pack(">f", x)).hex("-"),
                                            (b"\xcb" + struct.pack(">d", x)).hex("-")]})
    for n in ("9223372036854775807", "18446744073709551615", "-9223372036854775808", "4294967296"):
        c.add(f, {"bignum": n, "msgpack": [x.hex("-") for x in int_forms(int(n))]})
    c.add(f, {"string": "", "msgpack": ["a0", "d9-00", "da-00-00", "db-00-00-00-00"]})
    c.add(f, {"string": "a", "msgpack": ["a1-61", "d9-01-61", "da-00-01-61", "db-00-00-00-01-61"]})
    c.add(f, {"string": "\u3042", "msgpack": ["a3-e3-81-82", "d9-03-e3-81-82"]})
    c.add(f, {"binary": "", "msgpack": ["c4-00", "c5-00-00", "c6-00-00-00-00"]})
    c.add(f, {"binary": "01", "msgpack": ["c4-01-01", "c5-00-01-01", "c6-00-00-00-01-01"]})
    c.add(f, {"array": [], "msgpack": ["90", "dc-00-00", "dd-00-00-00-00"]})
    c.add(f, {"array": [1], "msgpack": ["91-01", "dc-00-01-01", "dd-00-00-00-01-01"]})
    c.add(f, {"array": ["a", None, [True]], "msgpack": ["93-a1-61-c0-91-c3"]})
    c.add(f, {"map": {}, "msgpack": ["80", "de-00-00", "df-00-00-00-00"]})
    c.add(f, {"map": {"a": 1}, "msgpack": ["81-a1-61-01", "de-00-01-a1-61-01", "df-00-00-00-01-a1-61-01"]})
    c.add(f, {"map": {"a": {"b": [1, 2]}, "c": None}, "msgpack": ["82-a1-61-81-a1-62-92-01-02-a1-63-c0"]})
    c.add(f, {"ext": [1, "10"], "msgpack": ["d4-01-10", "c7-01-01-10"]})
    c.add(f, {"ext": [127, "20-21"], "msgpack": ["d5-7f-20-21", "c7-02-7f-20-21"]})
    c.add(f, {"timestamp": [1514862245, 0], "msgpack": ["d6-ff-5a-4a-f6-a5"]})
    c.add(f, {"timestamp": [1514862245, 678901234], "msgpack": ["d7-ff-a1-dc-d7-c8-5a-4a-f6-a5"]})
    c.add(f, {"timestamp": [-1, 0], "msgpack": ["c7-0c-ff-00-00-00-00-ff-ff-ff-ff-ff-ff-ff-ff"]})


def gen_encode_errors(c):
    f = "encode_errors.json"
    for sec, nsec in ((0, 1_000_000_000), (0, -1), (1, 4_294_967_295), (-1, 1_000_000_000),
                      (2**34, 2**31)):
        c.unencodable(f, f"timestamp [{sec}, {nsec}]", {"timestamp": [ref.int_json(sec), nsec]},
                      "invalid_timestamp")
    bad_ts = {"timestamp": [0, 1_000_000_000]}
    c.unencodable(f, "bad timestamp inside an array", {"typed_array": [{"int": 1}, bad_ts]},
                  "invalid_timestamp")
    c.unencodable(f, "bad timestamp as a map value",
                  {"typed_map": [[{"string": "t"}, bad_ts]]}, "invalid_timestamp")
    c.unencodable(f, "bad timestamp as a map key", {"typed_map": [[bad_ts, {"nil": None}]]},
                  "invalid_timestamp")
    for sec in (2**63, -2**63 - 1):
        c.unencodable(f, f"timestamp [{sec}, 0]: seconds beyond int64", {"timestamp": [str(sec), 0]},
                      "bad_request")
    for n in (2**64, 2**64 + 1, 2**100, -2**63 - 1, -2**64, -2**100):
        c.unencodable(f, f"int {n}", {"int": str(n)}, "bad_request")
    c.unencodable(f, "int 2^64 inside a map", {"typed_map": [[{"string": "n"}, {"int": str(2**64)}]]},
                  "bad_request")
    for t in (128, 255, -129, -256):
        c.unencodable(f, f"ext type {t}", {"ext": [t, "00"]}, "bad_request")


def main():
    c = Corpus()
    gen_first_bytes(c)
    gen_ints(c)
    gen_floats(c)
    gen_strings(c)
    gen_bins(c)
    gen_arrays(c)
    gen_runs(c)
    gen_records(c)
    gen_maps(c)
    gen_exts(c)
    gen_timestamps(c)
    gen_nested(c)
    gen_limits(c)
    gen_truncation(c)
    gen_invalid(c)
    gen_community(c)
    gen_encode_errors(c)
    check(c.files)
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old.endswith(".json") and old not in c.files:
            os.remove(os.path.join(OUT, old))
    total = 0
    for file, cases in sorted(c.files.items()):
        with open(os.path.join(OUT, file), "w", encoding="utf-8") as f:
            f.write("[\n")
            f.write(",\n".join(ref.dumps(case) for case in cases))
            f.write("\n]\n")
        total += len(cases)
        print(f"{file:28} {len(cases):5} cases")
    print(f"{'total':28} {total:5} cases")


if __name__ == "__main__":
    main()
