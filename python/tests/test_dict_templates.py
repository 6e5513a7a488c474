"""Dicts of a repeated key set (ext/fast_paths.h, MPKPY_DICT_TEMPLATES; ext/decoder.c, decode_map_kv):
from the second map of a key set on, a map with the same key objects in the same order is built as
a copy of a private template dict with its values put in place. These tests check that such dicts
are ordinary dicts: the same items in the same order as the input, independent of each other and of
the template (mutating one changes nothing else), right with duplicate keys, with keys in another
order, with a shared first key, when a hook decodes other maps meanwhile, when the input ends or
fails inside one, and handed to the collector when they hold containers. The portable build runs
the same tests on dicts built by inserts."""
import gc
import os
import sys

import pytest

import mpk

PORTABLE = os.environ.get("MPK_EXPECT_PORTABLE") == "1"
KEYS = ["id", "name", "score", "tags", "ok", "when", "note", "extra"]


def records(count, keys=KEYS, start=0):
    return [{k: (i * 10 + j if j % 2 else "v%d" % (i + j)) for j, k in enumerate(keys)}
            for i in range(start, start + count)]


def map_bytes(pairs):
    """A MessagePack map of the given (key, value) pairs as written, duplicates included."""
    out = bytearray([0x80 | len(pairs)])
    for k, v in pairs:
        out += mpk.packb(k) + mpk.packb(v)
    return bytes(out)


@pytest.mark.parametrize("n", [2, 3, 5, 6, 8, 16, 40, 64, 65])
def test_repeated_key_sets_round_trip_in_order(n):
    keys = ["key%d" % i for i in range(n)]
    doc = records(12, keys)
    for _ in range(3):  # templates are made on the second sighting and used from the third on
        got = mpk.unpackb(mpk.packb(doc))
        assert got == doc
        assert [list(d) for d in got] == [keys] * len(doc)
        assert [list(d.values()) for d in got] == [list(d.values()) for d in doc]


def test_copies_are_independent_of_each_other_and_of_later_decodes():
    packed = mpk.packb(records(6))
    first = mpk.unpackb(packed)
    first[3]["id"] = "changed"
    first[3]["added"] = 1
    del first[4]["name"]
    first[5].clear()
    first[2].update({"more": 2})
    again = mpk.unpackb(packed)
    assert again == records(6)
    assert [list(d) for d in again] == [KEYS] * 6
    assert first[3]["id"] == "changed" and "added" in first[3] and "name" not in first[4]
    assert first[0] == records(6)[0] and first[1] == records(6)[1]
    again[0]["id"] = -1
    assert first[0]["id"] == records(6)[0]["id"]


def test_same_first_key_other_keys_or_order():
    a = records(4)
    b = records(4, ["id", "name", "score", "tags", "ok", "when", "note", "other"])
    c = records(4, ["id", "score", "name", "tags", "ok", "when", "note", "extra"])
    doc = a + b + c + a + c + b
    for _ in range(3):
        got = mpk.unpackb(mpk.packb(doc))
        assert got == doc
        assert [list(d) for d in got] == [list(d) for d in doc]


def test_duplicate_keys_after_a_template():
    # the key set {a, b} becomes a template, then maps of the same size with a repeated key follow
    plain = map_bytes([("a", 1), ("b", 2)])
    dup = map_bytes([("a", 3), ("a", 4)])
    dup_b = map_bytes([("b", 5), ("b", 6)])
    body = plain * 4 + dup + plain + dup_b + plain
    packed = bytes([0xdc, 0, 8]) + body
    for _ in range(3):
        got = mpk.unpackb(packed)
        assert got == [{"a": 1, "b": 2}] * 4 + [{"a": 4}, {"a": 1, "b": 2}, {"b": 6}, {"a": 1, "b": 2}]
        assert [list(d) for d in got][4:] == [["a"], ["a", "b"], ["b"], ["a", "b"]]


def test_many_duplicates_in_a_large_map_still_shrink():
    pairs = [("k", i) for i in range(20)]
    packed = bytes([0x92]) + (bytes([0xde, 0, 20]) + b"".join(mpk.packb(k) + mpk.packb(v) for k, v in pairs)) * 2
    got = mpk.unpackb(packed)
    assert got == [{"k": 19}, {"k": 19}]


def test_tracked_when_holding_containers():
    doc = [{"a": i, "b": [i], "c": "x"} for i in range(10)] + [{"a": i, "b": i, "c": "x"} for i in range(10)]
    for _ in range(3):
        got = mpk.unpackb(mpk.packb(doc))
        assert got == doc
        assert all(gc.is_tracked(d) for d in got[:10])
        assert not any(gc.is_tracked(d) for d in got[10:])  # as a dict of atomic values built in Python
        gc.collect()
        assert got == doc


def test_object_hook_that_decodes_other_maps():
    inner = mpk.packb(records(5, ["id", "zzz", "q"]) + records(5))
    seen = []

    def hook(d):
        seen.append(mpk.unpackb(inner))  # fills and replaces template slots meanwhile
        return d

    doc = records(10)
    for _ in range(3):
        got = mpk.unpackb(mpk.packb(doc), object_hook=hook)
        assert got == doc and [list(d) for d in got] == [KEYS] * 10
    assert all(s == records(5, ["id", "zzz", "q"]) + records(5) for s in seen)


def test_ext_hook_that_decodes_inside_a_templated_map():
    other = mpk.packb(records(6, ["id", "name", "x"]) + records(6))

    def ext_hook(code, data):
        return mpk.unpackb(other)

    doc = []
    for i in range(8):
        doc.append({"id": i, "name": mpk.ExtType(5, b"x"), "score": i})
    packed = mpk.packb(doc)
    for _ in range(3):
        got = mpk.unpackb(packed, ext_hook=ext_hook)
        assert [list(d) for d in got] == [["id", "name", "score"]] * 8
        assert all(d["name"] == records(6, ["id", "name", "x"]) + records(6) and d["id"] == i
                   for i, d in enumerate(got))


def test_errors_inside_a_templated_map_release_everything():
    doc = records(10)
    packed = mpk.packb(doc)
    mpk.unpackb(packed)
    mpk.unpackb(packed)
    for cut in range(len(packed) - 60, len(packed)):
        with pytest.raises(mpk.TruncatedError):
            mpk.unpackb(packed[:cut])
    bad = packed[:-1] + b"\xc1"  # the last value of the last map is an invalid byte
    with pytest.raises(ValueError):
        mpk.unpackb(bad)
    calls = []

    def hook(d):
        calls.append(1)
        if len(calls) == 5:
            raise ZeroDivisionError
        return d
    with pytest.raises(ZeroDivisionError):
        mpk.unpackb(packed, object_hook=hook)
    assert mpk.unpackb(packed) == doc


def test_deep_nesting_beyond_the_pair_stack():
    # 300 nested maps of three keys, twice: more open maps than the decoder's kv stack holds
    def nest(depth):
        d = {"leaf": True}
        for i in range(depth):
            d = {"a": i, "b": d, "c": "x"}
        return d
    doc = [nest(300), nest(300)]
    for _ in range(3):
        assert mpk.unpackb(mpk.packb(doc)) == doc


def test_unpacker_stream_of_repeated_maps():
    recs = records(50)
    stream = b"".join(mpk.packb(r) for r in recs)
    u = mpk.Unpacker()
    out = []
    for i in range(0, len(stream), 7):
        u.feed(stream[i:i + 7])
        out.extend(u)
    assert out == recs and [list(d) for d in out] == [KEYS] * 50


def test_raw_and_int_keys_never_use_templates():
    doc = [{1: "a", 2: "b", 3: "c"} for _ in range(6)] + [{b"x": 1, b"y": 2} for _ in range(6)]
    for _ in range(3):
        got = mpk.unpackb(mpk.packb(doc), strict_map_key=False)
        assert got == doc
    got = mpk.unpackb(mpk.packb([{"x": 1, "y": 2}] * 6), raw=True)
    assert got == [{b"x": 1, b"y": 2}] * 6


@pytest.mark.skipif(PORTABLE, reason="the portable build inserts every key into a presized dict")
def test_templated_dicts_use_the_compact_str_key_table():
    # a dict copied from a template has the table a dict filled key by key in Python has (str keys,
    # no stored hashes): the same size, where a presized dict of 8 keys is larger
    for _ in range(2):
        got = mpk.unpackb(mpk.packb(records(6)))
        assert got == records(6)
    built = {k: 0 for k in KEYS}
    assert sys.getsizeof(got[-1]) == sys.getsizeof(built)
