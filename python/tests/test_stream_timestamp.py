"""A stream reports an ext -1 whose length no timestamp has at its head, as soon as the head is
complete, without waiting for (or buffering) the body; one-shot decoding of the same cut bytes is
still `truncated` (spec/README.md, "a stream reports an error as soon as the bytes prove it")."""
import pytest

import mpk

# heads of ext -1 with lengths 0, 1, 2, 5, 16, 255, 65535 and 2^32-1: none is 4, 8 or 12
BAD_HEADS = [
    b"\xc7\x00\xff", b"\xd4\xff", b"\xd5\xff", b"\xc7\x05\xff", b"\xd8\xff",
    b"\xc7\xff\xff", b"\xc8\xff\xff\xff", b"\xc9\xff\xff\xff\xff\xff",
]
BIG = {"max_ext_len": 2**32 - 1, "max_buffer_size": 2**32 - 1}


@pytest.mark.parametrize("head", BAD_HEADS, ids=lambda h: h.hex())
def test_the_head_alone_is_refused_at_its_offset_whatever_the_split(head):
    stream = b"\x01\xa1a" + head  # two complete values first: offsets count from the stream start
    for cut in range(len(stream) + 1):
        u = mpk.Unpacker(**BIG)
        got = []
        for piece in (stream[:cut], stream[cut:]):
            u.feed(piece)
            try:
                got.extend(u)
            except mpk.DecodeError as e:
                err = e
                break
        else:
            pytest.fail(f"no error for {stream.hex()} cut at {cut}")
        assert got == [1, "a"]
        assert (err.kind, err.offset) == ("invalid_timestamp", 3)


@pytest.mark.parametrize("head", BAD_HEADS, ids=lambda h: h.hex())
def test_byte_by_byte_too(head):
    u = mpk.Unpacker(**BIG)
    with pytest.raises(mpk.DecodeError) as info:
        for b in head:
            u.feed(bytes([b]))
            list(u)
    assert (info.value.kind, info.value.offset) == ("invalid_timestamp", 0)


def test_the_length_limit_comes_first():
    u = mpk.Unpacker(max_ext_len=100)
    u.feed(b"\xc8\x01\x00\xff")
    with pytest.raises(mpk.DecodeError) as info:
        list(u)
    assert info.value.kind == "length_limit"


def test_a_good_length_still_waits_for_its_body():
    u = mpk.Unpacker()
    u.feed(b"\xd6\xff\x00\x00")
    assert list(u) == []
    u.feed(b"\x00\x01")
    assert list(u) == [mpk.Timestamp(1, 0)]


def test_one_shot_decoding_of_the_cut_bytes_is_truncated():
    with pytest.raises(mpk.DecodeError) as info:
        mpk.unpackb(b"\xc7\x05\xff\x00")
    assert (info.value.kind, info.value.offset) == ("truncated", 0)
