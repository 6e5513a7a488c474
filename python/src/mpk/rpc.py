"""MessagePack-RPC on asyncio (and a small blocking client), built on mpk's Packer and Unpacker.

Request ``[0, msgid, method, params]``, response ``[1, msgid, error, result]``, notification
``[2, method, params]``. The design and the names follow the Go package ``mpkrpc`` (go/README.md,
section RPC); python/README.md, section RPC, is the user guide.
"""

import asyncio
import collections
import contextvars
import inspect
import logging
import os
import socket
import sys

from . import _mpk
from .exceptions import BufferFull, DecodeError, InvalidUTF8Error, OutOfData
from .ext import ExtType

__all__ = [
    "Endpoint", "Server", "Client", "Handlers", "ExtRegistry",
    "RPCError", "ConnError", "ProtocolError", "EndpointClosed", "Error",
    "Buffer", "Window", "Tabpage", "neovim_ext", "neovim_options",
    "connect", "connect_unix", "stdio", "spawn", "current_endpoint",
    "error_message", "neovim_error", "code_message_error",
    "DEFAULT_LIMITS", "NEOVIM_EXCEPTION", "NEOVIM_VALIDATION",
]

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2
NEOVIM_EXCEPTION = 0
NEOVIM_VALIDATION = 1
MAX_MSGID = 2**32 - 1

#: The decoder's limits when ``limits=`` does not say otherwise: depth 1024, str/bin/ext 64 MiB,
#: arrays and maps 16 Mi elements, and at most 80 MiB buffered for one incomplete message.
DEFAULT_LIMITS = {
    "max_depth": 1024,
    "max_str_len": 64 << 20,
    "max_bin_len": 64 << 20,
    "max_ext_len": 64 << 20,
    "max_array_len": 16 << 20,
    "max_map_len": 16 << 20,
    "max_buffer_size": 80 << 20,
}

_log = logging.getLogger("mpk.rpc")
_current = contextvars.ContextVar("mpk.rpc.current_endpoint", default=None)


def current_endpoint():
    """In a handler: the endpoint (or Client) whose request or notification is being served."""
    return _current.get()


# ---------------------------------------------------------------------------------------------
# errors


def _text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return None


def neovim_error(v):
    """Neovim's ``[type, message]`` error shape: ``(type, message)``, or None for another shape."""
    if isinstance(v, (list, tuple)) and len(v) == 2 and type(v[0]) is int:
        m = _text(v[1])
        if m is not None:
            return v[0], m
    return None


def code_message_error(v):
    """The ``{code, message}`` shape (JSON-RPC's): ``(code, message)``, or None."""
    if isinstance(v, dict):
        c = v.get("code", v.get(b"code"))
        m = _text(v.get("message", v.get(b"message")))
        if type(c) is int and m is not None:
            return c, m
    return None


def error_message(v):
    """The text of an error value: a str (or bin), Neovim's [type, message], a map with
    "message" (or "msg", or "error"); anything else as repr()."""
    t = _text(v)
    if t is not None:
        return t
    nv = neovim_error(v)
    if nv is not None:
        return nv[1]
    if isinstance(v, dict):
        for k in ("message", "msg", "error"):
            t = _text(v.get(k, v.get(k.encode())))
            if t is not None:
                return t
    return repr(v)


class RPCError(Exception):
    """A call answered with an error: ``value`` (any MessagePack value, decoded as results are),
    ``method`` and ``msgid``. Raised in a handler, its value is passed on as that handler's error."""

    def __init__(self, value, method=None, msgid=None):
        self.value, self.method, self.msgid = value, method, msgid
        super().__init__(f"mpk.rpc: {method} (msgid {msgid}) failed: {error_message(value)}")

    @property
    def message(self):
        """error_message(value)."""
        return error_message(self.value)

    def neovim(self):
        """``(type, message)`` if the value is Neovim's [type, message], else None."""
        return neovim_error(self.value)

    def code_message(self):
        """``(code, message)`` if the value is a {code, message} map, else None."""
        return code_message_error(self.value)


class Error(Exception):
    """Raised by a handler: ``value`` is sent as the response's error as it is (any value mpk
    packs). Any other exception is sent as Neovim's ``[0, "TypeName: message"]``."""

    def __init__(self, value):
        self.value = value
        super().__init__(error_message(value))


class EndpointClosed(Exception):
    """The cause of a ConnError after ``close()``."""


class ConnError(ConnectionError):
    """The connection ended: every pending call fails with this, and so do later calls.

    ``cause`` is EOFError (the peer closed between messages), an OSError (a reset), an mpk
    DecodeError (bytes that are not MessagePack or over the limits; TruncatedError when the
    connection ended inside a message; BufferFull for a message over ``max_buffer_size``) or
    EndpointClosed. ``peer`` is the message of the last msgid-0 error the peer sent, or None."""

    def __init__(self, cause, peer=None):
        self.cause, self.peer = cause, peer
        s = f"mpk.rpc: connection ended: {type(cause).__name__}: {cause}"
        if peer:
            s += f" (the peer's last msgid-0 error: {peer})"
        super().__init__(s)
        self.__cause__ = cause


class ProtocolError(Exception):
    """A well-formed value that is not a MessagePack-RPC message, or a response nobody waits for
    (given to ``on_error``). ``offset`` is the message's offset in the stream."""

    def __init__(self, offset, reason):
        self.offset, self.reason = offset, reason
        super().__init__(f"mpk.rpc: protocol violation at offset {offset}: {reason}")


# ---------------------------------------------------------------------------------------------
# ext types


class ExtRegistry:
    """Per-endpoint ext types: ``register(cls, code, encode, decode)`` packs instances of ``cls``
    (exactly that class) as ext ``code`` with payload ``encode(obj)`` and decodes ext ``code`` with
    ``decode(payload)``. Other ext codes decode to ExtType (−1 to Timestamp)."""

    def __init__(self):
        self._by_code = {}
        self._by_type = {}

    def register(self, cls, code, encode, decode):
        if not -128 <= code <= 127:
            raise ValueError(f"ext code {code} is outside -128..127")
        self._by_code[code] = decode
        self._by_type[cls] = (code, encode)

    def __bool__(self):
        return bool(self._by_code)

    def _hook(self, code, data):
        dec = self._by_code.get(code)
        if dec is None:
            return ExtType(code, data)
        return dec(data)

    def _default(self, obj):
        e = self._by_type.get(type(obj))
        if e is None:
            return None
        return ExtType(e[0], e[1](obj))


class _Handle:
    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = int(handle)

    def __eq__(self, other):
        return type(other) is type(self) and other.handle == self.handle

    def __hash__(self):
        return hash((type(self).__name__, self.handle))

    def __repr__(self):
        return f"{type(self).__name__}({self.handle})"


class Buffer(_Handle):
    """A Neovim buffer handle (ext 0, payload a packed int)."""


class Window(_Handle):
    """A Neovim window handle (ext 1)."""


class Tabpage(_Handle):
    """A Neovim tabpage handle (ext 2)."""


def neovim_ext():
    """A registry mapping Buffer, Window and Tabpage to ext 0, 1 and 2 (Neovim 0.7.2's codes)."""
    r = ExtRegistry()
    for code, cls in enumerate((Buffer, Window, Tabpage)):
        r.register(cls, code, lambda h: _mpk.packb(h.handle),
                   lambda data, cls=cls: cls(_mpk.unpackb(data)))
    return r


def neovim_options():
    """Options to talk to Neovim: bin read as str, invalid UTF-8 kept (surrogateescape), and
    Neovim's handles."""
    return {"bin_as_str": True, "unicode_errors": "surrogateescape", "ext": neovim_ext()}


# ---------------------------------------------------------------------------------------------
# handlers


class _Handler:
    __slots__ = ("name", "fn", "is_async", "lo", "hi")

    def __init__(self, name, fn):
        if not callable(fn):
            raise TypeError(f"mpk.rpc: register({name!r}): {type(fn).__name__} is not callable")
        self.name, self.fn = name, fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.lo, self.hi = 0, None
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return  # no signature known: the call itself checks the arguments
        lo, hi = 0, 0
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                hi += 1
                if p.default is p.empty:
                    lo += 1
            elif p.kind is p.KEYWORD_ONLY and p.default is p.empty:
                raise TypeError(f"mpk.rpc: register({name!r}): keyword-only parameter "
                                f"{p.name!r} has no default; params are positional")
        if any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
            hi = None
        self.lo, self.hi = lo, hi

    def arity_error(self, n):
        if self.lo <= n and (self.hi is None or n <= self.hi):
            return None
        if self.hi is None:
            want = f"at least {self.lo}"
        elif self.lo == self.hi:
            want = str(self.lo)
        else:
            want = f"{self.lo} to {self.hi}"
        return [NEOVIM_EXCEPTION, f"Wrong number of arguments: expecting {want} but got {n}"]


class Handlers:
    """Handlers by method name; one set may serve many endpoints (Server shares one)."""

    def __init__(self):
        self._m = {}

    def register(self, name, fn=None):
        """Register ``fn`` (a function or a coroutine function) for ``name``; without ``fn``, a
        decorator. Registering a name again replaces its handler."""
        if fn is None:
            def deco(f):
                self._m[name] = _Handler(name, f)
                return f
            return deco
        self._m[name] = _Handler(name, fn)
        return fn

    def unregister(self, name):
        self._m.pop(name, None)

    def __contains__(self, name):
        return name in self._m

    def get(self, name):
        return self._m.get(name)


async def _invoke(fn, params):
    """fn(*params), awaited when it returns an awaitable (a coroutine handler, or a plain function
    that returned one)."""
    result = fn(*params)
    if inspect.isawaitable(result):
        result = await result
    return result


def _exc_value(e):
    """The error value sent for a handler's exception."""
    if isinstance(e, Error):
        return e.value
    if isinstance(e, RPCError):
        return e.value
    return [NEOVIM_EXCEPTION, f"{type(e).__name__}: {e}"]


# ---------------------------------------------------------------------------------------------
# the codec shared by Endpoint and Client


def _bin_to_str(v, errors):
    """Decodes every bin in v (lists and dict keys/values, in place, iteratively) as UTF-8."""
    t = type(v)
    if t is bytes:
        return v.decode("utf-8", errors)
    if t is not list and t is not dict:
        return v
    stack = [v]
    while stack:
        c = stack.pop()
        if type(c) is list:
            for i, x in enumerate(c):
                tx = type(x)
                if tx is bytes:
                    c[i] = x.decode("utf-8", errors)
                elif tx is list or tx is dict:
                    stack.append(x)
        else:
            if any(type(k) is bytes for k in c):
                items = list(c.items())
                c.clear()
                for k, x in items:
                    c[k.decode("utf-8", errors) if type(k) is bytes else k] = x
            for k, x in c.items():
                tx = type(x)
                if tx is bytes:
                    c[k] = x.decode("utf-8", errors)
                elif tx is list or tx is dict:
                    stack.append(x)
    return v


class _Codec:
    """Options, packing, the stream decoder and message validation."""

    _error = None

    def _init_codec(self, handlers, unicode_errors, bin_as_str, ext, limits, default, on_error):
        if handlers is None:
            handlers = Handlers()
        self.handlers = handlers
        self._errors = unicode_errors
        self._bin_as_str = bin_as_str
        self._ext = ext if ext is not None else ExtRegistry()
        self._on_error = on_error
        lim = dict(DEFAULT_LIMITS)
        if limits:
            unknown = set(limits) - set(DEFAULT_LIMITS)
            if unknown:
                raise TypeError(f"mpk.rpc: unknown limits {sorted(unknown)}")
            lim.update(limits)
        self.limits = lim
        user_default = default
        ext_default = self._ext._default

        def pack_default(obj):
            r = ext_default(obj)
            if r is not None:
                return r
            if user_default is not None:
                return user_default(obj)
            raise TypeError(f"can not serialize {type(obj).__name__!r} object")

        self._packer = _mpk.Packer(use_bin_type=True, unicode_errors=unicode_errors,
                                   default=pack_default if (self._ext or default) else None)
        kw = dict(lim)
        if self._ext:
            kw["ext_hook"] = self._ext._hook
        self._unpacker = _mpk.Unpacker(raw=False, strict_map_key=False,
                                       unicode_errors=unicode_errors, **kw)
        self._fed = 0
        self._peer_err = None
        self._pending = {}
        self._abandoned = set()
        self._next_id = 1

    def register(self, name, fn=None):
        """Register a handler (see Handlers.register); usable as a decorator."""
        return self.handlers.register(name, fn)

    def _report(self, err):
        if self._on_error is not None:
            try:
                self._on_error(err)
            except Exception:  # noqa: BLE001 - the callback's own failure must not stop the reader
                _log.exception("mpk.rpc: on_error raised")
        else:
            _log.warning("%s", err)

    def _alloc_id(self):
        """Msgids count up from 1, wrap after 2^32-1 back to 1 (0 is left for the msgid-0 answers
        to malformed messages) and skip ids still pending, cancelled ones included."""
        while True:
            i = self._next_id
            self._next_id = 1 if i >= MAX_MSGID else i + 1
            if i not in self._pending and i not in self._abandoned:
                return i

    def _pack_response(self, msgid, err, result):
        try:
            return self._packer.pack([RESPONSE, msgid, err, result])
        except Exception as e:  # noqa: BLE001 - any value that cannot be packed
            return self._packer.pack([RESPONSE, msgid, [NEOVIM_EXCEPTION,
                                      f"mpk.rpc: cannot encode the response: {type(e).__name__}: {e}"], None])

    def _malformed(self, reason):
        # type 1 (Validation) as Neovim 0.7.2 answers a value that is no message; bytes that are
        # not MessagePack get type 0 (Exception), as Neovim's "Invalid msgpack payload" (_fatal)
        return self._pack_response(0, [NEOVIM_VALIDATION, f"mpk.rpc: invalid message: {reason}"], None)

    @staticmethod
    def _check(m):
        """The reason m is not a message, or None."""
        if type(m) is not list:
            return "a message must be an array"
        n = len(m)
        if n != 3 and n != 4:
            return f"a message must be an array of 3 or 4 elements, not {n}"
        kind = m[0]
        if type(kind) is not int or not 0 <= kind <= 2:
            return "the message type must be 0, 1 or 2"
        want = 3 if kind == NOTIFICATION else 4
        if n != want:
            return f"a message of type {kind} must have {want} elements, not {n}"
        if kind != NOTIFICATION:
            i = m[1]
            if type(i) is not int or not 0 <= i <= MAX_MSGID:
                return "the msgid must be an unsigned 32-bit int"
        if kind != RESPONSE:
            meth = m[-2]
            if type(meth) is bytes:
                m[-2] = meth.decode("utf-8", "surrogateescape")
            elif type(meth) is not str:
                return "the method must be a str"
            if type(m[-1]) is not list:
                return "the params must be an array"
        return None

    def _next_message(self):
        """The next complete message from the unpacker: ("msg", value, offset), ("bad", partial,
        offset, exc) for a message whose content failed to decode (the stream goes on after it),
        or None when more bytes are needed. Walk errors (not MessagePack, over a limit) raise."""
        u = self._unpacker
        off = u.tell()
        try:
            m = u.unpack()
        except OutOfData:
            return None
        except DecodeError as e:
            if not isinstance(e, InvalidUTF8Error):
                raise
            return self._salvage(off, e)
        except Exception as e:  # noqa: BLE001 - a hook, an unhashable key: the value is complete
            return self._salvage(off, e)
        if self._bin_as_str:
            try:
                m = _bin_to_str(m, self._errors)
            except UnicodeDecodeError as e:
                return ("bad", m[:3] if type(m) is list else None, off, e)
        return ("msg", m, off)

    def _salvage(self, off, exc):
        """Reads what it can of a complete message that failed to build, element by element."""
        u = self._unpacker
        try:
            n = u.read_array_header()
        except ValueError:
            u.skip()
            return ("bad", None, off, exc)
        parts = []
        for i in range(n):
            try:
                parts.append(u.unpack() if i < 3 else u.skip())
            except Exception:  # noqa: BLE001
                u.skip()
                parts.append(None)
        return ("bad", parts, off, exc)

    def _feed_data(self, data, dispatch):
        """Feeds data in pieces that fit max_buffer_size (the unpacker holds fed - tell() bytes),
        handling the messages each piece completes; returns a BufferFull when one message needs
        more than max_buffer_size, else None."""
        u = self._unpacker
        cap = self.limits["max_buffer_size"]
        view = memoryview(data)
        while view:
            room = cap - (self._fed - u.tell())
            if room <= 0:
                return BufferFull(f"a message needs more than max_buffer_size ({cap} bytes) "
                                  f"at byte {u.tell()}")
            piece = view[:room]
            u.feed(piece)
            self._fed += len(piece)
            view = view[len(piece):]
            dispatch()
            if self._error is not None:
                return None
        return None

    def _truncated(self):
        """The cause for an end of stream: EOFError between messages, TruncatedError inside one."""
        from .exceptions import TruncatedError
        pos = self._unpacker.tell()
        if pos < self._fed:
            e = TruncatedError(f"the connection ended inside a message at byte {pos} "
                               f"({self._fed - pos} bytes of it received)")
            e.offset = pos
            return e
        return EOFError("the peer closed the connection")


# ---------------------------------------------------------------------------------------------
# the asyncio endpoint


class Endpoint(_Codec):
    """One side of a MessagePack-RPC connection over an asyncio (StreamReader, StreamWriter) pair.

    Both sides are alike: each calls, notifies and serves. Create it in a running event loop; it
    owns the streams and closes the writer when it ends. See python/README.md, section RPC."""

    def __init__(self, reader, writer, *, handlers=None, max_handlers=256, unicode_errors="strict",
                 bin_as_str=False, ext=None, limits=None, default=None, on_error=None):
        self._init_codec(handlers, unicode_errors, bin_as_str, ext, limits, default, on_error)
        self._reader, self._writer = reader, writer
        self._loop = asyncio.get_running_loop()
        self._max_handlers = max(1, max_handlers)
        self._error = None            # the cause once ended
        self._closing = False         # close() called: queued work dropped
        self._tasks = set()           # request handler tasks
        self._running = 0
        self._reqs = collections.deque()
        self._notes = collections.deque()
        self._note_task = None
        self._idle = asyncio.Event()
        self._done = self._loop.create_future()
        tok = _current.set(self)      # copied into the reader's context and every task it starts
        try:
            self._read_task = self._loop.create_task(self._read_loop())
        finally:
            _current.reset(tok)

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def error(self):
        """None while the endpoint runs, then a ConnError naming why it ended."""
        return None if self._error is None else ConnError(self._error, self._peer_err)

    @property
    def closed(self):
        return self._error is not None

    def close(self):
        """Ends the connection now: pending calls fail with ConnError(EndpointClosed), queued
        notifications and requests are dropped, running handlers are cancelled (their responses
        dropped). Returns at once; ``await wait_closed()`` waits for the tasks."""
        self._closing = True
        self._notes.clear()
        self._reqs.clear()
        self._shutdown(EndpointClosed("endpoint closed"))

    async def aclose(self, timeout=None):
        """The graceful close: waits until no call of this endpoint is pending and no request from
        the peer is being served or queued (their responses sent), then closes. If ``timeout``
        seconds pass first it closes at once and raises TimeoutError."""
        try:
            async with asyncio.timeout(timeout):
                while not self._idle_now() and self._error is None:
                    self._idle.clear()
                    w = self._loop.create_task(self._idle.wait())
                    try:
                        await asyncio.wait([w, self._done], return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        w.cancel()
        finally:
            self.close()
            await self.wait_closed()

    def _idle_now(self):
        return not self._pending and self._running == 0 and not self._reqs

    async def wait_closed(self):
        """Waits until the endpoint has ended and its reader, notification and handler tasks have
        returned (notifications the peer sent before it closed are handled first)."""
        await asyncio.shield(self._done)
        tasks = [t for t in (self._read_task, self._note_task) if t is not None] + list(self._tasks)
        tasks = [t for t in tasks if t is not asyncio.current_task()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        try:
            await self._writer.wait_closed()
        except Exception:  # noqa: BLE001 - the connection's error is already the endpoint's
            pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()
        await self.wait_closed()

    def _shutdown(self, cause):
        if self._error is not None:
            return
        self._error = cause
        pend, self._pending = self._pending, {}
        self._abandoned = set()
        for fut, _method in pend.values():
            if not fut.done():
                fut.set_exception(ConnError(cause, self._peer_err))
        for t in list(self._tasks):
            t.cancel()
        self._reqs.clear()
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001
            pass
        if self._read_task is not None and self._read_task is not asyncio.current_task():
            self._read_task.cancel()
        if self._closing and self._note_task is not None:
            self._note_task.cancel()
        if not self._done.done():
            self._done.set_result(None)
        self._idle.set()

    # -- calls -----------------------------------------------------------------------------

    def _write(self, data):
        if self._error is None:
            self._writer.write(data)

    async def _drain(self):
        try:
            await self._writer.drain()
        except (ConnectionError, OSError) as e:
            self._shutdown(e)

    async def call(self, method, *args, timeout=None):
        """Calls ``method`` with ``args`` and returns its result. A response with an error raises
        RPCError; the connection's end raises ConnError. On a timeout (TimeoutError) or when the
        awaiting task is cancelled, the pending entry is dropped and a late reply is discarded
        quietly; nothing is sent to the peer."""
        if self._error is not None:
            raise ConnError(self._error, self._peer_err)
        msgid = self._alloc_id()
        try:
            data = self._packer.pack([REQUEST, msgid, method, args])
        except Exception as e:
            e.add_note(f"mpk.rpc: in the arguments of {method}")
            raise
        fut = self._loop.create_future()
        self._pending[msgid] = (fut, method)
        self._writer.write(data)
        try:
            if timeout is None:
                await self._drain()
                err, result = await fut
            else:
                async with asyncio.timeout(timeout):
                    await self._drain()
                    err, result = await fut
        except (asyncio.CancelledError, TimeoutError) as e:
            if self._pending.get(msgid, (None,))[0] is fut:
                del self._pending[msgid]
                self._abandoned.add(msgid)
                self._poke()
            if isinstance(e, TimeoutError) and not isinstance(e, ConnError):
                raise TimeoutError(f"mpk.rpc: {method} (msgid {msgid}): no reply within "
                                   f"{timeout} s") from None
            raise
        if err is not None:
            raise RPCError(err, method, msgid)
        return result

    async def notify(self, method, *args):
        """Sends a notification (returns once it is handed to the transport and drained)."""
        if self._error is not None:
            raise ConnError(self._error, self._peer_err)
        try:
            data = self._packer.pack([NOTIFICATION, method, args])
        except Exception as e:
            e.add_note(f"mpk.rpc: in the arguments of {method}")
            raise
        self._writer.write(data)
        await self._drain()

    def _poke(self):
        if self._idle_now():
            self._idle.set()

    # -- the reader --------------------------------------------------------------------------

    async def _read_loop(self):
        u = self._unpacker
        try:
            while True:
                try:
                    data = await self._reader.read(65536)
                except (ConnectionError, OSError) as e:
                    self._shutdown(e)
                    return
                if not data:
                    self._shutdown(self._truncated())
                    return
                full = self._feed_data(data, self._dispatch_all)
                if full is not None:
                    self._fatal(full)
                    return
                if self._error is not None:
                    return
        except DecodeError as e:
            self._fatal(e)
        except asyncio.CancelledError:
            pass
        except Exception as e:  # noqa: BLE001 - never let the reader die silently
            self._shutdown(e)

    def _fatal(self, e):
        self._write(self._pack_response(0, [NEOVIM_EXCEPTION,
                                            f"mpk.rpc: malformed input, closing: {e}"], None))
        self._shutdown(e)

    def _dispatch_all(self):
        """Handles every complete message buffered; returns whether any was."""
        any_ = False
        while self._error is None:
            r = self._next_message()
            if r is None:
                return any_
            any_ = True
            if r[0] == "bad":
                self._bad(r[1], r[2], r[3])
            else:
                self._dispatch(r[1], r[2])
        return any_

    def _bad(self, parts, off, exc):
        desc = f"{type(exc).__name__}: {exc}"
        kind = parts[0] if parts else None
        msgid = parts[1] if parts and len(parts) > 1 else None
        okid = type(msgid) is int and 0 <= msgid <= MAX_MSGID
        if kind == REQUEST and okid:
            self._write(self._pack_response(msgid, [NEOVIM_EXCEPTION,
                                                    f"mpk.rpc: cannot decode the request: {desc}"], None))
        elif kind == RESPONSE and okid and msgid in self._pending:
            fut, method = self._pending.pop(msgid)
            exc.add_note(f"mpk.rpc: in the response to {method} (msgid {msgid})")
            if not fut.done():
                fut.set_exception(exc)
            self._poke()
        elif kind == RESPONSE and okid and msgid in self._abandoned:
            self._abandoned.discard(msgid)
        else:
            self._report(ProtocolError(off, f"undecodable message: {desc}"))
            if kind != NOTIFICATION:
                self._write(self._malformed(f"undecodable message: {desc}"))

    def _dispatch(self, m, off):
        reason = self._check(m)
        if reason is not None:
            self._report(ProtocolError(off, reason))
            self._write(self._malformed(reason))
            return
        kind = m[0]
        if kind == RESPONSE:
            msgid = m[1]
            entry = self._pending.pop(msgid, None)
            if entry is not None:
                fut = entry[0]
                if not fut.done():
                    fut.set_result((m[2], m[3]))
                self._poke()
            elif msgid in self._abandoned:
                self._abandoned.discard(msgid)
            else:
                if msgid == 0:
                    self._peer_err = error_message(m[2])
                self._report(ProtocolError(off, f"response for msgid {msgid}, which no call waits "
                                                 f"for (error {error_message(m[2]) if m[2] is not None else None})"))
        elif kind == REQUEST:
            h = self.handlers.get(m[2])
            if h is None and not self._reqs:
                self._write(self._pack_response(m[1], [NEOVIM_EXCEPTION, f"Invalid method: {m[2]}"], None))
            elif h is not None and not h.is_async and not self._reqs and self._writable():
                resp = self._serve_sync(h, m[1], m[3])
                if resp:
                    self._write(resp)
            elif self._running < self._max_handlers:
                self._start(m)
            else:
                self._reqs.append(m)
        else:
            h = self.handlers.get(m[1])
            if h is not None and not h.is_async and not self._notes and self._note_task is None:
                self._notify_sync(h, m[1], m[2])
            else:
                self._notes.append(m)
                if self._note_task is None:
                    self._note_task = self._loop.create_task(self._note_loop())

    def _writable(self):
        tr = self._writer.transport
        try:
            return tr.get_write_buffer_size() <= tr.get_write_buffer_limits()[1]
        except (AttributeError, NotImplementedError):
            return True

    # -- serving -----------------------------------------------------------------------------

    def _serve_sync(self, h, msgid, params):
        """Runs a plain function's request now; returns the packed response."""
        err = h.arity_error(len(params))
        if err is not None:
            return self._pack_response(msgid, err, None)
        try:
            result = h.fn(*params)
        except Exception as e:  # noqa: BLE001 - the exception is the error value
            return self._pack_response(msgid, _exc_value(e), None)
        if inspect.isawaitable(result):
            # a plain function that returned an awaitable: serve it as a coroutine
            self._running += 1
            t = self._loop.create_task(self._finish(msgid, result))
            self._tasks.add(t)
            t.add_done_callback(self._task_done)
            return b""
        return self._pack_response(msgid, None, result)

    def _start(self, m):
        self._running += 1
        t = self._loop.create_task(self._serve_loop(m))
        self._tasks.add(t)
        t.add_done_callback(self._task_done)

    def _task_done(self, t):
        self._tasks.discard(t)

    async def _respond(self, msgid, aw):
        """Answers request msgid with what the awaitable aw returns, or with the exception it
        raises as the response's error value, then drains the writer. Cancellation propagates."""
        try:
            result = await aw
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - the exception is the error value
            self._write(self._pack_response(msgid, _exc_value(e), None))
        else:
            self._write(self._pack_response(msgid, None, result))
        await self._drain()

    async def _finish(self, msgid, aw):
        try:
            await self._respond(msgid, aw)
        finally:
            self._running -= 1
            self._poke()

    async def _serve_loop(self, m):
        try:
            while True:
                await self._serve(m)
                if not self._reqs or self._error is not None:
                    return
                m = self._reqs.popleft()
        finally:
            self._running -= 1
            self._poke()

    async def _serve(self, m):
        if self._error is not None:
            return
        msgid, method, params = m[1], m[2], m[3]
        h = self.handlers.get(method)
        if h is None:
            self._write(self._pack_response(msgid, [NEOVIM_EXCEPTION, f"Invalid method: {method}"], None))
            return
        err = h.arity_error(len(params))
        if err is not None:
            self._write(self._pack_response(msgid, err, None))
            return
        # _invoke runs the handler inside the awaitable, so an exception from the synchronous call
        # itself (before any awaitable exists) is answered as an error value too
        await self._respond(msgid, _invoke(h.fn, params))

    def _notify_sync(self, h, method, params):
        if h.arity_error(len(params)) is not None:
            self._report(ProtocolError(-1, f"notification {method!r}: {h.arity_error(len(params))[1]}"))
            return
        try:
            r = h.fn(*params)
        except Exception as e:  # noqa: BLE001
            self._report_note(method, e)
            return
        if inspect.isawaitable(r):
            self._notes.appendleft([NOTIFICATION, method, None, r])
            if self._note_task is None:
                self._note_task = self._loop.create_task(self._note_loop())

    def _report_note(self, method, e):
        err = RuntimeError(f"mpk.rpc: notification {method!r}: {type(e).__name__}: {e}")
        err.__cause__ = e
        self._report(err)

    async def _note_loop(self):
        try:
            while self._notes and not self._closing:
                m = self._notes.popleft()
                method, params = m[1], m[2]
                try:
                    if len(m) == 4:        # an awaitable a plain function returned
                        await m[3]
                        continue
                    h = self.handlers.get(method)
                    if h is None:
                        self._report(ProtocolError(-1, f"notification {method!r}: no handler"))
                        continue
                    e = h.arity_error(len(params))
                    if e is not None:
                        self._report(ProtocolError(-1, f"notification {method!r}: {e[1]}"))
                        continue
                    r = h.fn(*params)
                    if inspect.isawaitable(r):
                        await r
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # noqa: BLE001
                    self._report_note(method, e)
        finally:
            self._note_task = None


# ---------------------------------------------------------------------------------------------
# transports


async def connect(host, port, **options):
    """An Endpoint on a TCP connection (asyncio.open_connection)."""
    reader, writer = await asyncio.open_connection(host, port)
    return Endpoint(reader, writer, **options)


async def connect_unix(path, **options):
    """An Endpoint on a Unix socket connection."""
    reader, writer = await asyncio.open_unix_connection(path)
    return Endpoint(reader, writer, **options)


async def stdio(stdin=None, stdout=None, **options):
    """An Endpoint on this process's stdin and stdout (pipes or sockets; the endpoint owns them).
    Nothing else may write to stdout while it runs."""
    loop = asyncio.get_running_loop()
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return Endpoint(reader, writer, **options)


async def spawn(program, *args, stderr=None, **options):
    """Starts ``program`` with ``args`` and returns ``(endpoint, process)``: the endpoint talks on
    the child's stdin and stdout. Closing the endpoint closes the child's stdin; then
    ``await process.wait()``."""
    proc = await asyncio.create_subprocess_exec(program, *args, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=stderr)
    return Endpoint(proc.stdout, proc.stdin, **options), proc


class Server:
    """Serves every accepted connection as an Endpoint sharing one handler set.

    ``Server(handlers=None, *, on_connect=None, **endpoint_options)``; ``register`` as on an
    Endpoint; ``await listen_tcp(host, port)`` / ``await listen_unix(path)`` start listening and
    return the asyncio.Server; ``close()`` stops listening and closes every connection."""

    def __init__(self, handlers=None, *, on_connect=None, **options):
        self.handlers = handlers if handlers is not None else Handlers()
        self.on_connect = on_connect
        self.options = options
        self.endpoints = set()
        self._servers = []

    def register(self, name, fn=None):
        return self.handlers.register(name, fn)

    def serve_streams(self, reader, writer):
        """Serves one connection; returns its Endpoint."""
        ep = Endpoint(reader, writer, handlers=self.handlers, **self.options)
        self.endpoints.add(ep)
        ep._done.add_done_callback(lambda _f: self.endpoints.discard(ep))
        if self.on_connect is not None:
            self.on_connect(ep)
        return ep

    async def listen_tcp(self, host="127.0.0.1", port=0, **kw):
        s = await asyncio.start_server(self.serve_streams, host, port, **kw)
        self._servers.append(s)
        return s

    async def listen_unix(self, path, **kw):
        s = await asyncio.start_unix_server(self.serve_streams, path, **kw)
        self._servers.append(s)
        return s

    def close(self):
        for s in self._servers:
            s.close()
        for ep in list(self.endpoints):
            ep.close()

    async def wait_closed(self):
        eps = list(self.endpoints)
        for ep in eps:
            await ep.wait_closed()
        for s in self._servers:
            await s.wait_closed()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()
        await self.wait_closed()


# ---------------------------------------------------------------------------------------------
# the blocking client


class Client(_Codec):
    """A blocking client over a socket, for scripts: ``Client(("127.0.0.1", port))`` (TCP),
    ``Client("/path/to/socket")`` (Unix) or ``Client(sock=s)``.

    ``call`` sends a request and reads until its reply; requests and notifications from the peer
    that arrive meanwhile are served by the registered handlers (plain functions), in arrival
    order. Calls from several threads are serialised by a lock."""

    def __init__(self, address=None, *, sock=None, timeout=None, handlers=None,
                 unicode_errors="strict", bin_as_str=False, ext=None, limits=None, default=None,
                 on_error=None):
        import threading
        self._init_codec(handlers, unicode_errors, bin_as_str, ext, limits, default, on_error)
        if sock is None:
            if isinstance(address, tuple):
                sock = socket.create_connection(address, timeout=timeout)
            else:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                try:
                    sock.connect(os.fspath(address))
                except BaseException:
                    sock.close()
                    raise
        sock.settimeout(None)
        self.sock = sock
        self._lock = threading.Lock()
        self._error = None
        self._results = {}

    def close(self):
        if self._error is None:
            self._error = EndpointClosed("client closed")
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def notify(self, method, *args):
        with self._lock:
            self._check_open()
            try:
                self.sock.sendall(self._packer.pack([NOTIFICATION, method, args]))
            except OSError as e:
                self._end(e)
                raise ConnError(e) from e

    def call(self, method, *args, timeout=None):
        """Calls ``method`` and returns its result (RPCError for an error response, ConnError when
        the connection ends, TimeoutError after ``timeout`` seconds: the reply is then discarded
        when it comes)."""
        import time
        with self._lock:
            self._check_open()
            msgid = self._alloc_id()
            try:
                data = self._packer.pack([REQUEST, msgid, method, args])
            except Exception as e:
                e.add_note(f"mpk.rpc: in the arguments of {method}")
                raise
            self._pending[msgid] = method
            try:
                self.sock.sendall(data)
            except OSError as e:
                self._end(e)
                raise ConnError(e) from e
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                while msgid not in self._results:
                    if deadline is not None:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise TimeoutError(f"mpk.rpc: {method} (msgid {msgid}): no reply "
                                               f"within {timeout} s")
                        self.sock.settimeout(left)
                    try:
                        data = self.sock.recv(65536)
                    except (socket.timeout, TimeoutError):
                        continue
                    except OSError as e:
                        self._end(e)
                        raise ConnError(e, self._peer_err) from e
                    finally:
                        self.sock.settimeout(None)
                    if not data:
                        cause = self._truncated()
                        self._end(cause)
                        raise ConnError(cause, self._peer_err)
                    self._feed(data)
            except BaseException:
                if self._pending.pop(msgid, None) is not None:
                    self._abandoned.add(msgid)
                self._results.pop(msgid, None)
                raise
            kind, a, b = self._results.pop(msgid)
            if kind == "exc":
                raise a
            if a is not None:
                raise RPCError(a, method, msgid)
            return b

    def _check_open(self):
        if self._error is not None:
            raise ConnError(self._error, self._peer_err)

    def _end(self, cause):
        if self._error is None:
            self._error = cause
        self.sock.close()

    def _feed(self, data):
        full = self._feed_data(data, self._drain_messages)
        if full is not None:
            self._fatal(full)

    def _fatal(self, e):
        try:
            self.sock.sendall(self._pack_response(0, [NEOVIM_EXCEPTION,
                                                      f"mpk.rpc: malformed input, closing: {e}"], None))
        except OSError:
            pass
        self._end(e)
        raise ConnError(e, self._peer_err) from e

    def _drain_messages(self):
        any_ = False
        while True:
            try:
                r = self._next_message()
            except DecodeError as e:
                self._fatal(e)
            if r is None:
                return any_
            any_ = True
            if r[0] == "bad":
                parts, off, exc = r[1], r[2], r[3]
                kind = parts[0] if parts else None
                msgid = parts[1] if parts and len(parts) > 1 else None
                if kind == RESPONSE and msgid in self._pending:
                    self._pending.pop(msgid)
                    self._results[msgid] = ("exc", exc, None)
                elif kind == REQUEST and type(msgid) is int and 0 <= msgid <= MAX_MSGID:
                    self._send(self._pack_response(msgid, [NEOVIM_EXCEPTION,
                               f"mpk.rpc: cannot decode the request: {type(exc).__name__}: {exc}"], None))
                elif kind == RESPONSE and msgid in self._abandoned:
                    self._abandoned.discard(msgid)
                else:
                    self._report(ProtocolError(off, f"undecodable message: {exc}"))
                continue
            m, off = r[1], r[2]
            reason = self._check(m)
            if reason is not None:
                self._report(ProtocolError(off, reason))
                self._send(self._malformed(reason))
                continue
            if m[0] == RESPONSE:
                if self._pending.pop(m[1], None) is not None:
                    self._results[m[1]] = ("ok", m[2], m[3])
                elif m[1] in self._abandoned:
                    self._abandoned.discard(m[1])
                else:
                    if m[1] == 0:
                        self._peer_err = error_message(m[2])
                    self._report(ProtocolError(off, f"response for msgid {m[1]}, which no call waits for"))
            elif m[0] == REQUEST:
                h = self.handlers.get(m[2])
                tok = _current.set(self)
                try:
                    if h is None:
                        resp = self._pack_response(m[1], [NEOVIM_EXCEPTION, f"Invalid method: {m[2]}"], None)
                    else:
                        err = h.arity_error(len(m[3]))
                        if err is not None:
                            resp = self._pack_response(m[1], err, None)
                        else:
                            try:
                                resp = self._pack_response(m[1], None, h.fn(*m[3]))
                            except Exception as e:  # noqa: BLE001
                                resp = self._pack_response(m[1], _exc_value(e), None)
                finally:
                    _current.reset(tok)
                self._send(resp)
            else:
                h = self.handlers.get(m[1])
                if h is None:
                    self._report(ProtocolError(off, f"notification {m[1]!r}: no handler"))
                    continue
                tok = _current.set(self)
                try:
                    h.fn(*m[2])
                except Exception as e:  # noqa: BLE001
                    self._report(RuntimeError(f"mpk.rpc: notification {m[1]!r}: {type(e).__name__}: {e}"))
                finally:
                    _current.reset(tok)

    def _send(self, data):
        try:
            self.sock.sendall(data)
        except OSError as e:
            self._end(e)
            raise ConnError(e, self._peer_err) from e
