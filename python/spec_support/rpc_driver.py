"""mpk.rpc's driver for the cross-language RPC matrix (spec/rpc/README.md):

    rpc_driver.py serve ADDR             serve the matrix methods; prints "listening ADDR" once
                                         ready, stops when stdin ends
    rpc_driver.py client ADDR SCENARIO   run one scenario against a server (its input, if any, a
                                         JSON object on stdin); prints one JSON line
    rpc_driver.py roundtrip              unpack each hex of {"values": [...]} on stdin and pack it
                                         again, without RPC; prints one JSON line

ADDR is "unix:PATH" or "tcp:HOST:PORT". Both sides use unicode_errors="surrogateescape", so a str
holding invalid UTF-8 travels as the same bytes (python/README.md, "Strings, bins and ext types").
"""
import asyncio
import json
import sys

import mpk
import mpk.rpc

ERRORS = "surrogateescape"
PIPELINE_N = 10000


def delay(i):
    return (i * 7919) % 50  # 0..49 ms, shuffled: the same permutation in every driver


def unpack(data):
    return mpk.unpackb(data, strict_map_key=False, unicode_errors=ERRORS)


def reencode(v):
    try:
        return mpk.packb(v, unicode_errors=ERRORS).hex()
    except Exception as e:  # noqa: BLE001 - reported to the runner as data
        return {"encode_error": f"{type(e).__name__}: {e}"}


async def serve(kind, where):
    server = mpk.rpc.Server(unicode_errors=ERRORS, on_error=lambda e: None)
    server.register("echo", lambda x: x)
    server.register("add", lambda a, b: a + b)

    def fail(v):
        raise mpk.rpc.Error(v)
    server.register("fail", fail)

    async def sleep_echo(ms, x):
        await asyncio.sleep(ms / 1000)
        return x
    server.register("sleep_echo", sleep_echo)

    async def callback(method, arg):
        return await mpk.rpc.current_endpoint().call(method, arg)
    server.register("callback", callback)

    async def notify_me(n):
        ep = mpk.rpc.current_endpoint()
        for i in range(n):
            await ep.notify("tick", i)
        return n
    server.register("notify_me", notify_me)

    if kind == "unix":
        await server.listen_unix(where)
        address = f"unix:{where}"
    else:
        host, _, port = where.rpartition(":")
        s = await server.listen_tcp(host, int(port))
        address = "tcp:%s:%d" % s.sockets[0].getsockname()[:2]
    print("listening " + address, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the runner closes stdin
    server.close()
    await server.wait_closed()


async def scenario_corpus(ep, inp):
    results = []
    for h in inp["values"]:
        try:
            v = unpack(bytes.fromhex(h))
        except Exception as e:  # noqa: BLE001 - a value Python's natives cannot hold (unhashable key)
            results.append({"skip": f"{type(e).__name__}: {e}"})
            continue
        local = reencode(v)
        try:
            r = await ep.call("echo", v)
        except Exception as e:  # noqa: BLE001
            results.append({"local": local, "error": f"{type(e).__name__}: {e}"})
            continue
        results.append({"local": local, "echo": reencode(r)})
    return {"results": results}


async def scenario_errors(ep, inp):
    results = []
    for h in inp["values"]:
        try:
            await ep.call("fail", unpack(bytes.fromhex(h)))
            results.append({"no_error": True})
        except mpk.rpc.RPCError as e:
            results.append(reencode(e.value))
    out = {"results": results}
    for name, (method, args) in {"unknown": ("no_such_method", ()), "arity": ("add", (1,))}.items():
        try:
            await ep.call(method, *args)
            out[name] = "no RPCError"
        except mpk.rpc.RPCError as e:
            out[name] = e.value
    return out


async def scenario_pipeline(ep, _):
    order, wrong = [], 0

    async def one(i):
        nonlocal wrong
        try:
            r = await ep.call("sleep_echo", delay(i), i)
        except Exception:  # noqa: BLE001
            r = None
        order.append(i)
        if r != i:
            wrong += 1
    await asyncio.gather(*(one(i) for i in range(PIPELINE_N)))
    inversions, top = 0, -1
    for i in order:
        if i < top:
            inversions += 1
        else:
            top = i
    return {"count": len(order), "wrong": wrong, "out_of_order": inversions}


async def scenario_notify(ep, _):
    ticks = []
    ep.register("tick", ticks.append)  # a plain function: run on the reader, in arrival order
    err = None
    try:
        r = await ep.call("notify_me", 50)
    except Exception as e:  # noqa: BLE001
        r, err = None, f"{type(e).__name__}: {e}"
    return {"result": r, "error": err, "ticks": ticks, "handled_before_reply": len(ticks),
            "handlers_run_before_reply": True}


async def scenario_callback(ep, _):
    ep.register("plus_one", lambda x: x + 1)
    try:
        return {"result": await ep.call("callback", "plus_one", 41), "error": None}
    except Exception as e:  # noqa: BLE001
        return {"result": None, "error": f"{type(e).__name__}: {e}"}


async def scenario_timeout(ep, _):
    timed_out, terr = False, None
    try:
        await ep.call("sleep_echo", 300, "late", timeout=0.05)
    except TimeoutError as e:
        timed_out, terr = True, str(e)
    except Exception as e:  # noqa: BLE001
        terr = f"{type(e).__name__}: {e}"
    # and one cancelled by the caller once it was sent
    task = asyncio.create_task(ep.call("sleep_echo", 300, "late too"))
    for _ in range(3):
        await asyncio.sleep(0)  # let the task send its request
    task.cancel()
    cancelled, cerr = False, None
    try:
        await task
    except asyncio.CancelledError:
        cancelled, cerr = True, "CancelledError"
    except Exception as e:  # noqa: BLE001
        cerr = f"{type(e).__name__}: {e}"
    errors, got = [], {"cancelled": cancelled, "cancel_error": cerr}
    # "after" is answered 400 ms after it is sent, so its reply follows the late one, which
    # must be discarded quietly meanwhile
    for key, method, args in (("during", "echo", ("during",)), ("after", "sleep_echo", (400, "after"))):
        try:
            got[key] = await ep.call(method, *args)
            errors.append(None)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {e}")
    return {"timed_out": timed_out, "timeout_error": terr, **got, "errors": errors}


async def scenario_disconnect(ep, _):
    """Against the runner's raw server: echo("first") gets a stray response for an unknown msgid
    and then its reply; echo("second") gets part of its reply, then the connection ends."""
    out = {"first": None, "first_error": None, "second_error": None, "connection_error": False}
    try:
        out["first"] = await ep.call("echo", "first")
    except Exception as e:  # noqa: BLE001
        out["first_error"] = f"{type(e).__name__}: {e}"
    try:
        await ep.call("echo", "second")
    except Exception as e:  # noqa: BLE001
        out["second_error"] = f"{type(e).__name__}: {e}"
        out["connection_error"] = isinstance(e, mpk.rpc.ConnError)
    return out


SCENARIOS = {"disconnect": scenario_disconnect, "corpus": scenario_corpus, "errors": scenario_errors, "pipeline": scenario_pipeline,
             "notify": scenario_notify, "callback": scenario_callback, "timeout": scenario_timeout}


async def client(kind, where, scenario):
    inp = json.loads(sys.stdin.read() or "null") if scenario in ("corpus", "errors") else None
    if kind == "unix":
        ep = await mpk.rpc.connect_unix(where, unicode_errors=ERRORS)
    else:
        host, _, port = where.rpartition(":")
        ep = await mpk.rpc.connect(host, int(port), unicode_errors=ERRORS)
    try:
        out = await SCENARIOS[scenario](ep, inp)
    finally:
        ep.close()
        await ep.wait_closed()
    sys.stdout.write(json.dumps(out) + "\n")


def roundtrip():
    results = []
    for h in json.loads(sys.stdin.read())["values"]:
        try:
            results.append(reencode(unpack(bytes.fromhex(h))))
        except Exception as e:  # noqa: BLE001 - a value Python's natives cannot hold
            results.append({"skip": f"{type(e).__name__}: {e}"})
    sys.stdout.write(json.dumps({"results": results}) + "\n")


def main(argv):
    if argv == ["roundtrip"]:
        return roundtrip()
    if len(argv) < 2 or argv[0] not in ("serve", "client") or (argv[0] == "client" and len(argv) < 3):
        sys.exit("usage: rpc_driver.py serve ADDR | client ADDR SCENARIO")
    kind, _, where = argv[1].partition(":")
    if argv[0] == "serve":
        asyncio.run(serve(kind, where))
    else:
        asyncio.run(client(kind, where, argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
