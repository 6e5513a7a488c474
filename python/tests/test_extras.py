"""mpk's opt-in conversions beyond msgpack-python, and sorted keys."""
import dataclasses
import datetime
import enum
import uuid

import pytest

import mpk


@dataclasses.dataclass
class Point:
    x: int
    y: float
    tags: list


class Color(enum.Enum):
    RED = "red"
    GREEN = 2


def test_dataclass():
    assert mpk.unpackb(mpk.packb(Point(1, 2.5, ["a"]), dataclass=True)) == {"x": 1, "y": 2.5, "tags": ["a"]}
    assert mpk.packb([Point(1, 2.0, [])], dataclass=True)[:1] == b"\x91"
    with pytest.raises(TypeError):
        mpk.packb(Point(1, 2.0, []))
    with pytest.raises(TypeError):
        mpk.packb(Point, dataclass=True)  # the class itself is not an instance


def test_enum():
    assert mpk.packb([Color.RED, Color.GREEN], enum=True) == mpk.packb(["red", 2])
    with pytest.raises(TypeError):
        mpk.packb(Color.RED)


def test_uuid():
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert mpk.unpackb(mpk.packb(u, uuid=True)) == str(u)


def test_date_and_naive_utc():
    assert mpk.unpackb(mpk.packb(datetime.date(2026, 11, 22), date=True)) == "2026-11-22"
    naive = datetime.datetime(2026, 11, 22, 1, 2, 3, 456000)
    packed = mpk.packb(naive, datetime=True, naive_utc=True)
    assert mpk.unpackb(packed, timestamp=3) == naive.replace(tzinfo=datetime.timezone.utc)
    with pytest.raises(ValueError):
        mpk.packb(naive, datetime=True)


def test_tuple_is_an_array_without_a_hook():
    assert mpk.packb((1, (2, 3))) == mpk.packb([1, [2, 3]])


def test_extras_before_default():
    seen = []
    out = mpk.packb([Color.RED, object()], enum=True, default=lambda o: seen.append(o) or "x")
    assert mpk.unpackb(out) == ["red", "x"] and len(seen) == 1


def test_sort_keys():
    a = {"b": 1, "a": {"z": 1, "y": 2}}
    b = {"a": {"y": 2, "z": 1}, "b": 1}
    assert mpk.packb(a, sort_keys=True) == mpk.packb(b, sort_keys=True) == b"\x82\xa1a\x82\xa1y\x02\xa1z\x01\xa1b\x01"
    assert mpk.packb(a) != mpk.packb(b)
    with pytest.raises(TypeError):
        mpk.packb({1: 1, "a": 2}, sort_keys=True)
    assert mpk.Packer(sort_keys=True).pack({2: 0, 1: 0}) == b"\x82\x01\x00\x02\x00"


def test_packer_accepts_extras():
    p = mpk.Packer(dataclass=True, enum=True, uuid=True, date=True)
    assert mpk.unpackb(p.pack({"p": Point(0, 0.0, []), "c": Color.GREEN})) == {"p": {"x": 0, "y": 0.0, "tags": []}, "c": 2}
