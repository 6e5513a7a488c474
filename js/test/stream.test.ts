// The stream layer: every valid corpus case fed to decodeStream one byte at a time and, up to
// 4 KiB, as two chunks split at every position; negative cases give the same error fed byte by
// byte; many values in one stream come out whole and in order; the web TransformStreams.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DecodeError, Decoder, decodeStream, DecoderStream, encode, EncoderStream, decode, type DecoderOptions } from "../src/index.js";
import { loadCorpus } from "./support/corpus.js";
import { bytesToHex, hexToBytes } from "./support/typed.js";

const SPLIT_LIMIT = 4096;

async function* chunksOf(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

function bytewise(bytes: Uint8Array): Uint8Array[] {
  return Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
}

async function collect(chunks: Uint8Array[], options?: DecoderOptions): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const v of decodeStream(chunksOf(chunks), options)) out.push(v);
  return out;
}

const cases = loadCorpus();

/**
 * Negative cases whose stream error differs from the one-shot one: one-shot decoding stops at a
 * declared size the input cannot hold (truncated), while a stream, which cannot know that more
 * will not come, reports the error the bytes after it prove (spec/README.md, "Error kinds").
 */
const STREAM_ERRORS: Record<string, [string, number]> = {
  "92 c1: two elements cannot fit in one byte": ["invalid_byte", 1],
  // an ext -1 whose header gives a length no timestamp has: proved at its head, before its payload
  "invalid timestamp length, payload cut off: truncated first": ["invalid_timestamp", 0],
  "d8ff0000: declared size beyond the input": ["invalid_timestamp", 0],
};

describe("corpus through decodeStream", () => {
  for (const c of cases) {
    // a stream reads the bytes after a value as the next value, and zero bytes as zero values
    if (c.encodeError || c.error === "trailing_bytes" || c.forms[0]!.length === 0) continue;
    test(`${c.file}: ${c.name}`, async () => {
      if (c.error !== undefined) {
        const [kind, offset] = STREAM_ERRORS[c.name] ?? [c.error, c.offset];
        await assert.rejects(
          collect(bytewise(c.forms[0]!), c.options),
          (e: unknown) => e instanceof DecodeError && e.kind === kind && e.offset === offset,
        );
        return;
      }
      // corpus.test.ts checks the one-shot value against the case; here the stream's value must be
      // that same value, compared by its exact encoding (exact mode keeps every wire distinction)
      const decoder = new Decoder(c.options);
      for (const form of c.forms) {
        const want = bytesToHex(encode(decoder.decode(form)));
        const values = await collect(bytewise(form), c.options);
        assert.equal(values.length, 1, "one byte at a time");
        assert.equal(bytesToHex(encode(values[0])), want, "one byte at a time");
        if (form.length > SPLIT_LIMIT) continue;
        for (let at = 0; at <= form.length; at++) {
          const split = await collect([form.subarray(0, at), form.subarray(at)], c.options);
          assert.equal(split.length, 1, `split at ${at}`);
          assert.equal(bytesToHex(encode(split[0])), want, `split at ${at}`);
        }
      }
    });
  }
});

describe("decodeStream", () => {
  const values = [1, "two", [3, { four: 4 }], null, new Uint8Array([5]), "x".repeat(300), 2 ** 40, -1.5];
  const joined = concat(values.map((v) => encode(v).slice()));

  test("many values in one stream, any chunking, loses and duplicates nothing", async () => {
    for (const size of [1, 2, 3, 7, 64, joined.length]) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < joined.length; i += size) chunks.push(joined.subarray(i, i + size));
      assert.deepEqual(await collect(chunks), values, `chunks of ${size}`);
    }
  });

  test("reads a web ReadableStream", async () => {
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(joined.subarray(0, 5));
        controller.enqueue(joined.subarray(5));
        controller.close();
      },
    });
    const out: unknown[] = [];
    for await (const v of decodeStream(source)) out.push(v);
    assert.deepEqual(out, values);
  });

  test("input ending inside a value is truncated, offset counted from the stream start", async () => {
    const two = concat([encode("ab").slice(), encode([1, 2, 3]).slice()]);
    await assert.rejects(collect(bytewise(two.subarray(0, two.length - 1))), (e: unknown) => {
      return e instanceof DecodeError && e.kind === "truncated" && e.offset === 3;
    });
  });

  test("an invalid byte is reported as soon as it arrives, at its stream offset", async () => {
    const bytes = Uint8Array.from([0x01, 0x02, 0x91, 0xc1]);
    await assert.rejects(collect(bytewise(bytes)), (e: unknown) => e instanceof DecodeError && e.kind === "invalid_byte" && e.offset === 3);
  });

  // Errors inside a value whose declared size has not arrived: one-shot decoding says truncated
  // (spec/README.md, check 5), a stream reports the error its bytes already prove, at once,
  // after the values before it, and without reading its source any further.
  const provable: Array<[string, string, DecoderOptions, string, number]> = [
    ["0xc1 as the first of 2 elements", "92c1", {}, "invalid_byte", 1],
    ["0xc1 deep in an array 16 of 4096", "dc1000" + "01".repeat(100) + "c1", {}, "invalid_byte", 103],
    ["0xc1 as a map value", "de0100a16101a162c1", {}, "invalid_byte", 8],
    ["a str over its limit", "dc0010" + "a3616263" + "d9ff", { maxStrLength: 8 }, "length_limit", 7],
    ["an array nested too deep", "dc0100" + "91".repeat(3), { maxDepth: 3 }, "depth_limit", 5],
    ["a map over its limit", "dc0100" + "de0005", { maxMapLength: 4 }, "length_limit", 3],
    ["a timestamp with nsec over 999999999", "dc0100" + "d7ff" + "fffffffc00000000", {}, "invalid_timestamp", 3],
    ["an invalid str in strict mode", "dd0000ffff" + "a2c328", { utf8: "strict" }, "invalid_utf8", 5],
    // the header alone proves it: the stream must not wait for (or buffer) a 4 GiB payload
    ["an ext -1 of a length no timestamp has", "dc0100" + "c9ffffffffff", {}, "invalid_timestamp", 3],
    ["a fixext 16 of type -1", "dc0100" + "d8ff", {}, "invalid_timestamp", 3],
    ["a map with more number keys than maxNumberKeys", "dc0100" + "de0014" + "a161c0" + "01c0" + "cb3ff0000000000000c0" + "d0ffc0" + "04", { maxNumberKeys: 3 }, "length_limit", 3],
  ];
  for (const [name, hex, options, kind, offset] of provable) {
    test(`a stream reports ${name} before the input ends`, async () => {
      const before = [7, "x"];
      const prefix = concat(before.map((v) => encode(v).slice()));
      const bytes = concat([prefix, hexToBytes(hex)]);
      const want = (e: unknown) => e instanceof DecodeError && e.kind === kind && e.offset === prefix.length + offset;
      for (const chunks of [bytewise(bytes), [bytes], [bytes.subarray(0, prefix.length + 1), bytes.subarray(prefix.length + 1)]]) {
        let askedForMore = false;
        async function* source(): AsyncGenerator<Uint8Array> {
          yield* chunks;
          askedForMore = true; // the stream read past the last chunk: it waited for the end
        }
        const got: unknown[] = [];
        await assert.rejects(
          (async () => {
            for await (const v of decodeStream(source(), options)) got.push(v);
          })(),
          want,
        );
        assert.deepEqual(got, before, "the values before the error");
        assert.equal(askedForMore, false, "the error came before the source ended");
      }
      // one-shot decoding of the same bytes (the value alone) stops at the unmet declared size
      assert.throws(() => decode(hexToBytes(hex), options), (e: unknown) => e instanceof DecodeError && e.kind === "truncated");
    });
  }

  test("the DecoderStream delivers the values before an error, then errors without the writable closing", async () => {
    const stream = new DecoderStream();
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    void writer.write(concat([encode(1).slice(), encode("two").slice(), hexToBytes("dc0100c0c1")])).catch(() => {});
    assert.deepEqual(await reader.read(), { done: false, value: 1 });
    assert.deepEqual(await reader.read(), { done: false, value: "two" });
    await assert.rejects(reader.read(), (e: unknown) => e instanceof DecodeError && e.kind === "invalid_byte" && e.offset === 9);
  });

  test("a value left cut off is truncated at the end, at its one-shot offset", async () => {
    // the scanner walked the tokens, but only the end proves truncation
    const bytes = hexToBytes("01" + "dc0003" + "a3616263" + "92");
    for (const chunks of [bytewise(bytes), [bytes]]) {
      // one-shot decoding of dc0003 a3616263 92: the array's 3 elements fit in 5 bytes, the 92 does not
      await assert.rejects(collect(chunks), (e: unknown) => e instanceof DecodeError && e.kind === "truncated" && e.offset === 8);
    }
    // the outer array still owes an element when the input ends: truncated at the input length
    const nested = hexToBytes("01" + "92" + "920102");
    await assert.rejects(collect(bytewise(nested)), (e: unknown) => e instanceof DecodeError && e.kind === "truncated" && e.offset === 5);
  });

  test("a value arriving in chunks is decoded once it is whole, whatever the chunking", async () => {
    const value = { list: Array.from({ length: 300 }, (_, i) => ({ i, s: "v".repeat(i % 40), f: i / 3 })), t: new Date(5), b: new Uint8Array(70) };
    const bytes = concat([encode(value).slice(), encode(value).slice()]);
    for (const size of [1, 5, 333, bytes.length - 1]) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      assert.deepEqual(await collect(chunks), [value, value], `chunks of ${size}`);
    }
  });

  test("a long str arriving in many chunks", async () => {
    const s = "é".repeat(50_000);
    const bytes = encode(s).slice();
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 100) chunks.push(bytes.subarray(i, i + 100));
    assert.deepEqual(await collect(chunks), [s]);
  });
});

describe("web TransformStreams", () => {
  test("EncoderStream then DecoderStream give the values back", async () => {
    const values: unknown[] = [{ a: 1 }, [1, 2], "s", null, 3.25];
    const source = new ReadableStream<unknown>({
      start(controller) {
        for (const v of values) controller.enqueue(v);
        controller.close();
      },
    });
    const out: unknown[] = [];
    const reader = source.pipeThrough(new EncoderStream()).pipeThrough(new DecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out.push(value);
    }
    assert.deepEqual(out, values);
  });

  test("DecoderStream errors the stream on truncated input", async () => {
    const bytes = encode([1, 2, 3]).slice().subarray(0, 2);
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    const reader = source.pipeThrough(new DecoderStream()).getReader();
    await assert.rejects(reader.read(), (e: unknown) => e instanceof DecodeError && e.kind === "truncated" && e.offset === 0);
  });

  test("EncoderStream output is what encode() gives", async () => {
    const source = new ReadableStream<unknown>({
      start(controller) {
        controller.enqueue({ k: [1, "v"] });
        controller.close();
      },
    });
    const { value } = await source.pipeThrough(new EncoderStream()).getReader().read();
    assert.deepEqual(value, encode({ k: [1, "v"] }));
    assert.deepEqual(decode(value!), { k: [1, "v"] });
  });
});

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
