"""mpk.rpc transports: TCP and Unix sockets (Server, connect), stdio and a spawned child, and the
blocking Client against an asyncio Server running in another thread."""
import asyncio
import sys
import threading

import pytest

import mpk.rpc as rpc
from test_rpc import run


def make_server():
    srv = rpc.Server()
    srv.register("add", lambda a, b: a + b)

    @srv.register("slow")
    async def slow(x, delay):
        await asyncio.sleep(delay)
        return x

    @srv.register("back")
    async def back(x):
        ep = rpc.current_endpoint()
        await ep.notify("note", "before")
        return await ep.call("client_fn", x)

    return srv


def test_tcp_and_unix_servers(tmp_path):
    async def main():
        srv = make_server()
        connected = []
        srv.on_connect = connected.append
        tcp = await srv.listen_tcp("127.0.0.1", 0)
        path = str(tmp_path / "rpc.sock")
        await srv.listen_unix(path)
        port = tcp.sockets[0].getsockname()[1]
        c1 = await rpc.connect("127.0.0.1", port)
        c2 = await rpc.connect_unix(path)
        notes = []
        for c in (c1, c2):
            c.register("client_fn", lambda x: x * 2)
            c.register("note", notes.append)
        assert await asyncio.gather(c1.call("add", 1, 2), c2.call("add", 3, 4)) == [3, 7]
        assert await c1.call("back", 21) == 42 and await c2.call("back", 5) == 10
        assert notes == ["before", "before"]
        assert len(connected) == 2 and len(srv.endpoints) == 2
        srv.close()
        await srv.wait_closed()
        for c in (c1, c2):
            await c.wait_closed()
            assert isinstance(c.error.cause, EOFError)
    run(main())


CHILD = """
import asyncio, sys
import mpk.rpc as rpc

async def main():
    ep = await rpc.stdio()
    ep.register("add", lambda a, b: a + b)

    @ep.register("back")
    async def back(x):
        return await rpc.current_endpoint().call("parent_fn", x) + 1

    await ep.wait_closed()

asyncio.run(main())
"""


def test_spawned_child_on_stdio(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)

    async def main():
        ep, proc = await rpc.spawn(sys.executable, str(script))
        ep.register("parent_fn", lambda x: x * 100)
        assert await ep.call("add", 2, 3) == 5
        assert await ep.call("back", 4) == 401
        await ep.aclose()
        assert await proc.wait() == 0     # the child saw EOF on its stdin and returned
    run(main())


class ServerThread:
    """An asyncio Server in a thread, for the blocking client."""

    def __init__(self, tmp_path):
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.path = str(tmp_path / "c.sock")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(30)

    def _run(self):
        asyncio.set_event_loop(self.loop)

        async def start():
            self.srv = make_server()
            tcp = await self.srv.listen_tcp("127.0.0.1", 0)
            await self.srv.listen_unix(self.path)
            self.port = tcp.sockets[0].getsockname()[1]
            self.ready.set()
            self.stop = asyncio.Event()
            await self.stop.wait()
            self.srv.close()
            await self.srv.wait_closed()

        self.loop.run_until_complete(start())
        self.loop.close()

    def close(self):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(30)


def test_blocking_client(tmp_path):
    st = ServerThread(tmp_path)
    try:
        notes = []
        with rpc.Client(("127.0.0.1", st.port)) as c:
            c.register("client_fn", lambda x: [x, "from the client"])
            c.register("note", notes.append)
            assert c.call("add", 1, 2) == 3
            with pytest.raises(rpc.RPCError) as ei:
                c.call("add", 1)
            assert ei.value.neovim() == (0, "Wrong number of arguments: expecting 2 but got 1")
            # the server calls back into the client while the client's call is pending
            assert c.call("back", 7) == [7, "from the client"]
            assert notes == ["before"]
            # a timeout: the late reply is discarded when it comes, the next call gets its own
            with pytest.raises(TimeoutError, match="no reply within"):
                c.call("slow", "late", 0.3, timeout=0.05)
            assert c.call("slow", "on time", 0.4) == "on time"
            assert c._abandoned == set()
            c.notify("add", 1, 1)
        with pytest.raises(rpc.ConnError):
            c.call("add", 1, 2)
        with rpc.Client(st.path) as c:
            assert c.call("add", "a", "b") == "ab"
    finally:
        st.close()


def test_blocking_client_shared_by_threads(tmp_path):
    # The README says calls from several threads are serialised: each thread gets the reply to
    # its own call, however the threads interleave (the server answers "slow" out of order).
    st = ServerThread(tmp_path)
    try:
        with rpc.Client(("127.0.0.1", st.port)) as c:
            wrong = []

            def worker(t):
                try:
                    for i in range(100):
                        if i % 10 == 0:
                            got = c.call("slow", [t, i], 0.001)
                            if got != [t, i]:
                                wrong.append((t, i, got))
                        else:
                            got = c.call("add", t * 1000, i)
                            if got != t * 1000 + i:
                                wrong.append((t, i, got))
                        if i % 25 == 0:
                            c.notify("add", t, i)
                except Exception as e:  # an exception in a thread is a wrong answer too
                    wrong.append((t, repr(e)))

            threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(60)
            assert not any(th.is_alive() for th in threads)
            assert wrong == []
            assert c.call("add", 20, 22) == 42
    finally:
        st.close()
