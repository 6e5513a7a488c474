#!/usr/bin/env python3
"""The cross-language MessagePack-RPC matrix (spec/rpc/README.md).

    python3 spec/rpc/run.py [--client NAME]... [--server NAME]... [--scenario NAME]... [--no-hostile]

Starts each language's RPC driver as a server on a Unix socket in a temporary folder, runs every
client scenario of every driver against it, then connects to each server itself as a raw socket
client and sends hostile frames. Prints the client x server table and ends with
`rpc: N passed, M failed`; exits non-zero on any failure. Standard library only.
"""
import argparse
import glob
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import reference as ref  # noqa: E402

sys.setrecursionlimit(20000)  # spec/vectors/depth.json nests deeper than json's default allows

# name -> command (relative to the repository's root); built by mk/rpc.mk's test-rpc
DRIVERS = {
    "go": ["build/rpc/go-rpcdriver"],
    "js": ["node", "js/build/test/driver/rpc.js"],
    "python": [os.environ.get("MPK_RPC_PYTHON", "python/build/venv-3.11/bin/python"),
               "python/spec_support/rpc_driver.py"],
}
SCENARIO_TIMEOUT = 60.0
# Depth counts from the message: the envelope and the params array take two levels of the
# endpoints' 1024, so a corpus value nested deeper than this cannot travel as an argument.
MAX_ARG_DEPTH = 1000
# Calls in flight at once in the pipeline scenario (the drivers' PIPELINE_N / pipelineN).
PIPELINE_N = 10_000


# ----------------------------------------------------------------------------------------------
# msgpack helpers (reference codec)
# ----------------------------------------------------------------------------------------------

def depth(v):
    """Nesting depth of a reference-decoded value (a scalar is 1)."""
    best, stack = 1, [(v, 1)]
    while stack:
        x, d = stack.pop()
        best = max(best, d)
        if isinstance(x, dict):
            t = x.get("typed_array") if "typed_array" in x else None
            if t is not None:
                stack += [(e, d + 1) for e in t]
            elif "typed_map" in x:
                for k, e in x["typed_map"]:
                    stack += [(k, d + 1), (e, d + 1)]
    return best


def corpus_values():
    """(name, canonical hex) of every positive corpus case that fits in an RPC argument."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "spec", "vectors", "*.json"))):
        with open(path, encoding="utf-8") as f:
            cases = json.load(f)
        for i, c in enumerate(cases):
            if not isinstance(c.get("msgpack"), list) or "error" in c or "limits" in c:
                continue
            h = c["msgpack"][0].replace("-", "")
            if depth(ref.decode(bytes.fromhex(h))) > MAX_ARG_DEPTH:
                continue
            out.append((f"{os.path.basename(path)}[{i}] {c.get('name', '')}", h))
    return out


# Error values for fail(v): a string, Neovim's [type, message], {code, message}, an int, a
# nested map with a bin (hex of their canonical encodings)
ERROR_VALUES = [
    ref.encode({"string": "boom"}).hex(),
    ref.encode({"typed_array": [{"int": 0}, {"string": "exception text"}]}).hex(),
    ref.encode({"map": {"code": 42, "message": "the answer"}}).hex(),
    ref.encode({"int": -7}).hex(),
    ref.encode({"typed_map": [[{"string": "detail"}, {"binary": "00ff"}],
                              [{"int": 1}, {"typed_array": [{"bool": True}, {"nil": None}]}]]}).hex(),
]


# ----------------------------------------------------------------------------------------------
# Servers
# ----------------------------------------------------------------------------------------------

class Server:
    def __init__(self, name, address):
        self.name = name
        self.proc = subprocess.Popen(DRIVERS[name] + ["serve", address], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening "):
            self.stop()
            raise RuntimeError(f"{name} server did not start: {line!r}")
        self.address = line[len("listening "):]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def run_client(name, address, scenario, payload=None):
    """One client scenario; returns its JSON answer or raises with what went wrong."""
    try:
        p = subprocess.run(DRIVERS[name] + ["client", address, scenario], cwd=ROOT,
                           input=json.dumps(payload) if payload is not None else "",
                           capture_output=True, text=True, timeout=SCENARIO_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"no answer within {SCENARIO_TIMEOUT} s")
    except OSError as e:  # the driver is not built
        raise AssertionError(f"cannot run {DRIVERS[name][0]}: {e}")
    if p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}: {p.stderr.strip()[-400:]}")
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise AssertionError(f"not one JSON line: {p.stdout[:200]!r} {p.stderr[-300:]!r}")


# ----------------------------------------------------------------------------------------------
# Scenario checks: each returns a list of failure strings
# ----------------------------------------------------------------------------------------------

def _head(b, i):
    """(header end, count of nested values, payload bytes, is_map) of the value at b[i]."""
    t = b[i]
    if t <= 0x7f or t >= 0xe0 or t in (0xc0, 0xc2, 0xc3):
        return i + 1, 0, 0, False
    if 0x80 <= t <= 0x8f:
        return i + 1, 2 * (t & 0x0f), 0, True
    if 0x90 <= t <= 0x9f:
        return i + 1, t & 0x0f, 0, False
    if 0xa0 <= t <= 0xbf:
        return i + 1, 0, t & 0x1f, False
    size = {0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8, 0xd0: 1, 0xd1: 2, 0xd2: 4, 0xd3: 8, 0xca: 4, 0xcb: 8}
    if t in size:
        return i + 1, 0, size[t], False
    fixext = {0xd4: 1, 0xd5: 2, 0xd6: 4, 0xd7: 8, 0xd8: 16}
    if t in fixext:
        return i + 2, 0, fixext[t], False
    lens = {0xc4: 1, 0xc5: 2, 0xc6: 4, 0xd9: 1, 0xda: 2, 0xdb: 4, 0xc7: 1, 0xc8: 2, 0xc9: 4,
            0xdc: 2, 0xdd: 4, 0xde: 2, 0xdf: 4}
    if t not in lens:
        raise ValueError(f"byte {t:#x}")
    w = lens[t]
    n = int.from_bytes(b[i + 1:i + 1 + w], "big")
    end = i + 1 + w + (1 if t in (0xc7, 0xc8, 0xc9) else 0)
    if t in (0xdc, 0xdd):
        return end, n, 0, False
    if t in (0xde, 0xdf):
        return end, 2 * n, 0, True
    return end, 0, n, False


def unordered(b, i=0):
    """(bytes of the value at b[i] with every map's pairs sorted by their bytes, end): the bytes of
    two values equal up to the order of map pairs are then the same."""
    end, nested, payload, is_map = _head(b, i)
    head = b[i:end]
    if not nested:
        return b[i:end + payload], end + payload
    parts = []
    for _ in range(nested):
        part, end = unordered(b, end)
        parts.append(part)
    if is_map:
        parts = sorted(parts[k] + parts[k + 1] for k in range(0, len(parts), 2))
    return head + b"".join(parts), end


def same_value(a, b):
    """(equal, how): the same bytes, else equal as values up to the order of map pairs."""
    if a == b:
        return True, "bytes"
    try:
        return unordered(bytes.fromhex(a))[0] == unordered(bytes.fromhex(b))[0], "map order"
    except (ValueError, IndexError, TypeError):
        return False, None


STATS = {}
HELD = {}  # language -> indices of the corpus values its native values hold


def native_holds(lang, values):
    """The indices of the values that lang's codec gives back unchanged (up to map order) after
    decoding them into its native values and encoding them again, with no RPC involved."""
    p = subprocess.run(DRIVERS[lang] + ["roundtrip"], cwd=ROOT, capture_output=True, text=True,
                       input=json.dumps({"values": [h for _, h in values]}), timeout=SCENARIO_TIMEOUT)
    if p.returncode != 0:
        raise RuntimeError(f"{lang} roundtrip: exit {p.returncode}: {p.stderr[-300:]}")
    res = json.loads(p.stdout)["results"]
    return {i for i, ((_, h), r) in enumerate(zip(values, res)) if isinstance(r, str) and same_value(h, r)[0]}


def check_corpus(client, address, values, server=None):
    a = run_client(client, address, "corpus", {"values": [h for _, h in values]})
    res = a.get("results", [])
    if len(res) != len(values):
        return [f"{len(res)} results for {len(values)} values"]
    out, stats = [], {"bytes": 0, "map order": 0, "skipped": 0}
    held = HELD[client] & HELD[server]
    for i, ((n, h), r) in enumerate(zip(values, res)):
        # a value the client's or the server's native values cannot hold (a map with a bin key in
        # Go, a float32 in Python...) is not the transport's business: that language's own round
        # trip, with no RPC, already changes it
        if i not in held:
            stats["skipped"] += 1
            continue
        ok, how = same_value(h, r["echo"]) if isinstance(r, dict) and isinstance(r.get("echo"), str) else (False, None)
        if ok:
            stats[how] += 1
        else:
            out.append(f"{n}: sent {h[:60]}, got back {short(r.get('echo', r.get('error')) if isinstance(r, dict) else r)}")
    STATS[(client, address)] = stats
    return out


def check_errors(client, address, _):
    a = run_client(client, address, "errors", {"values": ERROR_VALUES})
    out = [f"fail({h}): error value re-encoded as {short(r)}"
           for h, r in zip(ERROR_VALUES, a.get("results", []))
           if not (isinstance(r, str) and same_value(h, r)[0])]
    if len(a.get("results", [])) != len(ERROR_VALUES):
        out.append(f"{len(a.get('results', []))} error results for {len(ERROR_VALUES)}")
    # Neovim's words, which every README documents for these two
    if not (isinstance(a.get("unknown"), list) and len(a["unknown"]) == 2
            and a["unknown"][1] == "Invalid method: no_such_method"):
        out.append(f"unknown method: error {short(a.get('unknown'))}")
    if not (isinstance(a.get("arity"), list) and len(a["arity"]) == 2
            and a["arity"][1] == "Wrong number of arguments: expecting 2 but got 1"):
        out.append(f"wrong params count: error {short(a.get('arity'))}")
    return out


def check_pipeline(client, address, _):
    a = run_client(client, address, "pipeline")
    out = []
    if a.get("count") != PIPELINE_N or a.get("wrong") != 0:
        out.append(f"{PIPELINE_N} pipelined calls: {a.get('count')} replies, {a.get('wrong')} wrong")
    if not a.get("out_of_order"):
        out.append("the replies all came in request order (the delays should reorder them)")
    return out


def check_notify(client, address, _):
    a = run_client(client, address, "notify")
    out = []
    if a.get("result") != 50 or a.get("error") is not None:
        out.append(f"notify_me(50) = {short(a.get('result'))}, error {a.get('error')}")
    if a.get("ticks") != list(range(50)):
        out.append(f"ticks {short(a.get('ticks'))}, want 0..49 in order")
    # clients whose tick handler has run when the call returns (documented for js and python's
    # plain-function handlers) must have seen every tick first: the servers send them before
    # notify_me's reply
    if a.get("handlers_run_before_reply") and a.get("handled_before_reply") != 50:
        out.append(f"only {a.get('handled_before_reply')} ticks handled before notify_me's reply")
    return out


def check_callback(client, address, _):
    a = run_client(client, address, "callback")
    if a.get("result") != 42 or a.get("error") is not None:
        return [f"callback('plus_one', 41) = {short(a.get('result'))}, error {a.get('error')}"]
    return []


def check_timeout(client, address, _):
    a = run_client(client, address, "timeout")
    out = []
    if not a.get("timed_out"):
        out.append(f"sleep_echo(300) with a 50 ms timeout did not time out: {a.get('timeout_error')}")
    if not a.get("cancelled"):
        out.append(f"sleep_echo(300) cancelled by the caller did not fail with the cancellation: {a.get('cancel_error')}")
    # the TS endpoint counts the late replies it dropped (js/README.md: "discarded quietly (counted
    # in discardedResponses)"): both have come before "after"'s reply
    if "discarded_responses" in a and a["discarded_responses"] != 2:
        out.append(f"{a['discarded_responses']} late replies discarded, want 2")
    if a.get("during") != "during" or a.get("after") != "after" or any(a.get("errors", [1])):
        out.append(f"calls around the late reply: {short(a)}")
    return out


SCENARIOS = {"corpus": check_corpus, "errors": check_errors, "pipeline": check_pipeline,
             "notify": check_notify, "callback": check_callback, "timeout": check_timeout}


def short(v, n=160):
    s = json.dumps(v) if not isinstance(v, str) else v
    return s if len(s) <= n else s[:n] + "..."


# ----------------------------------------------------------------------------------------------
# Hostile frames: the runner as a raw socket client
# ----------------------------------------------------------------------------------------------

class Raw:
    def __init__(self, address):
        kind, _, where = address.partition(":")
        if kind == "unix":
            self.s = socket.socket(socket.AF_UNIX)
            self.s.connect(where)
        else:
            host, _, port = where.rpartition(":")
            self.s = socket.create_connection((host, int(port)))
        self.s.settimeout(10)
        self.buf = b""
        self.seen = []  # every message (or "EOF") read, for the report

    def send(self, b):
        self.s.sendall(b)

    def read_message(self):
        """The next whole message decoded by the reference codec, or "EOF"."""
        while True:
            if self.buf:
                try:
                    v, n = decode_prefix(self.buf)
                    self.buf = self.buf[n:]
                    self.seen.append(plain(v))
                    return v
                except ref.DecodeError as e:
                    if e.kind != "truncated":
                        raise
            chunk = self.s.recv(65536)
            if not chunk:
                self.seen.append("EOF")
                return "EOF"
            self.buf += chunk

    def close(self):
        self.s.close()


def decode_prefix(b):
    """Decode the first value of b; returns (typed value, length)."""
    for n in range(1, len(b) + 1):
        try:
            return ref.decode(b[:n]), n
        except ref.DecodeError as e:
            if e.kind == "trailing":  # cannot happen for a prefix that just completed
                raise
            if e.kind != "truncated":
                raise
    raise ref.DecodeError("truncated", len(b))


def plain(v):
    """A reference typed value as plain Python (ints, str, lists, dicts as pair lists)."""
    (k, x), = v.items()
    if k == "nil":
        return None
    if k in ("int", "bignum"):
        return int(x)
    if k == "typed_array":
        return [plain(e) for e in x]
    if k == "typed_map":
        return [[plain(a), plain(b)] for a, b in x]
    if k == "string_hex":
        return bytes.fromhex(x).decode("utf-8", "replace")
    return x


def enc(v):
    return ref.encode(v)


def request(msgid, method, params):
    return enc({"typed_array": [{"int": 0}, {"int": msgid}, {"string": method},
                                {"typed_array": params}]})


def echo_works(raw, msgid=77):
    raw.send(request(msgid, "echo", [{"string": "still here"}]))
    m = raw.read_message()
    return m != "EOF" and plain(m) == [1, msgid, None, "still here"]


def msgid0_error(m):
    """The error text of a [1, 0, [type, text], nil] answer, else None."""
    if m == "EOF":
        return None
    p = plain(m)
    if (isinstance(p, list) and len(p) == 4 and p[:2] == [1, 0] and p[3] is None
            and isinstance(p[2], list) and len(p[2]) == 2 and isinstance(p[2][1], str)):
        return p[2]
    return None


# What each README documents for a message that is not a message (answered, the connection stays
# usable) and for bytes that are not MessagePack or a length over the limits (answered, then the
# connection ends): the error value's [type, text prefix]. Quoted in spec/rpc/README.md. The types
# are Neovim 0.7.2's: it answers a value that is no message with type 1 (Validation, e.g. `[0, 1]`
# -> [1, 0, [1, "Request array size must be 4 (request) or 3 (notification)"], nil]) and bytes that
# are not MessagePack with type 0 (Exception, `c1` -> [1, 0, [0, "Invalid msgpack payload. ..."],
# nil]); every language must agree with it.
NEOVIM_VALIDATION, NEOVIM_EXCEPTION = 1, 0
DOCUMENTED = {
    # go/README.md, "Protocol violations": `[1, 0, [1, "mpkrpc: invalid message: REASON"], nil]`
    # and `[1, 0, [0, "mpkrpc: malformed input, closing: <DecodeError>"], nil]`
    "go": {"invalid": (NEOVIM_VALIDATION, "mpkrpc: invalid message: "),
           "malformed": (NEOVIM_EXCEPTION, "mpkrpc: malformed input, closing: ")},
    # js/README.md, "Protocol violations and hostile peers": `[1, 0, [1, "invalid message: ..."],
    # nil]` and `[1, 0, [0, "invalid MessagePack from the peer: <DecodeError>"], nil]`
    "js": {"invalid": (NEOVIM_VALIDATION, "invalid message: "),
           "malformed": (NEOVIM_EXCEPTION, "invalid MessagePack from the peer: ")},
    # python/README.md, "Protocol violations": `[1, 0, [1, "mpk.rpc: invalid message: REASON"],
    # nil]` and `[1, 0, [0, "mpk.rpc: malformed input, closing: ..."], nil]`
    "python": {"invalid": (NEOVIM_VALIDATION, "mpk.rpc: invalid message: "),
               "malformed": (NEOVIM_EXCEPTION, "mpk.rpc: malformed input, closing: ")},
}


def documented_answer(m, lang, which):
    """None when m is the documented msgid-0 answer of lang for `which`, else what is wrong."""
    err = msgid0_error(m)
    typ, prefix = DOCUMENTED[lang][which]
    if err is None or err[0] != typ or not err[1].startswith(prefix):
        got = plain(m) if m != "EOF" else m
        return f"want [1, 0, [{typ}, \"{prefix}...\"], nil], got {short(got)}"
    return None


# Each hostile case: (name, bytes to send, checker(raw, language, address) -> failure or None).
def closes_after_msgid0():
    def check(raw, lang, address):
        failure = documented_answer(raw.read_message(), lang, "malformed")
        if failure:
            return failure
        if raw.read_message() != "EOF":
            return "the connection stayed open after malformed bytes (documented: it ends)"
        return None
    return check


def answers_msgid0_stays_usable(raw, lang, address):
    failure = documented_answer(raw.read_message(), lang, "invalid")
    if failure:
        return failure
    if not echo_works(raw):
        return "the connection is not usable after the msgid-0 answer (documented: it stays usable)"
    return None


def wrong_params_count(raw, lang, address):
    m = raw.read_message()
    want = [1, 5, [0, "Wrong number of arguments: expecting 2 but got 3"], None]
    if m == "EOF" or plain(m) != want:
        return f"want {want}, got {short(plain(m) if m != 'EOF' else m)}"
    return None


def unknown_response_ignored(raw, lang, address):
    # nothing may be answered: the next message must be the echo's reply
    if not echo_works(raw, 78):
        return "a response for an unknown msgid was answered or broke the connection"
    return None


def cut_off_then_new_connection(raw, lang, address):
    # the client vanished inside a message: the server must go on serving others
    raw.close()
    other = Raw(address)
    try:
        return None if echo_works(other, 79) else "no echo on a new connection after a cut-off one"
    finally:
        other.close()


def split_requests(raw, lang, address):
    """Two echo requests written in pieces that cut both inside the first message and across the
    boundary between them: both are answered, each once."""
    two = request(81, "echo", [{"string": "one"}]) + request(82, "echo", [{"string": "two"}])
    for a, b in ((0, 1), (1, 7), (7, len(two) - 3), (len(two) - 3, len(two))):
        raw.send(two[a:b])
        time.sleep(0.02)  # not a timing assertion: only so the pieces arrive as separate reads
    got = sorted(json.dumps(plain(raw.read_message())) for _ in range(2))
    want = sorted(json.dumps(x) for x in ([1, 81, None, "one"], [1, 82, None, "two"]))
    if got != want:
        return f"want {want}, got {got}"
    if not echo_works(raw, 83):
        return "a third request was not answered (a duplicated or lost reply?)"
    return None


HOSTILE = [
    ("two requests written in 4 pieces", b"", split_requests),
    ("0xc1 (never used)", b"\xc1", closes_after_msgid0()),
    ("str 32 declaring 4 GiB", b"\xdb\xff\xff\xff\xff" + b"x" * 16, closes_after_msgid0()),
    ("array 32 declaring 2^32-1 elements", b"\xdd\xff\xff\xff\xff", closes_after_msgid0()),
    ("request of 3 elements", enc({"typed_array": [{"int": 0}, {"int": 5}, {"string": "echo"}]}),
     answers_msgid0_stays_usable),
    ("msgid 2^32", enc({"typed_array": [{"int": 0}, {"int": 2**32}, {"string": "echo"},
                                        {"typed_array": [{"int": 1}]}]}),
     answers_msgid0_stays_usable),
    ("add with 3 params", request(5, "add", [{"int": 1}, {"int": 2}, {"int": 3}]), wrong_params_count),
    ("response for unknown msgid 999", enc({"typed_array": [{"int": 1}, {"int": 999}, {"nil": None},
                                                           {"int": 1}]}), unknown_response_ignored),
    ("connection closed inside a request", request(6, "echo", [{"string": "x" * 100}])[:20],
     cut_off_then_new_connection),
]


# ----------------------------------------------------------------------------------------------
# A misbehaving server: the runner itself, for each client
# ----------------------------------------------------------------------------------------------

# What each client's README documents when the connection ends inside a message: the call fails
# with the connection error type (checked by the driver: Go *mpkrpc.ConnError, TS
# RpcConnectionError, Python mpk.rpc.ConnError) whose text says so.
TRUNCATED_TEXT = {
    # go/README.md: "pending calls fail with a *ConnError caused by a Truncated *mpk.DecodeError"
    "go": "(truncated)",
    # js/README.md: "the peer closed the connection inside a message: input ends inside a value"
    "js": "the peer closed the connection inside a message",
    # python/README.md: "a ConnError caused by a TruncatedError ("the connection ended inside a
    # message at byte N")"
    "python": "the connection ended inside a message",
}


def raw_server(path):
    """Serves one connection: a stray response for msgid 999 and the reply to the first request;
    then the first 5 bytes of the reply to the second, and closes."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(SCENARIO_TIMEOUT)

    def serve():
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        raw = Raw.__new__(Raw)
        raw.s, raw.buf, raw.seen = conn, b"", []
        conn.settimeout(SCENARIO_TIMEOUT)
        try:
            first = plain(raw.read_message())
            raw.send(enc({"typed_array": [{"int": 1}, {"int": 999}, {"nil": None}, {"string": "stray"}]}))
            raw.send(enc({"typed_array": [{"int": 1}, {"int": first[1]}, {"nil": None}, {"string": first[3][0]}]}))
            second = plain(raw.read_message())
            raw.send(enc({"typed_array": [{"int": 1}, {"int": second[1]}, {"nil": None}, {"string": "second"}]})[:5])
        except (OSError, TypeError, IndexError, ref.DecodeError):
            pass
        finally:
            conn.close()
            listener.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def check_disconnect(client, tmp):
    path = os.path.join(tmp, f"raw-{client}.sock")
    t = raw_server(path)
    try:
        a = run_client(client, f"unix:{path}", "disconnect")
    finally:
        t.join(timeout=5)
    out = []
    if a.get("first") != "first":
        out.append(f"echo('first') after a stray response for msgid 999: {a.get('first')!r}, error {a.get('first_error')}")
    err = a.get("second_error") or ""
    if not a.get("connection_error") or TRUNCATED_TEXT[client] not in err:
        out.append(f"a reply cut off by the end of the connection: want a connection error saying "
                   f"{TRUNCATED_TEXT[client]!r}, got {err!r}")
    return out


def run_hostile(server):
    """[(case, failure or None, outcome text)] for one server."""
    out = []
    for name, data, check in HOSTILE:
        raw = Raw(server.address)
        try:
            raw.send(data)
            failure = check(raw, server.name, server.address)
        except (OSError, ref.DecodeError) as e:
            failure = f"{type(e).__name__}: {e}"
        finally:
            raw.close()
        if not server.alive():
            failure = (failure or "") + " (the server process died)"
        out.append((name, failure, " then ".join(short(m, 110) for m in raw.seen) or "nothing"))
    return out


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", action="append")
    ap.add_argument("--server", action="append")
    ap.add_argument("--scenario", action="append")
    ap.add_argument("--no-hostile", action="store_true")
    ap.add_argument("--tcp", action="store_true", help="serve on 127.0.0.1:0 instead of a Unix socket")
    args = ap.parse_args()
    clients = args.client or list(DRIVERS)
    servers = args.server or list(DRIVERS)
    scenarios = args.scenario or list(SCENARIOS)
    values = corpus_values()
    passed = failed = 0
    table = {}
    start = time.monotonic()
    if "corpus" in scenarios:
        for lang in sorted(set(clients) | set(servers)):
            try:
                HELD[lang] = native_holds(lang, values)
            except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                print(f"FAIL {lang}: its roundtrip of the corpus values: {e}")
                failed += 1
                HELD[lang] = set()
                continue
            print(f"{lang}: its native values hold {len(HELD[lang])} of the {len(values)} corpus values")
    with tempfile.TemporaryDirectory(prefix="mpk-rpc-") as tmp:
        for sname in servers:
            address = "tcp:127.0.0.1:0" if args.tcp else f"unix:{os.path.join(tmp, sname + '.sock')}"
            try:
                server = Server(sname, address)
            except (OSError, RuntimeError) as e:
                print(f"FAIL server {sname}: {e}")
                failed += len(clients) * len(scenarios)
                for c in clients:
                    table[(c, sname)] = "no server"
                continue
            try:
                for cname in clients:
                    bad = 0
                    for sc in scenarios:
                        try:
                            if sc == "corpus":
                                failures = check_corpus(cname, server.address, values, sname)
                            else:
                                failures = SCENARIOS[sc](cname, server.address, values)
                        except AssertionError as e:
                            failures = [str(e)]
                        if failures:
                            bad += 1
                            failed += 1
                            print(f"FAIL {cname} client -> {sname} server: {sc}: {len(failures)} failure(s)")
                            for f in failures[:8]:
                                print(f"    {f}")
                        else:
                            passed += 1
                        if sc == "corpus" and (cname, server.address) in STATS:
                            st = STATS[(cname, server.address)]
                            print(f"ok   {cname} client -> {sname} server: corpus: {st['bytes']} same bytes, "
                                  f"{st['map order']} equal up to map order, {st['skipped']} not held by the client's or the server's native values")
                    table[(cname, sname)] = "ok" if not bad else f"{bad} FAIL"
                if not args.no_hostile:
                    for case, failure, seen in run_hostile(server):
                        if failure:
                            failed += 1
                            print(f"FAIL hostile -> {sname} server: {case}: {failure}")
                        else:
                            passed += 1
                            print(f"ok   hostile -> {sname} server: {case}: {seen}")
            finally:
                server.stop()
        if not args.no_hostile:
            for cname in clients:
                try:
                    failures = check_disconnect(cname, tmp)
                except AssertionError as e:
                    failures = [str(e)]
                if failures:
                    failed += 1
                    print(f"FAIL {cname} client -> misbehaving server: " + "; ".join(failures))
                else:
                    passed += 1
                    print(f"ok   {cname} client -> misbehaving server: a stray response ignored, "
                          f"a reply cut off by the end of the connection fails the call")
    width = max(len(n) for n in clients + servers) + 2
    print(f"\nclient \\ server ({len(scenarios)} scenarios, {len(values)} corpus values; "
          f"{time.monotonic() - start:.1f} s)")
    print("".ljust(width) + "".join(s.ljust(width + 6) for s in servers))
    for c in clients:
        print(c.ljust(width) + "".join(table.get((c, s), "-").ljust(width + 6) for s in servers))
    print(f"rpc: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
