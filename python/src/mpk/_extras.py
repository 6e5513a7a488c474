"""The opt-in conversions of Packer beyond msgpack-python (flags must match packer.c).

Called from C only for objects the encoder does not handle natively, so it stays off the hot path.
Returns the object to pack instead, or NotImplemented to fall through to ``default``.
"""

import dataclasses
import datetime
import enum
import uuid

DATACLASS, ENUM, UUID, DATE, NAIVE_UTC = 1, 2, 4, 8, 16

_UTC = datetime.timezone.utc


def convert(obj, flags):
    if flags & ENUM and isinstance(obj, enum.Enum):
        return obj.value
    if flags & UUID and isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, datetime.datetime):
        if flags & NAIVE_UTC and obj.tzinfo is None:
            return obj.replace(tzinfo=_UTC)
        return NotImplemented
    if flags & DATE and isinstance(obj, datetime.date):
        return obj.isoformat()
    if flags & DATACLASS and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        # fields in declaration order, shallow: nested values go through the packer again
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return NotImplemented
