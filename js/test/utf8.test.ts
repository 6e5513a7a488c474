// Long strs are decoded by Node's utf8Slice where it exists (a speed trick) and by TextDecoder
// elsewhere: both must give what TextDecoder gives (WHATWG replacement, a leading U+FEFF kept),
// for valid and invalid UTF-8 alike.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeLongPortable, nodeUtf8Slice } from "../src/utils/utf8.js";
import { decode, encode } from "../src/index.js";

const reference = new TextDecoder("utf-8", { ignoreBOM: true });

function samples(): Uint8Array[] {
  let seed = 12345;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  const out: Uint8Array[] = [];
  const pieces = [[0xef, 0xbb, 0xbf], [0x61], [0xc3, 0xa9], [0xe3, 0x81, 0x82], [0xf0, 0x9f, 0x98, 0x80], [0xff], [0xc3], [0xe3, 0x81], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0x80]];
  for (let i = 0; i < 400; i++) {
    const bytes: number[] = [];
    const n = 40 + (next() % 3000);
    while (bytes.length < n) bytes.push(...pieces[next() % (i % 2 ? pieces.length : 5)]!);
    out.push(Uint8Array.from(bytes));
  }
  return out;
}

describe("long strs: Node's utf8Slice and the portable TextDecoder path agree with TextDecoder", () => {
  test("Node has utf8Slice (the fast path runs in this suite; Chromium runs the portable one)", () => {
    assert.equal(typeof nodeUtf8Slice, "function");
  });
  for (const [name, f] of [["utf8Slice", (b: Uint8Array, s: number, e: number) => nodeUtf8Slice!.call(b, s, e)], ["portable", decodeLongPortable]] as const) {
    test(name, () => {
      for (const bytes of samples()) {
        const padded = new Uint8Array(bytes.length + 6);
        padded.set(bytes, 3);
        assert.equal(f(padded, 3, 3 + bytes.length), reference.decode(bytes));
      }
    });
  }
  test("decode gives TextDecoder's string for long strs, valid or not", () => {
    for (const bytes of samples()) {
      const n = bytes.length;
      const head = n < 0x100 ? [0xd9, n] : [0xda, n >> 8, n & 255];
      assert.equal(decode(Uint8Array.from([...head, ...bytes])), reference.decode(bytes));
    }
    assert.equal(decode(encode("\ufeff" + "é".repeat(400))), "\ufeff" + "é".repeat(400));
  });
});
