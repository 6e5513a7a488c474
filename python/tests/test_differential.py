"""Differential tests against msgpack-python: the same bytes from packb, the same values from
unpackb, with matching options, on random values."""
import datetime

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mpk
from strategies import ints, scalars, values


def outcome(fn, *args, **kwargs):
    """The result, or the class of the exception raised (to compare failures too)."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 — any failure must match the peer's
        return type(e).__name__


PACK_OPTIONS = [{}, {"use_bin_type": False}, {"use_single_float": True}, {"strict_types": False}]
UNPACK_OPTIONS = [{}, {"raw": True}, {"use_list": False}, {"strict_map_key": False}]


class TestPackb:
    @given(values)
    def test_same_bytes(self, value):
        assert mpk.packb(value) == msgpack.packb(value)

    @pytest.mark.parametrize("options", PACK_OPTIONS)
    @given(value=values)
    def test_same_bytes_with_options(self, options, value):
        assert outcome(mpk.packb, value, **options) == outcome(msgpack.packb, value, **options)

    @given(ints)
    def test_ints(self, n):
        assert mpk.packb(n) == msgpack.packb(n)

    @given(st.integers(0, 127), st.binary(max_size=70000).filter(lambda b: len(b) != 3) | st.binary(max_size=40))
    def test_ext(self, code, data):
        assert mpk.packb(mpk.ExtType(code, data)) == msgpack.packb(msgpack.ExtType(code, data))

    @given(st.integers(-2**63, 2**63 - 1), st.integers(0, 999_999_999))
    def test_timestamp(self, sec, nsec):
        assert mpk.packb(mpk.Timestamp(sec, nsec)) == msgpack.packb(msgpack.Timestamp(sec, nsec))

    @given(st.datetimes(timezones=st.just(datetime.timezone.utc)))
    def test_aware_datetime(self, dt):
        assert mpk.packb(dt, datetime=True) == msgpack.packb(dt, datetime=True)

    @given(values)
    def test_default_hook(self, value):
        wrapped = [value, object()]
        assert mpk.packb(wrapped, default=repr)[:0] == b""  # object() packs through default
        assert mpk.packb([value, 1j], default=str) == msgpack.packb([value, 1j], default=str)


class TestUnpackb:
    @given(values)
    def test_same_values(self, value):
        data = msgpack.packb(value)
        assert repr(mpk.unpackb(data)) == repr(msgpack.unpackb(data))

    @pytest.mark.parametrize("options", UNPACK_OPTIONS)
    @given(value=values)
    def test_same_values_with_options(self, options, value):
        data = msgpack.packb(value)
        assert repr(mpk.unpackb(data, **options)) == repr(msgpack.unpackb(data, **options))

    @given(st.dictionaries(ints, scalars, max_size=10))
    def test_int_keys(self, value):
        data = msgpack.packb(value)
        assert mpk.unpackb(data, strict_map_key=False) == msgpack.unpackb(data, strict_map_key=False)
        if value:
            with pytest.raises(ValueError, match="is not allowed for map key"):
                mpk.unpackb(data)

    @pytest.mark.parametrize("mode", [0, 1, 2, 3])
    @given(sec=st.integers(0, 2**34), nsec=st.integers(0, 999_999_999))
    def test_timestamp_modes(self, mode, sec, nsec):
        data = msgpack.packb(msgpack.Timestamp(sec, nsec))
        assert repr(mpk.unpackb(data, timestamp=mode)) == repr(msgpack.unpackb(data, timestamp=mode))

    @given(st.integers(0, 127), st.binary(max_size=300))
    def test_ext_hook(self, code, data):
        packed = msgpack.packb(msgpack.ExtType(code, data))
        hook = lambda c, d: (c, d)  # noqa: E731
        assert mpk.unpackb(packed, ext_hook=hook) == msgpack.unpackb(packed, ext_hook=hook)
        assert repr(mpk.unpackb(packed)) == repr(msgpack.unpackb(packed))

    @given(values)
    def test_hooks(self, value):
        data = msgpack.packb(value)
        for options in ({"object_hook": lambda d: sorted(d.items(), key=repr)}, {"object_pairs_hook": list},
                        {"list_hook": tuple}):
            assert repr(mpk.unpackb(data, **options)) == repr(msgpack.unpackb(data, **options))

    @given(st.binary(max_size=12))
    def test_garbage_fails_alike(self, data):
        """On any input, both succeed with the same value or both raise a ValueError."""
        try:
            want = repr(msgpack.unpackb(data, strict_map_key=False, use_list=False))
        except (ValueError, TypeError) as e:
            want = type(e)
        try:
            got = repr(mpk.unpackb(data, strict_map_key=False, use_list=False))
        except (ValueError, TypeError) as e:
            got = type(e)
        if isinstance(want, str) or isinstance(got, str):
            assert got == want
        else:
            assert issubclass(got, ValueError) == issubclass(want, ValueError)


class TestStreams:
    @given(st.lists(values, max_size=8), st.integers(1, 50))
    def test_unpacker_same_values(self, items, chunk):
        data = b"".join(msgpack.packb(v) for v in items)
        ours, theirs = mpk.Unpacker(), msgpack.Unpacker()
        got, want = [], []
        for i in range(0, len(data), chunk):
            ours.feed(data[i:i + chunk])
            theirs.feed(data[i:i + chunk])
            got.extend(ours)
            want.extend(theirs)
        assert repr(got) == repr(want)
        assert ours.tell() == theirs.tell() == len(data)
