"""mpk.rpc: the asyncio Endpoint between two mpk endpoints (calls, ordering, callbacks, timeouts,
cancellation, lifecycle) and raw peers that send exactly the bytes a test needs."""
import asyncio
import random
import socket

import pytest

import mpk
import mpk.rpc as rpc


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


async def until(cond):
    """Waits (yielding to the loop) until cond() is true; the test's own timeout bounds it."""
    while not cond():
        await asyncio.sleep(0.005)


async def stream_pair():
    """Two (reader, writer) pairs joined by a socketpair."""
    a, b = socket.socketpair()
    ra, wa = await asyncio.open_connection(sock=a)
    rb, wb = await asyncio.open_connection(sock=b)
    return (ra, wa), (rb, wb)


async def endpoint_pair(**opts):
    (ra, wa), (rb, wb) = await stream_pair()
    return rpc.Endpoint(ra, wa, **opts), rpc.Endpoint(rb, wb, **opts)


async def read_msg(reader, unpacker=None):
    u = unpacker or mpk.Unpacker(strict_map_key=False)
    while True:
        try:
            return u.unpack()
        except mpk.OutOfData:
            data = await reader.read(65536)
            if not data:
                raise EOFError
            u.feed(data)


def test_call_result_error_and_arity():
    async def main():
        a, b = await endpoint_pair()
        b.register("add", lambda x, y: x + y)
        b.register("opt", lambda x, y=2, *rest: [x, y, list(rest)])

        @b.register("fail")
        async def fail(x):
            raise LookupError(f"no colour for {x}")

        b.register("value", lambda: (_ for _ in ()).throw(rpc.Error({"code": 7, "message": "seven"})))
        assert await a.call("add", 1, 2) == 3
        assert await a.call("opt", 1) == [1, 2, []]
        assert await a.call("opt", 1, 5, 6, 7) == [1, 5, [6, 7]]
        with pytest.raises(rpc.RPCError) as ei:
            await a.call("fail", "kiwi")
        e = ei.value
        assert e.method == "fail" and e.msgid == 4
        assert e.value == [0, "LookupError: no colour for kiwi"]
        assert e.neovim() == (0, "LookupError: no colour for kiwi")
        assert str(e) == "mpk.rpc: fail (msgid 4) failed: LookupError: no colour for kiwi"
        with pytest.raises(rpc.RPCError) as ei:
            await a.call("value")
        assert ei.value.code_message() == (7, "seven") and ei.value.message == "seven"
        with pytest.raises(rpc.RPCError) as ei:
            await a.call("add", 1)
        assert ei.value.value == [0, "Wrong number of arguments: expecting 2 but got 1"]
        with pytest.raises(rpc.RPCError) as ei:
            await a.call("opt")
        assert ei.value.value == [0, "Wrong number of arguments: expecting at least 1 but got 0"]
        with pytest.raises(rpc.RPCError) as ei:
            await a.call("nope", 1)
        assert ei.value.value == [0, "Invalid method: nope"]
        # an argument with no MessagePack form fails the call before anything is sent
        with pytest.raises(TypeError):
            await a.call("add", object(), 1)
        assert await a.call("add", "x", "y") == "xy"
        await a.aclose()
        await b.wait_closed()
        assert isinstance(b.error.cause, EOFError)
    run(main())


def test_error_helpers():
    assert rpc.error_message("boom") == "boom"
    assert rpc.error_message(b"boom") == "boom"
    assert rpc.error_message([1, "Invalid buffer id: 9"]) == "Invalid buffer id: 9"
    assert rpc.neovim_error([1, "x"]) == (1, "x") and rpc.neovim_error([1, 2]) is None
    assert rpc.code_message_error({"code": -32601, "message": "no"}) == (-32601, "no")
    assert rpc.code_message_error({"code": "x", "message": "no"}) is None
    assert rpc.error_message({"msg": "m"}) == "m"
    assert rpc.error_message(42) == "42"


def test_10000_pipelined_calls_answered_in_shuffled_order():
    """A raw server reads 10,000 requests, then answers them in a random order; every call gets
    its own result."""
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        client = rpc.Endpoint(ra, wa)
        n = 10000
        calls = [asyncio.ensure_future(client.call("echo", i, str(i))) for i in range(n)]
        u = mpk.Unpacker()
        reqs = [await read_msg(rb, u) for _ in range(n)]
        assert sorted(r[1] for r in reqs) == list(range(1, n + 1))
        random.Random(14).shuffle(reqs)
        for r in reqs:
            wb.write(mpk.packb([1, r[1], None, r[3]]))
        await wb.drain()
        results = await asyncio.gather(*calls)
        assert results == [[i, str(i)] for i in range(n)]
        assert not client._pending
        client.close()
        wb.close()
    run(main())


def test_notifications_in_arrival_order_sync_and_async():
    async def main():
        a, b = await endpoint_pair()
        got = []
        b.register("sync", lambda i: got.append(("s", i)))

        @b.register("slow")
        async def slow(i):
            await asyncio.sleep(0.001 * (i % 3))
            got.append(("a", i))

        b.register("ping", lambda: "pong")
        for i in range(200):
            await a.notify("slow" if i % 2 else "sync", i)
        assert await a.call("ping") == "pong"
        while len(got) < 200:
            await asyncio.sleep(0.01)
        assert [i for _, i in got] == list(range(200))
        # plain-function notifications that arrived before a response are handled before the call
        # returns (the reader runs them)
        got.clear()
        for i in range(5):
            await a.notify("sync", i)
        assert await a.call("ping") == "pong" and [i for _, i in got] == list(range(5))
        a.close()
        b.close()
    run(main())


def test_server_calls_back_into_the_client_during_a_pending_call():
    async def main():
        a, b = await endpoint_pair()
        a.register("client_side", lambda x: x * 10)

        @b.register("outer")
        async def outer(x):
            ep = rpc.current_endpoint()
            assert ep is b
            return await ep.call("client_side", x) + 1

        assert await a.call("outer", 4) == 41
        # requests run concurrently: two handlers waiting on each other both finish
        ev = asyncio.Event()

        @b.register("wait")
        async def wait():
            await ev.wait()
            return "waited"

        @b.register("set")
        async def set_():
            ev.set()
            return "set"

        w = asyncio.ensure_future(a.call("wait"))
        assert await a.call("set") == "set"
        assert await w == "waited"
        a.close()
        b.close()
    run(main())


def test_timeout_and_cancellation_stay_local_late_replies_discarded():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        errors = []
        client = rpc.Endpoint(ra, wa, on_error=errors.append)
        u = mpk.Unpacker()
        with pytest.raises(TimeoutError, match=r"slow \(msgid 1\): no reply within 0.05 s"):
            await client.call("slow", timeout=0.05)
        t = asyncio.ensure_future(client.call("slow2"))
        r1 = await read_msg(rb, u)
        r2 = await read_msg(rb, u)
        assert (r1[1], r2[1]) == (1, 2)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
        assert client._pending == {} and client._abandoned == {1, 2}
        # the ids of abandoned calls are skipped while their reply may still come
        c3 = asyncio.ensure_future(client.call("next"))
        r3 = await read_msg(rb, u)
        assert r3[1] == 3
        # late replies: discarded quietly (no on_error, no answer); the connection goes on
        wb.write(mpk.packb([1, 2, None, "late"]) + mpk.packb([1, 1, "err", None])
                 + mpk.packb([1, 3, None, "third"]))
        assert await c3 == "third"
        assert errors == [] and client._abandoned == set()
        # nothing was sent for the cancellations: the next bytes are the next request
        c4 = asyncio.ensure_future(client.call("four"))
        assert (await read_msg(rb, u))[:3] == [0, 4, "four"]
        wb.write(mpk.packb([1, 4, None, 4]))
        assert await c4 == 4
        client.close()
        wb.close()
    run(main())


def test_msgids_wrap_before_2_32_and_skip_pending_ids():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        client = rpc.Endpoint(ra, wa)
        u = mpk.Unpacker()
        c1 = asyncio.ensure_future(client.call("one"))       # msgid 1, kept pending
        assert (await read_msg(rb, u))[1] == 1
        client._next_id = 2**32 - 2
        cs = [asyncio.ensure_future(client.call("c", i)) for i in range(3)]
        ids = [(await read_msg(rb, u))[1] for _ in range(3)]
        assert ids == [2**32 - 2, 2**32 - 1, 2]               # 0 is never used, 1 is pending
        for i, c in zip(ids, range(3)):
            wb.write(mpk.packb([1, i, None, c]))
        wb.write(mpk.packb([1, 1, None, "one"]))
        assert await asyncio.gather(*cs) == [0, 1, 2] and await c1 == "one"
        client.close()
        wb.close()
    run(main())


def test_close_cancels_and_aclose_drains():
    async def main():
        a, b = await endpoint_pair()
        gate = asyncio.Event()

        @b.register("slow")
        async def slow():
            await gate.wait()
            return "done"

        pending = asyncio.ensure_future(a.call("slow"))
        await until(lambda: b._running == 1)
        a.close()
        with pytest.raises(rpc.ConnError) as ei:
            await pending
        assert isinstance(ei.value.cause, rpc.EndpointClosed)
        with pytest.raises(rpc.ConnError):
            await a.call("slow")                  # later calls fail with the same error
        await a.wait_closed()
        await b.wait_closed()                     # b saw EOF; its handler was cancelled
        assert isinstance(b.error.cause, EOFError)

        # aclose drains: the pending call is answered before the connection closes
        a, b = await endpoint_pair()
        gate = asyncio.Event()
        b.register("slow", slow)
        pending = asyncio.ensure_future(a.call("slow"))
        await until(lambda: b._running == 1)
        closing = asyncio.ensure_future(a.aclose())
        for _ in range(10):
            await asyncio.sleep(0)
        assert not closing.done()
        gate.set()
        assert await pending == "done"
        await closing
        assert isinstance(a.error.cause, rpc.EndpointClosed)
        # aclose with a timeout closes at once when it passes
        a, b = await endpoint_pair()
        gate = asyncio.Event()
        b.register("slow", slow)
        pending = asyncio.ensure_future(a.call("slow"))
        await until(lambda: b._running == 1)
        with pytest.raises(TimeoutError):
            await a.aclose(timeout=0.05)
        with pytest.raises(rpc.ConnError):
            await pending
        b.close()
    run(main())


def test_max_handlers_bounds_running_requests():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        a = rpc.Endpoint(ra, wa)
        b = rpc.Endpoint(rb, wb, max_handlers=3)
        running, peak = 0, 0
        gate = asyncio.Event()

        @b.register("work")
        async def work(i):
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await gate.wait()
            running -= 1
            return i

        calls = [asyncio.ensure_future(a.call("work", i)) for i in range(20)]
        # The three started handlers run their first step some loop turns after their requests
        # were read: wait for them too, not only for the queue.
        await until(lambda: len(b._reqs) == 17 and running == 3)
        assert peak == 3
        gate.set()
        assert await asyncio.gather(*calls) == list(range(20))
        assert peak == 3
        a.close()
        b.close()
    run(main())


def test_queued_requests_answer_every_outcome():
    """Requests that wait in the queue (max_handlers reached) are served later by the task path:
    a plain function that raises, one that returns a value, one that returns an awaitable that
    fails, and a coroutine that raises each get their own response, in order."""
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        a = rpc.Endpoint(ra, wa)
        b = rpc.Endpoint(rb, wb, max_handlers=1)
        gate = asyncio.Event()

        @b.register("hold")
        async def hold():
            await gate.wait()
            return "held"

        async def later_fail():
            raise KeyError("later")

        async def co_fail(x):
            raise ValueError(f"co {x}")

        b.register("raise_now", lambda: 1 / 0)
        b.register("value", lambda x: x * 2)
        b.register("aw_fail", lambda: later_fail())
        b.register("co_fail", co_fail)
        held = asyncio.ensure_future(a.call("hold", timeout=20))
        await until(lambda: b._running == 1)
        # the coroutine queues first; the plain functions then queue behind it (a plain function
        # runs at once only while nothing waits)
        calls = [asyncio.ensure_future(a.call(*c, timeout=20))
                 for c in (("co_fail", 3), ("raise_now",), ("value", 21), ("aw_fail",))]
        await until(lambda: len(b._reqs) == 4)
        gate.set()
        results = await asyncio.gather(held, *calls, return_exceptions=True)
        assert results[0] == "held" and results[3] == 42
        assert isinstance(results[1], rpc.RPCError) and results[1].value == [0, "ValueError: co 3"]
        assert isinstance(results[2], rpc.RPCError)
        assert results[2].value == [0, "ZeroDivisionError: division by zero"]
        assert isinstance(results[4], rpc.RPCError) and results[4].value == [0, "KeyError: 'later'"]
        assert b._running == 0 and not b._reqs
        a.close()
        b.close()
    run(main())


def test_neovim_ext_handles_and_bin_as_str():
    async def main():
        a, b = await endpoint_pair(**rpc.neovim_options())
        b.register("echo", lambda *xs: list(xs))
        got = await a.call("echo", rpc.Buffer(3), [rpc.Window(1000), rpc.Tabpage(2)], b"bin", "\udcff")
        assert got == [rpc.Buffer(3), [rpc.Window(1000), rpc.Tabpage(2)], "bin", "\udcff"]
        a.close()
        b.close()
        # on the wire: ext 0/1/2 with a packed int payload; bin and invalid UTF-8 as sent
        (ra, wa), (rb, wb) = await stream_pair()
        c = rpc.Endpoint(ra, wa, **rpc.neovim_options())
        call = asyncio.ensure_future(c.call("m", rpc.Buffer(300), "\udcff"))
        req = await read_msg(rb, mpk.Unpacker(raw=True))
        assert req[3] == [mpk.ExtType(0, mpk.packb(300)), b"\xff"]
        wb.write(bytes([0x94, 1, req[1], 0xc0, 0x92, 0xd4, 2, 5, 0xc4, 1, 0x61]))
        assert await call == [rpc.Tabpage(5), "a"]
        c.close()
        wb.close()
    run(main())


def test_strict_utf8_request_gets_an_error_and_the_stream_goes_on():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        errors = []
        server = rpc.Endpoint(ra, wa, on_error=errors.append)
        server.register("echo", lambda x: x)
        u = mpk.Unpacker()
        wb.write(bytes([0x94, 0, 9, 0xa4]) + b"echo" + bytes([0x91, 0xa1, 0xff]))
        resp = await read_msg(rb, u)
        assert resp[:2] == [1, 9] and resp[3] is None
        assert resp[2][1].startswith("mpk.rpc: cannot decode the request: InvalidUTF8Error")
        wb.write(mpk.packb([0, 10, "echo", ["ok"]]))
        assert await read_msg(rb, u) == [1, 10, None, "ok"]
        server.close()
        wb.close()
    run(main())


def test_duplicate_map_keys_keep_the_last_value():
    # spec/README.md, "Maps with duplicate keys": the last value wins
    assert mpk.unpackb(b"\x83\xa1a\x01\xa1b\x02\xa1a\x03") == {"a": 3, "b": 2}
    assert mpk.unpackb(b"\x82\x01\xa1x\x01\xa1y", strict_map_key=False) == {1: "y"}


def test_unpackable_result_awaitable_from_plain_function_and_notification_errors():
    async def main():
        a, b = await endpoint_pair()
        errors = []
        b._on_error = errors.append
        b.register("bad_result", lambda: object())

        async def later(x):
            await asyncio.sleep(0)
            return x + 1
        b.register("plain_returns_awaitable", lambda x: later(x))
        b.register("boom", lambda: 1 / 0)
        b.register("one", lambda x: None)
        with pytest.raises(rpc.RPCError) as ei:
            await a.call("bad_result")
        assert ei.value.message.startswith("mpk.rpc: cannot encode the response: TypeError")
        assert await a.call("plain_returns_awaitable", 1) == 2
        await a.notify("boom")
        await a.notify("missing", 1)
        await a.notify("one")
        await a.call("plain_returns_awaitable", 0)      # the notifications are read by now
        await asyncio.sleep(0.01)
        msgs = [str(e) for e in errors]
        assert "ZeroDivisionError" in msgs[0]
        assert "notification 'missing': no handler" in msgs[1]
        assert "Wrong number of arguments: expecting 1 but got 0" in msgs[2]
        a.close()
        b.close()
    run(main())


def test_notifications_sent_before_the_peer_closes_are_still_handled():
    async def main():
        (ra, wa), (rb, wb) = await stream_pair()
        got = []
        ep = rpc.Endpoint(ra, wa)

        @ep.register("n")
        async def n(i):
            await asyncio.sleep(0.001)
            got.append(i)

        for i in range(50):
            wb.write(mpk.packb([2, "n", [i]]))
        wb.close()
        await ep.wait_closed()
        assert got == list(range(50)) and isinstance(ep.error.cause, EOFError)
    run(main())


def test_blocking_client_ends_on_malformed_bytes_after_a_msgid_0_answer():
    a, b = socket.socketpair()
    c = rpc.Client(sock=a)
    b.sendall(b"\xc1")
    b.settimeout(10)
    with pytest.raises(rpc.ConnError) as ei:
        c.call("x")
    assert isinstance(ei.value.cause, mpk.FormatError)
    u = mpk.Unpacker()
    u.feed(b.recv(4096))
    assert u.unpack()[:2] == [0, 1]                     # the request
    while True:
        try:
            answer = u.unpack()
            break
        except mpk.OutOfData:
            u.feed(b.recv(4096))
    assert answer[:2] == [1, 0] and answer[2][0] == 0 and "malformed input, closing" in answer[2][1]
    b.close()
