"""Every case of spec/vectors/*.json through unpackb, Packer and the streaming Unpacker.

Positive cases: every listed encoding decodes to the value, and encoding the value gives the first
(or, for the loose key `number`, any listed) encoding; the stream gets the first encoding one byte
at a time and, up to 4 KiB, as two chunks split at every position. Negative cases: unpackb raises
the case's kind at its offset, with its limits and strict-UTF-8 mode. Encode-error cases (no
"msgpack", an "encode_error" kind): mpk refuses the value with its own error for that kind.
The notation is spec/reference.py's (typed_values.ref).
"""
import glob
import json
import os

import pytest

import mpk
import typed_values
from typed_values import ref

from conftest import REPO

VECTORS = sorted(glob.glob(os.path.join(REPO, "spec", "vectors", "*.json")))


def json_decoder():
    # The corpus nests 1025 levels. json's C scanner counts C recursion against a fixed limit on
    # 3.12+ (not sys.setrecursionlimit), which that depth exceeds; the pure-Python scanner
    # follows the recursion limit conftest.py raises.
    import json.scanner
    decoder = json.JSONDecoder()
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder


def load_cases():
    cases = []
    decoder = json_decoder()
    for path in VECTORS:
        with open(path, encoding="utf-8") as f:
            for i, case in enumerate(decoder.decode(f.read())):
                cases.append(pytest.param(case, id=f"{os.path.basename(path)[:-5]}#{i}"))
    return cases


CASES = load_cases()
POSITIVE = [c for c in CASES if "msgpack" in c.values[0] and "error" not in c.values[0]]
NEGATIVE = [c for c in CASES if "msgpack" in c.values[0] and "error" in c.values[0]]
ENCODE_ERRORS = [c for c in CASES if "encode_error" in c.values[0]]


def test_corpus_is_present():
    assert len(VECTORS) >= 10
    assert len(POSITIVE) > 300 and len(NEGATIVE) > 300
    # every case is of one of the three shapes
    assert len(POSITIVE) + len(NEGATIVE) + len(ENCODE_ERRORS) == len(CASES)


def typed(case):
    key = ref.value_key(case)
    return {key: case[key]}


@pytest.mark.parametrize("case", POSITIVE)
def test_decode(case):
    want = typed(case)
    for form in case["msgpack"]:
        got = typed_values.decode(ref.unhex(form), case.get("limits"), case.get("strict_utf8", False))
        assert ref.same(want, got), (form, got)


@pytest.mark.parametrize("case", POSITIVE)
def test_encode(case):
    want = typed(case)
    forms = [f.replace("-", "") for f in case["msgpack"]]
    got = typed_values.encode(want).hex()
    if "number" in want:
        assert got in forms
    else:
        assert got == forms[0]


@pytest.mark.parametrize("case", NEGATIVE)
def test_error(case):
    with pytest.raises(mpk.DecodeError) as info:
        typed_values.decode(ref.unhex(case["msgpack"]), case.get("limits"), case.get("strict_utf8", False))
    assert (info.value.kind, info.value.offset) == (case["error"], case["offset"])
    assert str(info.value).endswith(f"at byte {case['offset']}")


# mpk's own refusal of each kind: Timestamp's nanosecond range, an int beyond 64 bits, an ext code
# outside -128..127 (the value never reaches the bytes)
REFUSALS = {"invalid_timestamp": (ValueError,), "bad_request": (OverflowError, ValueError)}


@pytest.mark.parametrize("case", ENCODE_ERRORS)
def test_encode_error(case):
    want = case["encode_error"]
    with pytest.raises(ref.EncodeError) as info:
        typed_values.encode(typed(case))
    assert info.value.kind == want
    assert isinstance(info.value.__cause__, REFUSALS[want]), repr(info.value.__cause__)


@pytest.mark.parametrize("case", [c for c in ENCODE_ERRORS if ref.value_key(c.values[0]) in ("int", "timestamp", "ext")])
def test_encode_error_from_mpk(case):
    """The same refusals straight from mpk's API, without the notation layer."""
    key = ref.value_key(case)
    v = case[key]
    with pytest.raises(REFUSALS[case["encode_error"]]):
        if key == "int":
            mpk.packb(int(v))
        elif key == "timestamp":
            mpk.packb(mpk.Timestamp(int(v[0]), int(v[1])))
        else:
            mpk.packb(mpk.ExtType(int(v[0]), bytes.fromhex(v[1])))


def stream_values(chunks, case):
    """Feeds the chunks to one Unpacker and collects every value it yields."""
    opts = typed_values.decode_options(case.get("limits"), case.get("strict_utf8", False))
    unpacker = mpk.Unpacker(**opts)
    values = []
    for chunk in chunks:
        unpacker.feed(chunk)
        values.extend(unpacker)
    return values, unpacker


@pytest.mark.parametrize("case", POSITIVE)
def test_stream_byte_at_a_time(case):
    data = ref.unhex(case["msgpack"][0])
    values, unpacker = stream_values([data[i:i + 1] for i in range(len(data))], case)
    assert len(values) == 1
    assert ref.same(typed(case), typed_values.canonical(values[0]))
    assert unpacker.tell() == len(data)
    with pytest.raises(mpk.OutOfData):
        unpacker.unpack()


@pytest.mark.parametrize("case", [c for c in POSITIVE
                                  if len(ref.unhex(c.values[0]["msgpack"][0])) <= 4096])
def test_stream_two_chunks(case):
    data = ref.unhex(case["msgpack"][0])
    whole = typed_values.decode(data, case.get("limits"), case.get("strict_utf8", False))
    assert ref.same(typed(case), whole)
    # each split is checked against the one-shot value by repr, which is exact for these types
    # (NaN, -0.0, float 32 marks, pairs) and far cheaper than the typed comparison
    want = repr(mpk.unpackb(data, **typed_values.decode_options(case.get("limits"), case.get("strict_utf8", False))))
    for cut in range(len(data) + 1):
        values, unpacker = stream_values([data[:cut], data[cut:]], case)
        assert len(values) == 1, cut
        assert repr(values[0]) == want, cut
        assert unpacker.tell() == len(data)


def outcome(fn, data):
    try:
        return repr(fn(data))
    except mpk.DecodeError as e:
        return (type(e).__name__, e.kind, e.offset)
    except ValueError as e:
        return type(e).__name__
