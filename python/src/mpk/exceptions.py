"""The exception classes of mpk.

The names and bases are msgpack-python's, so ``except msgpack.ExtraData`` and friends keep working
after ``import mpk as msgpack``. Every decode error mpk raises also carries ``kind`` (the spec's
spelling: ``truncated``, ``invalid_byte``, ``depth_limit``, ``length_limit``, ``invalid_timestamp``,
``invalid_utf8``, ``trailing_bytes``) and ``offset`` (the byte where it was found, counted from the
start of the input or, for ``Unpacker``, of the stream), and its message ends with "at byte N".

Where msgpack-python raises a plain ``ValueError`` (incomplete input, a length over its limit, a bad
timestamp), mpk raises a subclass of ``ValueError`` defined here, so the same ``except`` clauses
catch it.
"""

__all__ = [
    "UnpackException",
    "BufferFull",
    "OutOfData",
    "FormatError",
    "StackError",
    "UnpackValueError",
    "ExtraData",
    "PackException",
    "PackValueError",
    "PackOverflowError",
    "DecodeError",
    "TruncatedError",
    "LengthLimitError",
    "InvalidTimestampError",
    "InvalidUTF8Error",
]


class DecodeError(Exception):
    """Mixin of every mpk decode error: ``kind`` (spec spelling) and ``offset`` (byte position)."""

    kind = None
    offset = None


class UnpackException(Exception):
    """Base class for some exceptions raised while unpacking.

    As in msgpack-python, unpacking may raise other exceptions too (``ValueError`` subclasses,
    ``TypeError`` from a hook); catch ``ValueError`` or ``Exception`` to catch them all.
    """


class BufferFull(UnpackException):
    """``Unpacker.feed`` would hold more than ``max_buffer_size`` bytes."""


class OutOfData(UnpackException):
    """The stream has no complete value yet."""


class FormatError(ValueError, UnpackException, DecodeError):
    """Invalid MessagePack: the head byte 0xc1 (kind ``invalid_byte``)."""

    kind = "invalid_byte"


class StackError(ValueError, UnpackException, DecodeError):
    """Nested deeper than the depth limit (kind ``depth_limit``)."""

    kind = "depth_limit"


#: Deprecated alias kept for msgpack-python compatibility; use ValueError.
UnpackValueError = ValueError


class ExtraData(UnpackValueError, DecodeError):
    """One value decoded and bytes remain (kind ``trailing_bytes``).

    ``unpacked`` is the decoded value and ``extra`` the bytes after it.
    """

    kind = "trailing_bytes"

    def __init__(self, unpacked, extra, offset=None):
        self.unpacked = unpacked
        self.extra = extra
        self.offset = offset

    def __str__(self):
        if self.offset is None:
            return "unpack(b) received extra data."
        return f"unpack(b) received extra data at byte {self.offset}"


class TruncatedError(ValueError, OutOfData, DecodeError):
    """The input ends inside a value (kind ``truncated``); ``unpackb``'s "incomplete input"."""

    kind = "truncated"


class LengthLimitError(ValueError, DecodeError):
    """A str/bin/ext length or array/map count is over its ``max_*_len`` (kind ``length_limit``)."""

    kind = "length_limit"


class InvalidTimestampError(ValueError, DecodeError):
    """An ext of type -1 whose length is not 4, 8 or 12 or whose nanoseconds exceed 999999999."""

    kind = "invalid_timestamp"


class InvalidUTF8Error(UnicodeDecodeError, DecodeError):
    """A str that is not UTF-8, with ``unicode_errors="strict"`` (kind ``invalid_utf8``)."""

    kind = "invalid_utf8"

    def __str__(self):
        return f"{UnicodeDecodeError.__str__(self)} in str at byte {self.offset}"


#: Deprecated aliases kept for msgpack-python compatibility.
PackException = Exception
PackValueError = ValueError
PackOverflowError = OverflowError
