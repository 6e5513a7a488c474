"""The objects the extension builds by hand (ext/fast_paths.h: packb's result bytes, decoded ASCII
strs and ints of up to 64 bits outside the shared -128..256, on 3.11-3.13) must be ordinary objects: a reference count of 1
held by the caller (3.12+: not the immortal count), the right value, sign, length and hash, usable
by every str/int/bytes operation, and freed when dropped. The portable build runs the same tests on
the API's objects."""
import sys
import weakref

import pytest

import mpk

INTS = [257, 1000, -129, -1000, 2**15, 2**30 - 1, 2**30, 2**31, -2**31, 2**40, -2**40,
        2**60 - 1, 2**60, 2**62, 2**63 - 1, -2**63, 2**63, 2**64 - 1]
STRS = ["a", "abc", "x" * 15, "y" * 16, "z" * 31, "w" * 200, "long " * 1000]


@pytest.mark.parametrize("value", INTS)
def test_decoded_ints(value):
    (got,) = mpk.unpackb(mpk.packb([value]))
    assert type(got) is int and got == value
    assert (got < 0) == (value < 0) and got.bit_length() == value.bit_length()
    assert hash(got) == hash(value) and str(got) == str(value) and got + 1 - 1 == value
    assert sys.getrefcount(got) == 2  # ours and getrefcount's argument


@pytest.mark.parametrize("value", STRS)
def test_decoded_ascii_strs(value):
    (got,) = mpk.unpackb(mpk.packb([value]))
    assert type(got) is str and got == value and len(got) == len(value)
    assert hash(got) == hash(value) and got.isascii() and got.encode() == value.encode()
    assert got + "é" == value + "é" and got.upper() == value.upper()
    assert sys.getrefcount(got) == 2


@pytest.mark.parametrize("value", [[1, 2], "x" * 14, [b"y" * 100], list(range(1000))])
def test_packb_results(value):
    out = mpk.packb(value)
    assert type(out) is bytes and mpk.unpackb(out) == value
    assert out == bytes(out) and hash(out) == hash(bytes(out)) and out[-1:] == bytes(out)[-1:]
    assert sys.getrefcount(out) == 2


def test_hand_built_objects_are_freed():
    # a str subclass cannot be weakly referenced either; the container holding them can: dropping
    # it must drop the hand-built items too (their count, if wrong, would keep them or crash)
    class Box(list):
        pass

    before = sys.getallocatedblocks() if hasattr(sys, "getallocatedblocks") else None
    for _ in range(3):
        values = mpk.unpackb(mpk.packb(INTS + STRS))
        box = Box(values)
        ref = weakref.ref(box)
        del values, box
        assert ref() is None
    for _ in range(2000):
        mpk.unpackb(mpk.packb(INTS + STRS))
    if before is not None:
        assert sys.getallocatedblocks() - before < 500


BOUNDARIES = sorted({s * (2**k + d) for k in (7, 8, 15, 16, 29, 30, 31, 32, 59, 60, 61, 62, 63)
                     for d in (-1, 0, 1) for s in (1, -1)} | {0, 2**64 - 1, 2**64, -2**63 - 1})


def test_ints_packed_at_every_digit_boundary():
    # ints are read from their digits (one, two or three 30-bit digits; the sign apart): each
    # boundary packs as msgpack-python packs it, and beyond 64 bits both refuse it
    msgpack = pytest.importorskip("msgpack")
    for value in BOUNDARIES:
        try:
            want = msgpack.packb(value)
        except OverflowError:
            with pytest.raises(OverflowError):
                mpk.packb(value)
            continue
        assert mpk.packb(value) == want, value
        assert mpk.packb([value, value]) == msgpack.packb([value, value]), value
        assert mpk.packb({"k": value}) == msgpack.packb({"k": value}), value
        assert mpk.unpackb(want) == value
