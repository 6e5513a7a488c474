"""Drop-in edges: any buffer-protocol input, msgpack-python's ExtType and Timestamp, a Packer with
autoreset=False that keeps its bytes when a call fails, and the constructor arguments."""
import array
import subprocess
import sys

import msgpack
import pytest

import mpk


# ---- buffers ---------------------------------------------------------------------------------------

PACKED = b"\x93\x00\x01\x02\x03\x04\x05"  # every other byte: [1, 3, 5]


def test_unpackb_copies_a_non_contiguous_memoryview():
    view = memoryview(PACKED)[::2]
    assert not view.c_contiguous
    assert mpk.unpackb(view) == msgpack.unpackb(view) == [1, 3, 5]
    assert mpk.unpackb(memoryview(b"\x00\x92\x01\x02")[1:]) == [1, 2]
    assert mpk.unpackb(array.array("B", [0x92, 1, 2])) == [1, 2]
    assert mpk.unpackb(bytearray(b"\x92\x01\x02")) == [1, 2]


def test_feed_copies_a_non_contiguous_memoryview():
    u = mpk.Unpacker()
    u.feed(memoryview(PACKED)[::2])
    u.feed(memoryview(b"\x07\xff\x08")[::2])
    assert list(u) == [[1, 3, 5], 7, 8]


def test_a_non_contiguous_memoryview_packs_as_its_bytes():
    assert mpk.packb(memoryview(b"abcdef")[::2]) == b"\xc4\x03ace"
    assert mpk.packb(memoryview(b"abcdef")[::2], strict_types=True) == b"\xc4\x03ace"


def test_a_non_buffer_still_raises_type_error():
    with pytest.raises(TypeError):
        mpk.unpackb("\x92\x01\x02")
    with pytest.raises(TypeError):
        mpk.Unpacker().feed(12)


# ---- msgpack-python's ExtType and Timestamp -----------------------------------------------------------

def test_msgpack_ext_type_packs_as_an_ext():
    for strict in (False, True):
        assert mpk.packb(msgpack.ExtType(1, b"x"), strict_types=strict) == b"\xd4\x01x"
        assert mpk.packb([msgpack.ExtType(5, b"ab")], strict_types=strict) == msgpack.packb([msgpack.ExtType(5, b"ab")])
    assert mpk.unpackb(mpk.packb(msgpack.ExtType(1, b"x"))) == mpk.ExtType(1, b"x")
    p = mpk.Packer(autoreset=False)
    p.pack({"e": msgpack.ExtType(2, b"yz")})
    assert p.bytes() == msgpack.packb({"e": msgpack.ExtType(2, b"yz")})


def test_msgpack_timestamp_packs_as_a_timestamp():
    for ts in (msgpack.Timestamp(1, 0), msgpack.Timestamp(2**34, 5), msgpack.Timestamp(-1, 999999999)):
        assert mpk.packb(ts) == msgpack.packb(ts)
        assert mpk.unpackb(mpk.packb(ts)) == mpk.Timestamp(ts.seconds, ts.nanoseconds)
        assert mpk.packb([ts], strict_types=True) == msgpack.packb([ts])


def test_a_subclass_of_msgpack_ext_type_is_an_ext_unless_strict():
    class Mine(msgpack.ExtType):
        pass

    assert mpk.packb(Mine(3, b"q")) == b"\xd4\x03q"
    # strict_types: only the class itself; a tuple subclass then has no form
    with pytest.raises(TypeError):
        mpk.packb(Mine(3, b"q"), strict_types=True)


def test_msgpack_is_never_imported_by_mpk():
    code = ("import sys, mpk; mpk.packb([(1, 2), mpk.ExtType(1, b'x')]);"
            "mpk.packb(object(), default=repr); print('msgpack' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_namedtuple_that_is_not_msgpacks_stays_an_array():
    import collections
    ExtType = collections.namedtuple("ExtType", "code data")
    assert mpk.packb(ExtType(1, b"x")) == b"\x92\x01\xc4\x01x"


# ---- autoreset=False keeps what it packed ------------------------------------------------------------

@pytest.mark.parametrize("fail", [
    lambda p: p.pack_ext_type(200, b"x"),
    lambda p: p.pack_ext_type(1, "x"),
    lambda p: p.pack([1, object()]),
    lambda p: p.pack({"a": [1, 2, object()]}),
    lambda p: p.pack_map_pairs([(1, 2), (3, object())]),
    lambda p: p.pack(2**64),
    lambda p: p.pack_array_header(2**32),
])
def test_a_failed_call_keeps_the_earlier_values(fail):
    p = mpk.Packer(autoreset=False)
    p.pack([1, "two"])
    p.pack_ext_type(5, b"ok")
    before = p.bytes()
    with pytest.raises((TypeError, ValueError, OverflowError)):
        fail(p)
    assert p.bytes() == before
    p.pack(3)
    assert list(mpk.Unpacker(__import__("io").BytesIO(p.bytes()))) == [[1, "two"], mpk.ExtType(5, b"ok"), 3]


# ---- constructor arguments --------------------------------------------------------------------------

def outcome(make):
    try:
        make()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


@pytest.mark.parametrize("kwargs", [
    {"buf_size": "x"}, {"buf_size": -1}, {"buf_size": 2**70}, {"buf_size": 2**62}, {"buf_size": 1.5},
    {"buf_size": 0}, {"buf_size": 1}, {"buf_size": True},
    {"default": 1}, {"unicode_errors": 1},
])
def test_packer_arguments_fail_like_msgpack(kwargs):
    # (buf_size=None, the documented default, is accepted; msgpack-python 1.2.4 raises TypeError)
    assert outcome(lambda: mpk.Packer(**kwargs)) == outcome(lambda: msgpack.Packer(**kwargs))


@pytest.mark.parametrize("buf_size", [0, 1, 7, 1 << 20])
def test_buf_size_is_the_first_capacity_and_the_buffer_grows(buf_size):
    p = mpk.Packer(buf_size=buf_size, autoreset=False)
    for i in range(300):
        p.pack(["x" * i, i])
    assert p.bytes() == b"".join(msgpack.packb(["x" * i, i]) for i in range(300))


@pytest.mark.parametrize("args, kwargs", [
    ((1,), {}), ((), {"read_size": 200 * 1024 * 1024}), ((), {"max_buffer_size": "x"}),
    ((), {"max_buffer_size": -5}), ((), {"timestamp": 5}), ((), {"object_hook": 1}),
    ((), {"list_hook": 1}), ((), {"object_pairs_hook": 1}), ((), {"unicode_errors": 1}),
    ((), {"max_str_len": -5}), ((), {"read_size": 10, "max_buffer_size": 5}),
])
def test_unpacker_arguments_fail_like_msgpack(args, kwargs):
    assert outcome(lambda: mpk.Unpacker(*args, **kwargs)) == outcome(lambda: msgpack.Unpacker(*args, **kwargs))
