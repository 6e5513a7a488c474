"""Hypothesis round trips through mpk alone, including what msgpack-python cannot produce
(negative ext codes, float 32 bits, any timestamp), and Packer/Unpacker streams."""
import math
import struct

from hypothesis import given
from hypothesis import strategies as st

import mpk
from strategies import values


def same(a, b):
    """Equality that treats NaN as equal to NaN and keeps the sign of zero."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def as_decoded(v):
    """What unpackb gives back for v: tuples become lists."""
    if isinstance(v, (list, tuple)):
        return [as_decoded(x) for x in v]
    if isinstance(v, dict):
        return {k: as_decoded(x) for k, x in v.items()}
    return v


@given(values)
def test_round_trip(value):
    assert same(mpk.unpackb(mpk.packb(value)), as_decoded(value))


@given(values)
def test_round_trip_sorted_keys_is_deterministic(value):
    try:
        a = mpk.packb(value, sort_keys=True)
    except TypeError:
        return  # bytes and str keys in one dict do not sort
    assert mpk.packb(mpk.unpackb(a), sort_keys=True) == a


@given(st.integers(-128, 127), st.binary(max_size=70000))
def test_ext_round_trip(code, data):
    if code == -1:
        return
    assert mpk.unpackb(mpk.packb(mpk.ExtType(code, data))) == mpk.ExtType(code, data)


@given(st.integers(-2**63, 2**63 - 1), st.integers(0, 999_999_999))
def test_timestamp_round_trip(sec, nsec):
    ts = mpk.Timestamp(sec, nsec)
    packed = mpk.packb(ts)
    assert mpk.unpackb(packed) == ts
    assert mpk.Timestamp.from_bytes(packed[-len(ts.to_bytes()):]) == ts
    assert mpk.unpackb(packed, timestamp=2) == ts.to_unix_nano()


@given(st.integers(0, 2**32 - 1))
def test_float32_bits(bits):
    x = struct.unpack(">f", struct.pack(">I", bits))[0]
    packed = mpk.packb(x, use_single_float=True)
    assert packed[0] == 0xCA
    if not math.isnan(x):
        assert packed[1:] == struct.pack(">I", bits)
        assert same(mpk.unpackb(packed), x)


@given(st.lists(values, max_size=10), st.lists(st.integers(1, 64), min_size=1, max_size=8))
def test_stream_of_messages(items, sizes):
    packer = mpk.Packer(autoreset=False)
    for v in items:
        packer.pack(v)
    data = packer.bytes()
    u = mpk.Unpacker()
    got, i, k = [], 0, 0
    while i < len(data):
        step = sizes[k % len(sizes)]
        u.feed(data[i:i + step])
        got.extend(u)
        i, k = i + step, k + 1
    assert same(got, [as_decoded(v) for v in items])
    assert u.tell() == len(data)
