// The stream layer: every valid corpus case fed to decodeStream one byte at a time and, up to
// 4 KiB, as two chunks split at every position; negative cases give the same error fed byte by
// byte; many values in one stream come out whole and in order; the web TransformStreams.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DecodeError, Decoder, decodeStream, DecoderStream, encode, EncoderStream, decode, type DecoderOptions } from "../src/index.js";
import { loadCorpus } from "./support/corpus.js";
import { bytesToHex } from "./support/typed.js";

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

describe("corpus through decodeStream", () => {
  for (const c of cases) {
    // a stream reads the bytes after a value as the next value, and zero bytes as zero values
    if (c.encodeError || c.error === "trailing_bytes" || c.forms[0]!.length === 0) continue;
    test(`${c.file}: ${c.name}`, async () => {
      if (c.error !== undefined) {
        await assert.rejects(
          collect(bytewise(c.forms[0]!), c.options),
          (e: unknown) => e instanceof DecodeError && e.kind === c.error && e.offset === c.offset,
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
