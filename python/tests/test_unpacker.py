"""unpackb options and the streaming Unpacker: feed, iteration, unpack, skip, headers, read_bytes,
tell, file-like input, buffer limits."""
import datetime
import sys
import io

import msgpack
import pytest

import mpk


class TestUnpackb:
    def test_input_types(self):
        assert mpk.unpackb(b"\x01") == 1
        assert mpk.unpackb(bytearray(b"\x01")) == 1
        assert mpk.unpackb(memoryview(b"\x92\x01\x02")) == [1, 2]
        with pytest.raises(TypeError):
            mpk.unpackb("abc")

    def test_options(self):
        data = mpk.packb({"a": [1, b"x", "é"]})
        assert mpk.unpackb(data, use_list=False) == {"a": (1, b"x", "é")}
        assert mpk.unpackb(data, raw=True) == {b"a": [1, b"x", "é".encode()]}
        assert mpk.unpackb(data, object_hook=lambda d: ("obj", d)) == ("obj", {"a": [1, b"x", "é"]})
        assert mpk.unpackb(data, object_pairs_hook=list) == [("a", [1, b"x", "é"])]
        assert mpk.unpackb(data, list_hook=tuple) == {"a": (1, b"x", "é")}
        with pytest.raises(TypeError, match="mutually exclusive"):
            mpk.unpackb(data, object_hook=dict, object_pairs_hook=list)
        with pytest.raises(TypeError):
            mpk.unpackb(data, object_hook=1)
        with pytest.raises(ValueError, match="timestamp must be 0..3"):
            mpk.unpackb(data, timestamp=4)

    def test_map_keys(self):
        with pytest.raises(ValueError, match="int is not allowed for map key when strict_map_key=True"):
            mpk.unpackb(b"\x81\x01\x02")
        assert mpk.unpackb(b"\x81\x01\x02", strict_map_key=False) == {1: 2}
        assert mpk.unpackb(b"\x81\xc4\x01k\x02") == {b"k": 2}
        with pytest.raises(TypeError, match="unhashable"):
            mpk.unpackb(b"\x81\x90\x02", strict_map_key=False)
        assert mpk.unpackb(b"\x81\x91\x01\x02", strict_map_key=False, use_list=False) == {(1,): 2}

    def test_keys_are_interned(self):
        a, b = mpk.unpackb(mpk.packb([{"some_key": 1}, {"some_key": 2}]))
        (ka,), (kb,) = a, b
        assert ka is kb

    def test_decoded_keys_are_freed_when_unused(self):
        # map keys are interned where interning keeps them mortal (3.11, 3.13) and left uninterned
        # on 3.12, whose interning makes a str immortal: distinct keys (ids used as keys) decoded
        # and dropped must not stay in memory for the life of the process
        import uuid
        tag = uuid.uuid4().hex
        short = "k" + tag[:20]                       # through the key cache
        long_ = "long key " + tag + "x" * 80         # past the key cache
        non_ascii = "clé " + tag
        (d,) = [mpk.unpackb(mpk.packb({short: 1, long_: 2, non_ascii: 3}))]
        for k in d:
            assert sys.getrefcount(k) < 1000, k  # an immortal str reports a count of 2**32 - 1 or more
        del d, k
        before = sys.getallocatedblocks()
        for j in range(20):
            keys = mpk.unpackb(mpk.packb({f"{tag}-{j}-{i}": i for i in range(2000)}))
            del keys
        assert sys.getallocatedblocks() - before < 5000  # 40,000 distinct keys came and went

    def test_duplicate_keys_last_wins(self):
        assert mpk.unpackb(b"\x82\xa1a\x01\xa1a\x02") == {"a": 2}

    def test_timestamp_modes(self):
        data = mpk.packb(mpk.Timestamp(1_600_000_000, 123_456_789))
        assert mpk.unpackb(data) == mpk.Timestamp(1_600_000_000, 123_456_789)
        assert mpk.unpackb(data, timestamp=1) == pytest.approx(1_600_000_000.123456789)
        assert mpk.unpackb(data, timestamp=2) == 1_600_000_000_123_456_789
        assert mpk.unpackb(data, timestamp=3) == datetime.datetime(2020, 9, 13, 12, 26, 40, 123456,
                                                                   tzinfo=datetime.timezone.utc)
        before_epoch = mpk.packb(mpk.Timestamp(-1, 500_000_000))
        assert mpk.unpackb(before_epoch, timestamp=3) == msgpack.unpackb(before_epoch, timestamp=3)
        with pytest.raises(OverflowError):
            mpk.unpackb(mpk.packb(mpk.Timestamp(2**40, 0)), timestamp=3)

    def test_ext_hook(self):
        assert mpk.unpackb(b"\xd4\x05\x00") == mpk.ExtType(5, b"\x00")
        assert mpk.unpackb(b"\xd4\xfb\x00") == mpk.ExtType(-5, b"\x00")
        assert mpk.unpackb(b"\xd4\x05\x00", ext_hook=lambda c, d: (c, d)) == (5, b"\x00")
        # the timestamp type never goes to ext_hook
        assert mpk.unpackb(b"\xd6\xff\x00\x00\x00\x01", ext_hook=lambda c, d: 0) == mpk.Timestamp(1)

    def test_unicode_errors(self):
        assert mpk.unpackb(b"\xa2\xff\xfe", unicode_errors="replace") == "\ufffd\ufffd"
        assert mpk.unpackb(b"\xa2\xff\xfe", unicode_errors="surrogateescape") == "\udcff\udcfe"
        assert mpk.unpackb(b"\xa2\xff\xfe", raw=True) == b"\xff\xfe"


class TestUnpacker:
    def test_feed_and_iterate(self):
        u = mpk.Unpacker()
        u.feed(b"\x01\x92\x02")
        assert list(u) == [1]
        u.feed(b"\x03\xa1")
        assert next(u) == [2, 3]
        with pytest.raises(StopIteration):
            next(u)
        u.feed(b"x")
        assert u.unpack() == "x"
        with pytest.raises(mpk.OutOfData, match="No more data"):
            u.unpack()
        assert u.tell() == 6

    def test_feed_empty_first(self):
        u = mpk.Unpacker()
        u.feed(b"")  # before any buffer exists (found by the UBSan run)
        assert list(u) == []
        u.feed(b"\x01")
        u.feed(b"")
        assert list(u) == [1]

    def test_feed_types(self):
        u = mpk.Unpacker()
        u.feed(bytearray(b"\x01"))
        u.feed(memoryview(b"\x02"))
        assert list(u) == [1, 2]
        with pytest.raises(TypeError):
            u.feed("text")

    def test_skip_and_headers(self):
        u = mpk.Unpacker()
        u.feed(mpk.packb([1, 2]) + mpk.packb({"a": 1}) + mpk.packb("skipped") + b"\x07")
        assert u.read_array_header() == 2
        assert (u.unpack(), u.unpack()) == (1, 2)
        assert u.read_map_header() == 1
        assert (u.unpack(), u.unpack()) == ("a", 1)
        u.skip()
        with pytest.raises(ValueError, match="Unexpected type header"):
            u.read_array_header()
        assert u.unpack() == 7

    def test_skip_runs_no_hooks(self):
        calls = []
        u = mpk.Unpacker(object_hook=lambda d: calls.append(d) or d)
        u.feed(mpk.packb({"a": 1}) * 2)
        u.skip()
        assert calls == []
        assert u.unpack() == {"a": 1} and len(calls) == 1

    def test_hooks_run_once_per_value_whatever_the_chunks(self):
        calls = []
        data = mpk.packb([{"a": 1}, {"b": [2, 3]}])
        u = mpk.Unpacker(object_hook=lambda d: calls.append(d) or d)
        out = []
        for byte in data:
            u.feed(bytes([byte]))
            out.extend(u)
        assert out == [[{"a": 1}, {"b": [2, 3]}]]
        assert calls == [{"a": 1}, {"b": [2, 3]}]

    def test_read_bytes(self):
        u = mpk.Unpacker()
        u.feed(b"\x01abc\x02")
        assert u.unpack() == 1
        assert u.read_bytes(3) == b"abc"
        assert u.read_bytes(5) == b"\x02"
        assert u.tell() == 5

    def test_file_like(self):
        data = b"".join(mpk.packb(i) for i in range(1000)) + mpk.packb("x" * 100000)
        u = mpk.Unpacker(io.BytesIO(data), read_size=7)
        assert list(u) == list(range(1000)) + ["x" * 100000]
        assert u.tell() == len(data)
        with pytest.raises(mpk.OutOfData):
            u.unpack()
        with pytest.raises(AssertionError):
            u.feed(b"\x01")
        with pytest.raises(AttributeError):  # as msgpack-python
            mpk.Unpacker(object())

    def test_file_like_truncated(self):
        u = mpk.Unpacker(io.BytesIO(b"\x01\x92\x01"))
        assert u.unpack() == 1
        with pytest.raises(mpk.OutOfData):
            u.unpack()

    def test_file_like_read_bytes(self):
        u = mpk.Unpacker(io.BytesIO(b"\x01abcdef"), read_size=2)
        assert u.unpack() == 1
        assert u.read_bytes(4) == b"abcd"
        assert u.tell() == 5
        assert u.read_bytes(10) == b"ef"

    def test_buffer_full(self):
        u = mpk.Unpacker(max_buffer_size=4)
        u.feed(b"\x01\x02\x03")
        with pytest.raises(mpk.BufferFull):
            u.feed(b"\x04\x05")
        assert list(u) == [1, 2, 3]
        u.feed(b"\x04\x05")  # consumed bytes no longer count
        assert list(u) == [4, 5]

    def test_limits_default_to_buffer_size(self):
        u = mpk.Unpacker(max_buffer_size=10)
        u.feed(b"\xab" + b"a" * 9)  # str of 11 bytes declared; only the head and 9 bytes fed
        with pytest.raises(ValueError, match="exceeds max_str_len"):
            u.unpack()

    def test_errors_carry_stream_offsets(self):
        u = mpk.Unpacker()
        u.feed(b"\x01\x02\x92\x01\xc1")
        assert (next(u), next(u)) == (1, 2)
        with pytest.raises(mpk.FormatError) as info:
            u.unpack()
        assert (info.value.kind, info.value.offset) == ("invalid_byte", 4)
        assert str(info.value).endswith("at byte 4")

    def test_same_as_msgpack_on_many_messages(self):
        values = [i * 7919 % 100003 for i in range(3000)] + ["s" * (i % 40) for i in range(300)]
        data = b"".join(msgpack.packb(v) for v in values)
        for size in (1, 3, 64, 4096):
            u = mpk.Unpacker()
            got = []
            for i in range(0, len(data), size):
                u.feed(data[i:i + size])
                got.extend(u)
            assert got == values


def test_small_ints_are_shared():
    # decoded ints of -128..255 come from one table (README, Compatibility); others are new objects
    values = mpk.unpackb(mpk.packb([-128, -128, 255, 255, 7, 7, 256, 256, -129, -129]))
    assert values == [-128, -128, 255, 255, 7, 7, 256, 256, -129, -129]
    assert values[0] is values[1] and values[2] is values[3] and values[4] is values[5]
    assert values[8] is not values[9]
    unpacker = mpk.Unpacker()
    unpacker.feed(mpk.packb(-100) * 2)
    assert [v for v in unpacker] == [-100, -100]


@pytest.mark.parametrize("head, fmt", [(0xcc, ">B"), (0xcd, ">H"), (0xce, ">I"), (0xcf, ">Q"),
                                       (0xd0, ">b"), (0xd1, ">h"), (0xd2, ">i"), (0xd3, ">q")])
def test_ints_of_every_form_and_width(head, fmt):
    # ints are built without PyLong_From* on 3.11: every digit count, sign and form must give the
    # same int as Python's own, in a list (the inline path) and alone (the switch)
    import struct
    size = struct.calcsize(fmt)
    signed = fmt[1].islower()
    lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if signed else (0, (1 << (8 * size)) - 1)
    edges = {lo, hi, 0, 1, -1, 127, 128, 255, 256, 257, -128, -129, 2**30 - 1, 2**30, -2**30, -2**30 - 1,
             2**60 - 1, 2**60, -2**60, -2**60 - 1, 2**63 - 1, -2**63}
    for v in sorted(x for x in edges if lo <= x <= hi):
        one = bytes([head]) + struct.pack(fmt, v)
        for data, expect in ((one, v), (b"\x92" + one + one, [v, v]), (b"\x81\xa1k" + one, {"k": v})):
            got = mpk.unpackb(data)
            assert got == expect
            item = got if isinstance(got, int) else (got[0] if isinstance(got, list) else got["k"])
            assert type(item) is int and hash(item) == hash(v) and str(item) == str(v)
            assert item.bit_length() == v.bit_length() and -item == -v and item * 7 + 1 == v * 7 + 1
