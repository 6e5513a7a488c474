"""mpk: fast MessagePack for Python, a drop-in for msgpack-python (``import mpk as msgpack``).

The codec is C (``mpk._mpk``, built on mpk's C core); this module only gathers the public names.
"""

from . import exceptions as _exceptions
from ._mpk import Packer, Unpacker, packb, unpackb, core_version
from .exceptions import *  # noqa: F403
from .ext import ExtType, Timestamp

version = (0, 1, 0)
__version__ = "0.1.0"

__all__ = [
    "Packer",
    "Unpacker",
    "ExtType",
    "Timestamp",
    "pack",
    "packb",
    "unpack",
    "unpackb",
    "dump",
    "dumps",
    "load",
    "loads",
    *_exceptions.__all__,
]


def pack(o, stream, **kwargs):
    """Pack ``o`` and write the bytes to ``stream`` (see :class:`Packer` for the options)."""
    stream.write(packb(o, **kwargs))


def unpack(stream, **kwargs):
    """Unpack one value from all of ``stream.read()``; ExtraData if bytes remain after it."""
    return unpackb(stream.read(), **kwargs)


# the names simplejson, marshal and pickle use
load = unpack
loads = unpackb
dump = pack
dumps = packb
