"""Limits and hostile input: declared lengths never allocate more than the input justifies, deep
nesting raises, every limit option works, random garbage never crashes."""
import random
import tracemalloc

import pytest

import mpk

HOSTILE_HEADS = [
    b"\xdb\xff\xff\xff\xff",          # str 32 of 4 GiB
    b"\xc6\xff\xff\xff\xff",          # bin 32 of 4 GiB
    b"\xc9\xff\xff\xff\xff\x05",      # ext 32 of 4 GiB
    b"\xdd\xff\xff\xff\xff",          # array 32 of 2^32-1 elements
    b"\xdf\xff\xff\xff\xff",          # map 32 of 2^32-1 pairs
    b"\xdd\x00\x10\x00\x00" + b"\x01" * 100,  # a million elements, 100 present
    b"\xdf\x00\x10\x00\x00" + b"\x01" * 100,
]


@pytest.mark.parametrize("data", HOSTILE_HEADS)
def test_declared_length_allocates_nothing_big(data):
    tracemalloc.start()
    try:
        with pytest.raises(mpk.TruncatedError) as info:
            mpk.unpackb(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.kind == "truncated" and info.value.offset == 0
    assert peak < 64 * 1024


@pytest.mark.parametrize("data", HOSTILE_HEADS)
def test_stream_declared_length_allocates_nothing_big(data):
    tracemalloc.start()
    try:
        big = 2**32 - 1
        u = mpk.Unpacker(max_buffer_size=0, max_str_len=big, max_bin_len=big, max_ext_len=big,
                         max_array_len=big, max_map_len=big)
        u.feed(data)
        with pytest.raises(mpk.OutOfData):
            u.unpack()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_truncated_is_a_value_error_like_msgpack():
    with pytest.raises(ValueError, match=r"Unpack failed: incomplete input at byte 0"):
        mpk.unpackb(b"\x92\x01")
    # a container still owing elements when the input ends: the input length
    with pytest.raises(mpk.TruncatedError) as info:
        mpk.unpackb(b"\x92\x92\x01\x02")
    assert info.value.offset == 4


@pytest.mark.parametrize("depth", [1024, 1025, 5000, 100000])
def test_deep_nesting(depth):
    data = b"\x91" * depth + b"\x01"
    if depth <= 1024:
        value = mpk.unpackb(data)
        for _ in range(depth):
            value = value[0]
        assert value == 1
    else:
        with pytest.raises(mpk.StackError) as info:
            mpk.unpackb(data)
        assert (info.value.kind, info.value.offset) == ("depth_limit", 1024)


def test_deep_nesting_in_stream_and_maps():
    u = mpk.Unpacker()
    u.feed(b"\x81\xa1k" * 2000)
    with pytest.raises(mpk.StackError):
        u.unpack()
    with pytest.raises(mpk.StackError):
        mpk.unpackb(b"\x91" * 3 + b"\x01", max_depth=2)


@pytest.mark.parametrize("option, data", [
    ("max_str_len", b"\xa3abc"), ("max_bin_len", b"\xc4\x03abc"), ("max_ext_len", b"\xd6\x01abcd"),
    ("max_array_len", b"\x93\x01\x02\x03"), ("max_map_len", b"\x83" + b"\x01\x01" * 3),
])
def test_length_limits(option, data):
    assert mpk.unpackb(data, **{option: 5}, strict_map_key=False) is not None
    with pytest.raises(mpk.LengthLimitError, match=rf"exceeds {option}\(2\) at byte 1") as info:
        mpk.unpackb(b"\x91" + data, **{option: 2}, strict_map_key=False)
    assert (info.value.kind, info.value.offset) == ("length_limit", 1)
    assert isinstance(info.value, ValueError)


def test_error_order_limit_before_truncation():
    with pytest.raises(mpk.TruncatedError):
        mpk.unpackb(b"\xdb\xff\xff\xff\xff")
    with pytest.raises(mpk.LengthLimitError):
        mpk.unpackb(b"\xdb\xff\xff\xff\xff", max_str_len=10)
    with pytest.raises(mpk.TruncatedError):  # two elements cannot fit in one byte
        mpk.unpackb(b"\x92\xc1")


def test_random_garbage_never_crashes():
    rng = random.Random(1234)
    kinds = set()
    for _ in range(20000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 24)))
        try:
            mpk.unpackb(data, strict_map_key=False, use_list=False)
        except mpk.DecodeError as e:
            assert e.kind in ("truncated", "invalid_byte", "depth_limit", "length_limit",
                              "invalid_timestamp", "invalid_utf8", "trailing_bytes")
            assert 0 <= e.offset <= len(data)
            kinds.add(e.kind)
        except (TypeError, ValueError):
            pass  # unhashable keys, ExtType codes and the like: Python errors, not crashes
    assert {"truncated", "invalid_byte", "trailing_bytes"} <= kinds


def test_random_garbage_streams_agree_with_one_shot():
    rng = random.Random(99)
    for _ in range(2000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        try:
            want = repr(mpk.unpackb(data, strict_map_key=False, use_list=False))
        except Exception as e:  # noqa: BLE001
            want = None if isinstance(e, mpk.TruncatedError) else type(e)
        big = 2**32 - 1  # unpackb's limits, not the stream's max_buffer_size defaults
        u = mpk.Unpacker(strict_map_key=False, use_list=False, max_buffer_size=0, max_str_len=big,
                         max_bin_len=big, max_ext_len=big, max_array_len=big, max_map_len=big)
        got = None
        try:
            for byte in data:
                u.feed(bytes([byte]))
                for value in u:
                    got = repr(value)
                    break
                if got is not None:
                    break
        except Exception as e:  # noqa: BLE001
            got = type(e)
        if want is mpk.ExtraData:
            continue  # trailing bytes: the stream rightly returns the first value
        if want is None:
            # unpackb stops at the first count the bytes cannot fill (truncated at its head); the
            # stream walks on into the elements and reports an error as soon as the bytes prove
            # it. Such an error must be the one these bytes give whatever follows them: unpackb
            # says the same once the missing elements are there (nils, when the counts are small).
            if got is not None:
                assert got in (mpk.FormatError, mpk.StackError, mpk.LengthLimitError,
                               mpk.InvalidTimestampError, mpk.InvalidUTF8Error), (data.hex(), got)
                try:
                    mpk.unpackb(data + b"\xc0" * 64, strict_map_key=False, use_list=False)
                except mpk.TruncatedError:
                    pass  # counts beyond the padding: nothing more to compare
                except mpk.ExtraData:
                    raise AssertionError((data.hex(), got))
                except Exception as e:  # noqa: BLE001
                    assert type(e) is got, (data.hex(), got, e)
                else:
                    raise AssertionError((data.hex(), got))
        elif isinstance(want, str):
            assert got == want
        else:
            assert got == want or got is None or isinstance(got, type)
