"""mpk.rpc against a hostile or broken peer: each frame gets its documented outcome (python/README.md,
section RPC, "Protocol violations"), with no crash and no lost or duplicated reply."""
import asyncio
import os
import socket
import struct
import subprocess
import sys
import textwrap

import pytest

import mpk
import mpk.rpc as rpc
from test_rpc import read_msg, run, stream_pair

UNDER_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")


async def served(**opts):
    """An mpk server endpoint (add, echo) and the raw peer's streams."""
    (ra, wa), (rb, wb) = await stream_pair()
    errors = []
    server = rpc.Endpoint(ra, wa, on_error=errors.append, **opts)
    server.register("add", lambda x, y: x + y)
    server.register("echo", lambda x: x)
    return server, errors, rb, wb


@pytest.mark.parametrize("frame, reason", [
    (mpk.packb([0, 2**32, "add", [1, 2]]), "the msgid must be an unsigned 32-bit int"),
    (mpk.packb([0, -1, "add", [1, 2]]), "the msgid must be an unsigned 32-bit int"),
    (mpk.packb({"not": "a message"}), "a message must be an array"),
    (mpk.packb([0, 1, "add", [1, 2], 5]), "a message must be an array of 3 or 4 elements, not 5"),
    (mpk.packb([0, 1, "add"]), "a message of type 0 must have 4 elements, not 3"),
    (mpk.packb([3, 1, "add", []]), "the message type must be 0, 1 or 2"),
    (mpk.packb([0, 1, 7, []]), "the method must be a str"),
    (mpk.packb([0, 1, "add", 5]), "the params must be an array"),
])
def test_invalid_messages_are_answered_with_msgid_0_and_the_connection_stays_usable(frame, reason):
    async def main():
        server, errors, rb, wb = await served()
        u = mpk.Unpacker()
        wb.write(frame)
        assert await read_msg(rb, u) == [1, 0, [1, "mpk.rpc: invalid message: " + reason], None]
        assert len(errors) == 1 and isinstance(errors[0], rpc.ProtocolError)
        assert errors[0].reason == reason and errors[0].offset == 0
        wb.write(mpk.packb([0, 7, "add", [1, 2]]))
        assert await read_msg(rb, u) == [1, 7, None, 3]
        server.close()
        wb.close()
    run(main())


def test_wrong_arity_and_a_bin_method_name():
    async def main():
        server, errors, rb, wb = await served()
        u = mpk.Unpacker()
        wb.write(mpk.packb([0, 1, "add", [1]]) + mpk.packb([0, 2, b"add", [2, 3]]))
        assert await read_msg(rb, u) == [1, 1, [0, "Wrong number of arguments: expecting 2 but got 1"], None]
        assert await read_msg(rb, u) == [1, 2, None, 5]
        server.close()
        wb.close()
    run(main())


def test_response_for_an_unknown_id_is_reported_not_answered():
    async def main():
        server, errors, rb, wb = await served()
        u = mpk.Unpacker()
        wb.write(mpk.packb([1, 12345, None, "who?"]) + mpk.packb([1, 0, [0, "you sent junk"], None])
                 + mpk.packb([0, 1, "echo", ["still here"]]))
        # the first bytes back are the answer to the request: nothing answered the responses
        assert await read_msg(rb, u) == [1, 1, None, "still here"]
        assert [type(e) for e in errors] == [rpc.ProtocolError, rpc.ProtocolError]
        assert "msgid 12345, which no call waits for" in errors[0].reason
        # a msgid-0 error is kept and named when the connection ends
        wb.close()
        await server.wait_closed()
        assert server.error.peer == "you sent junk"
        assert "the peer's last msgid-0 error: you sent junk" in str(server.error)
    run(main())


@pytest.mark.parametrize("frame, exc, kind", [
    (b"\xc1", mpk.FormatError, "invalid_byte"),
    (b"\x94\x00\x01\xa3add\x92\xc1", mpk.FormatError, "invalid_byte"),
    (b"\xdb\xff\xff\xff\xff", mpk.LengthLimitError, "length_limit"),   # str 32 of 4 GiB
    (b"\xc6\xff\xff\xff\xff", mpk.LengthLimitError, "length_limit"),   # bin 32
    (b"\xc9\xff\xff\xff\xff\x01", mpk.LengthLimitError, "length_limit"),  # ext 32
    (b"\xdd\xff\xff\xff\xff", mpk.LengthLimitError, "length_limit"),   # array 32 of 2^32-1
    (b"\xdf\xff\xff\xff\xff", mpk.LengthLimitError, "length_limit"),   # map 32
    (b"\x91" * 1100 + b"\xc0", mpk.StackError, "depth_limit"),
])
def test_malformed_bytes_answer_msgid_0_then_end_the_connection(frame, exc, kind):
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        ep = rpc.Endpoint(ra, wa)
        pending = [asyncio.ensure_future(ep.call("never", i)) for i in range(3)]
        u = mpk.Unpacker()
        for _ in range(3):
            await read_msg(rb, u)
        wb.write(frame)
        answer = await read_msg(rb, u)
        assert answer[:2] == [1, 0] and answer[3] is None
        # type 0 (Exception), as Neovim 0.7.2 answers bytes that are not MessagePack
        assert answer[2][0] == rpc.NEOVIM_EXCEPTION
        assert answer[2][1].startswith("mpk.rpc: malformed input, closing: ")
        for p in pending:
            with pytest.raises(rpc.ConnError) as ei:
                await p
            assert isinstance(ei.value.cause, exc) and ei.value.cause.kind == kind
            assert type(exc).__name__ in str(ei.value) or exc.__name__ in str(ei.value)
        with pytest.raises(EOFError):
            await read_msg(rb, u)                 # then the connection is closed
        with pytest.raises(rpc.ConnError):
            await ep.call("later")
        wb.close()
    run(main())


def test_a_message_over_max_buffer_size_ends_the_connection():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        ep = rpc.Endpoint(ra, wa, limits={"max_buffer_size": 4096})
        ep.register("echo", lambda x: x)
        pending = asyncio.ensure_future(ep.call("x"))
        u = mpk.Unpacker()
        await read_msg(rb, u)
        # ten messages that fit, arriving together in more bytes than max_buffer_size
        wb.write(b"".join(mpk.packb([0, i, "echo", ["a" * 1000]]) for i in range(1, 11)))
        for i in range(1, 11):
            assert await read_msg(rb, u) == [1, i, None, "a" * 1000]
        wb.write(mpk.packb([0, 11, "echo", ["b" * 10000]]))  # does not
        assert (await read_msg(rb, u))[:2] == [1, 0]
        with pytest.raises(rpc.ConnError) as ei:
            await pending
        assert isinstance(ei.value.cause, mpk.BufferFull)
        wb.close()
    run(main())


def test_abrupt_disconnect_mid_message_fails_every_pending_call_naming_the_cause():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        ep = rpc.Endpoint(ra, wa)
        pending = [asyncio.ensure_future(ep.call("m", i)) for i in range(5)]
        u = mpk.Unpacker()
        for _ in range(5):
            await read_msg(rb, u)
        full = mpk.packb([1, 3, None, "three"])
        wb.write(full + mpk.packb([1, 1, None, "x" * 100])[:20])   # one whole reply, half of another
        await wb.drain()
        assert await pending[2] == "three"
        wb.close()
        for i in (0, 1, 3, 4):
            with pytest.raises(rpc.ConnError, match="ended inside a message") as ei:
                await pending[i]
            assert isinstance(ei.value.cause, mpk.TruncatedError)
            assert ei.value.cause.offset == len(full)
    run(main())


def test_eof_between_messages_and_a_reset():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        ep = rpc.Endpoint(ra, wa)
        p = asyncio.ensure_future(ep.call("m"))
        await read_msg(rb)
        wb.close()
        with pytest.raises(rpc.ConnError, match="EOFError: the peer closed the connection"):
            await p
        # a reset: TCP with SO_LINGER 0
        lsock = socket.create_server(("127.0.0.1", 0))
        port = lsock.getsockname()[1]
        ep = await rpc.connect("127.0.0.1", port)
        conn, _ = await asyncio.get_running_loop().sock_accept(lsock)
        p = asyncio.ensure_future(ep.call("m"))
        assert await asyncio.get_running_loop().sock_recv(conn, 100)    # the request arrived
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
        with pytest.raises(rpc.ConnError) as ei:
            await p
        assert isinstance(ei.value.cause, ConnectionResetError)
        lsock.close()
    run(main())


def test_a_response_that_fails_to_decode_fails_only_its_call():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        ep = rpc.Endpoint(ra, wa)
        p1 = asyncio.ensure_future(ep.call("a"))
        p2 = asyncio.ensure_future(ep.call("b"))
        u = mpk.Unpacker()
        await read_msg(rb, u)
        await read_msg(rb, u)
        wb.write(bytes([0x94, 1, 1, 0xc0, 0xa1, 0xff]) + mpk.packb([1, 2, None, "fine"]))
        with pytest.raises(mpk.InvalidUTF8Error) as ei:
            await p1
        assert "in the response to a (msgid 1)" in "".join(ei.value.__notes__)
        assert await p2 == "fine"
        ep.close()
        wb.close()
    run(main())


@pytest.mark.skipif(UNDER_ASAN, reason="ASan reserves terabytes of address space: no RLIMIT_AS cap")
def test_declared_lengths_cost_nothing_until_their_bytes_arrive_under_a_memory_cap():
    """A child with its address space capped reads a 16 Mi-element array (at the limit) and a
    64 MiB str from a peer that sends a little of each and closes."""
    code = textwrap.dedent("""
        import resource
        def _vm():
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmSize:"):
                        return int(line.split()[1]) * 1024
        import asyncio, socket, mpk, mpk.rpc as rpc
        _cap = _vm() + 96 * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (_cap, _cap))
        async def one(head, body):
            a, b = socket.socketpair()
            r, w = await asyncio.open_connection(sock=a)
            ep = rpc.Endpoint(r, w)
            p = asyncio.ensure_future(ep.call("x"))
            rb, wb = await asyncio.open_connection(sock=b)
            await rb.read(100)                       # the request (so that closing is no reset)
            wb.write(head)
            for i in range(0, len(body), 4096):
                wb.write(body[i:i + 4096])
                await wb.drain()
            wb.close()
            try:
                await p
            except rpc.ConnError as e:
                print(type(e.cause).__name__, end=" ")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        asyncio.run(one(b"\\x94\\x01\\x01\\xc0\\xdd\\x01\\x00\\x00\\x00", b"\\xc0" * 100000))
        asyncio.run(one(b"\\x94\\x01\\x01\\xc0\\xdb\\x04\\x00\\x00\\x00", b"x" * 65536))
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    a, b, grown_mb = proc.stdout.split()
    assert (a, b) == ("TruncatedError", "TruncatedError")
    assert int(grown_mb) < 16
