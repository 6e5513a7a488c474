// mpk/rpc's webSocketTransport in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core), against an mpk server in this process behind a WebSocket server written here
// by hand on Node's http "upgrade" (RFC 6455: handshake, masked client frames, binary frames out).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { Endpoint, type Transport } from "../src/rpc/index.js";

const jsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const MAX_FRAME = 16 * 1024 * 1024;

/** The server side of one WebSocket connection as a Transport: binary frames in and out. */
function webSocketServerTransport(socket: Socket): Transport {
  let buffered = new Uint8Array(0);
  let done = false;
  const frame = (opcode: number, payload: Uint8Array) => {
    const n = payload.length;
    const head = n < 126 ? [0x80 | opcode, n] : n < 65536 ? [0x80 | opcode, 126, n >> 8, n & 255] : [0x80 | opcode, 127, 0, 0, 0, 0, (n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255];
    socket.write(new Uint8Array(head));
    socket.write(payload);
  };
  return {
    start(onData, onClose) {
      const finish = (cause?: unknown) => {
        if (done) return;
        done = true;
        onClose(cause);
      };
      socket.on("data", (chunk: Buffer) => {
        const next = new Uint8Array(buffered.length + chunk.length);
        next.set(buffered);
        next.set(chunk, buffered.length);
        buffered = next;
        for (;;) {
          if (buffered.length < 2) return;
          const opcode = buffered[0]! & 0x0f;
          if (!(buffered[1]! & 0x80)) return finish(new Error("a client frame that is not masked"));
          let length = buffered[1]! & 0x7f;
          let at = 2;
          if (length === 126) {
            if (buffered.length < 4) return;
            length = (buffered[2]! << 8) | buffered[3]!;
            at = 4;
          } else if (length === 127) {
            if (buffered.length < 10) return;
            const view = new DataView(buffered.buffer, buffered.byteOffset + 2, 8);
            if (view.getUint32(0) !== 0) return finish(new Error("a frame over 4 GiB"));
            length = view.getUint32(4);
            at = 10;
          }
          if (length > MAX_FRAME) return finish(new Error(`a frame of ${length} bytes`));
          if (buffered.length < at + 4 + length) return;
          const mask = buffered.subarray(at, at + 4);
          const payload = buffered.slice(at + 4, at + 4 + length);
          for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
          buffered = buffered.slice(at + 4 + length);
          if (opcode === 0x2 || opcode === 0x0) onData(payload);
          else if (opcode === 0x8) {
            socket.end(new Uint8Array([0x88, 0]));
            return finish();
          } else if (opcode === 0x9) frame(0xa, payload);
          else if (opcode === 0x1) return finish(new TypeError("a text frame"));
        }
      });
      socket.on("end", () => finish());
      socket.on("error", (e) => finish(e));
    },
    write(bytes) {
      if (!done) frame(0x2, bytes);
    },
    close() {
      done = true;
      socket.end(new Uint8Array([0x88, 0x02, 0x03, 0xe8]));
    },
  };
}

function accept(req: IncomingMessage, socket: Socket): boolean {
  const key = req.headers["sec-websocket-key"];
  if (typeof key !== "string" || req.headers.upgrade?.toLowerCase() !== "websocket") {
    socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    return false;
  }
  const acceptKey = createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey}\r\n\r\n`);
  return true;
}

// The page: calls, pipelined calls, a notification, a callback served during its own call, an error
const PAGE = `
import { Endpoint, webSocketTransport, RpcError } from "./index.ts";
globalThis.runRpc = async (url) => {
  const ws = new WebSocket(url);
  const peer = new Endpoint(webSocketTransport(ws));
  peer.register("double", (x) => x * 2);
  const out = {};
  await peer.call("put", "apple", "red");
  out.pipelined = await Promise.all(Array.from({ length: 200 }, (_, i) => peer.call("echo", i)));
  out.apple = await peer.call("get", "apple");
  out.callback = await peer.call("ask_back", 21);
  peer.notify("note", "from the page");
  out.bin = Array.from(await peer.call("echo", new Uint8Array([1, 2, 255])));
  try { await peer.call("nope"); } catch (e) { out.error = [e instanceof RpcError, e.value]; }
  await peer.close();
  // a text frame from the server ends the connection: the pending call rejects naming it
  const second = new Endpoint(webSocketTransport(new WebSocket(url)));
  out.text = await second.call("send_text").then(() => "answered", (e) => [e.name, e.message]);
  return out;
};
`;

test("a browser endpoint over a WebSocket: calls, pipelining, callbacks, notifications, errors", async () => {
  const bundle = await esbuild.build({
    stdin: { contents: PAGE, resolveDir: join(jsDir, "src", "rpc"), loader: "ts" },
    bundle: true,
    write: false,
    format: "iife",
    target: "es2020",
    platform: "browser",
  });
  const notes: unknown[] = [];
  const colours = new Map<string, string>();
  let firstEndpoint: Endpoint | undefined;
  const server = createServer((req, res) => {
    if (req.url === "/") return void res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><meta charset=utf-8><script src=/page.js></script>");
    if (req.url === "/page.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(bundle.outputFiles[0]!.text);
    res.writeHead(404).end();
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    if (!accept(req, socket)) return;
    const endpoint = new Endpoint(webSocketServerTransport(socket));
    firstEndpoint ??= endpoint;
    endpoint.register("put", (fruit: string, colour: string) => void colours.set(fruit, colour), { arity: 2 });
    endpoint.register("get", (fruit: string) => colours.get(fruit) ?? null);
    endpoint.register("echo", (x: unknown) => x);
    endpoint.register("ask_back", async (x: number) => ((await endpoint.call("double", x)) as number) + 0.5);
    endpoint.register("note", (text: string) => void notes.push(text));
    endpoint.register("send_text", () => {
      socket.write(new Uint8Array([0x81, 0x02, 0x68, 0x69])); // a text frame "hi"
      return new Promise(() => undefined);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const userDataDir = mkdtempSync(join(tmpdir(), "mpk-js-rpc-browser-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${port}/`);
    const out = await page.evaluate((url) => (globalThis as unknown as { runRpc: (u: string) => Promise<Record<string, unknown>> }).runRpc(url), `ws://127.0.0.1:${port}/rpc`);
    assert.deepEqual(errors, []);
    assert.deepEqual(out.pipelined, Array.from({ length: 200 }, (_, i) => i));
    assert.equal(out.apple, "red");
    assert.equal(out.callback, 42.5);
    assert.deepEqual(out.bin, [1, 2, 255]);
    assert.deepEqual(out.error, [true, [0, "Invalid method: nope"]]);
    assert.deepEqual(out.text, ["RpcConnectionError", "send_text (msgid 1) got no reply: the connection failed: the WebSocket peer sent a text frame; MessagePack-RPC needs binary frames"]);
    // the page closed its endpoints: the server side sees the end
    assert.equal(await firstEndpoint!.closed, undefined);
    assert.deepEqual(notes, ["from the page"]);
  } finally {
    await context.close();
    server.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
});
