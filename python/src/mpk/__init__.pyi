from typing import IO, Any, Callable, Generic, Iterator, Literal, Optional, Sequence, Tuple, TypeVar, Union, overload

from .exceptions import (
    BufferFull as BufferFull,
    DecodeError as DecodeError,
    ExtraData as ExtraData,
    FormatError as FormatError,
    InvalidTimestampError as InvalidTimestampError,
    InvalidUTF8Error as InvalidUTF8Error,
    LengthLimitError as LengthLimitError,
    OutOfData as OutOfData,
    PackException as PackException,
    PackOverflowError as PackOverflowError,
    PackValueError as PackValueError,
    StackError as StackError,
    TruncatedError as TruncatedError,
    UnpackException as UnpackException,
    UnpackValueError as UnpackValueError,
)
from .ext import ExtType as ExtType, Timestamp as Timestamp

version: Tuple[int, int, int]
__version__: str
core_version: str

# any buffer-protocol object is accepted at run time
_Buffer = Union[bytes, bytearray, memoryview]
# what Packer's write methods return: bytes with autoreset (the default), None without
_R = TypeVar("_R", bytes, None, Optional[bytes])

class Packer(Generic[_R]):
    @overload
    def __init__(
        self: "Packer[bytes]",
        *,
        default: Optional[Callable[[Any], Any]] = ...,
        use_single_float: bool = ...,
        autoreset: Literal[True] = ...,
        use_bin_type: bool = ...,
        strict_types: bool = ...,
        datetime: bool = ...,
        unicode_errors: Optional[str] = ...,
        buf_size: Optional[int] = ...,
        sort_keys: bool = ...,
        dataclass: bool = ...,
        enum: bool = ...,
        uuid: bool = ...,
        date: bool = ...,
        naive_utc: bool = ...,
    ) -> None: ...
    @overload
    def __init__(
        self: "Packer[None]",
        *,
        default: Optional[Callable[[Any], Any]] = ...,
        use_single_float: bool = ...,
        autoreset: Literal[False],
        use_bin_type: bool = ...,
        strict_types: bool = ...,
        datetime: bool = ...,
        unicode_errors: Optional[str] = ...,
        buf_size: Optional[int] = ...,
        sort_keys: bool = ...,
        dataclass: bool = ...,
        enum: bool = ...,
        uuid: bool = ...,
        date: bool = ...,
        naive_utc: bool = ...,
    ) -> None: ...
    @overload
    def __init__(
        self: "Packer[Optional[bytes]]",
        *,
        default: Optional[Callable[[Any], Any]] = ...,
        use_single_float: bool = ...,
        autoreset: bool,
        use_bin_type: bool = ...,
        strict_types: bool = ...,
        datetime: bool = ...,
        unicode_errors: Optional[str] = ...,
        buf_size: Optional[int] = ...,
        sort_keys: bool = ...,
        dataclass: bool = ...,
        enum: bool = ...,
        uuid: bool = ...,
        date: bool = ...,
        naive_utc: bool = ...,
    ) -> None: ...
    def pack(self, obj: Any) -> _R: ...
    def pack_array_header(self, n: int) -> _R: ...
    def pack_map_header(self, n: int) -> _R: ...
    def pack_map_pairs(self, pairs: Sequence[Tuple[Any, Any]]) -> _R: ...
    def pack_ext_type(self, typecode: int, data: bytes) -> _R: ...
    def bytes(self) -> bytes: ...
    def reset(self) -> None: ...
    def getbuffer(self) -> memoryview: ...

class Unpacker:
    def __init__(
        self,
        file_like: Optional[IO[bytes]] = ...,
        *,
        read_size: int = ...,
        use_list: bool = ...,
        raw: bool = ...,
        timestamp: int = ...,
        strict_map_key: bool = ...,
        object_hook: Optional[Callable[[dict], Any]] = ...,
        object_pairs_hook: Optional[Callable[[list], Any]] = ...,
        list_hook: Optional[Callable[[list], Any]] = ...,
        unicode_errors: Optional[str] = ...,
        max_buffer_size: int = ...,
        ext_hook: Callable[[int, bytes], Any] = ...,
        max_str_len: int = ...,
        max_bin_len: int = ...,
        max_array_len: int = ...,
        max_map_len: int = ...,
        max_ext_len: int = ...,
        max_depth: int = ...,
    ) -> None: ...
    def feed(self, next_bytes: _Buffer) -> None: ...
    def unpack(self) -> Any: ...
    def skip(self) -> None: ...
    def read_array_header(self) -> int: ...
    def read_map_header(self) -> int: ...
    def read_bytes(self, n: int) -> bytes: ...
    def tell(self) -> int: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __next__(self) -> Any: ...

def packb(
    o: Any,
    *,
    default: Optional[Callable[[Any], Any]] = ...,
    use_single_float: bool = ...,
    autoreset: bool = ...,
    use_bin_type: bool = ...,
    strict_types: bool = ...,
    datetime: bool = ...,
    unicode_errors: Optional[str] = ...,
    buf_size: Optional[int] = ...,
    sort_keys: bool = ...,
    dataclass: bool = ...,
    enum: bool = ...,
    uuid: bool = ...,
    date: bool = ...,
    naive_utc: bool = ...,
) -> bytes: ...
def unpackb(
    packed: _Buffer,
    *,
    object_hook: Optional[Callable[[dict], Any]] = ...,
    list_hook: Optional[Callable[[list], Any]] = ...,
    use_list: bool = ...,
    raw: bool = ...,
    timestamp: int = ...,
    strict_map_key: bool = ...,
    unicode_errors: Optional[str] = ...,
    object_pairs_hook: Optional[Callable[[list], Any]] = ...,
    ext_hook: Callable[[int, bytes], Any] = ...,
    max_str_len: int = ...,
    max_bin_len: int = ...,
    max_array_len: int = ...,
    max_map_len: int = ...,
    max_ext_len: int = ...,
    max_depth: int = ...,
) -> Any: ...
def pack(
    o: Any,
    stream: IO[bytes],
    *,
    default: Optional[Callable[[Any], Any]] = ...,
    use_single_float: bool = ...,
    use_bin_type: bool = ...,
    strict_types: bool = ...,
    datetime: bool = ...,
    unicode_errors: Optional[str] = ...,
    buf_size: Optional[int] = ...,
    sort_keys: bool = ...,
    dataclass: bool = ...,
    enum: bool = ...,
    uuid: bool = ...,
    date: bool = ...,
    naive_utc: bool = ...,
) -> None: ...
def unpack(
    stream: IO[bytes],
    *,
    object_hook: Optional[Callable[[dict], Any]] = ...,
    list_hook: Optional[Callable[[list], Any]] = ...,
    use_list: bool = ...,
    raw: bool = ...,
    timestamp: int = ...,
    strict_map_key: bool = ...,
    unicode_errors: Optional[str] = ...,
    object_pairs_hook: Optional[Callable[[list], Any]] = ...,
    ext_hook: Callable[[int, bytes], Any] = ...,
    max_str_len: int = ...,
    max_bin_len: int = ...,
    max_array_len: int = ...,
    max_map_len: int = ...,
    max_ext_len: int = ...,
    max_depth: int = ...,
) -> Any: ...

dumps = packb
loads = unpackb
dump = pack
load = unpack
