// The str batch (strBatch.ts): every pass's text stays under BATCH_MAX_TEXT (V8 makes larger
// strings in its slower large-object space), strs on both sides of a pass boundary decode right,
// and its ASCII text is made by Node's latin1Slice (a speed trick) or by TextDecoder elsewhere,
// which must give the same string.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decode, encode } from "../src/index.js";
import { asciiText, asciiTextPortable, batch, BATCH_MAX_BYTES, BATCH_MAX_TEXT, BATCH_MIN_BYTES, batchStrs, clearBatch } from "../src/strBatch.js";

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
