// The Node side of the RPC bench (bench/rpc/README.md): calls per second on loopback TCP for
// mpk/rpc (js/build), a minimal JSON-RPC 2.0 over node:net with JSON.parse/stringify, and gRPC
// unary calls (@grpc/grpc-js, messages from bench/rpc/rpcbench.proto through
// @grpc/proto-loader). The servers run in a child process (this script with --serve) so that the
// client's CPU time (process.cpuUsage) is its own. Prints one JSON document: every sample of every
// cell, for bench/rpc/run.py.
//
//   node bench.mjs --modules DIR [--rounds N] [--seconds S] [--only LIBRARY]
// DIR is where this folder's package.json and lock were installed (npm ci): its node_modules.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection, createServer } from "node:net";
import { dirname, join, resolve as resolvePath } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const { values: args } = parseArgs({
  options: {
    serve: { type: "boolean", default: false },
    modules: { type: "string" },
    rounds: { type: "string", default: "7" },
    seconds: { type: "string", default: "0.5" },
    only: { type: "string", default: "" },
    workload: { type: "string", default: "" },
  },
});
const require = createRequire(join(resolvePath(args.modules), "package.json"));
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const { connect, listen } = await import(join(root, "js", "build", "esm", "rpc", "node.js"));

const BLOB_SIZE = 8192;
const PROTO = join(here, "..", "rpcbench.proto");

function loadService() {
  const def = protoLoader.loadSync(PROTO, { longs: Number, defaults: true });
  return grpc.loadPackageDefinition(def).mpkrpcbench.Bench;
}

// ---- JSON-RPC 2.0, one JSON text a line ------------------------------------------------------------

/** Calls onLine with each complete line (a Buffer, without its newline) of the socket. */
function lines(socket, onLine) {
  let rest = null;
  socket.on("data", (chunk) => {
    let data = rest ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0;
    for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
      onLine(data.subarray(start, nl));
      start = nl + 1;
    }
    rest = start < data.length ? data.subarray(start) : null;
  });
}

function jsonHandle(method, params) {
  if (method === "add") return params[0] + params[1];
  // a bin goes as a base64 string: JSON has no bytes; the server works on the bytes
  if (method === "echo") return Buffer.from(params[0], "base64").toString("base64");
  throw new Error(`method not found: ${method}`);
}

function jsonServe(socket) {
  socket.setNoDelay(true);
  lines(socket, (line) => {
    const req = JSON.parse(line.toString("utf8"));
    let resp;
    try {
      resp = { jsonrpc: "2.0", id: req.id, result: jsonHandle(req.method, req.params) };
    } catch (e) {
      resp = { jsonrpc: "2.0", id: req.id, error: { code: -32601, message: String(e) } };
    }
    socket.write(JSON.stringify(resp) + "\n");
  });
  socket.on("error", () => {});
}

class JsonClient {
  constructor(socket) {
    this.socket = socket;
    this.pending = new Map();
    this.nextId = 0;
    lines(socket, (line) => {
      const resp = JSON.parse(line.toString("utf8"));
      const p = this.pending.get(resp.id);
      if (!p) return;
      this.pending.delete(resp.id);
      if (resp.error) p.reject(new Error(resp.error.message));
      else p.resolve(resp.result);
    });
  }
  call(method, params) {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }
}

// ---- servers ------------------------------------------------------------------------------------

async function serve() {
  const mpkServer = await listen({ port: 0, host: "127.0.0.1" }, (peer) => {
    peer.register("add", (a, b) => a + b, { arity: 2 });
    peer.register("echo", (b) => b, { arity: 1 });
  });
  const jsonServer = createServer(jsonServe);
  await new Promise((resolve) => jsonServer.listen(0, "127.0.0.1", resolve));
  const gs = new grpc.Server();
  gs.addService(loadService().service, {
    Add: (call, cb) => cb(null, { sum: call.request.a + call.request.b }),
    Echo: (call, cb) => cb(null, { data: call.request.data }),
  });
  const gport = await new Promise((resolve, reject) =>
    gs.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, port) => (e ? reject(e) : resolve(port))),
  );
  process.stdout.write(JSON.stringify({ "mpk-rpc": mpkServer.address().port, "json-rpc": jsonServer.address().port, grpc: gport }) + "\n");
  process.stdin.resume();
  process.stdin.on("end", () => {
    gs.forceShutdown();
    process.exit(0);
  });
}

// ---- clients ------------------------------------------------------------------------------------

async function connectAll(ports, blob) {
  const libs = [];
  const ep = await connect({ port: ports["mpk-rpc"], host: "127.0.0.1" });
  libs.push({
    name: "mpk-rpc", kind: "mpk", close: () => ep.close(),
    small: async () => { if ((await ep.call("add", 1, 2)) !== 3) throw new Error("add"); },
    big: async () => { if ((await ep.call("echo", blob)).length !== BLOB_SIZE) throw new Error("echo"); },
  });

  const socket = await new Promise((resolve, reject) => {
    const s = createConnection(ports["json-rpc"], "127.0.0.1");
    s.once("error", reject);
    s.once("connect", () => resolve(s));
  });
  socket.setNoDelay(true);
  const jc = new JsonClient(socket);
  libs.push({
    name: "json-rpc", kind: "json", close: () => socket.destroy(),
    small: async () => { if ((await jc.call("add", [1, 2])) !== 3) throw new Error("add"); },
    big: async () => {
      const out = Buffer.from(await jc.call("echo", [Buffer.from(blob).toString("base64")]), "base64");
      if (out.length !== BLOB_SIZE) throw new Error("echo");
    },
  });

  const Bench = loadService();
  const client = new Bench(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
  const unary = (method, req) => new Promise((resolve, reject) => client[method](req, (e, r) => (e ? reject(e) : resolve(r))));
  libs.push({
    name: "grpc", kind: "protobuf", close: () => client.close(),
    small: async () => { if ((await unary("Add", { a: 1, b: 2 })).sum !== 3) throw new Error("Add"); },
    big: async () => { if ((await unary("Echo", { data: blob })).data.length !== BLOB_SIZE) throw new Error("Echo"); },
  });
  return libs;
}

let serverPid = 0;

/** The user+system CPU time of process pid from /proc (clock ticks of 10 ms), or 0 where it cannot tell. */
function procCpuNs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/);
    return (Number(f[11]) + Number(f[12])) * 10_000_000;
  } catch {
    return 0;
  }
}

async function run(fn, inflight, seconds) {
  let stop = false;
  let calls = 0;
  const worker = async () => {
    let n = 0;
    while (!stop) {
      await fn();
      n++;
    }
    calls += n;
  };
  globalThis.gc?.();
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const s0 = procCpuNs(serverPid);
  const timer = new Promise((resolve) => setTimeout(() => { stop = true; resolve(); }, seconds * 1000));
  await Promise.all([timer, ...Array.from({ length: inflight }, worker)]);
  const cpu = process.cpuUsage(c0);
  return { calls, wall_ns: Number(process.hrtime.bigint() - t0), cpu_ns: (cpu.user + cpu.system) * 1000, server_cpu_ns: procCpuNs(serverPid) - s0 };
}

/** A seeded generator (mulberry32), so every run sends the same blob. */
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function clients() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", "--modules", args.modules], { stdio: ["pipe", "pipe", "inherit"] });
  serverPid = child.pid;
  const rl = createInterface({ input: child.stdout });
  const ports = JSON.parse(await new Promise((resolve) => rl.once("line", resolve)));
  const rnd = seeded(1);
  const blob = new Uint8Array(BLOB_SIZE).map(() => Math.floor(rnd() * 256));
  const libs = await connectAll(ports, blob);
  const cells = [];
  const jobs = [];
  for (const lib of libs) {
    if (args.only && lib.name !== args.only) continue;
    for (const [workload, inflight, size] of [["rpc_seq_small", 1, "small"], ["rpc_seq_8k", 1, "big"], ["rpc_64_small", 64, "small"], ["rpc_64_8k", 64, "big"]]) {
      if (args.workload && workload !== args.workload) continue;
      const cell = { workload, library: lib.name, kind: lib.kind, in_flight: inflight, samples: [] };
      cells.push(cell);
      jobs.push([cell, lib[size]]);
    }
  }
  const rounds = Number(args.rounds);
  const seconds = Number(args.seconds);
  for (const [cell, fn] of jobs) await run(fn, cell.in_flight, Math.max(seconds / 2, 0.2)); // warm-up (JIT, pools)
  const rnd2 = seeded(2);
  for (let r = 0; r < rounds; r++) {
    const order = jobs.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rnd2() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const i of order) jobs[i][0].samples.push(await run(jobs[i][1], jobs[i][0].in_flight, seconds));
  }
  for (const lib of libs) await lib.close();
  child.stdin.end();
  await new Promise((resolve) => child.once("exit", resolve));
  const version = (name) => require(`${name}/package.json`).version;
  process.stdout.write(JSON.stringify({
    language: "node",
    runtime: `Node ${process.versions.node}`,
    versions: { "@grpc/grpc-js": version("@grpc/grpc-js"), "@grpc/proto-loader": version("@grpc/proto-loader") },
    cells,
  }) + "\n");
}

await (args.serve ? serve() : clients());
