"""Long non-ASCII strs (over 256 bytes) are decoded by ext/utf8_avx2.h when the CPU has AVX2: a
vector UTF-8 check, then a fill with no per-sequence checks. Its result must be CPython's strict
decoder's in every case: the same str (value, kind, size) for valid bytes, a rejection at CPython's
position for invalid ones. The same table runs in a subprocess with MPK_PY_NO_AVX2=1 (the fallback:
CPython's decoder), and the portable build (`make test-python-portable`) runs it on that fallback."""
import os
import random
import struct
import subprocess
import sys

import pytest

import mpk
from mpk import _mpk

PORTABLE = os.environ.get("MPK_EXPECT_PORTABLE") == "1"


def cpu_has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx2" in line for line in f)
    except OSError:
        return False


def str_msg(body):
    n = len(body)
    if n < 256:
        return b"\xd9" + bytes([n]) + body
    if n < 65536:
        return b"\xda" + struct.pack(">H", n) + body
    return b"\xdb" + struct.pack(">I", n) + body


def mismatch(body):
    """None when mpk decodes body (in a message, followed by bytes that would continue a cut
    sequence) as CPython's strict decoder does, else a description."""
    msg = b"\x92" + str_msg(body) + b"\x91\xc0"  # 0x91 would continue a cut sequence
    try:
        want = body.decode("utf-8")
    except UnicodeDecodeError as e:
        try:
            mpk.unpackb(msg)
        except mpk.InvalidUTF8Error as got:
            if (got.start, got.end) != (e.start, e.end):
                return f"error at {(got.start, got.end)}, CPython's at {(e.start, e.end)}"
            return None
        return "accepted what CPython rejects"
    got = mpk.unpackb(msg)
    if got[1] != [None] or type(got[0]) is not str:
        return f"wrong value {got!r:.80}"
    s = got[0]
    if s != want:
        at = next((i for i, (a, b) in enumerate(zip(s, want)) if a != b), min(len(s), len(want)))
        return f"differs at code point {at} (len {len(s)} vs {len(want)})"
    # (one-char strs: CPython returns its cached singleton, whose size may count a cached UTF-8)
    if (len(s) > 1 and sys.getsizeof(s) != sys.getsizeof(want)) or s.isascii() != want.isascii():
        return "not CPython's kind"
    if hash(s) != hash(want) or s.encode() != body:
        return "hash or encoding differs"
    return None


FILLERS = ["a", "\u00e9", "e\u00e9", "\u03b1", "\u3042", "\U0001f600", "ab\u00ffc\u0101 \u3042\U0001f600"]

SEQS = [
    "\u0080".encode(), "\u00ff".encode(), "\u0100".encode(), "\u07ff".encode(), "\u0800".encode(),
    "\ud7ff".encode(), "\ue000".encode(), "\uffff".encode(), "\U00010000".encode(), "\U0010ffff".encode(),
    b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xc2", b"\xc3\x41", b"\xdf", b"\xe0\x80\x80",
    b"\xe0\x9f\xbf", b"\xe0\xa0", b"\xe3\x81", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xef\xbf",
    b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf0\x90\x80", b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf",
    b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff", b"\xc2\x80\x80", b"\xe3\x81\x82\x80",
]


def text_of(filler, nbytes):
    unit = filler.encode()
    return (unit * (nbytes // len(unit) + 1))[:nbytes].decode("utf-8", "ignore").encode()


def table():
    """The generated table: (name, body) pairs."""
    rng = random.Random(2026)
    # every length from 0 to 330 (the path starts above 256; 32-byte blocks, the fill's 40/56-byte
    # tails) and lengths around 4096, of each filler, whole and cut anywhere in its last sequence
    for filler in FILLERS:
        for n in list(range(0, 331)) + list(range(4090, 4101)):
            body = text_of(filler, n)
            yield f"{filler!r} x{n}", body
            for cut in (1, 2, 3):
                if len(body) > cut:
                    yield f"{filler!r} x{n} cut {cut}", body[:-cut]
    # each sequence (valid and not) at every position around the block boundaries of a body of
    # 300-360 bytes of each filler, and near its end
    for seq in SEQS:
        for filler in FILLERS:
            base = text_of(filler, 300 + rng.randrange(60))
            for at in list(range(0, 70)) + list(range(len(base) - 70, len(base) + 1)):
                yield f"{seq.hex()} at {at} in {filler!r}", base[:at] + seq + base[at:]
    # every lead byte 0x80-0xFF followed by each continuation class, at a block boundary
    for lead in range(0x80, 0x100):
        for follow in (b"\x80", b"\x8f", b"\x90", b"\x9f", b"\xa0", b"\xbf", b"\x41", b"\xc3\xa9"):
            for at in (31, 32, 33, 287):
                body = b"x" * at + bytes([lead]) + follow + follow + follow + "\u00e9".encode() * 150
                yield f"{lead:02x}+{follow.hex()} at {at}", body
    # random mixed-width text, broken at one byte, and long runs (past the check's 255-block flush)
    chars = ["a", " ", "\u00e9", "\u00ff", "\u0101", "\u03b1", "\u07ff", "\u0800", "\u3042", "\uffff",
             "\U00010000", "\U0001f600", "\U0010ffff"]
    for i in range(400):
        pool = rng.sample(chars, rng.randint(1, 4))
        text = "".join(rng.choice(pool) for _ in range(rng.randint(100, 3000)))
        body = text.encode()
        yield f"random {i}", body
        j = rng.randrange(len(body))
        yield f"random {i} byte {j}", body[:j] + bytes([rng.randrange(256)]) + body[j + 1:]
    for filler in FILLERS:
        for n in (255 * 32 - 1, 255 * 32 + 5, 100_000):
            body = text_of(filler, n)
            yield f"{filler!r} x{n} long", body
            yield f"{filler!r} x{n} long, bad end", body + b"\xe3\x81"


def run_table():
    bad = []
    count = 0
    for name, body in table():
        count += 1
        why = mismatch(body)
        if why:
            bad.append(f"{name}: {why}")
    return count, bad


def test_the_path_this_build_takes():
    if PORTABLE:
        assert _mpk._utf8_path == "portable"
    elif sys.platform.startswith("linux") and os.uname().machine == "x86_64" and cpu_has_avx2() \
            and os.environ.get("MPK_PY_NO_AVX2", "0") in ("", "0"):
        assert _mpk._utf8_path == "avx2"
    else:
        assert _mpk._utf8_path in ("avx2", "portable")


def test_table_against_cpython():
    count, bad = run_table()
    assert count > 20000
    assert not bad, f"{len(bad)} of {count}: " + "; ".join(bad[:10])


def test_the_fallback_forced_by_the_environment():
    # the same table in a process where MPK_PY_NO_AVX2=1 turned the vector path off at import
    code = ("import sys; sys.path.insert(0, %r); import test_utf8_avx2 as t; from mpk import _mpk; "
            "c, bad = t.run_table(); print(_mpk._utf8_path, c, len(bad)); print(bad[:5])"
            % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, MPK_PY_NO_AVX2="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    path, count, nbad = out.stdout.split("\n")[0].split()
    assert path == "portable" and int(count) > 20000 and nbad == "0", out.stdout[-2000:]


def test_strs_in_documents_and_streams():
    values = ["\u00e9t\u00e9 " * 100, "\u6771\u4eac" * 300, "\U0001f600 x" * 200, "na\u00efve " * 64 + "x"]
    doc = {"a": values, "b": [{"t": v} for v in values]}
    assert mpk.unpackb(mpk.packb(doc)) == doc
    u = mpk.Unpacker()
    data = mpk.packb(doc) * 3
    for i in range(0, len(data), 97):
        u.feed(data[i:i + 97])
    assert list(u) == [doc] * 3
