// mpk/rpc's driver for the cross-language RPC matrix (spec/rpc/README.md):
//   rpc.js serve ADDR             serve the matrix methods; prints "listening ADDR" once ready,
//                                 stops when stdin ends
//   rpc.js client ADDR SCENARIO   run one scenario against a server (its input, if any, a JSON
//                                 object on stdin); prints one JSON line
//   rpc.js roundtrip              decode each hex of {"values": [...]} on stdin and encode it
//                                 again, without RPC; prints one JSON line
// ADDR is "unix:PATH" or "tcp:HOST:PORT". Both sides decode with { exact: true, utf8: "raw",
// int64: "auto" } (as the interop driver does), so float 32, map order and duplicate keys, and
// strs holding invalid UTF-8 keep their form through JS values.
import { Decoder, Encoder, type DecoderOptions } from "../src/index.js";
import { Endpoint, RpcConnectionError, RpcError, RpcTimeoutError } from "../src/rpc/index.js";
import { connect, listen, type Address } from "../src/rpc/node.js";

const DECODER: DecoderOptions = { exact: true, utf8: "raw", int64: "auto" };
const OPTIONS = { decoder: DECODER };
const decoder = new Decoder(DECODER);
const encoder = new Encoder();
const PIPELINE_N = 10000;
const delay = (i: number) => (i * 7919) % 50; // 0..49 ms, shuffled: the same permutation in every driver

function fail(message: string): never {
  process.stderr.write(`rpc driver: ${message}\n`);
  process.exit(2);
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fromHex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));
const describe = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

function reencode(v: unknown): unknown {
  try {
    return hex(encoder.encode(v));
  } catch (e) {
    return { encode_error: describe(e) };
  }
}

function parseAddress(arg: string): Address {
  const i = arg.indexOf(":");
  const kind = arg.slice(0, i);
  const where = arg.slice(i + 1);
  if (kind === "unix") return { path: where };
  if (kind !== "tcp") fail(`bad address ${arg}`);
  const j = where.lastIndexOf(":");
  return { host: where.slice(0, j), port: Number(where.slice(j + 1)) };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function serve(address: Address): Promise<void> {
  const server = await listen(
    address,
    (peer) => {
      peer.register("echo", (x) => x, { arity: 1 });
      peer.register("add", (a, b) => Number(a) + Number(b), { arity: 2 });
      peer.register("fail", (v) => { throw new RpcError(v); }, { arity: 1 });
      peer.register("sleep_echo", async (ms, x) => { await sleep(Number(ms)); return x; }, { arity: 2 });
      peer.register("callback", (method, arg) => peer.call(String(method), arg), { arity: 2 });
      peer.register("notify_me", (n) => {
        for (let i = 0; i < Number(n); i++) peer.notify("tick", i);
        return n;
      }, { arity: 1 });
    },
    OPTIONS,
  );
  const a = server.address();
  const shown = "path" in address ? `unix:${address.path}` : `tcp:${address.host}:${typeof a === "object" && a ? a.port : 0}`;
  process.stdout.write(`listening ${shown}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => {
    server.close();
    process.exit(0);
  });
}

type Scenario = (ep: Endpoint, input: { values: string[] }) => Promise<unknown>;

const scenarios: Record<string, Scenario> = {
  async corpus(ep, input) {
    const results = [];
    for (const h of input.values) {
      let v: unknown;
      try {
        v = decoder.decode(fromHex(h));
      } catch (e) {
        results.push({ skip: describe(e) });
        continue;
      }
      const local = reencode(v);
      try {
        results.push({ local, echo: reencode(await ep.call("echo", v)) });
      } catch (e) {
        results.push({ local, error: describe(e) });
      }
    }
    return { results };
  },

  async errors(ep, input) {
    const results = [];
    for (const h of input.values) {
      try {
        await ep.call("fail", decoder.decode(fromHex(h)));
        results.push({ no_error: true });
      } catch (e) {
        results.push(e instanceof RpcError ? reencode(e.value) : { not_an_rpc_error: describe(e) });
      }
    }
    // JSON for the runner: [type, message] with the type as a number
    const plain = (v: unknown) => (Array.isArray(v) ? [Number(v[0]), String(v[1])] : String(v));
    const out: Record<string, unknown> = { results };
    for (const [name, method, params] of [["unknown", "no_such_method", []], ["arity", "add", [1]]] as const) {
      try {
        await ep.call(method, ...params);
        out[name] = "no RpcError";
      } catch (e) {
        out[name] = e instanceof RpcError ? plain(e.value) : describe(e);
      }
    }
    return out;
  },

  async pipeline(ep) {
    const order: number[] = [];
    let wrong = 0;
    await Promise.all(
      Array.from({ length: PIPELINE_N }, (_, i) =>
        ep.call("sleep_echo", delay(i), i).then(
          (r) => { order.push(i); if (Number(r) !== i) wrong++; },
          () => { order.push(i); wrong++; },
        ),
      ),
    );
    let inversions = 0;
    let top = -1;
    for (const i of order) {
      if (i < top) inversions++;
      else top = i;
    }
    return { count: order.length, wrong, out_of_order: inversions };
  },

  async notify(ep) {
    const ticks: number[] = [];
    // a handler that returns at once runs before the next message is dispatched (js/README.md)
    ep.register("tick", (i) => void ticks.push(Number(i)), { arity: 1 });
    let result: unknown = null;
    let error: string | null = null;
    try {
      result = Number(await ep.call("notify_me", 50));
    } catch (e) {
      error = describe(e);
    }
    return { result, error, ticks, handled_before_reply: ticks.length, handlers_run_before_reply: true };
  },

  async callback(ep) {
    ep.register("plus_one", (x) => Number(x) + 1, { arity: 1 });
    try {
      return { result: Number(await ep.call("callback", "plus_one", 41)), error: null };
    } catch (e) {
      return { result: null, error: describe(e) };
    }
  },

  // against the runner's raw server: echo("first") gets a stray response for an unknown msgid and
  // then its reply; echo("second") gets part of its reply, then the connection ends
  async disconnect(ep) {
    const out: Record<string, unknown> = { first: null, first_error: null, second_error: null, connection_error: false };
    try {
      out.first = String(await ep.call("echo", "first"));
    } catch (e) {
      out.first_error = describe(e);
    }
    try {
      await ep.call("echo", "second");
    } catch (e) {
      out.second_error = describe(e);
      out.connection_error = e instanceof RpcConnectionError;
    }
    return out;
  },

  async timeout(ep) {
    let timedOut = false;
    let timeoutError: string | null = null;
    try {
      await ep.callWith("sleep_echo", [300, "late"], { timeout: 50 });
    } catch (e) {
      timedOut = e instanceof RpcTimeoutError;
      timeoutError = describe(e);
    }
    // and one cancelled by the caller once it was sent
    const abort = new AbortController();
    const reason = new Error("cancelled by the driver");
    const cancelledCall = ep.callWith("sleep_echo", [300, "late too"], { signal: abort.signal });
    await new Promise((resolve) => setImmediate(resolve)); // the request is written at the end of the turn
    abort.abort(reason);
    let cancelled = false;
    let cancelError: string | null = null;
    try {
      await cancelledCall;
    } catch (e) {
      cancelled = e === reason;
      cancelError = describe(e);
    }
    const out: Record<string, unknown> = { timed_out: timedOut, timeout_error: timeoutError, cancelled, cancel_error: cancelError };
    const errors: (string | null)[] = [];
    // "after" is answered 400 ms after it is sent, so its reply follows the late one, which must
    // be discarded quietly meanwhile
    for (const [key, method, params] of [["during", "echo", ["during"]], ["after", "sleep_echo", [400, "after"]]] as const) {
      try {
        out[key] = String(await ep.call(method, ...params));
        errors.push(null);
      } catch (e) {
        errors.push(describe(e));
      }
    }
    out.errors = errors;
    out.discarded_responses = ep.discardedResponses;
    return out;
  },
};

async function client(address: Address, scenario: string): Promise<void> {
  const run = scenarios[scenario] ?? fail(`unknown scenario ${scenario}`);
  const input = scenario === "corpus" || scenario === "errors" ? JSON.parse(await readStdin()) : { values: [] };
  const ep = await connect(address, OPTIONS);
  const out = await run(ep, input);
  await ep.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

async function roundtrip(): Promise<void> {
  const input = JSON.parse(await readStdin()) as { values: string[] };
  const results = input.values.map((h) => {
    try {
      return reencode(decoder.decode(fromHex(h)));
    } catch (e) {
      return { skip: describe(e) };
    }
  });
  process.stdout.write(JSON.stringify({ results }) + "\n");
}

const [mode, addr, scenario] = process.argv.slice(2);
if (mode === "roundtrip") await roundtrip();
else if (mode === "serve" && addr) await serve(parseAddress(addr));
else if (mode === "client" && addr && scenario) await client(parseAddress(addr), scenario);
else fail("usage: rpc.js serve ADDR | client ADDR SCENARIO | roundtrip");
