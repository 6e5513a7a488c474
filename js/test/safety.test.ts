// A user's process must never die or lose data because of what it was sent: inputs that are not
// bytes, declared sizes that would claim more memory than the input holds, and stream errors at
// the right offset.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createReadStream } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ChunkDecoder } from "../src/ChunkDecoder.js";
import { decode, DecodeError, decodeMulti, decodeStream, DecoderStream, encode, type DecoderOptions } from "../src/index.js";
import { hexToBytes } from "./support/typed.js";

const buildDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function collect(source: AsyncIterable<unknown>, options?: DecoderOptions): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const v of decodeStream(source as AsyncIterable<Uint8Array>, options)) out.push(v);
  return out;
}

const notBytes = (what: RegExp) => (e: unknown) => e instanceof TypeError && what.test(e.message);

describe("inputs that are not bytes are a TypeError naming their type", () => {
  const cases: Array<[unknown, RegExp]> = [
    ["\x92\x01\x02", /not a string/],
    [[0x92, 1, 2], /not an Array/],
    [{ 0: 1, length: 1 }, /not a plain object/],
    [null, /not null/],
    [undefined, /not undefined/],
    [42, /not a number/],
    [new Map(), /not a Map/],
  ];
  for (const [input, what] of cases) {
    test(`decode, decodeMulti, ChunkDecoder: ${what.source}`, () => {
      assert.throws(() => decode(input as Uint8Array), notBytes(what));
      assert.throws(() => [...decodeMulti(input as Uint8Array)], notBytes(what));
      assert.throws(() => new ChunkDecoder().feed(input as Uint8Array, []), notBytes(what));
    });
  }

  test("bytes in any form are accepted: Buffer, ArrayBuffer, DataView, other typed arrays", () => {
    const bytes = encode([1, "a"]).slice();
    assert.deepEqual(decode(Buffer.from(bytes)), [1, "a"]);
    assert.deepEqual(decode(bytes.buffer), [1, "a"]);
    assert.deepEqual(decode(new DataView(bytes.buffer)), [1, "a"]);
    assert.deepEqual(decode(new Int8Array(bytes.buffer)), [1, "a"]);
  });

  test("decodeStream of Readable.from with a string chunk: the values before it, then a TypeError", async () => {
    const got: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const v of decodeStream(Readable.from([Buffer.from([0x01]), "\x92\x01\x02", "abc"]))) got.push(v);
      })(),
      notBytes(/not a string \(was the stream opened with an encoding\?\)/),
    );
    assert.deepEqual(got, [1]);
    // the case: strings only
    await assert.rejects(collect(Readable.from(["\x92\x01\x02", "abc"])), notBytes(/not a string/));
  });

  test("decodeStream of a file opened with encoding utf8 is a TypeError, not bogus values", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mpk-utf8-"));
    try {
      const file = join(dir, "values.msgpack");
      writeFileSync(file, Buffer.concat(Array.from({ length: 100 }, (_, i) => encode({ i, s: "é" + i }).slice())));
      await assert.rejects(collect(createReadStream(file, { encoding: "utf8" })), notBytes(/not a string/));
      assert.equal((await collect(createReadStream(file))).length, 100);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("DecoderStream errors its readable side on a string chunk", async () => {
    const stream = new DecoderStream();
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    void writer.write(Uint8Array.of(7)).catch(() => {});
    void writer.write("abc" as unknown as Uint8Array).catch(() => {});
    assert.deepEqual(await reader.read(), { done: false, value: 7 });
    await assert.rejects(reader.read(), notBytes(/not a string/));
  });

  test("decodeStream of something that is not a stream of chunks: a TypeError naming it", async () => {
    const notAStream = (what: RegExp) => (e: unknown) => e instanceof TypeError && what.test(e.message);
    // bytes themselves: iterating them would give numbers, refused one by one as "not a number"
    await assert.rejects(collect(Buffer.from([1, 2]) as never), notAStream(/^decodeStream reads a stream of byte chunks, not a Buffer: decode bytes held in memory with decode\(\) or decodeMulti\(\)$/));
    await assert.rejects(collect(Uint8Array.of(1) as never), notAStream(/not a Uint8Array: decode bytes/));
    await assert.rejects(collect(new ArrayBuffer(1) as never), notAStream(/not an ArrayBuffer: decode bytes/));
    await assert.rejects(collect("\x01" as never), notAStream(/^decodeStream reads a ReadableStream or an \(async\) iterable of byte chunks, not a string$/));
    await assert.rejects(collect(null as never), notAStream(/not null$/));
    await assert.rejects(collect({ read() {} } as never), notAStream(/not a plain object$/));
    // an array of chunks (a sync iterable) is a stream of chunks
    assert.deepEqual(await collect([Uint8Array.of(1, 0x92), Uint8Array.of(2, 3)] as never), [1, [2, 3]]);
  });

  test("a ChunkDecoder that was fed a string stays failed", () => {
    const chunks = new ChunkDecoder();
    assert.throws(() => chunks.feed("ab" as unknown as Uint8Array, []), TypeError);
    assert.throws(() => chunks.feed(Uint8Array.of(1), []), TypeError);
    assert.throws(() => chunks.finish(), TypeError);
  });
});

describe("stream errors carry the stream offset when a value came before them in the same chunk", () => {
  // each: bytes after a 1-byte value (01), in one chunk; the error is at 1
  const cases: Array<[string, string, DecoderOptions, string]> = [
    ["invalid_byte", "c1", {}, "invalid_byte"],
    ["length_limit", "a3616263", { maxStrLength: 2 }, "length_limit"],
    ["depth_limit", "91c0", { maxDepth: 0 }, "depth_limit"],
    ["invalid_timestamp (nsec)", "d7ff" + "fffffffc00000000", {}, "invalid_timestamp"],
    ["invalid_timestamp (length)", "c705ff0000000000", {}, "invalid_timestamp"],
    ["invalid_utf8", "a2c328", { utf8: "strict" }, "invalid_utf8"],
  ];
  for (const [name, hex, options, kind] of cases) {
    test(name, async () => {
      const bytes = hexToBytes("01" + hex);
      const got: unknown[] = [];
      await assert.rejects(
        (async () => {
          for await (const v of decodeStream((async function* () { yield bytes; })(), options)) got.push(v);
        })(),
        (e: unknown) => e instanceof DecodeError && e.kind === kind && e.offset === 1,
      );
      assert.deepEqual(got, [1]);
      // and after more values, in a later chunk
      const later = hexToBytes("0203" + hex);
      const chunks = new ChunkDecoder(options);
      const out: unknown[] = [];
      chunks.feed(hexToBytes("0a0b"), out);
      assert.throws(() => chunks.feed(later, out), (e: unknown) => e instanceof DecodeError && e.kind === kind && e.offset === 4);
      assert.deepEqual(out, [10, 11, 2, 3]);
    });
  }
});

describe("memory stays bounded by the input whatever the declared counts", () => {
  // Runs in a child node with a small heap: without the bound, the first inputs presize 1,000
  // arrays of 2^20 elements (about 8 GB) and V8 aborts the process, which no catch can stop.
  const script = `
    const mpk = await import(process.argv[2]);
    const LEVELS = 1000;
    // array 32 / map 32 heads of n (each level declares as many elements as there are bytes left)
    const head = (h, n) => [h, n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
    function input(prefix, fill, count) {
      const heads = [];
      for (let i = 0; i < LEVELS; i++) heads.push(...prefix);
      const out = new Uint8Array(heads.length + count).fill(fill);
      out.set(heads);
      return out;
    }
    const pair = [0x92, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xcb, 0x40, 0, 0, 0, 0, 0, 0, 0];
    const inputs = {
      // the issue's input, 1,053,576 bytes: 2^20 zeros after the heads
      arrays: [input(head(0xdd, 2 ** 20), 0, 2 ** 20), {}],
      // smaller (2^17: still 1 GB presized), each array starting with an int, a pair of floats;
      // maps kept as MapPairs (2^16 pairs, 2^17 bytes)
      intArrays: [input([...head(0xdd, 2 ** 17), 0x01], 0, 2 ** 17), {}],
      pairArrays: [input([...head(0xdd, 2 ** 17), ...pair], 0, 2 ** 17), {}],
      exactMaps: [input(head(0xdf, 2 ** 16), 0, 2 ** 17), { exact: true }],
    };
    const kindOf = (e) => (e instanceof mpk.DecodeError ? e.kind + "@" + e.offset : String(e));
    const results = {};
    for (const [name, [bytes, options]] of Object.entries(inputs)) {
      const r = (results[name] = { length: bytes.length });
      try { mpk.decode(bytes, options); r.decode = "decoded"; } catch (e) { r.decode = kindOf(e); }
      async function* chunks(size) { for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size); }
      try { for await (const _ of mpk.decodeStream(chunks(65536), options)); r.stream = "decoded"; } catch (e) { r.stream = kindOf(e); }
      try { for await (const _ of mpk.decodeStream(chunks(bytes.length), options)); r.oneChunk = "decoded"; } catch (e) { r.oneChunk = kindOf(e); }
      try {
        const s = new mpk.DecoderStream(options);
        const w = s.writable.getWriter();
        w.write(bytes).catch(() => {});
        w.close().catch(() => {});
        const reader = s.readable.getReader();
        for (;;) if ((await reader.read()).done) break;
        r.decoderStream = "decoded";
      } catch (e) { r.decoderStream = kindOf(e); }
    }
    results.heapUsedMiB = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
    console.log(JSON.stringify(results));
  `;

  test("nested containers each declaring 2^20 elements: a clean truncated error under a 96 MiB heap", () => {
    const dir = mkdtempSync(join(tmpdir(), "mpk-memory-"));
    try {
      const file = join(dir, "amplify.mjs");
      writeFileSync(file, script);
      const out = execFileSync(process.execPath, ["--max-old-space-size=96", "--stack-size=4000", file, join(buildDir, "src", "index.js")], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      const results = JSON.parse(out) as Record<string, Record<string, unknown>> & { heapUsedMiB: number };
      for (const name of ["arrays", "intArrays", "pairArrays", "exactMaps"]) {
        const r = results[name]!;
        // the input ends while 999 containers still owe elements: truncated at its length
        const want = `truncated@${r.length as number}`;
        assert.deepEqual(r, { length: r.length, decode: want, stream: want, oneChunk: want, decoderStream: want }, name);
      }
      assert.equal(results.arrays!.length, 1_053_576);
      assert.ok((results.exactMaps!.length as number) > 2 ** 17);
      assert.ok(results.heapUsedMiB < 96, `heap ${results.heapUsedMiB} MiB`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("number keys of a Map result are limited (V8 hashes them without a seed)", () => {
  /** A map 16/32 of these keys (each written as an int 32), every value nil, after `prefix` pairs. */
  function mapOf(keys: number[], prefix: number[] = []): Uint8Array {
    const n = keys.length + prefix.length / 2;
    const out: number[] = n < 0x10000 ? [0xde, n >> 8, n & 255] : [0xdf, n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
    out.push(...prefix);
    for (const k of keys) out.push(0xd2, (k >>> 24) & 255, (k >>> 16) & 255, (k >>> 8) & 255, k & 255, 0xc0);
    return Uint8Array.from(out);
  }
  const ints = (n: number) => Array.from({ length: n }, (_, i) => i * 7919 - 100_000);
  const limit = (offset: number) => (e: unknown) => e instanceof DecodeError && e.kind === "length_limit" && e.offset === offset;

  test("up to DEFAULT_MAX_NUMBER_KEYS (1024) decode; one more is length_limit at the map's head", async () => {
    const { DEFAULT_MAX_NUMBER_KEYS } = await import("../src/index.js");
    assert.equal(DEFAULT_MAX_NUMBER_KEYS, 1024);
    assert.equal((decode(mapOf(ints(1024))) as Map<number, null>).size, 1024);
    assert.throws(() => decode(mapOf(ints(1025))), limit(0));
    // inside an array, after a str key (the object turned Map), in Map mode, as bigints and floats
    assert.throws(() => decode(Uint8Array.from([0x92, 0x01, ...mapOf(ints(1025))])), limit(2));
    assert.throws(() => decode(mapOf(ints(1025), [0xa1, 0x61, 0xc0])), limit(0));
    assert.throws(() => decode(mapOf(ints(1025)), { map: "Map" }), limit(0));
    const wide: number[] = [0xde, 0x04, 0x01];
    for (let i = 0; i < 1025; i++) wide.push(...(i % 2 ? [0xcf, 0xff, 0, 0, 0, 0, 0, i >> 8, i & 255] : [0xcb, 0x3f, 0xf0, 0, 0, 0, 0, i >> 8, i & 255]), 0xc0);
    assert.throws(() => decode(Uint8Array.from(wide)), limit(0));
  });

  test("the limit is an option; str keys and exact mode are not limited", () => {
    assert.equal((decode(mapOf(ints(5000)), { maxNumberKeys: 5000 }) as Map<number, null>).size, 5000);
    assert.throws(() => decode(mapOf(ints(11)), { maxNumberKeys: 10 }), limit(0));
    const strKeys: number[] = [0xde, 0x08, 0x00];
    for (let i = 0; i < 2048; i++) strKeys.push(0xa4, 0x6b, 0x30 + ((i >> 8) & 7), 0x30 + ((i >> 4) & 15), 0x30 + (i & 15), i & 0x7f);
    assert.equal((decode(Uint8Array.from(strKeys), { map: "Map" }) as Map<string, number>).size, 2048);
    assert.equal((decode(mapOf(ints(2000)), { exact: true }) as { pairs: unknown[] }).pairs.length, 2000);
  });

  test("streams apply it too", async () => {
    const bytes = mapOf(ints(1025));
    await assert.rejects(collect((async function* () { yield bytes.subarray(0, 100); yield bytes.subarray(100); })()), limit(0));
  });
});
