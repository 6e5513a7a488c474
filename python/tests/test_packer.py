"""Packer and packb: the msgpack-python surface (options, headers, buffer) and mpk's shortest form."""
import datetime
import io
import sys

import msgpack
import pytest

import mpk


class TestPackb:
    @pytest.mark.parametrize("value, hexed", [
        (None, "c0"), (False, "c2"), (True, "c3"), (0, "00"), (127, "7f"), (128, "cc80"), (-1, "ff"),
        (-32, "e0"), (-33, "d0df"), (256, "cd0100"), (2**32, "cf0000000100000000"),
        (-2**63, "d38000000000000000"), (2**64 - 1, "cfffffffffffffffff"), (1.5, "cb3ff8000000000000"),
        ("", "a0"), ("a" * 32, "d920" + "61" * 32), (b"", "c400"), ([], "90"), ({}, "80"),
        ((1, 2), "920102"), ({"a": [1]}, "81a1619101"),
    ])
    def test_shortest_form(self, value, hexed):
        assert mpk.packb(value).hex() == hexed

    def test_aliases(self):
        assert mpk.dumps is mpk.packb and mpk.loads is mpk.unpackb
        stream = io.BytesIO()
        mpk.pack([1, 2], stream)
        mpk.dump(3, stream)
        assert stream.getvalue() == b"\x92\x01\x02\x03"
        assert mpk.unpack(io.BytesIO(b"\x92\x01\x02")) == [1, 2]
        assert mpk.load(io.BytesIO(b"\x05")) == 5

    def test_int_out_of_range(self):
        with pytest.raises(OverflowError, match="Integer value out of range"):
            mpk.packb(2**64)
        with pytest.raises(OverflowError):
            mpk.packb(-2**63 - 1)
        assert mpk.packb(2**64, default=str) == msgpack.packb(2**64, default=str)

    def test_unsupported_type(self):
        with pytest.raises(TypeError, match="can not serialize 'object' object"):
            mpk.packb(object())
        with pytest.raises(TypeError):
            mpk.packb({1, 2})

    def test_default_once(self):
        calls = []

        def default(o):
            calls.append(o)
            return o  # still unsupported: TypeError, not a loop

        with pytest.raises(TypeError):
            mpk.packb(object(), default=default)
        assert len(calls) == 1
        with pytest.raises(TypeError, match="default must be a callable"):
            mpk.packb(1, default=1)

    def test_subclasses_and_strict_types(self):
        class S(str):
            pass

        class L(list):
            pass

        class D(dict):
            pass

        assert mpk.packb(S("x")) == b"\xa1x"
        assert mpk.packb(L([1])) == b"\x91\x01"
        assert mpk.packb(D(a=1)) == b"\x81\xa1a\x01"
        with pytest.raises(TypeError):
            mpk.packb(S("x"), strict_types=True)
        with pytest.raises(TypeError):
            mpk.packb((1,), strict_types=True)
        assert mpk.packb((1,), strict_types=True, default=list) == b"\x91\x01"

    def test_bytes_like(self):
        assert mpk.packb(bytearray(b"ab")) == b"\xc4\x02ab"
        assert mpk.packb(memoryview(b"ab")) == b"\xc4\x02ab"
        assert mpk.packb(b"ab", use_bin_type=False) == b"\xa2ab"
        assert mpk.packb("a" * 40, use_bin_type=False) == msgpack.packb("a" * 40, use_bin_type=False)

    def test_unicode(self):
        with pytest.raises(UnicodeEncodeError):
            mpk.packb("\ud800")
        assert mpk.packb("\udcff", unicode_errors="surrogateescape") == b"\xa1\xff"
        assert mpk.packb("é") == b"\xa2\xc3\xa9"

    def test_single_float(self):
        assert mpk.packb(1.5, use_single_float=True) == b"\xca\x3f\xc0\x00\x00"
        with pytest.raises(OverflowError):
            mpk.packb(1e300, use_single_float=True)

    @pytest.mark.parametrize("n", [0, 1, 2, 3, 15, 16, 17, 40])
    def test_float_lists(self, n):
        # short lists of floats only take a path of their own; the bytes are msgpack-python's
        floats = [(-1.0) ** i * i / 3 for i in range(n)] + [float("nan"), float("inf"), -0.0][:max(0, n - 13)]
        assert mpk.packb(floats) == msgpack.packb(floats)
        assert mpk.packb([floats, [floats]]) == msgpack.packb([floats, [floats]])
        assert mpk.packb(floats, use_single_float=True) == msgpack.packb(floats, use_single_float=True)

        class F(float):
            pass
        mixed = floats + [F(2.5), 1, "x"]
        assert mpk.packb(mixed) == msgpack.packb(mixed)

    @pytest.mark.parametrize("value", [
        [1, 2], [-1, -2], (3, "add", [1, 2]), [0, 127, 128, -32, -33, 255, 256, -129, 65536, -32769],
        [2**59, -2**59, 2**60 - 1, 2**60, -2**60, 2**63, -2**63, 2**64 - 1], [1.5, -0.0, None, True, False],
        ["", "a" * 31, "b" * 32, "c" * 255, "d" * 256, "é"], ["x" * 250, "y" * 250, 7, 8.5],
        ["x" * 200, "y" * 200, "z" * 95, 2**40, 1.5], ["x" * 200, "y" * 200, "z" * 95, -2**40, 2**62],
        ["x" * 200, "y" * 200, "z" * 100, 1], [1] * 15, [1] * 16, (), [], [[]], [{}], [b"b"],
        [b"b", 1], 5, -5, 2**62, "word", "z" * 300, 2.5, None, False,
    ])
    def test_short_flat_values(self, value):
        # short flat lists and lone scalars take a path of their own; the bytes are msgpack-python's
        assert mpk.packb(value) == msgpack.packb(value)
        assert mpk.packb([value]) == msgpack.packb([value])
        assert type(mpk.packb(value)) is bytes
        assert mpk.unpackb(mpk.packb(value)) == msgpack.unpackb(msgpack.packb(value))

    def test_ints_of_every_width_in_lists(self):
        edges = [0, 127, 128, -32, -33, -128, -129, 255, 256, 65535, 65536, -32768, -32769, 2**31, -2**31 - 1,
                 2**32, 2**60 - 1, 2**60, -2**60, 2**62, 2**63 - 1, 2**63, 2**64 - 1, -2**63, -2**63 + 1]
        for value in (edges, edges * 3, [[x] for x in edges], [{"k": x} for x in edges]):
            assert mpk.packb(value) == msgpack.packb(value)
        for bad in (2**64, -2**63 - 1, 2**90):
            with pytest.raises(OverflowError):
                mpk.packb(edges + [bad])
            assert mpk.packb(edges + [bad], default=str) == msgpack.packb(edges + [bad], default=str)

    def test_short_results_are_ordinary_bytes(self):
        one, other = mpk.packb([1, 2]), mpk.packb([1, 2])
        assert one == other == b"\x92\x01\x02" and one is not other
        assert hash(one) == hash(b"\x92\x01\x02") and len(one) == 3 and one[3:] == b""
        assert one + b"!" == b"\x92\x01\x02!" and bytes(one) is one
        assert memoryview(one).tobytes() == one and sys.getsizeof(one) == sys.getsizeof(b"abc")
        for n in range(40):  # every length around the fixed copy of short results
            value = "s" * n
            assert mpk.packb(value) == msgpack.packb(value)
            assert mpk.packb(value)[-1:] == (b"s" if n else b"\xa0")

    @pytest.mark.parametrize("leaf", [1.5, 7, "s", None, [2.5, 3.5], [], [1, "s"], {"k": 1}, (1,), b"b"])
    @pytest.mark.parametrize("wrap", [lambda x: [[], x], lambda x: {"a": x}, lambda x: (x,)])
    def test_nesting_limit_counts_scalars(self, leaf, wrap):
        # as msgpack-python: the limit holds for every object, not only for containers
        def outcome(packb, value):
            try:
                return packb(value)
            except ValueError as e:
                return str(e).split(" at $")[0].rstrip(".")  # mpk adds where the limit was met

        deep = leaf
        for levels in range(1, 1027):
            deep = wrap(deep)
            if levels >= 1022:
                assert outcome(mpk.packb, deep) == outcome(msgpack.packb, deep), levels
        assert outcome(mpk.packb, deep) == "recursion limit exceeded"

    def test_nesting_limit(self):
        deep = []
        for _ in range(1024):
            deep = [deep]
        assert mpk.packb(deep) == msgpack.packb(deep)
        cyclic = []
        cyclic.append(cyclic)
        with pytest.raises(ValueError, match="recursion limit exceeded"):
            mpk.packb(cyclic)
        d = {}
        d["self"] = d
        with pytest.raises(ValueError):
            mpk.packb(d)

    def test_datetime(self):
        aware = datetime.datetime(2020, 1, 1, 12, 30, 15, 123456, tzinfo=datetime.timezone.utc)
        assert mpk.packb(aware, datetime=True) == msgpack.packb(aware, datetime=True)
        with pytest.raises(ValueError, match="tzinfo=None"):
            mpk.packb(datetime.datetime(2020, 1, 1), datetime=True)
        with pytest.raises(TypeError):
            mpk.packb(aware)

    def test_ext_and_timestamp(self):
        assert mpk.packb(mpk.ExtType(5, b"abcd")) == b"\xd6\x05abcd"
        assert mpk.packb(mpk.ExtType(-5, b"")) == b"\xc7\x00\xfb"
        assert mpk.packb(mpk.Timestamp(1, 0)) == b"\xd6\xff\x00\x00\x00\x01"
        assert mpk.packb(mpk.Timestamp(-1, 5)) == msgpack.packb(msgpack.Timestamp(-1, 5))
        with pytest.raises(ValueError):
            mpk.ExtType(128, b"")
        with pytest.raises(TypeError):
            mpk.ExtType(1, "str")

    # packb starts in a 4 KiB scratch buffer, then grows a bytes object of its own: outputs on both
    # sides of the switch, past several doublings, and with a large tail of the last block idle
    @pytest.mark.parametrize("size", [1, 4093, 4094, 4095, 4096, 4097, 8191, 8193, 70000, 300000, 1 << 21])
    def test_output_sizes(self, size):
        head = 1 if size == 1 else 3 if size - 3 <= 0xFFFF else 5  # positive fixint, bin 16, bin 32
        value = 1 if size == 1 else b"\x01" * (size - head)
        out = mpk.packb(value)
        assert out == msgpack.packb(value)
        assert len(out) == size
        assert mpk.unpackb(out) == value
        assert bytes(out) == out and hash(out) == hash(bytes(out))

    def test_large_output_with_little_used(self):
        # a str of 3 KiB in the scratch, then one 1 MiB body: the block is far from full at the end
        value = ["s" * 3000, b"\x02" * (1 << 20), 7]
        assert mpk.packb(value) == msgpack.packb(value)

    def test_nested_packb_from_default(self):
        # the hook's own packb finds the scratch busy; both outputs are whole, small and large
        def default(o):
            return mpk.packb(["inner", o.n, b"\x03" * o.n])

        class Box:
            def __init__(self, n):
                self.n = n

        value = [b"\x04" * 5000, Box(10), Box(20000), "tail"]
        expected = msgpack.packb(value, default=lambda o: msgpack.packb(["inner", o.n, b"\x03" * o.n]))
        assert mpk.packb(value, default=default) == expected
        assert mpk.packb([1, 2]) == b"\x92\x01\x02"  # the scratch is free again

    def test_error_after_growth_leaves_packb_usable(self):
        with pytest.raises(TypeError):
            mpk.packb([b"\x05" * 100000, object()])
        assert mpk.packb([1, 2]) == b"\x92\x01\x02"
        assert mpk.packb(b"\x06" * 9000) == msgpack.packb(b"\x06" * 9000)

    def test_repeated_large_result_is_sized_once(self):
        # packb sizes a large result's first object for the last large result: the second packb of
        # the same value writes into one object of about its size (doubling from the scratch would
        # end in a 1 MiB block for these 527 KB), and a much smaller result after it is cut down
        import tracemalloc

        value = ["s" * (i % 1024) for i in range(1024)]
        first = mpk.packb(value)
        tracemalloc.start()
        try:
            again = mpk.packb(value)
            held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert again == first == msgpack.packb(value)
        assert peak < len(again) * 5 // 4 + 4096, (peak, len(again))
        small = [b"\x07" * 20000]
        tracemalloc.start()
        try:
            out = mpk.packb(small)
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert out == msgpack.packb(small)
        assert held < 2 * len(out) + 4096, (held, len(out))
        # larger than the hint: grows past it as before
        big = value + ["t" * 1000] * 600
        assert mpk.packb(big) == msgpack.packb(big)
        assert mpk.packb(value) == first

    def test_unknown_option(self):
        with pytest.raises(TypeError):
            mpk.packb(1, foo=1)
        with pytest.raises(TypeError):
            mpk.Packer(foo=1)


class TestPacker:
    def test_autoreset(self):
        p = mpk.Packer()
        assert p.pack(1) == b"\x01"
        assert p.pack([1]) == b"\x91\x01"
        assert p.bytes() == b""

    def test_no_autoreset(self):
        p = mpk.Packer(autoreset=False)
        assert p.pack(1) is None
        assert p.pack_array_header(2) is None
        p.pack("a")
        p.pack_map_header(0)
        assert p.bytes() == b"\x01\x92\xa1a\x80"
        view = p.getbuffer()
        assert bytes(view) == p.bytes()
        with pytest.raises(BufferError):
            p.pack(2)  # the buffer cannot move while a view is alive
        view.release()
        p.pack(2)
        assert p.bytes().endswith(b"\x02")
        p.reset()
        assert p.bytes() == b""

    def test_headers(self):
        p = mpk.Packer()
        assert p.pack_array_header(16) == b"\xdc\x00\x10"
        assert p.pack_map_header(2**16) == b"\xdf\x00\x01\x00\x00"
        with pytest.raises(ValueError):
            p.pack_array_header(2**32)
        with pytest.raises(ValueError):
            p.pack_map_header(-1)

    def test_map_pairs(self):
        p = mpk.Packer()
        assert p.pack_map_pairs([(1, 2), ("a", "b")]) == msgpack.Packer().pack_map_pairs([(1, 2), ("a", "b")])
        assert p.pack_map_pairs([("k", 1), ("k", 2)]) == b"\x82\xa1k\x01\xa1k\x02"

    def test_ext_type(self):
        p = mpk.Packer()
        assert p.pack_ext_type(1, b"x") == b"\xd4\x01x"
        assert p.pack_ext_type(2, b"x" * 300) == msgpack.Packer().pack_ext_type(2, b"x" * 300)
        with pytest.raises(TypeError):
            p.pack_ext_type("1", b"x")
        with pytest.raises(TypeError):
            p.pack_ext_type(1, "x")

    def test_error_drops_only_the_failed_value(self):
        # msgpack-python empties the whole buffer when pack() fails; mpk drops the half value only
        p = mpk.Packer(autoreset=False)
        p.pack(1)
        with pytest.raises(TypeError):
            p.pack([2, object()])
        assert p.bytes() == b"\x01"

    def test_reentrant_default(self):
        """A default hook that packs again gets its own buffer; the outer result is intact."""
        inner = mpk.packb

        def default(o):
            return inner([o.real, o.imag])

        assert mpk.packb([1j, "x"], default=default) == msgpack.packb([1j, "x"], default=lambda o: msgpack.packb([o.real, o.imag]))


class TestDictWalk:
    """The encoder reads dict entries directly on CPython 3.11; these shapes must all still work."""

    def test_deleted_entries_and_reinsertion(self):
        d = {str(i): i for i in range(50)}
        for i in range(0, 50, 3):
            del d[str(i)]
        d["new"] = [1]
        assert mpk.packb(d) == msgpack.packb(d)
        assert mpk.unpackb(mpk.packb(d)) == d

    def test_split_table_instance_dict(self):
        class Obj:
            def __init__(self):
                self.a, self.b = 1, [2]

        o = Obj()
        assert mpk.packb(o.__dict__) == msgpack.packb(o.__dict__)

    def test_non_str_keys(self):
        d = {1: "a", (2, 3): "b", b"k": None, 2.5: True}
        assert mpk.packb(d) == msgpack.packb(d)

    def test_dict_changed_by_default_hook(self):
        d = {"a": 1, "b": object(), "c": 3}

        def default(o):
            d.clear()
            return 0

        with pytest.raises(RuntimeError, match="changed size"):
            mpk.packb(d, default=default)

    def test_dict_subclass_and_sorted(self):
        from collections import OrderedDict

        d = OrderedDict([("b", 1), ("a", 2)])
        assert mpk.packb(d) == msgpack.packb(d)
        assert mpk.packb(d, sort_keys=True) == mpk.packb({"a": 2, "b": 1})
