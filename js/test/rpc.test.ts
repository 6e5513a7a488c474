// mpk/rpc: the endpoint over TCP, Unix sockets and an in-memory pipe, against well-behaved and
// hostile peers. Every outcome asserted here is the one js/README.md ("MessagePack-RPC") documents.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { decode, DecodeError, decodeMulti, encode, RawStr } from "../src/index.js";
import {
  codedError,
  Endpoint,
  errorMessage,
  neovimError,
  neovimExtensions,
  NvimBuffer,
  RpcConnectionError,
  RpcError,
  RpcTimeoutError,
  type Transport,
} from "../src/rpc/index.js";
import { connect, listen } from "../src/rpc/node.js";

/** Two transports joined back to back, delivering asynchronously like a socket. */
function pipePair(): [Transport, Transport & { sent: Uint8Array[] }] {
  type Side = Transport & { sent: Uint8Array[]; data?: (c: Uint8Array) => void; end?: (cause?: unknown) => void; other?: Side; closed: boolean };
  const make = (): Side => ({
    sent: [],
    closed: false,
    start(onData, onClose) {
      this.data = onData;
      this.end = onClose;
    },
    write(bytes) {
      this.sent.push(bytes);
      const other = this.other!;
      setImmediate(() => other.closed || other.data?.(bytes));
    },
    close() {
      if (this.closed) return;
      this.closed = true;
      const other = this.other!;
      setImmediate(() => other.closed || ((other.closed = true), other.end?.()));
    },
  });
  const a = make();
  const b = make();
  a.other = b;
  b.other = a;
  return [a, b];
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

const servers: Server[] = [];
after(() => servers.forEach((s) => s.close()));

async function tcpPair(setup: (server: Endpoint) => void): Promise<{ client: Endpoint; server: Promise<Endpoint> }> {
  let gotServer!: (e: Endpoint) => void;
  const server = new Promise<Endpoint>((r) => (gotServer = r));
  const s = await listen({ port: 0 }, (endpoint) => {
    setup(endpoint);
    gotServer(endpoint);
  });
  servers.push(s);
  const client = await connect({ port: (s.address() as { port: number }).port });
  return { client, server };
}

/** A raw socket to a listening mpk server: write bytes, read back the messages it answers. */
async function rawPeer(setup: (server: Endpoint) => void) {
  let serverEndpoint!: (e: Endpoint) => void;
  const endpoint = new Promise<Endpoint>((r) => (serverEndpoint = r));
  const s = await listen({ port: 0 }, (e) => {
    setup(e);
    serverEndpoint(e);
  });
  servers.push(s);
  const socket = createConnection((s.address() as { port: number }).port, "127.0.0.1");
  await new Promise((r) => socket.once("connect", r));
  let received = new Uint8Array(0);
  let waiters: Array<() => void> = [];
  let ended = false;
  socket.on("data", (chunk: Buffer) => {
    const next = new Uint8Array(received.length + chunk.length);
    next.set(received);
    next.set(chunk, received.length);
    received = next;
    waiters.forEach((w) => w());
    waiters = [];
  });
  socket.on("end", () => {
    ended = true;
    waiters.forEach((w) => w());
  });
  const messages = () => [...decodeMulti(received)];
  return {
    socket,
    endpoint,
    messages,
    /** waits until `n` whole messages have come */
    async waitFor(n: number) {
      while (messages().length < n && !ended) await new Promise<void>((r) => waiters.push(r));
      return messages();
    },
    async waitForEnd() {
      while (!ended) await new Promise<void>((r) => waiters.push(r));
      return messages();
    },
  };
}

describe("calls", () => {
  test("10,000 pipelined calls answered in shuffled order all get their own result", async () => {
    const N = 10_000;
    const held: Array<() => void> = [];
    let allHeld!: () => void;
    const everyCallArrived = new Promise<void>((r) => (allHeld = r));
    const { client } = await tcpPair((server) =>
      server.register("square", (n: number) => {
        // hold every reply until all calls are in, then answer them in a random order
        return new Promise((resolve) => {
          held.push(() => resolve(n * n));
          if (held.length === N) allHeld();
        });
      }),
    );
    const calls = Array.from({ length: N }, (_, i) => client.call("square", i));
    await everyCallArrived;
    shuffle(held).forEach((answer) => answer());
    const results = await Promise.all(calls);
    results.forEach((r, i) => assert.equal(r, i * i));
    assert.equal(client.pendingCalls, 0);
    assert.equal(client.discardedResponses, 0);
    await client.close();
  });

  test("notifications are handled one at a time in arrival order, even when handlers are async", async () => {
    const seen: number[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const { client } = await tcpPair((server) =>
      server.register("tick", async (i: number) => {
        // a handler that yields a varying number of times: a concurrent dispatch would reorder them
        for (let k = 0; k < i % 7; k++) await new Promise((r) => setImmediate(r));
        seen.push(i);
        if (i === 999) done();
      }),
    );
    for (let i = 0; i < 1000; i++) client.notify("tick", i);
    await all;
    assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => i));
    await client.close();
  });

  test("the server calls back into the client while the client's call is pending", async () => {
    const { client } = await tcpPair((server) =>
      server.register("outer", async (x: number) => {
        const inner = (await server.call("inner", x)) as number;
        return inner + 1;
      }),
    );
    client.register("inner", (x: number) => x * 10);
    assert.equal(await client.call("outer", 4), 41);
    await client.close();
  });

  test("a timeout rejects locally, drops the pending entry, and the late reply is discarded quietly", async () => {
    let release!: () => void;
    const { client } = await tcpPair((server) => {
      server.register("slow", () => new Promise((r) => (release = () => r("late"))));
      server.register("echo", (x: unknown) => x);
    });
    const error = await client.callWith("slow", [], { timeout: 20 }).catch((e: unknown) => e);
    assert.ok(error instanceof RpcTimeoutError);
    assert.equal(error.method, "slow");
    assert.equal(client.pendingCalls, 0);
    // on a loaded machine the timeout may fire before the server has the request
    while (!release) await new Promise((r) => setImmediate(r));
    release();
    // the echo's reply comes after the late one on the same connection
    assert.equal(await client.call("echo", "after"), "after");
    assert.equal(client.discardedResponses, 1);
    await client.close();
  });

  test("an AbortSignal cancels a call (before and after sending) with the signal's reason; the late reply is discarded", async () => {
    let release!: () => void;
    const { client } = await tcpPair((server) => {
      server.register("slow", () => new Promise((r) => (release = () => r("late"))));
      server.register("echo", (x: unknown) => x);
    });
    const controller = new AbortController();
    const call = client.callWith("slow", [], { signal: controller.signal });
    // wait until the server has the request
    while (!release) await new Promise((r) => setImmediate(r));
    const reason = new Error("user gave up");
    controller.abort(reason);
    assert.equal(await call.catch((e: unknown) => e), reason);
    assert.equal(client.pendingCalls, 0);
    release();
    assert.equal(await client.call("echo", 1), 1);
    assert.equal(client.discardedResponses, 1);
    const already = AbortSignal.abort(new Error("already"));
    assert.equal(((await client.callWith("echo", [1], { signal: already }).catch((e: unknown) => e)) as Error).message, "already");
    await client.close();
  });

  test("msgids are u32: they wrap from 2^32-1 to 1 (0 is left for msgid-0 answers) and skip ids still pending", async () => {
    const [a, b] = pipePair();
    const client = new Endpoint(a, { firstMsgid: 2 ** 32 - 1 });
    const peer = new Endpoint(b);
    const ids: number[] = [];
    const holds: Array<() => void> = [];
    peer.register("hold", () => new Promise<void>((r) => holds.push(r)));
    const p1 = client.call("hold");
    const p2 = client.call("hold");
    // move the counter back onto the pending id 1 (the only way short of 2^32 calls): it is skipped
    (client as unknown as { nextMsgid: number }).nextMsgid = 1;
    const p3 = client.call("hold");
    await new Promise((r) => setTimeout(r, 0));
    while (holds.length < 3) await new Promise((r) => setImmediate(r));
    for (const m of (a as unknown as { sent: Uint8Array[] }).sent.flatMap((bytes) => [...decodeMulti(bytes)])) ids.push((m as number[])[1]!);
    assert.deepEqual(ids, [2 ** 32 - 1, 1, 2]);
    holds.forEach((h) => h());
    await Promise.all([p1, p2, p3]);
    await client.close();
  });

  test("a dropped call's msgid stays reserved until its late reply comes, so the late reply never settles a newer call", async () => {
    const [a, b] = pipePair();
    const client = new Endpoint(a, { firstMsgid: 5 });
    const peer = new Endpoint(b);
    const holds: Array<() => void> = [];
    peer.register("hold", (x: unknown) => new Promise((r) => holds.push(() => r(x))));
    const error = await client.callWith("hold", ["late"], { timeout: 5 }).catch((e: unknown) => e);
    assert.ok(error instanceof RpcTimeoutError);
    assert.equal(error.msgid, 5);
    // move the counter back onto the dropped id (the only way short of 2^32 calls): it is skipped
    (client as unknown as { nextMsgid: number }).nextMsgid = 5;
    const fresh = client.call("hold", "fresh");
    while (holds.length < 2) await new Promise((r) => setImmediate(r));
    const ids = (a as unknown as { sent: Uint8Array[] }).sent.flatMap((bytes) => [...decodeMulti(bytes)]).map((m) => (m as number[])[1]);
    assert.deepEqual(ids, [5, 6]);
    holds[0]!(); // the late reply (msgid 5) arrives first: discarded, it must not settle the call of msgid 6
    while (client.discardedResponses < 1) await new Promise((r) => setImmediate(r));
    holds[1]!();
    assert.equal(await fresh, "fresh");
    // the late reply came: id 5 is free again
    (client as unknown as { nextMsgid: number }).nextMsgid = 5;
    const again = client.call("hold", "again");
    while (holds.length < 3) await new Promise((r) => setImmediate(r));
    const sent = (a as unknown as { sent: Uint8Array[] }).sent;
    assert.equal((decode(sent[sent.length - 1]!) as number[])[1], 5);
    holds[2]!();
    assert.equal(await again, "again");
    await client.close();
  });

  test("a msgid-0 error response goes to onPeerError, and its text is named when the connection then ends", async () => {
    const [a, b] = pipePair();
    const complaints: RpcError[] = [];
    const client = new Endpoint(a, { onPeerError: (e) => void complaints.push(e) });
    b.start(
      () => {},
      () => {},
    );
    const toClient = (bytes: Uint8Array) => b.write(bytes);
    const pending = client.call("anything").catch((e: unknown) => e);
    toClient(encode([1, 0, [1, "invalid message: you sent junk"], null]));
    while (client.discardedResponses < 1) await new Promise((r) => setImmediate(r));
    assert.equal(complaints.length, 1);
    assert.ok(complaints[0] instanceof RpcError);
    assert.equal(complaints[0].msgid, 0);
    assert.deepEqual(complaints[0].value, [1, "invalid message: you sent junk"]);
    assert.deepEqual(complaints[0].neovim, { type: 1, message: "invalid message: you sent junk" });
    assert.equal(client.discardedResponses, 1);
    assert.equal(client.isClosed, false);
    b.close();
    const error = await pending;
    assert.ok(error instanceof RpcConnectionError);
    assert.match(error.message, /the peer's last msgid-0 error: invalid message: you sent junk/);
    // a msgid-0 response without an error is not a complaint
    const [c, d] = pipePair();
    const quiet: RpcError[] = [];
    const other = new Endpoint(c, { onPeerError: (e) => void quiet.push(e) });
    d.start(
      () => {},
      () => {},
    );
    d.write(encode([1, 0, null, "odd"]));
    while (other.discardedResponses < 1) await new Promise((r) => setImmediate(r));
    assert.equal(quiet.length, 0);
    await other.close();
  });

  test("calls and notifications work over a Unix socket", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mpk-rpc-"));
    try {
      const path = join(dir, "rpc.sock");
      const got: unknown[] = [];
      const server = await listen({ path }, (endpoint) => {
        endpoint.register("add", (a: number, b: number) => a + b, { arity: 2 });
        endpoint.register("note", (x: unknown) => void got.push(x));
      });
      const client = await connect({ path });
      client.notify("note", "first");
      assert.equal(await client.call("add", 2, 3), 5);
      assert.deepEqual(got, ["first"]);
      await client.close();
      await new Promise((r) => server.close(r));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("errors", () => {
  test("a thrown error, an RpcError's own value, an unknown method and wrong arity come back as error values", async () => {
    const { client } = await tcpPair((server) => {
      server.register("boom", () => {
        throw new Error("it broke");
      });
      server.register("rejects", async () => {
        throw new RpcError({ code: 42, message: "no such fruit" });
      });
      server.register("two", (a: number, b: number) => a + b, { arity: 2 });
    });
    const boom = (await client.call("boom").catch((e: unknown) => e)) as RpcError;
    assert.ok(boom instanceof RpcError);
    assert.deepEqual(boom.value, [0, "it broke"]);
    assert.equal(boom.method, "boom");
    assert.equal(typeof boom.msgid, "number");
    assert.deepEqual(boom.neovim, { type: 0, message: "it broke" });
    assert.match(boom.message, /^boom \(msgid \d+\) failed: it broke$/);
    const coded = (await client.call("rejects").catch((e: unknown) => e)) as RpcError;
    assert.deepEqual(coded.coded, { code: 42, message: "no such fruit" });
    assert.equal(coded.errorMessage, "no such fruit");
    const unknown = (await client.call("nope", 1).catch((e: unknown) => e)) as RpcError;
    assert.deepEqual(unknown.value, [0, "Invalid method: nope"]);
    const arity = (await client.call("two", 1).catch((e: unknown) => e)) as RpcError;
    assert.deepEqual(arity.value, [0, "Wrong number of arguments: expecting 2 but got 1"]);
    assert.equal(await client.call("two", 1, 2), 3);
    await client.close();
  });

  test("the error helpers read a string, Neovim's [type, message] and {code, message}", () => {
    assert.equal(errorMessage("plain"), "plain");
    assert.equal(errorMessage(new TextEncoder().encode("as bin")), "as bin");
    assert.deepEqual(neovimError([1, "Validation"]), { type: 1, message: "Validation" });
    assert.equal(neovimError([1, 2]), undefined);
    assert.deepEqual(codedError(new Map<string, unknown>([["code", -32601], ["message", "m"]])), { code: -32601, message: "m" });
    assert.equal(codedError({ message: "no code" }), undefined);
    assert.equal(errorMessage({ other: 1 }), undefined);
    assert.match(new RpcError({ other: 1 }, "m", 3).message, /^m \(msgid 3\) failed: error value \{"other":1\}$/);
  });

  test("a handler's result with no MessagePack form gets an error reply naming it", async () => {
    const { client } = await tcpPair((server) => server.register("fn", () => () => 1));
    const e = (await client.call("fn").catch((x: unknown) => x)) as RpcError;
    assert.match(e.neovim!.message, /the result could not be encoded: .*function/);
    await client.close();
  });
});

describe("lifecycle", () => {
  test("close() rejects every pending call, resolves closed, and the peer sees EOF", async () => {
    const { client, server } = await tcpPair((s) => s.register("never", () => new Promise(() => undefined)));
    const calls = [client.call("never"), client.call("never")];
    await new Promise((r) => setTimeout(r, 10));
    const closed = client.close();
    for (const c of calls) {
      const e = (await c.catch((x: unknown) => x)) as RpcConnectionError;
      assert.ok(e instanceof RpcConnectionError);
      assert.match(e.message, /^never \(msgid \d\) got no reply: the endpoint was closed by close\(\)$/);
    }
    assert.equal(await closed, undefined);
    assert.equal(await (await server).closed, undefined);
    assert.ok(client.isClosed);
    await assert.rejects(client.call("never"), RpcConnectionError);
    assert.throws(() => client.notify("x"), RpcConnectionError);
  });

  async function rawServer(onRequest: (socket: Socket, request: Uint8Array) => void): Promise<number> {
    const s = createServer((socket) => socket.once("data", (d: Buffer) => onRequest(socket, new Uint8Array(d))));
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    return (s.address() as { port: number }).port;
  }

  test("a peer that ends the connection in the middle of a reply: the pending calls reject with truncated", async () => {
    const port = await rawServer((socket, request) => {
      const [, msgid] = decode(request) as [number, number];
      const reply = encode([1, msgid, null, "a long result that never arrives whole"]);
      socket.end(reply.subarray(0, 10));
    });
    const client = await connect({ port });
    const e = (await client.call("x").catch((x: unknown) => x)) as RpcConnectionError;
    assert.ok(e instanceof RpcConnectionError);
    assert.match(e.message, /^x \(msgid 1\) got no reply: the peer closed the connection inside a message: input ends inside a value/);
    assert.ok(e.cause instanceof DecodeError && e.cause.kind === "truncated");
    assert.ok((await client.closed) instanceof DecodeError);
  });

  test("a connection reset: the pending calls reject naming the reset", async () => {
    // (bytes written just before the RST come to this side as data and a plain end on Linux
    // loopback: that case is the truncated one above)
    const port = await rawServer((socket) => socket.resetAndDestroy());
    const client = await connect({ port });
    const e = (await client.call("x").catch((x: unknown) => x)) as RpcConnectionError;
    assert.ok(e instanceof RpcConnectionError);
    assert.match(e.message, /got no reply: the connection failed: .*ECONNRESET/);
  });

  test("a plain EOF between messages rejects pending calls with 'the peer closed the connection (EOF)'", async () => {
    const port = await rawServer((socket) => socket.end());
    const client = await connect({ port });
    const e = (await client.call("x").catch((x: unknown) => x)) as RpcConnectionError;
    assert.equal(e.message, "x (msgid 1) got no reply: the peer closed the connection (EOF)");
    assert.equal(e.cause, undefined);
  });
});

describe("hostile frames (a raw socket against an mpk server)", () => {
  const setup = (server: Endpoint) => {
    server.register("echo", (x: unknown) => x);
    server.register("two", (a: number, b: number) => [a, b], { arity: 2 });
  };

  test("0xc1: answered with msgid 0 and an Exception error (type 0, as Neovim 0.7.2 answers), then the connection is closed (the stream cannot resync)", async () => {
    const peer = await rawPeer(setup);
    const pendingOnServer = (await peer.endpoint).call("client_side").catch((e: unknown) => e);
    peer.socket.write(new Uint8Array([0x94, 0x00, 0x01, 0xc1]));
    const got = await peer.waitForEnd();
    // the server's own call to us, then its answer to the bad bytes
    assert.equal(got.length, 2);
    const [type, msgid, error, result] = got[1] as [number, number, [number, string], null];
    assert.deepEqual([type, msgid, result, error[0]], [1, 0, null, 0]);
    assert.match(error[1], /invalid MessagePack from the peer: .*0xc1.* at byte 3/);
    const e = (await pendingOnServer) as RpcConnectionError;
    assert.match(e.message, /got no reply: the peer sent bytes that are not MessagePack: .*at byte 3/);
    assert.equal(((await (await peer.endpoint).closed) as DecodeError).kind, "invalid_byte");
  });

  test("a giant length prefix (str 32 of 2^32-1 bytes): length_limit at once, msgid 0, closed; nothing is allocated for it", async () => {
    const peer = await rawPeer(setup);
    peer.socket.write(new Uint8Array([0x94, 0x00, 0x01, 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]));
    const got = await peer.waitForEnd();
    assert.equal(got.length, 1);
    assert.deepEqual((got[0] as unknown[]).slice(0, 2), [1, 0]);
    assert.match((got[0] as [number, number, [number, string]])[2][1], /str length 4294967295|length/);
    assert.equal(((await (await peer.endpoint).closed) as DecodeError).kind, "length_limit");
  });

  test("an array 32 head declaring 2^32-1 messages' worth of elements: length_limit, msgid 0, closed", async () => {
    const peer = await rawPeer(setup);
    peer.socket.write(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff, 0x00]));
    const got = await peer.waitForEnd();
    assert.deepEqual((got[0] as unknown[]).slice(0, 2), [1, 0]);
    assert.equal(((await (await peer.endpoint).closed) as DecodeError).kind, "length_limit");
  });

  test("wrong arity, a msgid beyond u32, a malformed message and a response for an unknown id: each answered as documented, the connection stays usable", async () => {
    const peer = await rawPeer(setup);
    peer.socket.write(encode([0, 7, "two", [1]])); // wrong arity: a Neovim-shaped error for msgid 7
    peer.socket.write(encode([0, 2 ** 32, "echo", ["x"]])); // msgid beyond u32: msgid 0
    peer.socket.write(encode({ not: "a message" })); // not an array: msgid 0
    peer.socket.write(encode([1, 12345, null, "unasked"])); // a response nobody asked for: dropped
    peer.socket.write(encode([0, 8, 3, []])); // a method that is not a str: an error for msgid 8
    peer.socket.write(encode([0, 9, "echo", ["still here"]]));
    const got = await peer.waitFor(5);
    assert.deepEqual(got, [
      [1, 7, [0, "Wrong number of arguments: expecting 2 but got 1"], null],
      [1, 0, [1, "invalid message: the msgid of a request must be an integer 0..2^32-1"], null],
      [1, 0, [1, "invalid message: a message must be an array of 3 or 4 elements"], null],
      [1, 8, [1, "a request is [0, msgid, method (str), params (array)]"], null],
      [1, 9, null, "still here"],
    ]);
    assert.equal((await peer.endpoint).discardedResponses, 1);
    assert.equal((await peer.endpoint).isClosed, false);
    peer.socket.destroy();
  });
});

describe("options", () => {
  test("binAsString and utf8 raw read Neovim's text: bin as strings, invalid UTF-8 kept as RawStr", async () => {
    const [a, b] = pipePair();
    const client = new Endpoint(a, { binAsString: true, decoder: { utf8: "raw" } });
    const server = new Endpoint(b);
    server.register("texts", () => [new TextEncoder().encode("a"), new Uint8Array([0xff]), new RawStr(new Uint8Array([0xfe])), { k: new TextEncoder().encode("v") }]);
    const [bin, badBin, badStr, map] = (await client.call("texts")) as [string, RawStr, RawStr, { k: string }];
    assert.equal(bin, "a");
    assert.ok(badBin instanceof RawStr && badBin.bytes[0] === 0xff);
    assert.ok(badStr instanceof RawStr && badStr.bytes[0] === 0xfe);
    assert.deepEqual(map, { k: "v" });
    await client.close();
  });

  test("the per-endpoint ext registry carries Neovim's handles both ways", async () => {
    const [a, b] = pipePair();
    const client = new Endpoint(a, { extensions: neovimExtensions() });
    const server = new Endpoint(b);
    server.register("raw", (x: unknown) => x);
    // the server has no registry: it sees ext 0 with a packed int, and sends it back unchanged
    const back = await client.call("raw", new NvimBuffer(3));
    assert.ok(back instanceof NvimBuffer && back.id === 3);
    assert.deepEqual([...(a as unknown as { sent: Uint8Array[] }).sent[0]!.slice(-3)], [0xd4, 0x00, 0x03]);
    await client.close();
  });
});

describe("package entries", () => {
  const jsDir = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../../..");

  test("mpk/rpc bundles for the browser with no Node built-in; mpk/rpc/node holds the Node transports", async () => {
    const { build } = await import("esbuild");
    const result = await build({
      stdin: { contents: 'export * from "mpk/rpc";', resolveDir: jsDir },
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      metafile: true,
    });
    const inputs = Object.keys(result.metafile!.inputs);
    assert.ok(inputs.some((f) => f.includes("rpc/Endpoint")), "the endpoint is in the bundle");
    assert.ok(!inputs.some((f) => f.startsWith("node:") || f.includes("rpc/node")), `no Node module: ${inputs.join(", ")}`);
    assert.ok(!/\bfrom\s*["']node:|require\(["']node:/.test(result.outputFiles[0]!.text));
  });

  test("mpk/rpc and mpk/rpc/node resolve for import and require", async () => {
    const { createRequire } = await import("node:module");
    const require = createRequire(join(jsDir, "package.json"));
    const esm = (await import("mpk/rpc" as string)) as { Endpoint: unknown };
    const esmNode = (await import("mpk/rpc/node" as string)) as { connect: unknown };
    assert.equal(typeof esm.Endpoint, "function");
    assert.equal(typeof esmNode.connect, "function");
    assert.equal(typeof require("mpk/rpc").Endpoint, "function");
    assert.equal(typeof require("mpk/rpc/node").spawnEndpoint, "function");
  });
});

describe("README", () => {
  test("the examples of the MessagePack-RPC section run as written (the seed's fruit server first)", async () => {
    const { readFileSync, writeFileSync, mkdirSync } = await import("node:fs");
    const { execFileSync } = await import("node:child_process");
    const jsDir = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../../..");
    const readme = readFileSync(join(jsDir, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## MessagePack-RPC"), readme.indexOf("## Performance"));
    const examples = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
    assert.equal(examples.length, 2);
    assert.match(examples[0]!, /peer\.register\("put"/);
    // inside js/, so that "mpk/rpc" resolves to this package (self-reference through "exports")
    const dir = join(jsDir, "build", "readme");
    mkdirSync(dir, { recursive: true });
    examples.forEach((example, i) => {
      const file = join(dir, `rpc-example-${i}.mjs`);
      writeFileSync(file, example);
      execFileSync(process.execPath, [file], { stdio: "pipe", timeout: 20_000 });
    });
  });
});

describe("web streams", () => {
  test("webStreamTransport: two endpoints over a pair of TransformStreams call each other; close() is EOF on the other side", async () => {
    const { webStreamTransport } = await import("../src/rpc/index.js");
    const there = new TransformStream<Uint8Array, Uint8Array>();
    const back = new TransformStream<Uint8Array, Uint8Array>();
    const a = new Endpoint(webStreamTransport({ readable: back.readable, writable: there.writable }));
    const b = new Endpoint(webStreamTransport({ readable: there.readable, writable: back.writable }));
    a.register("name", () => "a");
    b.register("greet", async (who: string) => `hello ${who} from ${await b.call("name")}`);
    assert.equal(await a.call("greet", "you"), "hello you from a");
    await a.close();
    assert.equal(await b.closed, undefined);
  });

  test("a Node stream that yields strings ends the endpoint with a TypeError", async () => {
    const { PassThrough } = await import("node:stream");
    const { streamTransport } = await import("../src/rpc/node.js");
    const input = new PassThrough({ encoding: "latin1" });
    const endpoint = new Endpoint(streamTransport(input, new PassThrough()));
    input.write(new Uint8Array([0x93, 0x02]));
    const cause = (await endpoint.closed) as TypeError;
    assert.ok(cause instanceof TypeError);
    assert.match(cause.message, /yields strings/);
  });
});

describe("stdio and child processes", () => {
  test("spawnEndpoint talks to a child serving on its stdio through stdioEndpoint, both ways", async () => {
    const { writeFileSync, mkdtempSync: mkd } = await import("node:fs");
    const { pathToFileURL } = await import("node:url");
    const { spawnEndpoint } = await import("../src/rpc/node.js");
    const jsDir = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../../..");
    const dir = mkd(join(tmpdir(), "mpk-rpc-stdio-"));
    try {
      const script = join(dir, "child.mjs");
      writeFileSync(
        script,
        `import { stdioEndpoint } from ${JSON.stringify(pathToFileURL(join(jsDir, "build/esm/rpc/node.js")).href)};\n` +
          `const parent = stdioEndpoint();\n` +
          `parent.register("upper", async (s) => (await parent.call("prefix")) + s.toUpperCase());\n` +
          `parent.register("bye", () => { setImmediate(() => parent.close()); return "bye"; });\n`,
      );
      const { endpoint, child } = spawnEndpoint(process.execPath, [script]);
      endpoint.register("prefix", () => ">");
      assert.deepEqual(await Promise.all([endpoint.call("upper", "apple"), endpoint.call("upper", "lime")]), [">APPLE", ">LIME"]);
      assert.equal(await endpoint.call("bye"), "bye");
      // the child closed its side: our endpoint sees EOF
      assert.equal(await endpoint.closed, undefined);
      await new Promise((r) => child.once("exit", r));
      assert.equal(child.exitCode, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("memory under hostile input", () => {
  // the endpoint in a subprocess with a 48 MiB heap, fed hostile bytes through a transport
  const run = async (feed: string, decoderOptions = "{}") => {
    const { execFileSync } = await import("node:child_process");
    const { pathToFileURL } = await import("node:url");
    const jsDir = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../../..");
    const code =
      `const { Endpoint } = await import(${JSON.stringify(pathToFileURL(join(jsDir, "build/esm/rpc/index.js")).href)});\n` +
      `let data, end; const written = [];\n` +
      `const ep = new Endpoint({ start(d, e) { data = d; end = e; }, write(b) { written.push(b.length); }, close() {} }, { decoder: ${decoderOptions} });\n` +
      `const pending = ep.call("x").catch((e) => e);\n` +
      `const chunks = (${feed})();\n` +
      `for (const c of chunks) { if (ep.isClosed) break; data(c); }\n` +
      `if (!ep.isClosed) end();\n` +
      `const cause = await ep.closed; const e = await pending;\n` +
      `console.log(JSON.stringify({ kind: cause && cause.kind, offset: cause && cause.offset, message: e.message, heapMiB: Math.round(process.memoryUsage().heapUsed / 1048576) }));\n`;
    const out = execFileSync(process.execPath, ["--max-old-space-size=48", "--input-type=module", "-e", code], { encoding: "utf8", timeout: 60_000 });
    return JSON.parse(out) as { kind: string; offset: number; message: string; heapMiB: number };
  };

  test("200,000 nested array 32 heads each declaring 2^20 elements (1 MB in 64 KiB chunks, depth limit lifted), then EOF: truncated, in a 48 MiB heap", async () => {
    const got = await run(`() => { const one = [0xdd, 0x00, 0x10, 0x00, 0x00]; const all = new Uint8Array(200_000 * 5); for (let i = 0; i < all.length; i++) all[i] = one[i % 5]; return Array.from({ length: Math.ceil(all.length / 65536) }, (_, i) => all.subarray(i * 65536, (i + 1) * 65536)); }`, "{ maxDepth: 1000000 }");
    // maxDepth is raised so that the declared counts, not the depth, are what the bytes must not justify
    assert.equal(got.kind, "truncated", JSON.stringify(got));
    assert.equal(got.offset, 0);
    assert.match(got.message, /^x \(msgid 1\) got no reply: /);
  });

  test("a str 32 head declaring 4 GiB with the length limit lifted, followed by 8 MB: truncated at EOF, memory as the bytes", async () => {
    const got = await run(`() => [new Uint8Array([0xdb, 0xff, 0xff, 0xff, 0xff]), ...Array.from({ length: 128 }, () => new Uint8Array(65536))]`, "{ maxStrLength: 4294967295 }");
    assert.equal(got.kind, "truncated");
    assert.equal(got.offset, 0);
    assert.match(got.message, /got no reply: the peer closed the connection inside a message: input ends inside a value \(head byte 0xdb\) at byte 0/);
  });
});

describe("a hook that throws", () => {
  test("an exception from onUnhandledNotification ends the connection naming it instead of escaping into the transport", async () => {
    const [a, b] = pipePair();
    const client = new Endpoint(a);
    const server = new Endpoint(b, {
      onUnhandledNotification: (method) => {
        throw new Error(`refusing ${method}`);
      },
    });
    const pending = client.call("never").catch((e: unknown) => e);
    client.notify("unknown_one");
    const cause = (await server.closed) as Error;
    assert.equal(cause.message, "refusing unknown_one");
    assert.match(((await pending) as Error).message, /never \(msgid 1\) got no reply: the peer closed the connection \(EOF\)/);
  });
});

test("an onNotificationError that throws for an async handler's rejection ends the connection (no unhandled rejection)", async () => {
  const [a, b] = pipePair();
  const client = new Endpoint(a);
  const server = new Endpoint(b, {
    onNotificationError: (e) => {
      throw new Error(`hook saw: ${(e as Error).message}`);
    },
  });
  server.register("fails", async () => {
    throw new Error("handler failed");
  });
  client.notify("fails");
  assert.equal(((await server.closed) as Error).message, "hook saw: handler failed");
  await client.closed;
});

describe("writes", () => {
  test("the messages of one turn go out in one write, whole and in order; close() flushes what was sent before it", async () => {
    const [a, b] = pipePair();
    const sent = (a as unknown as { sent: Uint8Array[] }).sent;
    const client = new Endpoint(a);
    const server = new Endpoint(b);
    const notes: unknown[] = [];
    server.register("note", (x: unknown) => void notes.push(x));
    server.register("echo", (x: unknown) => x);
    client.notify("note", 1);
    const call = client.call("echo", "two");
    client.notify("note", 3);
    assert.equal(sent.length, 0, "nothing is written before the turn ends");
    assert.equal(await call, "two");
    assert.equal(sent.length, 1, "one write for the turn's three messages");
    assert.deepEqual([...decodeMulti(sent[0]!)], [[2, "note", [1]], [0, 1, "echo", ["two"]], [2, "note", [3]]]);
    assert.deepEqual(notes, [1, 3]);
    // a notification sent in the same turn as close() still reaches the peer, before its EOF
    client.notify("note", "last");
    await client.close();
    assert.equal(await server.closed, undefined);
    assert.deepEqual(notes, [1, 3, "last"]);
    assert.deepEqual([...decodeMulti(sent[1]!)], [[2, "note", ["last"]]]);
  });
});

describe("user streams", () => {
  test("duplexTransport and streamTransport: two endpoints over a pair of Node streams call, notify and call back; close() is EOF on the other side", async () => {
    const { Duplex, PassThrough } = await import("node:stream");
    const { duplexTransport, streamTransport } = await import("../src/rpc/node.js");
    const there = new PassThrough();
    const back = new PassThrough();
    const a = new Endpoint(duplexTransport(Duplex.from({ readable: back, writable: there } as unknown as Parameters<typeof Duplex.from>[0])));
    const b = new Endpoint(streamTransport(there, back));
    const seen: unknown[] = [];
    a.register("name", () => "a");
    b.register("seen", (x: unknown) => void seen.push(x));
    b.register("greet", async (who: string) => `hello ${who} from ${String(await b.call("name"))}`);
    a.notify("seen", new Uint8Array([1, 2, 3]));
    assert.deepEqual(await Promise.all([a.call("greet", "you"), a.call("greet", "me")]), ["hello you from a", "hello me from a"]);
    assert.deepEqual(seen, [new Uint8Array([1, 2, 3])]);
    await a.close();
    assert.equal(await b.closed, undefined);
  });
});

test("a notification is never answered: unknown method, wrong arity, a throwing or rejecting handler go to the hooks, and the next message out is the reply to the next request", async () => {
  const [raw, b] = pipePair();
  const got: unknown[] = [];
  raw.start((bytes) => got.push(...decodeMulti(bytes)), () => undefined);
  const unhandled: unknown[] = [];
  const failed: unknown[] = [];
  let rejected!: () => void;
  const rejection = new Promise<void>((r) => (rejected = r));
  const server = new Endpoint(b, {
    onUnhandledNotification: (method, params) => void unhandled.push([method, params]),
    onNotificationError: (e, method) => {
      failed.push([method, (e as Error).message]);
      if (method === "rejects") rejected();
    },
  });
  server.register("two", (x: number, y: number) => x + y, { arity: 2 });
  server.register("throws", () => {
    throw new Error("thrown");
  });
  server.register("rejects", async () => {
    throw new Error("rejected");
  });
  server.register("echo", (x: unknown) => x);
  for (const m of [[2, "nobody", [1]], [2, "two", [1]], [2, "throws", []], [2, "rejects", []]]) raw.write(encode(m));
  await rejection;
  raw.write(encode([0, 9, "echo", ["only this"]]));
  while (got.length < 1) await new Promise((r) => setImmediate(r));
  assert.deepEqual(got, [[1, 9, null, "only this"]]);
  assert.deepEqual(unhandled, [["nobody", [1]], ["two", [1]]]);
  assert.deepEqual(failed, [["throws", "thrown"], ["rejects", "rejected"]]);
  assert.equal(server.isClosed, false);
  await server.close();
});

test("msgid 0 is never a call's: a peer's msgid-0 answer (to a message it found invalid) is not taken as the reply of a pending call", async () => {
  const [a, raw] = pipePair();
  const requests: unknown[][] = [];
  raw.start((bytes) => requests.push(...(decodeMulti(bytes) as Iterable<unknown[]>)), () => undefined);
  const client = new Endpoint(a, { firstMsgid: 2 ** 32 - 1 });
  const calls = [client.call("x"), client.call("y")];
  while (requests.length < 2) await new Promise((r) => setImmediate(r));
  // the ids wrap from 2^32-1 past 0
  assert.deepEqual(requests.map((m) => m[1]), [2 ** 32 - 1, 1]);
  raw.write(encode([1, 0, [1, "invalid message: something else"], null]));
  raw.write(encode([1, 1, null, "y's reply"]));
  raw.write(encode([1, 2 ** 32 - 1, null, "x's reply"]));
  assert.deepEqual(await Promise.all(calls), ["x's reply", "y's reply"]);
  assert.equal(client.discardedResponses, 1);
  const fresh = new Endpoint(pipePair()[0]);
  fresh.call("z").catch(() => undefined);
  await new Promise((r) => setImmediate(r));
  assert.equal((decodeMulti((fresh as unknown as { transport: { sent: Uint8Array[] } }).transport.sent[0]!).next().value as unknown[])[1], 1, "msgids start at 1");
  await client.close();
  await fresh.close();
});
