"""Reference counts and memory stay flat over repeated pack/unpack, on success and on every error
path. Checks use sys.getrefcount on shared objects, gc object counts and tracemalloc."""
import gc
import sys
import tracemalloc

import pytest

import mpk

DOC = {"list": [1, 2.5, "x" * 40, b"y", None, True, {"k": (1, 2)}], "ts": mpk.Timestamp(1, 2),
       "ext": mpk.ExtType(3, b"z"), "big": 2**63, "neg": -2**40, "é": "ü" * 10}


def grows(fn, rounds=3000):
    """Bytes of Python memory still held after `rounds` more calls (after a warm-up)."""
    for _ in range(200):
        fn()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(rounds):
        fn()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def call_raising(fn, *args, **kwargs):
    def run():
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001
            pass
    return run


PACKED = mpk.packb(DOC)


@pytest.mark.parametrize("name, fn", [
    ("packb", lambda: mpk.packb(DOC)),
    ("packb short", lambda: (mpk.packb([1, "two", 3.0, None]), mpk.packb(7), mpk.packb(("x" * 200, [1])))),
    ("unpackb", lambda: mpk.unpackb(PACKED)),
    ("unpackb hooks", lambda: mpk.unpackb(PACKED, object_pairs_hook=list, list_hook=tuple, ext_hook=lambda c, d: d)),
    ("unpackb timestamp=3", lambda: mpk.unpackb(mpk.packb(mpk.Timestamp(5, 0)), timestamp=3)),
    ("Packer", lambda: mpk.Packer(default=str).pack([DOC, object()])),
    ("Unpacker", lambda: list(mpk.Unpacker(use_list=False).feed(PACKED * 3) or [])),
    ("stream", lambda: [v for u in [mpk.Unpacker()] for _ in [u.feed(PACKED + PACKED[:9])] for v in u]),
    ("truncated", call_raising(mpk.unpackb, PACKED[:-1])),
    ("trailing", call_raising(mpk.unpackb, PACKED + b"\x00")),
    ("invalid utf8", call_raising(mpk.unpackb, b"\x92\xa1a\xa2\xff\xfe")),
    ("depth", call_raising(mpk.unpackb, b"\x91" * 2000)),
    ("bad key", call_raising(mpk.unpackb, b"\x82\xa1a\x01\x01\x02")),
    ("pack error", call_raising(mpk.packb, [DOC, object()])),
    ("pack overflow", call_raising(mpk.packb, {"a": [2**64]})),
    ("hook raises", call_raising(mpk.unpackb, PACKED, object_hook=lambda d: 1 / 0)),
])
def test_no_growth(name, fn):
    assert grows(fn) < 20_000, name


def test_refcounts_of_shared_objects():
    key, value = "shared_key_for_refcount", "shared value"
    doc = {key: [value] * 10}
    before = (sys.getrefcount(key), sys.getrefcount(value))
    for _ in range(1000):
        mpk.packb(doc)
        mpk.Packer(autoreset=False).pack(doc)
    # the packer's table of map keys (ext/packer.c put_key) may hold one reference to a short key
    # it met again; nothing else may stay behind, and nothing grows with more calls
    mid = (sys.getrefcount(key), sys.getrefcount(value))
    assert mid[0] - before[0] in (0, 1) and mid[1] == before[1]
    for _ in range(1000):
        mpk.packb(doc)
        mpk.Packer(autoreset=False).pack(doc)
    assert (sys.getrefcount(key), sys.getrefcount(value)) == mid


def test_no_objects_left_behind():
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(500):
        mpk.unpackb(PACKED)
        try:
            mpk.unpackb(PACKED[:-3])
        except ValueError:
            pass
    gc.collect()
    assert len(gc.get_objects()) - before < 50
