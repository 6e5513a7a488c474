"""The stream: errors as soon as the bytes prove them, re-entrant calls refused, and the state of an
Unpacker after every kind of error (python/README.md, "Unpacker state after an error")."""
import io
import tracemalloc

import pytest

import mpk


# ---- errors as soon as the bytes prove them ------------------------------------------------------

def test_an_invalid_byte_inside_an_unfinished_array_is_reported_at_once():
    u = mpk.Unpacker()
    u.feed(b"\x92\xc1")
    with pytest.raises(mpk.FormatError) as info:
        u.unpack()
    assert info.value.kind == "invalid_byte" and info.value.offset == 1


def test_a_huge_count_followed_by_garbage_fails_without_buffering_the_count():
    u = mpk.Unpacker()
    u.feed(b"\xdd\x05\x00\x00\x00")
    with pytest.raises(mpk.OutOfData):
        u.unpack()
    tracemalloc.start()
    try:
        u.feed(b"\xc1" * 1000)
        with pytest.raises(mpk.FormatError) as info:
            u.unpack()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.kind == "invalid_byte" and info.value.offset == 5
    assert peak < 1024 * 1024


def test_a_file_stream_reports_the_error_before_reading_the_file():
    data = b"\x91\xdd\x05\x00\x00\x00" + b"\x01" * 10 + b"\xc1" + b"\x00" * (8 << 20)
    f = io.BytesIO(data)
    u = mpk.Unpacker(f, read_size=4096)
    with pytest.raises(mpk.FormatError) as info:
        u.unpack()
    assert info.value.offset == 16
    assert f.tell() <= 64 * 1024


@pytest.mark.parametrize("data, kind", [
    (b"\x92\x01\xdc\x00\x01\xc1", "invalid_byte"),
    (b"\x81\xa1k\xd6\xff\x00\x00\x00", None),  # incomplete: no error yet
    (b"\x91\xd7\xff\xff\xff\xff\xff\x00\x00\x00\x00", "invalid_timestamp"),  # nanoseconds > 10^9
    (b"\x9f\xdb\xff\xff\xff\xff", "length_limit"),
])
def test_stream_errors_inside_unfinished_containers(data, kind):
    u = mpk.Unpacker(max_str_len=1000)
    u.feed(data)
    if kind is None:
        with pytest.raises(mpk.OutOfData):
            u.unpack()
    else:
        with pytest.raises(mpk.DecodeError) as info:
            u.unpack()
        assert info.value.kind == kind


# ---- re-entrant calls ----------------------------------------------------------------------------

REENTRANT = {
    "feed": lambda u: u.feed(b"\x01" * 100000),
    "unpack": lambda u: u.unpack(),
    "skip": lambda u: u.skip(),
    "next": lambda u: next(u),
    "read_bytes": lambda u: u.read_bytes(1),
    "read_array_header": lambda u: u.read_array_header(),
    "init": lambda u: u.__init__(),
}


@pytest.mark.parametrize("call", sorted(REENTRANT))
def test_a_call_from_a_hook_raises_runtime_error_and_the_unpacker_goes_on(call):
    caught = []

    def hook(code, data):
        try:
            REENTRANT[call](u)
        except RuntimeError as e:
            caught.append(str(e))
        return (code, data)

    u = mpk.Unpacker(ext_hook=hook)
    u.feed(mpk.packb([mpk.ExtType(1, b"x" * 40), "after"]) + mpk.packb(7))
    assert u.unpack() == [(1, b"x" * 40), "after"]
    assert u.unpack() == 7
    assert len(caught) == 1 and "already running" in caught[0]
    with pytest.raises(mpk.OutOfData):
        u.unpack()


def test_a_hook_whose_reentrant_call_escapes_leaves_the_unpacker_usable():
    calls = []

    def hook(d):
        calls.append(1)
        if len(calls) == 1:
            u.feed(b"\xc0")  # raises RuntimeError out of unpack()
        return d

    u = mpk.Unpacker(object_hook=hook)
    u.feed(mpk.packb([{"a": 1}, 2]))
    with pytest.raises(RuntimeError):
        u.unpack()
    assert u.unpack() == [{"a": 1}, 2]  # the value is still there, decoded again
    u.feed(b"\x03")
    assert list(u) == [3]


def test_next_from_the_file_objects_read_raises_runtime_error():
    payload = mpk.packb(["x" * 100, {"k": list(range(50))}]) * 3
    errors = []

    class Reader:
        def __init__(self):
            self.f = io.BytesIO(payload)

        def read(self, n):
            try:
                next(u)
            except RuntimeError as e:
                errors.append(e)
            return self.f.read(7)

    u = mpk.Unpacker(Reader(), read_size=7)
    assert list(u) == [["x" * 100, {"k": list(range(50))}]] * 3
    assert errors and all("already running" in str(e) for e in errors)


@pytest.mark.parametrize("data, values, offset", [
    ("8ea1de", [], 1),              # a map still owed 13 pairs: the bad str is proven already
    ("c092a1ffc1", [None], 2),      # before the bad byte that follows it
    ("92a1ffc1", [], 1),
    ("dd000000ffa2c328", [], 5),    # a count far beyond the bytes: the stream does not wait
])
@pytest.mark.parametrize("how", ["whole", "byte by byte"])
def test_an_invalid_str_in_an_unfinished_value_is_reported_at_once(data, values, offset, how):
    data = bytes.fromhex(data)
    u = mpk.Unpacker()
    got = []
    chunks = [data] if how == "whole" else [data[i:i + 1] for i in range(len(data))]
    with pytest.raises(mpk.InvalidUTF8Error) as info:
        for chunk in chunks:
            u.feed(chunk)
            got.extend(u)
    assert got == values
    assert info.value.kind == "invalid_utf8" and info.value.offset == offset
    with pytest.raises(mpk.InvalidUTF8Error):  # the walk finds it again
        u.unpack()


def test_an_early_utf8_error_names_the_bad_bytes_as_unpackb_does():
    with pytest.raises(mpk.InvalidUTF8Error) as oneshot:
        mpk.unpackb(bytes.fromhex("92a3616263a3e28228"))
    u = mpk.Unpacker()
    u.feed(bytes.fromhex("93a3616263a3e28228c1"))  # the third element is a bad byte
    with pytest.raises(mpk.InvalidUTF8Error) as stream:
        u.unpack()
    want, got = oneshot.value, stream.value
    assert (got.offset, got.object, got.start, got.end, got.reason) == \
        (want.offset, want.object, want.start, want.end, want.reason) == (5, b"\xe2\x82(", 0, 2, "invalid continuation byte")


def test_only_strict_strs_are_checked_before_the_value_is_whole():
    for opts in ({"raw": True}, {"unicode_errors": "surrogateescape"}):
        u = mpk.Unpacker(**opts)
        u.feed(bytes.fromhex("92a1ff"))
        with pytest.raises(mpk.OutOfData):
            u.unpack()
        u.feed(b"\x01")
        assert len(u.unpack()) == 2
    u = mpk.Unpacker()
    u.feed(bytes.fromhex("92a1ff"))
    with pytest.raises(mpk.OutOfData):
        u.skip()  # a skip builds no str and does not check it
    u.feed(b"\x01")
    u.skip()
    big = mpk.packb(["é" * 3000, 1])  # a valid str split anywhere is not refused early
    u = mpk.Unpacker()
    for i in range(0, len(big), 1000):
        u.feed(big[i:i + 1000])
    assert u.unpack() == ["é" * 3000, 1]


# ---- the state after each kind of error ----------------------------------------------------------

def test_after_out_of_data_more_bytes_complete_the_value():
    u = mpk.Unpacker()
    u.feed(b"\x92\x01")
    with pytest.raises(mpk.OutOfData):
        u.unpack()
    assert list(u) == []
    u.feed(b"\x02\x03")
    assert u.unpack() == [1, 2] and u.unpack() == 3


@pytest.mark.parametrize("data, exc, kind, opts", [
    (b"\x92\x01\xc1", mpk.FormatError, "invalid_byte", {}),
    (b"\x91\x91\x91\xc0", mpk.StackError, "depth_limit", {"max_depth": 2}),
    (b"\x92\x01\xa5hello", mpk.LengthLimitError, "length_limit", {"max_str_len": 3}),
    (b"\x91\xd6\xff\x00\x00\x00\x00", None, None, {}),  # a valid timestamp: the control case
    (b"\x91\xd7\xff\xff\xff\xff\xff\x00\x00\x00\x00", mpk.InvalidTimestampError, "invalid_timestamp", {}),
])
def test_after_a_byte_error_every_call_raises_it_again_until_read_bytes(data, exc, kind, opts):
    u = mpk.Unpacker(**opts)
    u.feed(b"\x05" + data + b"\x07")
    assert u.unpack() == 5
    if exc is None:
        u.unpack()
        assert u.unpack() == 7
        return
    for call in (u.unpack, u.skip, lambda: next(u), u.unpack):
        with pytest.raises(exc) as info:
            call()
        assert info.value.kind == kind and u.tell() == 1
    # the bytes of the bad value stay: read_bytes moves past them (here: all of it)
    assert u.read_bytes(len(data)) == data
    assert u.unpack() == 7


@pytest.mark.parametrize("data, opts, exc", [
    (b"\x81\x01\x02", {}, ValueError),                                   # strict_map_key
    (b"\x81\x91\x01\x02", {"strict_map_key": False}, TypeError),          # unhashable key
    (b"\x92\xa2\xff\xfe\x01", {}, mpk.InvalidUTF8Error),
    (b"\x92\xd4\x01\x00\x01", {"ext_hook": lambda c, d: 1 / 0}, ZeroDivisionError),
    (b"\x91\x80", {"object_hook": lambda d: [][1]}, IndexError),
    (b"\x91\x91\xc0", {"list_hook": lambda v: {}["x"]}, KeyError),
])
def test_after_an_error_building_a_value_the_value_is_still_there(data, opts, exc):
    # the bytes are a complete value that Python code (or UTF-8) refused: unpack() raises again,
    # skip() passes over it, and the stream goes on after it - never a misleading OutOfData
    u = mpk.Unpacker(**opts)
    u.feed(data + b"\x07")
    for _ in range(2):
        with pytest.raises(exc):
            u.unpack()
        assert u.tell() == 0
    assert u.skip() is None
    assert u.unpack() == 7
    with pytest.raises(mpk.OutOfData):
        u.skip()


def test_strict_map_key_error_then_skip_then_iteration():
    u = mpk.Unpacker()
    u.feed(b"\x81\x01\x02")
    with pytest.raises(ValueError):
        u.unpack()
    u.skip()
    assert list(u) == []
    u.feed(b"\x81\xa1a\x02")
    assert list(u) == [{"a": 2}]


def test_after_buffer_full_the_chunk_is_not_taken():
    u = mpk.Unpacker(max_buffer_size=10)
    u.feed(b"\x01\x02")
    with pytest.raises(mpk.BufferFull):
        u.feed(b"\x03" * 9)
    assert list(u) == [1, 2]
    u.feed(b"\x03" * 9)
    assert list(u) == [3] * 9


def test_after_an_unexpected_header_the_position_is_unchanged():
    u = mpk.Unpacker()
    u.feed(b"\x81\xa1a\x01")
    with pytest.raises(ValueError, match="Unexpected type header"):
        u.read_array_header()
    assert u.tell() == 0 and u.read_map_header() == 1 and list(u) == ["a", 1]
