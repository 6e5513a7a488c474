"""Decoded strs are built by ext/strbuild.h (a census of the code points and the kind, then a str of
that kind filled straight from the UTF-8), not by CPython's decoder: they must be the very strs
CPython's strict decoder makes (same value, kind and size: a str of a wider kind than it needs
compares unequal to the same text in CPython), and every byte string CPython rejects must be
rejected, with CPython's error position. The SSE2 census runs here on x86-64 (for strs under 32 bytes
when the CPU has AVX2: longer ones are tests/test_utf8_avx2.py's); the portable build
(`make test-python-portable`) runs the same tests on the 8-bytes-a-step census."""
import random
import struct
import sys

import pytest

import mpk


def str_msg(body):
    n = len(body)
    if n < 32:
        head = bytes([0xA0 | n])
    elif n < 256:
        head = b"\xd9" + bytes([n])
    elif n < 65536:
        head = b"\xda" + struct.pack(">H", n)
    else:
        head = b"\xdb" + struct.pack(">I", n)
    return head + body


# header sizes of a fresh str of each kind (nothing cached in it, unlike CPython's one-char strs)
BASES = {0: sys.getsizeof("ab") - 3, 1: sys.getsizeof("\u00e9" * 2) - 3, 2: sys.getsizeof("\u03b1" * 2) - 6,
         4: sys.getsizeof("\U0001f600" * 2) - 12}


def expected_size(text):
    top = max(map(ord, text), default=0)
    kind = 0 if top < 0x80 else 1 if top < 0x100 else 2 if top < 0x10000 else 4
    return BASES[kind] + (len(text) + 1) * max(kind, 1)


def followed(body):
    """[str, [[[None]]]]: the str followed by input whose bytes would continue a sequence cut short
    at its end (0x91, a fixarray head, is a continuation byte), which are not the str's"""
    return b"\x92" + str_msg(body) + b"\x91\x91\x91\xc0"


def check(body, handlers=True):
    """mpk's str of body is CPython's, or both reject it at the same bytes."""
    try:
        want = body.decode("utf-8")
    except UnicodeDecodeError as e:
        with pytest.raises(mpk.InvalidUTF8Error) as info:
            mpk.unpackb(str_msg(body))
        assert (info.value.start, info.value.end) == (e.start, e.end), body.hex()
        with pytest.raises(mpk.InvalidUTF8Error):
            mpk.unpackb(followed(body))
        if not handlers:
            return
        assert mpk.unpackb(str_msg(body), unicode_errors="replace") == body.decode("utf-8", "replace")
        assert mpk.unpackb(str_msg(body), unicode_errors="surrogateescape") == body.decode("utf-8", "surrogateescape")
        return
    assert mpk.unpackb(followed(body)) == [want, [[[None]]]]
    got = mpk.unpackb(str_msg(body))
    assert type(got) is str and got == want, body.hex()
    # the narrowest kind, as CPython's: the str's size is its header and 1, 2 or 4 bytes a code point
    assert len(got) == len(want) and sys.getsizeof(got) == expected_size(want), body.hex()
    assert hash(got) == hash(want) and got.encode() == body and got.isascii() == want.isascii()
    assert max(map(ord, got), default=0) == max(map(ord, want), default=0)


# one representative sequence per class of lead byte, valid and not
SEQS = [
    b"a", b"\x7f", b"\x00",
    "\u0080".encode(), "\u00e9".encode(), "\u00ff".encode(),            # 2 bytes, UCS1
    "\u0100".encode(), "\u03b1".encode(), "\u07ff".encode(),            # 2 bytes, UCS2
    "\u0800".encode(), "\u3042".encode(), "\ud7ff".encode(), "\ue000".encode(), "\uffff".encode(),
    "\U00010000".encode(), "\U0001f600".encode(), "\U0010ffff".encode(),  # 4 bytes
    b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf",                           # stray continuation, overlong
    b"\xc2", b"\xc2\x41", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xe3\x81",  # truncated, overlong
    b"\xed\xa0\x80", b"\xed\xbf\xbf",                                     # surrogates
    b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",        # overlong, above U+10FFFF
    b"\xf5\x80\x80\x80", b"\xf8", b"\xfe", b"\xff", b"\xf0\x9f\x98",
]


@pytest.mark.parametrize("seq", SEQS, ids=lambda s: s.hex())
def test_every_lead_class_at_every_length(seq):
    # each sequence at every position of every ASCII string up to 64 bytes, and of a 300-byte one
    # (the long-str path), and followed by each width
    for n in range(0, 65):
        for at in range(0, n + 1):
            check(b"x" * at + seq + b"y" * (n - at))
    for at in (0, 1, 7, 8, 15, 16, 63, 64, 65, 255, 256, 299):
        check(b"z" * at + seq + b"w" * (300 - at))
    for other in ("\u00e9", "\u03b1", "\u3042", "\U0001f600"):
        check(seq + other.encode())
        check(other.encode() + seq)


def test_every_two_byte_prefix():
    for a in range(256):
        for b in range(256):
            check(bytes([a, b]), handlers=False)
        for b in (0x00, 0x41, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE3, 0xF0, 0xFF):
            check(b"abcdefgh" + bytes([a, b]) + b"\x80")


def test_every_three_byte_sequence_with_lead_e0_to_f4():
    for a in range(0xE0, 0xF5):
        for b in range(0x70, 0xD0):
            check(bytes([a, b, 0x80]))
            check(bytes([a, b, 0xBF, 0x80]))


CHARS = ["a", " ", "\u00e9", "\u00ff", "\u0101", "\u03b1", "\u07ff", "\u0800", "\u3042", "\uffff",
         "\U00010000", "\U0001f600", "\U0010ffff"]


@pytest.mark.parametrize("seed", range(3))
def test_random_text_of_mixed_widths(seed):
    rng = random.Random(seed)
    for _ in range(150):
        pool = rng.sample(CHARS, rng.randint(1, 4))
        n = rng.choice([rng.randint(0, 40), rng.randint(200, 300), rng.randint(1000, 5000)])
        text = "".join(rng.choice(pool) for _ in range(n))
        body = text.encode()
        check(body)
        if body:
            # one byte broken, and the text cut in the middle of a sequence
            i = rng.randrange(len(body))
            check(body[:i] + bytes([rng.randrange(256)]) + body[i + 1:])
            check(body[: rng.randrange(len(body) + 1)])


def test_long_strs_of_every_kind():
    # past the SSE2 census's lane flush (63 turns of 64 bytes) with every byte a continuation or
    # lead: the count must not wrap
    for ch in ("\u00e9", "\u3042", "\U0001f600", "a"):
        for n in (4031, 4032, 4033, 20000):
            text = (ch * n)[: n]
            check(text.encode())
            check(("x" * 7 + text).encode())
    big = ("Grüße καλημέρα こんにちは 東京 😀 naïve " * 3000).encode()
    check(big)
    check(big[:-1])


def test_strs_in_containers_and_raw():
    values = ["é" * 300, "東京" * 200, "😀", "ascii" * 100, "naïve"]
    assert mpk.unpackb(mpk.packb(values)) == values
    assert mpk.unpackb(mpk.packb(values), raw=True) == [v.encode() for v in values]
    d = {"k": "東京" * 200}
    assert mpk.unpackb(mpk.packb(d)) == d
    u = mpk.Unpacker()
    for v in values:
        u.feed(mpk.packb(v))
    assert list(u) == values


@pytest.mark.parametrize("n", [257, 320, 1031])
def test_long_ascii_checked_while_copied(n):
    # strs over 256 bytes are copied while checked (64 bytes a step, then 32, then bytes): an ASCII
    # one is CPython's str, and one non-ASCII byte anywhere (a valid sequence or not) is found
    body = bytes(range(0x20, 0x7F)) * (n // 95 + 1)
    body = body[:n]
    check(body)
    for at in range(n):
        check(body[:at] + "é".encode() + body[at + 2:], handlers=False)
        check(body[:at] + b"\x80" + body[at + 1:], handlers=False)
