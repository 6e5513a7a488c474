// mpk/rpc against a live Neovim (Debian's neovim 0.7.2, installed by `make test` through mk/js.mk).
// Without nvim these tests fail: they are part of the suite, not optional.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { Endpoint, neovimExtensions, NvimBuffer, RawStr, RpcError, RpcConnectionError } from "../src/rpc/index.js";
import { listen, spawnEndpoint } from "../src/rpc/node.js";

const NVIM_ARGS = ["--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n"];

test("nvim is installed (make test installs Debian's neovim; these tests never skip)", () => {
  const version = execFileSync("nvim", ["--version"], { encoding: "utf8" });
  assert.match(version, /^NVIM v0\.\d+\.\d+/);
});

test("a command that cannot be started ends the endpoint with the spawn error", async () => {
  const { endpoint } = spawnEndpoint("/nonexistent/mpk-no-such-program", []);
  const e = (await endpoint.call("x").catch((x: unknown) => x)) as RpcConnectionError;
  assert.ok(e instanceof RpcConnectionError);
  assert.match(e.message, /the connection failed: .*ENOENT/);
});

describe("mpk client, nvim --embed over stdio", () => {
  let nvim: Endpoint;
  let kill: () => void;
  before(() => {
    const spawned = spawnEndpoint("nvim", NVIM_ARGS, { extensions: neovimExtensions(), binAsString: true, decoder: { utf8: "raw" } });
    nvim = spawned.endpoint;
    kill = () => spawned.child.kill();
  });
  after(async () => {
    await nvim.close();
    kill();
  });

  test("nvim_get_api_info: the channel id and the handle types mpk maps", async () => {
    const [channel, info] = (await nvim.call("nvim_get_api_info")) as [number, { version: { major: number }; types: Record<string, { id: number }>; error_types: Record<string, { id: number }> }];
    assert.ok(Number.isInteger(channel) && channel > 0);
    assert.equal(info.version.major, 0);
    assert.deepEqual([info.types.Buffer!.id, info.types.Window!.id, info.types.Tabpage!.id], [0, 1, 2]);
    assert.deepEqual([info.error_types.Exception!.id, info.error_types.Validation!.id], [0, 1]);
  });

  test("nvim_eval of numbers and strings, the invalid UTF-8 one kept as its bytes", async () => {
    assert.equal(await nvim.call("nvim_eval", "6 * 7"), 42);
    assert.equal(await nvim.call("nvim_eval", "-2147483648"), -2147483648);
    assert.equal(await nvim.call("nvim_eval", '"héllo"'), "héllo");
    assert.deepEqual(await nvim.call("nvim_eval", "['a', 'b']"), ["a", "b"]);
    const bad = await nvim.call("nvim_eval", '"\\xff"');
    assert.ok(bad instanceof RawStr, "invalid UTF-8 stays bytes");
    assert.deepEqual([...bad.bytes], [0xff]);
    // and it goes back as the same bytes
    assert.equal(await nvim.call("nvim_eval", `char2nr(${JSON.stringify("x")})`), 120);
    assert.equal(await nvim.call("nvim_call_function", "strlen", [bad]), 1);
  });

  test("nvim_buf_set_lines / nvim_buf_get_lines with a Buffer handle (ext 0)", async () => {
    const buffer = await nvim.call("nvim_get_current_buf");
    assert.ok(buffer instanceof NvimBuffer);
    assert.equal(await nvim.call("nvim_buf_set_lines", buffer, 0, -1, true, ["apple red", "banana yellow"]), null);
    assert.deepEqual(await nvim.call("nvim_buf_get_lines", buffer, 0, -1, true), ["apple red", "banana yellow"]);
    assert.deepEqual(await nvim.call("nvim_buf_get_lines", new NvimBuffer(buffer.id), 1, 2, true), ["banana yellow"]);
  });

  test("an error response is Neovim's [type, message]", async () => {
    const e = (await nvim.call("nvim_eval", "no_such_variable").catch((x: unknown) => x)) as RpcError;
    assert.ok(e instanceof RpcError);
    assert.equal(e.method, "nvim_eval");
    assert.equal(e.neovim?.type, 0);
    assert.match(e.neovim!.message, /E121: Undefined variable: no_such_variable/);
    const validation = (await nvim.call("nvim_buf_get_lines", new NvimBuffer(9999), 0, -1, true).catch((x: unknown) => x)) as RpcError;
    assert.equal(validation.neovim?.type, 1);
    assert.match(validation.neovim!.message, /Invalid buffer id/);
    const arity = (await nvim.call("nvim_buf_get_lines").catch((x: unknown) => x)) as RpcError;
    assert.deepEqual(arity.value, [0, "Wrong number of arguments: expecting 4 but got 0"]);
  });

  test("notifications through nvim_subscribe + rpcnotify arrive, in order, before the reply to the call that sent them", async () => {
    const seen: unknown[][] = [];
    nvim.register("fruit", (...params: unknown[]) => void seen.push(params));
    await nvim.call("nvim_subscribe", "fruit");
    const reply = await nvim.call("nvim_exec_lua", "for i = 1, 50 do vim.rpcnotify(0, 'fruit', i, 'apple') end return #'done'", []);
    assert.equal(reply, 4);
    assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => [i + 1, "apple"]));
  });

  test("vim.rpcrequest from Neovim into the client is answered while the client's call is pending", async () => {
    const [channel] = (await nvim.call("nvim_get_api_info")) as [number];
    nvim.register("colour_of", (fruit: string) => ({ apple: "red", banana: "yellow" })[fruit] ?? null, { arity: 1 });
    const got = await nvim.call("nvim_exec_lua", `return vim.rpcrequest(${channel}, 'colour_of', ...) .. '!'`, ["banana"]);
    assert.equal(got, "yellow!");
    // a handler's error reaches Neovim as an error of its own rpcrequest
    nvim.register("fails", () => {
      throw new Error("no colour");
    });
    const e = (await nvim.call("nvim_exec_lua", `return vim.rpcrequest(${channel}, 'fails')`, []).catch((x: unknown) => x)) as RpcError;
    assert.match(e.neovim!.message, /no colour/);
  });
});

test("Neovim as the client of an mpk server: sockconnect + rpcrequest", async () => {
  const colours = new Map<string, string>();
  let reported!: (value: unknown) => void;
  const report = new Promise((r) => (reported = r));
  const server = await listen({ port: 0 }, (endpoint) => {
    endpoint.register("put", (fruit: string, colour: string) => void colours.set(fruit, colour), { arity: 2 });
    endpoint.register("get", (fruit: string) => colours.get(fruit) ?? null, { arity: 1 });
    endpoint.register("report", (value: unknown) => reported(value));
  });
  try {
    const { port } = server.address() as { port: number };
    const script = [
      `let ch = sockconnect('tcp', '127.0.0.1:${port}', {'rpc': v:true})`,
      "call rpcrequest(ch, 'put', 'apple', 'red')",
      "call rpcrequest(ch, 'put', 'lime', 'green')",
      "call rpcnotify(ch, 'report', [rpcrequest(ch, 'get', 'apple'), rpcrequest(ch, 'get', 'lime'), rpcrequest(ch, 'get', 'kiwi')])",
      // a round trip after the notification, so that it is sent before nvim quits
      "call rpcrequest(ch, 'get', 'apple')",
      "qa!",
    ];
    const nvimRun = new Promise<void>((resolve, reject) =>
      execFile("nvim", ["--headless", "-u", "NONE", "-i", "NONE", "-n", ...script.flatMap((c) => ["-c", c])], { timeout: 20_000 }, (e) => (e ? reject(e) : resolve())),
    );
    assert.deepEqual(await report, ["red", "green", null]);
    await nvimRun;
    assert.deepEqual([...colours], [["apple", "red"], ["lime", "green"]]);
  } finally {
    server.close();
  }
});
