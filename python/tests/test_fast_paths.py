"""The objects the extension builds by hand (ext/fast_paths.h: packb's result bytes, decoded ASCII
strs and ints of up to 64 bits outside the shared -128..256, on 3.11-3.13) must be ordinary objects: a reference count of 1
held by the caller (3.12+: not the immortal count), the right value, sign, length and hash, usable
by every str/int/bytes operation, and freed when dropped. The portable build runs the same tests on
the API's objects."""
import sys
import weakref

import pytest

import mpk

INTS = [257, 1000, -129, -1000, 2**15, 2**30 - 1, 2**30, 2**31, -2**31, 2**40, -2**40,
        2**60 - 1, 2**60, 2**62, 2**63 - 1, -2**63, 2**63, 2**64 - 1]
STRS = ["a", "abc", "x" * 15, "y" * 16, "z" * 31, "w" * 200, "long " * 1000]


@pytest.mark.parametrize("value", INTS)
def test_decoded_ints(value):
    (got,) = mpk.unpackb(mpk.packb([value]))
    assert type(got) is int and got == value
    assert (got < 0) == (value < 0) and got.bit_length() == value.bit_length()
    assert hash(got) == hash(value) and str(got) == str(value) and got + 1 - 1 == value
    assert sys.getrefcount(got) == 2  # ours and getrefcount's argument


@pytest.mark.parametrize("value", STRS)
def test_decoded_ascii_strs(value):
    (got,) = mpk.unpackb(mpk.packb([value]))
    assert type(got) is str and got == value and len(got) == len(value)
    assert hash(got) == hash(value) and got.isascii() and got.encode() == value.encode()
    assert got + "é" == value + "é" and got.upper() == value.upper()
    assert sys.getrefcount(got) == 2


@pytest.mark.parametrize("value", [[1, 2], "x" * 14, [b"y" * 100], list(range(1000))])
def test_packb_results(value):
    out = mpk.packb(value)
    assert type(out) is bytes and mpk.unpackb(out) == value
    assert out == bytes(out) and hash(out) == hash(bytes(out)) and out[-1:] == bytes(out)[-1:]
    assert sys.getrefcount(out) == 2


def test_hand_built_objects_are_freed():
    # a str subclass cannot be weakly referenced either; the container holding them can: dropping
    # it must drop the hand-built items too (their count, if wrong, would keep them or crash)
    class Box(list):
        pass

    before = sys.getallocatedblocks() if hasattr(sys, "getallocatedblocks") else None
    for _ in range(3):
        values = mpk.unpackb(mpk.packb(INTS + STRS))
        box = Box(values)
        ref = weakref.ref(box)
        del values, box
        assert ref() is None
    for _ in range(2000):
        mpk.unpackb(mpk.packb(INTS + STRS))
    if before is not None:
        assert sys.getallocatedblocks() - before < 500


BOUNDARIES = sorted({s * (2**k + d) for k in (7, 8, 15, 16, 29, 30, 31, 32, 59, 60, 61, 62, 63)
                     for d in (-1, 0, 1) for s in (1, -1)} | {0, 2**64 - 1, 2**64, -2**63 - 1})


def test_ints_packed_at_every_digit_boundary():
    # ints are read from their digits (one, two or three 30-bit digits; the sign apart): each
    # boundary packs as msgpack-python packs it, and beyond 64 bits both refuse it
    msgpack = pytest.importorskip("msgpack")
    for value in BOUNDARIES:
        try:
            want = msgpack.packb(value)
        except OverflowError:
            with pytest.raises(OverflowError):
                mpk.packb(value)
            continue
        assert mpk.packb(value) == want, value
        assert mpk.packb([value, value]) == msgpack.packb([value, value]), value
        assert mpk.packb({"k": value}) == msgpack.packb({"k": value}), value
        assert mpk.unpackb(want) == value


STR_LENGTHS = [0, 1, 15, 16, 31, 32, 127, 128, 255, 256, 257, 1023, 4096, 65535, 65536, 70000]


def str_head(n, str8=True):
    # the spec's shortest str head (without str 8 for use_bin_type=False, as msgpack-python)
    if n <= 31:
        return bytes([0xA0 | n])
    if n <= 255 and str8:
        return bytes([0xD9, n])
    if n <= 0xFFFF:
        return b"\xda" + n.to_bytes(2, "big")
    return b"\xdb" + n.to_bytes(4, "big")


def test_ascii_strs_packed_at_every_head_boundary():
    # ASCII strs of any length are written in one step in lists (put_long_ascii_str) and elsewhere
    # (write_str_fast): each length takes its shortest head, in a list, a dict, alone, between other
    # items, in a writer that must grow mid-list, and under use_bin_type=False (no str 8)
    strs = ["".join(chr(97 + (i * 7 + n) % 26) for i in range(n)) for n in STR_LENGTHS]
    enc = [str_head(len(s)) + s.encode() for s in strs]
    for s, e in zip(strs, enc):
        assert mpk.packb(s) == e
        assert mpk.packb([s]) == b"\x91" + e
        assert mpk.packb({"k": s}) == b"\x81\xa1k" + e
        assert mpk.Packer().pack(s) == e
    body = b"".join(enc)
    assert mpk.packb(strs) == b"\xdc" + len(strs).to_bytes(2, "big") + body
    # interleaved with ints, containers and non-ASCII strs, which take the other paths
    mixed = [x for s in strs for x in (s, 7, [s], "é" + s)]
    want = b"".join(str_head(len(s)) + s.encode() + b"\x07\x91" + str_head(len(s)) + s.encode()
                    + str_head(len(s) + 2) + ("é" + s).encode() for s in strs)
    assert mpk.packb(mixed) == b"\xdc" + len(mixed).to_bytes(2, "big") + want
    # many long strs: the output grows many times, each time mid-list
    many = [strs[-1], strs[-4]] * 40
    out = mpk.packb(many)
    assert out == b"\xdc\x00\x50" + (enc[-1] + enc[-4]) * 40
    assert mpk.unpackb(out) == many
    p = mpk.Packer(buf_size=16)
    assert p.pack(many) == out
    old = [str_head(len(s), str8=False) + s.encode() for s in strs]
    assert mpk.packb(strs, use_bin_type=False) == b"\xdc" + len(strs).to_bytes(2, "big") + b"".join(old)


def test_decoded_ascii_strs_of_every_short_length():
    # the bodies of decoded ASCII strs up to 256 bytes are copied by mpkpy_copy_short (16-byte
    # moves, overlapping tails, byte moves below 4): every length, each byte in its place, no byte
    # of the neighbouring value taken in
    strs = ["".join(chr(33 + (i * 13 + n) % 90) for i in range(n)) for n in range(300)]
    out = mpk.unpackb(mpk.packb(strs))
    assert out == strs
    assert all(type(s) is str and len(s) == len(w) for s, w in zip(out, strs))
    # a str at the very end and the very start of the input
    for n in (1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 256):
        s = "q" * (n - 1) + "z"
        assert mpk.unpackb(mpk.packb(s)) == s


def int_ref(v):
    # the spec's shortest form of an int, written out here independently of every encoder
    if 0 <= v <= 0x7F or -32 <= v < 0:
        return (v & 0xFF).to_bytes(1, "big")
    if v >= 0:
        for head, n in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
            if v < 1 << (8 * n):
                return bytes([head]) + v.to_bytes(n, "big")
    for head, n in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
        if v >= -(1 << (8 * n - 1)):
            return bytes([head]) + v.to_bytes(n, "big", signed=True)
    raise OverflowError(v)


OTHER_REF = {None: b"\xc0", True: b"\xc3", False: b"\xc2", "x": b"\xa1x"}


def list_ref(items):
    n = len(items)
    head = bytes([0x90 | n]) if n <= 15 else b"\xdc" + n.to_bytes(2, "big") if n <= 0xFFFF else b"\xdd" + n.to_bytes(4, "big")
    return head + b"".join(OTHER_REF[x] if x is None or type(x) is not int else int_ref(x) for x in items)


IN_RANGE = [v for v in BOUNDARIES if -2**63 <= v < 2**64] + [-32, -33, 127, 128, 255, 256, 65535, 65536]


@pytest.mark.parametrize("count", [7, 8, 15, 16, 17, 31, 32, 33, 100])
def test_int_runs_of_one_form(count):
    # lists of 8 or more ints are read 16 at a time and written by a loop for their one form when
    # all 16 share it (put_int_run, put_int_same): every form, every run length around the 16
    for v in IN_RANGE:
        items = [v] * count
        assert mpk.packb(items) == list_ref(items), (v, count)


@pytest.mark.parametrize("shift", range(0, 20, 3))
def test_int_runs_of_mixed_forms(shift):
    # mixed widths go through the table of forms (put_int_form); runs are cut by other items
    # (None, bools, which are int subclasses, strs), by ints wider than 60 bits (read by another
    # path) and by the list's end, at every offset against the groups of 16
    mixed = IN_RANGE[shift:] + IN_RANGE[:shift]
    assert mpk.packb(mixed) == list_ref(mixed)
    for other in (None, True, False, "x"):
        for at in (0, 7, 8, 15, 16, 17, 40):
            items = list(mixed)
            items.insert(at, other)
            assert mpk.packb(items) == list_ref(items), (other, at)
    assert mpk.packb(mixed[::-1]) == list_ref(mixed[::-1])


def test_int_runs_across_output_growth():
    # a long list crosses packb's scratch and the output's growth, and a Packer's buffer, in the
    # middle of a group of 16
    import random
    rng = random.Random(9)
    for items in ([rng.choice(IN_RANGE) for _ in range(50000)], list(range(-70000, 70000, 3)),
                  [rng.randint(-2**31, 2**31) for _ in range(20000)]):
        want = list_ref(items)
        assert mpk.packb(items) == want
        assert mpk.Packer().pack(items) == want
        assert mpk.unpackb(want) == items


def test_int_run_with_an_int_beyond_64_bits():
    # an int that has no MessagePack form, in the middle of a run, still raises
    items = list(range(20)) + [2**64] + list(range(20))
    with pytest.raises(OverflowError):
        mpk.packb(items)


def float_ref(x, single=False):
    import struct
    return b"\xca" + struct.pack(">f", x) if single else b"\xcb" + struct.pack(">d", x)


FLOATS = [0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, float("inf"), float("-inf"), 3.141592653589793, 5e-324]


@pytest.mark.parametrize("count", [7, 8, 9, 16, 17, 1000])
def test_float_runs(count):
    # lists of 8 or more that start with a float or an int write runs of floats without the
    # per-item dispatch (put_float_run): the same bytes, runs cut by other items at every place,
    # across the output's growth, and not under use_single_float (float 32, by the general path)
    import math
    floats = [FLOATS[i % len(FLOATS)] for i in range(count)]
    head = bytes([0x90 | count]) if count <= 15 else b"\xdc" + count.to_bytes(2, "big")
    assert mpk.packb(floats) == head + b"".join(float_ref(x) for x in floats)
    assert mpk.Packer().pack(floats) == head + b"".join(float_ref(x) for x in floats)
    small = [x if abs(x) < 1e30 or math.isinf(x) else 0.5 for x in floats]  # float 32 has no 1e300
    assert mpk.packb(small, use_single_float=True) == head + b"".join(float_ref(x, True) for x in small)
    for other in (None, 7, -1, 2**40, "x", True):
        for at in (0, 1, count // 2, count - 1):
            items = list(floats)
            items[at] = other
            got = mpk.unpackb(mpk.packb(items))
            assert len(got) == count and got[at] == other and type(got[at]) is type(other)
            assert all(g == x or (math.isnan(g) and math.isnan(x)) for j, (g, x) in enumerate(zip(got, items))
                       if j != at)
            assert mpk.packb(items) == __import__("msgpack").packb(items)
    nan = mpk.unpackb(mpk.packb([float("nan")] * count))
    assert all(math.isnan(x) for x in nan)


# ---- session 9: decoded floats built by hand, runs of float 64s read without the dispatch, lists
# made untracked (ext/fast_paths.h mpkpy_float / mpkpy_list_unfilled, ext/decoder.c
# decode_float_run). The portable build runs the same tests on PyFloat_FromDouble, PyList_New and
# the per-element path.

NAN_BITS = [0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123, 0x7FF4000000000000]


def f64(bits):
    return b"\xcb" + bits.to_bytes(8, "big")


@pytest.mark.parametrize("value", FLOATS)
def test_decoded_floats(value):
    import struct
    for data in (float_ref(value), b"\x91" + float_ref(value), b"\x92" + float_ref(value) * 2):
        got = mpk.unpackb(data)
        got = got if type(got) is float else got[0]
        assert type(got) is float and struct.pack(">d", got) == struct.pack(">d", value)
        assert hash(got) == hash(value) and repr(got) == repr(value) and got * 1.0 == value
        assert sys.getrefcount(got) == 2


def test_decoded_floats_are_freed():
    before = sys.getallocatedblocks()
    data = mpk.packb([[x, -x] for x in range(1, 2001)] + [float(i) for i in range(3000)])
    for _ in range(300):
        mpk.unpackb(data)
    assert sys.getallocatedblocks() - before < 500


def test_nan_payloads_kept_in_runs():
    import struct
    for n in (1, 2, 5):
        data = bytes([0x90 | n]) + b"".join(f64(NAN_BITS[i % 4]) for i in range(n))
        got = mpk.unpackb(data)
        assert [struct.unpack(">Q", struct.pack(">d", g))[0] for g in got] == [NAN_BITS[i % 4] for i in range(n)]


PAD = mpk.packb("p" * 300)  # before a value, makes the input large (over 256 bytes)


def framed(data, large):
    # the value alone (a small input: no float runs, lists from PyList_New), or after PAD in a
    # two-item array (a large input: float runs and fresh lists); returns (input, prefix length)
    return (b"\x92" + PAD + data, 1 + len(PAD)) if large else (data, 0)


def decoded(data, large, **kw):
    got = mpk.unpackb(framed(data, large)[0], **kw)
    if large:
        assert got[0] == "p" * 300
        return got[1]
    return got


def as_tuples(x):
    return tuple(as_tuples(y) for y in x) if type(x) is list else x


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 15, 16, 17, 100])
def test_float_runs_decoded(count, large):
    # a run of float 64s at the start of an array is read without the per-element path; whatever
    # follows it (another scalar, a float 32, a container, a str) is read the usual way, and the
    # owed counts of the open containers stay right (a map and an array after the run)
    import struct
    # every float distinct (and compared by its bits, so that -0.0 is not 0.0)
    floats = [FLOATS[i] if i < len(FLOATS) else (i + 0.25) * (-1) ** i for i in range(count)]
    run = b"".join(float_ref(x) for x in floats)
    tails = [(b"", []), (b"\xc0", [None]), (b"\x07", [7]), (float_ref(0.5, True), [0.5]),
             (b"\x92\xcb" + struct.pack(">d", 1.25) + b"\x01", [[1.25, 1]]),
             (b"\x81\xa1k\xcb" + struct.pack(">d", 2.5), [{"k": 2.5}]),
             (b"\xa2ab" + float_ref(3.5), ["ab", 3.5])]
    for tail, want in tails:
        n = count + len(want)
        head = bytes([0x90 | n]) if n <= 15 else b"\xdc" + n.to_bytes(2, "big")
        data = head + run + tail
        got = decoded(data, large)
        assert got == floats + want and all(type(g) is type(w) for g, w in zip(got, floats + want))
        assert [struct.pack(">d", g) for g in got[:count]] == [struct.pack(">d", x) for x in floats]
        # the same array nested, between other values: the outer one's count must still be right
        assert decoded(b"\x93\x01" + data + b"\xc3", large) == [1, floats + want, True]
        assert decoded(data, large, use_list=False) == as_tuples(floats + want)


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("count", [1, 2, 3, 9, 40])
def test_float_runs_truncated_at_every_byte(count, large):
    # an array of float 64s cut at every byte: the error (kind and offset) is the one the
    # per-element path gives, whichever float is cut: the array's head while its count exceeds the
    # bytes left, then the cut float's head
    head = bytes([0x90 | count]) if count <= 15 else b"\xdc" + count.to_bytes(2, "big")
    body = b"".join(float_ref(float(i) + 0.5) for i in range(count))
    for at in range(len(body)):  # bytes of the body present
        data, prefix = framed(head + body[:at], large)
        with pytest.raises(mpk.DecodeError) as e:
            mpk.unpackb(data)
        assert e.value.kind == "truncated"
        want = 0 if at < count else len(head) + (at // 9) * 9
        assert e.value.offset == prefix + want, (count, at, e.value)


@pytest.mark.parametrize("large", [False, True])
def test_decoded_lists_are_tracked_and_usable(large):
    import gc
    data = mpk.packb([[1.5, 2.5], [], [1, "x"], [[0.5] * 20] * 3])
    got = decoded(data, large)
    assert gc.is_tracked(got) and all(gc.is_tracked(x) for x in got) and gc.is_tracked(got[3][0])
    for x in got:
        assert sys.getrefcount(x) == 3  # the outer list's, the loop's, getrefcount's argument
        x.append(x)  # a cycle through a decoded list is collected
    del x
    import weakref

    class Box(list):
        pass

    box = Box(got)
    got.append(box)
    box.append(got)
    ref = weakref.ref(box)
    del box, got
    gc.collect()
    assert ref() is None


# ---- session 10: dict entries written at the walk's local position (ext/packer.c put_small_entry,
# put_small_list). The portable build runs the same tests on the general path (pack_scalar /
# pack_obj for every entry).

ENTRY_KEYS = ["", "a", "areaId", "k" * 15, "k" * 16, "k" * 30, "k" * 31, "k" * 32, "k" * 255, "k" * 256,
              "clé", 7, -1, 2**40, None, True, 1.5, (1, 2)]
ENTRY_VALUES = [0, -32, 127, 128, -33, 2**31, -2**31, 2**60, 2**63, -2**63, None, True, False, 0.5,
                "", "v", "w" * 31, "w" * 32, "w" * 255, "w" * 256, "é", b"bin", [], [1], [1, "x", None, 2.5],
                list(range(15)), list(range(16)), [2**63], ["é"], [[]], [{}], [1, {"a": 1}], {}, {"b": []},
                ["w" * 200, "w" * 200, "w" * 200]]


def test_dict_entries_of_every_kind():
    # every key kind with every value kind: the bytes msgpack-python writes, alone, as the second
    # entry, and after a long str that leaves the entry little room in packb's scratch
    msgpack = pytest.importorskip("msgpack")
    for k in ENTRY_KEYS:
        for v in ENTRY_VALUES:
            for d in ({k: v}, {"first": 1, k: v}, {"z" * 4070: 0, k: v}):
                assert mpk.packb(d) == msgpack.packb(d), (k, v)
                assert mpk.Packer().pack(d) == msgpack.packb(d), (k, v)
    # options that change how scalars are written take the general path
    d = {"a": 1.5, "b": [2.5, "s"], "é": "é"}
    assert mpk.packb(d, use_single_float=True) == msgpack.packb(d, use_single_float=True)
    assert mpk.packb(d, use_bin_type=False) == msgpack.packb(d, use_bin_type=False)


def test_dict_entries_across_output_growth():
    # many small dicts (citm_catalog's shape) whose entries meet the end of packb's scratch, the
    # output's growth and a Packer's buffer at every offset: shifted by a str of every length first
    msgpack = pytest.importorskip("msgpack")
    records = [{"areaId": 205705990 + i, "blockIds": [] if i % 3 else [i, -i, "x" * (i % 40)],
                "name": None if i % 2 else "n" * (i % 33), "price": i * 0.25, "ok": i % 5 == 0}
               for i in range(3000)]
    # int keys and values leave an entry 9 bytes or less before the end (the ASan build checks
    # that nothing is written past it)
    by_id = {2**40 + i: -2**40 - i for i in range(0, 3000, 7)}
    for shift in range(0, 40):
        value = ["s" * shift, records, by_id, [{i: [i] * (i % 16)} for i in range(2**35, 2**35 + 900)]]
        want = msgpack.packb(value)
        assert mpk.packb(value) == want, shift
        assert mpk.Packer(buf_size=64).pack(value) == want, shift
    assert mpk.unpackb(mpk.packb(records)) == records


def test_dict_entry_with_a_value_without_a_form():
    # a list value with an int beyond 64 bits or an unknown object: nothing half-written, the
    # general path raises with the path, and a default hook sees the object
    with pytest.raises(OverflowError):
        mpk.packb({"a": 1, "b": [1, 2**64]})
    with pytest.raises(TypeError) as e:
        mpk.packb({"a": 1, "b": [1, object()]})
    assert "$['b'][1]" in str(e.value)
    assert mpk.unpackb(mpk.packb({"a": [1, object()]}, default=lambda o: "obj")) == {"a": [1, "obj"]}


def test_dict_keys_from_the_key_table():
    # short str keys met again are written from a table of their encoded bytes (ext/packer.c
    # put_key): every fixstr length, a key that took a slot and is then dropped by the caller (its
    # address reused by other strs of the same size must not bring its bytes back), and slots
    # taken over by other keys
    msgpack = pytest.importorskip("msgpack")
    import gc
    for n in range(0, 34):
        key = "".join(chr(97 + (i * 5 + n) % 26) for i in range(n))
        for _ in range(3):  # a miss, a second miss (the key takes its slot), hits
            for d in ({key: 1}, {key: [1, "x"], "b": None}, {"a": 2, key: -1}):
                assert mpk.packb(d) == msgpack.packb(d), n
    for round_ in range(50):
        keys = ["".join(chr(97 + (i + round_ + j) % 26) for i in range(6)) + str(j) for j in range(200)]
        dicts = [{k: j} for j, k in enumerate(keys)]
        for _ in range(2):
            assert mpk.packb(dicts) == msgpack.packb(dicts), round_
        del keys, dicts
        gc.collect()
    # a key held by the table is a reference: it lives on after the caller drops it, until another
    # key takes its slot; the table never holds more than a few hundred
    import weakref
    key = "".join(["held", "key"])
    before = sys.getrefcount(key)
    for _ in range(3):
        mpk.packb({key: 1})
    assert sys.getrefcount(key) - before in (0, 1)
    others = ["k%05d" % j for j in range(20000)]  # alive together: 20,000 addresses
    for k in others:
        mpk.packb({k: 1})
        mpk.packb({k: 1})
    assert sys.getrefcount(key) == before
