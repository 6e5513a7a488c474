// The str batch (strBatch.ts): every pass's text stays under BATCH_MAX_TEXT (V8 makes larger
// strings in its slower large-object space), strs on both sides of a pass boundary decode right,
// and its ASCII text is made by Node's latin1Slice (a speed trick) or by TextDecoder elsewhere,
// which must give the same string.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decode, encode } from "../src/index.js";
import { asciiText, asciiTextPortable, batch, BATCH_MAX_BYTES, BATCH_MAX_TEXT, BATCH_MIN_BYTES, batchStrs, clearBatch, WINDOW, WINDOW_MAX_BYTES } from "../src/strBatch.js";

/** mulberry32 */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** strs of BATCH_MIN_BYTES..BATCH_MAX_BYTES bytes, every one different; some non-ASCII */
function strs(count: number, nonAscii: boolean): string[] {
  const r = rng(count);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = BATCH_MIN_BYTES + Math.floor(r() * (BATCH_MAX_BYTES - BATCH_MIN_BYTES - 8));
    let s = `${i}:`;
    while (s.length < n) s += String.fromCharCode(nonAscii && r() < 0.1 ? 0xe9 : 97 + Math.floor(r() * 26));
    out.push(s);
  }
  return out;
}

describe("str batch", () => {
  for (const nonAscii of [false, true]) {
    test(`a document with ${nonAscii ? "ASCII and other" : "ASCII"} strs totalling several times BATCH_MAX_TEXT decodes exactly, in passes of at most BATCH_MAX_TEXT`, () => {
      const value = strs(2000, nonAscii); // about 500 KiB of strs
      const bytes = encode(value);
      assert.ok(bytes.length > 4 * BATCH_MAX_TEXT);
      assert.deepEqual(decode(bytes), value);
      // one pass from the first str: it stops before its text passes the limit
      const from = 3; // past the array 16 head
      batchStrs(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), from, bytes.length);
      try {
        assert.ok(batch.count > 10, `the pass batched ${batch.count} strs`);
        assert.ok(batch.text.length <= BATCH_MAX_TEXT, `ASCII text of ${batch.text.length} units`);
        assert.ok(batch.otherText.length <= BATCH_MAX_TEXT / 2, `other text of ${batch.otherText.length} units`);
        assert.ok(batch.scannedTo < bytes.length, "the pass stopped before the end");
        assert.ok(batch.scannedTo > BATCH_MAX_TEXT / 4, `the pass went ${batch.scannedTo} bytes`);
      } finally {
        clearBatch();
      }
    });
  }

  test("strs on both sides of every pass boundary decode exactly (growing prefixes of the document)", () => {
    const value = strs(1200, true);
    for (let k = 100; k <= value.length; k += 100) {
      const part = value.slice(0, k);
      assert.deepEqual(decode(encode(part)), part);
    }
  });

  /**
   * strs laid out as an array 32 at byte `shift` of a larger buffer (so that the input's words are
   * aligned every way), each with its payload's offset in the input and its text
   */
  function layout(texts: string[], shift: number): { input: Uint8Array; strs: Map<number, string> } {
    const parts = texts.map((t) => encode(t));
    const size = 5 + parts.reduce((n, p) => n + p.length, 0);
    const input = new Uint8Array(new ArrayBuffer(size + shift + 3), shift, size);
    input[0] = 0xdd;
    new DataView(input.buffer, input.byteOffset).setUint32(1, texts.length);
    const strs = new Map<number, string>();
    let at = 5;
    parts.forEach((p, i) => {
      input.set(p, at);
      const head = p[0]! < 0xc0 ? 1 : p[0] === 0xd9 ? 2 : p[0] === 0xda ? 3 : 5;
      strs.set(at + head, texts[i]!);
      at += p.length;
    });
    return { input, strs };
  }

  /** What the passes over `input` batched, each str read back from the batch's texts as the decoder does. */
  function batched(input: Uint8Array, window: boolean): Map<number, string> {
    const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
    const out = new Map<number, string>();
    let from = 5;
    while (from < input.length) {
      batchStrs(input, view, from, input.length, window);
      const next = batch.scannedTo;
      try {
        for (let q = 0; q < batch.count; q++) {
          const at = batch.offsets[q]!;
          const stop = batch.ends[q]!;
          out.set(batch.starts[q]!, at >= 0 ? batch.text.slice(at, stop) : batch.otherText.slice(-1 - at, stop));
        }
      } finally {
        clearBatch();
      }
      if (next <= from) break;
      from = next;
    }
    return out;
  }

  for (const window of [true, false]) {
    test(`${window ? "window mode (the input's own bytes, checked a word at a time)" : "copying mode"}: a non-ASCII byte anywhere in a str, at every alignment, is found`, () => {
      const max = window ? WINDOW_MAX_BYTES : BATCH_MAX_BYTES;
      const texts: string[] = [];
      for (const n of [BATCH_MIN_BYTES, 18, 19, 20, 21, 33, 100, 255, 256, max - 1, max]) {
        const plain = Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
        texts.push(plain);
        // é is two bytes: put it where the word loop and the edge bytes meet
        for (const at of [0, 1, 2, 3, 4, 5, 7, 8, n - 6, n - 5, n - 4, n - 3, n - 2]) {
          if (at >= 0 && at + 2 <= n) texts.push(plain.slice(0, at) + "é" + plain.slice(at + 2));
        }
      }
      for (let shift = 0; shift < 4; shift++) {
        // a few hundred strs: several passes when the text outgrows BATCH_MAX_TEXT
        const { input, strs } = layout(texts, shift);
        let seen = 0;
        const got = batched(input, window);
        for (const [at, text] of strs) {
          const bytes = Buffer.byteLength(text);
          if (/^[\x00-\x7f]*$/.test(text) && bytes >= BATCH_MIN_BYTES && bytes <= max) assert.ok(got.has(at), `shift ${shift}: the ASCII str of ${bytes} bytes at ${at} was batched`);
        }
        for (const [at, text] of got) {
          assert.equal(text, strs.get(at), `shift ${shift}, str at ${at}`);
          seen++;
        }
        assert.ok(seen > 10, `${seen} strs batched`);
        assert.deepEqual(decode(input), texts, `decode, shift ${shift}`);
        assert.deepEqual(decode(Buffer.from(input.buffer, input.byteOffset, input.length)), texts, `decode of a Buffer, shift ${shift}`);
      }
    });
  }

  test("window mode is Node's (where latin1Slice is), and batches ASCII strs up to WINDOW_MAX_BYTES", () => {
    assert.equal(WINDOW, typeof (Buffer.prototype as { latin1Slice?: unknown }).latin1Slice === "function");
    const texts = ["a".repeat(WINDOW_MAX_BYTES), "b".repeat(BATCH_MAX_BYTES + 1), "c".repeat(WINDOW_MAX_BYTES + 1), "d".repeat(40)];
    const { input, strs } = layout(texts, 1);
    const got = batched(input, true);
    assert.deepEqual([...got.values()], [texts[0], texts[1], texts[3]], "the longest batched: WINDOW_MAX_BYTES");
    for (const [at, text] of got) assert.equal(text, strs.get(at));
    assert.deepEqual([...batched(input, false).values()], [texts[3]], "copying mode: up to BATCH_MAX_BYTES");
  });

  test("asciiText (latin1Slice in Node) and the portable TextDecoder path give the same strings", () => {
    const r = rng(7);
    for (const n of [0, 1, 3, 17, 100, 4096, BATCH_MAX_TEXT]) {
      const scratch = new Uint8Array(n + 5);
      for (let i = 0; i < scratch.length; i++) scratch[i] = Math.floor(r() * 128);
      const a = asciiText(scratch, n);
      assert.equal(a, asciiTextPortable(scratch, n));
      assert.equal(a.length, n);
      for (let i = 0; i < n; i++) assert.equal(a.charCodeAt(i), scratch[i]);
    }
  });
});
