"""ExtType and Timestamp: the two value classes MessagePack adds to Python's types."""

import datetime as _datetime
from collections import namedtuple

__all__ = ["ExtType", "Timestamp"]

_EPOCH = _datetime.datetime(1970, 1, 1, tzinfo=_datetime.timezone.utc)
_NS = 1_000_000_000


class ExtType(namedtuple("ExtType", "code data")):
    """An ext value: ``code`` (an int) and ``data`` (bytes).

    msgpack-python allows codes 0..127 only; mpk allows the format's whole range -128..127, because
    the negative codes are data too (-1 is the timestamp, which ``Timestamp`` represents).
    """

    __slots__ = ()

    def __new__(cls, code, data):
        if not isinstance(code, int):
            raise TypeError("code must be int")
        if not isinstance(data, bytes):
            raise TypeError("data must be bytes")
        if not -128 <= code <= 127:
            raise ValueError("code must be -128~127")
        return super().__new__(cls, code, data)


class Timestamp:
    """A MessagePack timestamp (ext -1): whole ``seconds`` since the UNIX epoch (may be negative)
    and ``nanoseconds`` 0..999999999 added to them. Immutable, hashable, equal by value."""

    __slots__ = ("seconds", "nanoseconds")

    def __init__(self, seconds, nanoseconds=0):
        if not isinstance(seconds, int):
            raise TypeError("seconds must be an integer")
        if not isinstance(nanoseconds, int):
            raise TypeError("nanoseconds must be an integer")
        if not 0 <= nanoseconds < _NS:
            raise ValueError("nanoseconds must be a non-negative integer less than 999999999.")
        object.__setattr__(self, "seconds", seconds)
        object.__setattr__(self, "nanoseconds", nanoseconds)

    def __setattr__(self, name, value):
        raise AttributeError("Timestamp is immutable")

    def __repr__(self):
        return f"Timestamp(seconds={self.seconds}, nanoseconds={self.nanoseconds})"

    def __eq__(self, other):
        if type(other) is self.__class__:
            return self.seconds == other.seconds and self.nanoseconds == other.nanoseconds
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.seconds, self.nanoseconds))

    def __reduce__(self):
        return (Timestamp, (self.seconds, self.nanoseconds))

    @staticmethod
    def from_bytes(b):
        """The Timestamp whose ext -1 payload is ``b`` (4, 8 or 12 bytes)."""
        n = len(b)
        if n == 4:
            return Timestamp(int.from_bytes(b, "big"), 0)
        if n == 8:
            v = int.from_bytes(b, "big")
            return Timestamp(v & 0x3FFFFFFFF, v >> 34)
        if n == 12:
            return Timestamp(int.from_bytes(b[4:], "big", signed=True), int.from_bytes(b[:4], "big"))
        raise ValueError("Timestamp type can only be created from 32, 64, or 96-bit byte objects")

    def to_bytes(self):
        """The shortest ext -1 payload for this timestamp (timestamp 32, 64 or 96)."""
        sec, nsec = self.seconds, self.nanoseconds
        if sec >> 34 == 0:
            if nsec == 0 and sec >> 32 == 0:
                return sec.to_bytes(4, "big")
            return (nsec << 34 | sec).to_bytes(8, "big")
        return nsec.to_bytes(4, "big") + sec.to_bytes(8, "big", signed=True)

    @staticmethod
    def from_unix(unix_sec):
        """The Timestamp of a POSIX time in seconds (int or float)."""
        seconds = int(unix_sec // 1)
        nanoseconds = int((unix_sec % 1) * _NS)
        return Timestamp(seconds, nanoseconds)

    def to_unix(self):
        """POSIX time in seconds, as a float."""
        return self.seconds + self.nanoseconds / 1e9

    @staticmethod
    def from_unix_nano(unix_ns):
        """The Timestamp of a POSIX time in nanoseconds."""
        return Timestamp(*divmod(unix_ns, _NS))

    def to_unix_nano(self):
        """POSIX time in nanoseconds, as an int."""
        return self.seconds * _NS + self.nanoseconds

    def to_datetime(self):
        """A UTC ``datetime.datetime`` (microsecond precision: nanoseconds are truncated)."""
        return _EPOCH + _datetime.timedelta(seconds=self.seconds, microseconds=self.nanoseconds // 1000)

    @staticmethod
    def from_datetime(dt):
        """The Timestamp of a datetime; a naive datetime is taken as local time, as
        ``datetime.timestamp()`` does."""
        if dt.tzinfo is None:
            dt = dt.astimezone()
        delta = dt - _EPOCH
        return Timestamp(delta.days * 86400 + delta.seconds, delta.microseconds * 1000)
