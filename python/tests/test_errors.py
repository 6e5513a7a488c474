"""The exception classes: msgpack-python's names and bases, plus kind, offset and "at byte N"."""
import msgpack
import pytest

import mpk


def test_same_names_and_bases():
    for name in ("UnpackException", "BufferFull", "OutOfData", "FormatError", "StackError", "ExtraData"):
        ours, theirs = getattr(mpk, name), getattr(msgpack, name)
        for base in theirs.__mro__:
            if base.__module__ == "builtins":
                assert issubclass(ours, base), (name, base)
            else:
                assert issubclass(ours, getattr(mpk, base.__name__)), (name, base)
    assert mpk.UnpackValueError is ValueError
    assert mpk.PackValueError is ValueError and mpk.PackOverflowError is OverflowError
    assert mpk.PackException is Exception


@pytest.mark.parametrize("data, cls, kind, offset", [
    (b"\x92\x01", mpk.TruncatedError, "truncated", 0),
    (b"\x91\xc1", mpk.FormatError, "invalid_byte", 1),
    (b"\x91" * 1025 + b"\x01", mpk.StackError, "depth_limit", 1024),
    (b"\x01\x02\x03", mpk.ExtraData, "trailing_bytes", 1),
    (b"\x92\x01\xd5\xff\x00\x00", mpk.InvalidTimestampError, "invalid_timestamp", 2),
    (b"\x92\x01\xd7\xff\xff\xff\xff\xff\x00\x00\x00\x00", mpk.InvalidTimestampError, "invalid_timestamp", 2),
    (b"\x91\xa2\xff\xfe", mpk.InvalidUTF8Error, "invalid_utf8", 1),
])
def test_kind_offset_message(data, cls, kind, offset):
    with pytest.raises(cls) as info:
        mpk.unpackb(data)
    e = info.value
    assert (e.kind, e.offset) == (kind, offset)
    assert isinstance(e, ValueError) and isinstance(e, mpk.DecodeError)
    assert str(e).endswith(f"at byte {offset}")


def test_extra_data_keeps_value_and_bytes():
    with pytest.raises(mpk.ExtraData) as info:
        mpk.unpackb(b"\x92\x01\x02\xc0\xc0")
    assert info.value.unpacked == [1, 2]
    assert info.value.extra == b"\xc0\xc0"


def test_invalid_utf8_is_a_unicode_error():
    with pytest.raises(UnicodeDecodeError) as info:
        mpk.unpackb(b"\xa3a\xffb")
    assert (info.value.start, info.value.end, info.value.object) == (1, 2, b"a\xffb")


def test_truncated_in_stream_is_out_of_data():
    assert issubclass(mpk.TruncatedError, mpk.OutOfData)


@pytest.mark.parametrize("data", [
    b"\x90", b"\x92\x01\x02", b"\x92\x01", b"\x9f" + b"\x01" * 14, b"\x9f" + b"\x01" * 15, b"\x92\x01\x02\x03",
    b"\x92\x91\x01", b"\x92\xc1\x01", b"\x91\xa2\xff\xfe", b"\x93\xa1a\x92\x01\xff\xcb" + b"\x00" * 8,
    b"\x9f" + b"\x91" * 300, b"\x91" * 1025 + b"\x01", b"\x94", b"\x80", b"\x01",
])
def test_default_options_decode_as_explicit_ones(data):
    # unpackb without keywords takes a shorter way for small inputs (a fixarray goes straight to
    # the array loop); its values and errors must be those of the general way
    def outcome(**options):
        try:
            return ("value", mpk.unpackb(data, **options))
        except ValueError as e:
            return (type(e), getattr(e, "kind", None), getattr(e, "offset", None), str(e))

    assert outcome() == outcome(use_list=True, max_array_len=2**32 - 1)



@pytest.mark.parametrize("n", [255, 256, 257, 300, 5000])
@pytest.mark.parametrize("extra", ["", "\u00e9", "\u20ac", "\U0001f600"])
def test_strs_around_the_long_str_boundary(n, extra):
    # strs of up to 256 bytes are decoded by the extension's own ASCII scan and two-pass UTF-8
    # decoder, longer ones by CPython's: the same values and errors on both sides of the boundary
    text = "x" * (n - len(extra.encode())) + extra
    body = text.encode()
    data = msgpack.packb([1, text])
    assert mpk.unpackb(data) == [1, text]
    for bad in (body[:-1] + b"\xff", body[: n // 2] + b"\xc3" + body[n // 2 + 1:]):
        packed = data[: len(data) - n] + bad
        with pytest.raises(mpk.InvalidUTF8Error) as info:
            mpk.unpackb(packed)
        assert (info.value.kind, info.value.offset) == ("invalid_utf8", 2)
        assert mpk.unpackb(packed, unicode_errors="replace") == msgpack.unpackb(packed, unicode_errors="replace")
