// The str batch (strBatch.ts): every pass's text stays under BATCH_MAX_TEXT (V8 makes larger
// strings in its slower large-object space), strs on both sides of a pass boundary decode right,
// and its ASCII text is made by Node's latin1Slice (a speed trick) or by TextDecoder elsewhere,
// which must give the same string.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decode, encode, ExtData } from "../src/index.js";
import { asciiText, asciiTextPortable, batch, BATCH_MAX_BYTES, BATCH_MAX_TEXT, BATCH_MIN_BYTES, batchStrs, clearBatch, COUNTED, countedNext, endBatches, WINDOW, WINDOW_MAX_BYTES, WINDOW_MAX_SPAN } from "../src/strBatch.js";

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

  /**
   * What the passes over `input` batched, each str read back from the batch's texts as the decoder
   * does; `counted`: whether each pass tries counted mode first (default: as the decoder chooses).
   * `modes` gets batch.counted of each pass.
   */
  function batched(input: Uint8Array, window: boolean, counted?: boolean, modes: boolean[] = [], windows: number[] = []): Map<number, string> {
    const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
    const out = new Map<number, string>();
    let from = 5;
    while (from < input.length) {
      batchStrs(input, view, from, input.length, window, counted ?? countedNext());
      modes.push(batch.counted);
      windows.push(batch.text.length);
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
    endBatches();
    return out;
  }

  for (const [window, counted] of [[true, false], [true, true], [false, false]] as const) {
    test(`${counted ? "counted mode (the window's bytes of 0x80 and more counted by Buffer.byteLength)" : window ? "window mode (the input's own bytes, checked a word at a time)" : "copying mode"}: a non-ASCII byte anywhere in a str, at every alignment, is found`, { skip: counted && !COUNTED }, () => {
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
        const got = batched(input, window, counted);
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

  /** a long ASCII str of n bytes, different for each i */
  const ascii = (i: number, n: number): string => `${i}:${"abcdefghij".repeat(Math.ceil(n / 10))}`.slice(0, n);

  test("counted mode is taken after a dense pass, holds over every kind of token between the strs, and a str that is not ASCII ends it for the decode", { skip: !COUNTED }, () => {
    // between the long ASCII strs, every token whose bytes can be 0x80 or more: str 8 and str 16
    // heads with such length bytes (200, 129, 384, 4095 bytes), short non-ASCII strs, fixmap and
    // fixarray heads, negative fixints, numbers, a bin and exts with such bytes (the window's pass
    // stops BATCH_MAX_GAP bytes after a str, so nothing longer lies inside a window)
    const between = (i: number): unknown[] => [
      ascii(i, 200), -1, -200, 0xfedcba, 3.75e-300, "é", "ünï", new Uint8Array(40).fill(0x80 + i),
      { k: [1, 2], "ë": -0x7f00ff }, ascii(i, 384), new ExtData(5, new Uint8Array(30).fill(0xee)),
      new ExtData(6, new Uint8Array(16).fill(0xfe)), ascii(i, 129), ascii(i, 4095),
    ];
    const value: unknown[] = [];
    for (let i = 0; i < 60; i++) value.push(ascii(i, 40 + i * 7), ...between(i));
    const bytes = encode(value);
    const modes: boolean[] = [];
    const input = new Uint8Array(bytes.length + 8).subarray(3, 3 + bytes.length);
    input.set(bytes);
    // (the array 16 head is 3 bytes: batched() starts at 5, inside the first str; start past it)
    const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
    let from = 3;
    const got: string[] = [];
    while (from < input.length) {
      batchStrs(input, view, from, input.length);
      modes.push(batch.counted);
      for (let q = 0; q < batch.count; q++) got.push(batch.text.slice(batch.offsets[q]!, batch.ends[q]!));
      const next = batch.scannedTo;
      clearBatch();
      if (next <= from) break;
      from = next;
    }
    endBatches();
    assert.ok(modes.length >= 3, `${modes.length} passes`);
    assert.equal(modes[0], false, "the first pass checks each str");
    assert.ok(modes.slice(1).every((m) => m), `every later pass counted: ${modes.join(",")}`);
    const expected = value.filter((v): v is string => typeof v === "string" && /^[\x00-\x7f]*$/.test(v) && v.length >= BATCH_MIN_BYTES);
    assert.deepEqual(got, expected);
    assert.deepEqual(decode(input), value);
    assert.equal(countedNext(), false, "the next decode starts in window mode");

    // a non-ASCII str in a later window: that pass falls back, and the rest of the decode checks
    const mixed = value.slice();
    const at = mixed.length - 40;
    mixed[at] = `${ascii(1, 300)}é`;
    const mixedBytes = encode(mixed);
    const mixedModes: boolean[] = [];
    const mixedGot = batched(mixedBytes, true, undefined, mixedModes);
    const firstOff = mixedModes.indexOf(false, 1);
    assert.ok(firstOff > 1, `counted passes before the str: ${mixedModes.join(",")}`);
    assert.ok(mixedModes.slice(firstOff).every((m) => !m), `no counted pass after it: ${mixedModes.join(",")}`);
    for (const s of mixedGot.values()) assert.ok(mixed.includes(s), "every batched str is one of the value's");
    assert.deepEqual(decode(mixedBytes), mixed);
  });

  test("counted mode: bytes of 0x80 and more before the window are not counted in it", { skip: !COUNTED }, () => {
    // two negative fixints (0xff, 0xfe) before a str holding one é (two such bytes): counting the
    // fixints would make that str pass for ASCII
    for (const lead of [[-1, -2], [-1], [-1, -2, -3], [0.5], [{ "é": 1 }]]) {
      const e = `${ascii(0, 30)}é${ascii(1, 30)}`;
      const value = [...lead, e, ascii(2, 100), ascii(3, 200)];
      const bytes = encode(value);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      batchStrs(bytes, view, 1, bytes.length, true, true);
      try {
        const got: string[] = [];
        for (let q = 0; q < batch.count; q++) {
          const at = batch.offsets[q]!;
          got.push(at >= 0 ? batch.text.slice(at, batch.ends[q]!) : batch.otherText.slice(-1 - at, batch.ends[q]!));
        }
        for (const s of got) assert.ok(value.includes(s), `batched ${JSON.stringify(s.slice(28, 36))} is one of the value's strs`);
        assert.ok(got.length >= 2);
      } finally {
        endBatches();
      }
      assert.deepEqual(decode(bytes), value);
    }
  });

  test("counted mode: a large bin or long non-ASCII str after a window ends it, and what follows decodes right", { skip: !COUNTED }, () => {
    const value: unknown[] = [];
    for (let i = 0; i < 400; i++) {
      value.push(ascii(i, 100 + (i % 50)));
      if (i % 100 === 50) value.push(new Uint8Array(100000).fill(0xff), "ü".repeat(20000 + i));
    }
    const bytes = encode(value);
    const modes: boolean[] = [];
    const got = batched(bytes, true, undefined, modes);
    assert.ok(modes.filter((m) => m).length >= 3, `counted passes: ${modes.join(",")}`);
    for (const s of got.values()) assert.ok(value.includes(s));
    assert.ok(got.size > 300, `${got.size} strs batched`);
    assert.deepEqual(decode(bytes), value);
  });

  test("decode of dense ASCII strs takes counted passes, in windows of at most WINDOW_MAX_SPAN, and gives the same strs as window mode", { skip: !COUNTED }, () => {
    const value = Array.from({ length: 1024 }, (_, i) => ascii(i, i)); // c_strings' shape
    const bytes = encode(value);
    const modes: boolean[] = [];
    const windows: number[] = [];
    const counted = batched(bytes, true, undefined, modes, windows);
    assert.ok(modes.filter((m) => m).length >= 10, `counted passes: ${modes.join(",")}`);
    assert.ok(windows.every((n) => n <= WINDOW_MAX_SPAN), `windows ${windows.join(",")}`);
    const checked = batched(bytes, true, false);
    assert.deepEqual([...counted], [...checked]);
    assert.deepEqual(decode(bytes), value);
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
