// Long strs are decoded by Node's utf8Slice where it exists (a speed trick) and by TextDecoder
// elsewhere: both must give what TextDecoder gives (WHATWG replacement, a leading U+FEFF kept),
// for valid and invalid UTF-8 alike.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeLongPortable, encodeIntoAt, LATIN1_LONG_MIN, NODE_SLICE_MIN, nodeAsciiLatin1, nodeIsAscii, nodeUtf8Slice, nodeUtf8Write } from "../src/utils/utf8.js";
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

describe("long strings: Node's utf8Write and the portable encodeInto path write what TextEncoder does", () => {
  const strings = [
    "x".repeat(60),
    "é€😀".repeat(40),
    "\ud800" + "a".repeat(60), // lone surrogates (U+FFFD) at the start, the middle, the end
    "a".repeat(30) + "\udc00" + "b".repeat(30) + "\ud83d",
    "a".repeat(50) + "\ud83d\ude00" + "\ude00\ud83d",
    "\ufeff" + "é".repeat(300),
  ];
  test("Node has utf8Write (the fast path runs in this suite; Chromium runs the portable one)", () => {
    assert.equal(typeof nodeUtf8Write, "function");
  });
  test("each path and encode give TextEncoder's bytes", () => {
    const reference = new TextEncoder();
    for (const s of strings) {
      const want = reference.encode(s);
      const out = new Uint8Array(want.length + 20);
      assert.equal(nodeUtf8Write!.call(out, s, 3, out.length - 3), want.length);
      assert.deepEqual(out.subarray(3, 3 + want.length), want);
      const r = encodeIntoAt(s, out.fill(0), 5);
      assert.deepEqual([r.read, r.written], [s.length, want.length]);
      assert.deepEqual(out.subarray(5, 5 + want.length), want);
      const n = want.length;
      const head = n < 0x100 ? [0xd9, n] : [0xda, n >> 8, n & 255];
      assert.deepEqual(encode(s), Uint8Array.from([...head, ...want]));
    }
  });
  test("encodeIntoAt with too little room stops between code points and says where", () => {
    const s = "ab€😀c";
    const out = new Uint8Array(6);
    const r = encodeIntoAt(s, out, 0); // a, b, € (3 bytes); 😀 needs 4 more
    assert.deepEqual([r.read, r.written], [3, 5]);
  });
});

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

describe("long ASCII strs in Node: isAscii + latin1Slice (nodeAsciiLatin1), utf8Slice and TextDecoder agree", () => {
  test("Node 20.16+ has buffer.isAscii through process.getBuiltinModule: strs of LATIN1_LONG_MIN (4096) bytes and more try it", () => {
    assert.equal(typeof nodeIsAscii, "function");
    assert.equal(LATIN1_LONG_MIN, 4096);
  });
  // sizes around the crossover and around Node's external-string size (1,031,913 bytes)
  const sizes = [4095, 4096, 4097, 65536, 1031913, 1031914, 1048576 + 3];
  test("an ASCII str gives the same string each way; one byte of 0x80 or more anywhere makes it not ASCII", () => {
    for (const n of sizes) {
      const bytes = new Uint8Array(n + 7);
      for (let i = 0; i < bytes.length; i++) bytes[i] = 32 + ((i * 13) % 95);
      const start = 3;
      const end = start + n;
      const want = reference.decode(bytes.subarray(start, end));
      assert.equal(nodeAsciiLatin1(bytes, start, end), want, `ASCII ${n}`);
      assert.equal(decodeLongPortable(bytes, start, end), want);
      // bytes outside [start, end) do not matter
      bytes[start - 1] = 0xc3;
      bytes[end] = 0xa9;
      assert.equal(nodeAsciiLatin1(bytes, start, end), want, `ASCII ${n} between non-ASCII bytes`);
      for (const at of [start, start + 31, start + 32, start + (n >> 1), end - 1]) {
        const keep = bytes[at]!;
        bytes[at] = 0xe9;
        assert.equal(nodeAsciiLatin1(bytes, start, end), undefined, `${n}: 0xe9 at ${at - start}`);
        bytes[at] = keep;
      }
    }
  });
  test("decode of long strs, ASCII or not, valid or not, gives TextDecoder's string (both sides of LATIN1_LONG_MIN)", () => {
    for (const n of [LATIN1_LONG_MIN - 1, LATIN1_LONG_MIN, 70000, 1048576]) {
      const ascii = "abcdefghij".repeat(Math.ceil(n / 10)).slice(0, n);
      assert.equal(decode(encode(ascii)), ascii);
      const late = ascii.slice(0, n - 3) + "é"; // the only non-ASCII byte past the first 32
      assert.equal(decode(encode(late)), late);
      const bytes = encode(ascii);
      bytes[bytes.length - 1] = 0xff; // invalid at the end: replaced, as TextDecoder does
      assert.equal(decode(bytes), ascii.slice(0, n - 1) + "\ufffd");
      assert.throws(() => decode(bytes, { utf8: "strict" }), (e: { kind?: string }) => e.kind === "invalid_utf8");
    }
  });
});

describe("strs of 17 to 300 bytes (from NODE_SLICE_MIN bytes on, utf8Slice in Node; the hand paths below it and elsewhere)", () => {
  test("NODE_SLICE_MIN is where Node switches (48)", () => {
    assert.equal(NODE_SLICE_MIN, 48);
  });
  const cases: Array<[string, number[]]> = [];
  for (let n = 17; n <= 300; n += n < 64 ? 1 : 7) {
    cases.push([`ascii ${n}`, Array.from({ length: n }, (_, i) => 32 + ((i * 13) % 95))]);
    const other: number[] = [];
    while (other.length < n) other.push(...(other.length % 5 ? [0x61] : [0xc3, 0xa9]));
    cases.push([`other ${other.length}`, other]);
    const bad = Array.from({ length: n }, (_, i) => (i === n >> 1 ? 0xff : 0x62));
    cases.push([`invalid ${n}`, bad]);
  }
  for (const utf8 of ["replace", "strict", "raw"] as const) {
    test(`utf8: "${utf8}"`, () => {
      for (const [name, bytes] of cases) {
        // alone (an input under the str batch's minimum) and inside an array after a short str
        for (const prefix of [[], [0x92, 0xa1, 0x78]]) {
          const n = bytes.length;
          const input = Uint8Array.from([...prefix, ...(n < 0x100 ? [0xd9, n] : [0xda, n >> 8, n & 255]), ...bytes]);
          const valid = !bytes.includes(0xff);
          const want = reference.decode(Uint8Array.from(bytes));
          const pick = (v: unknown) => (prefix.length ? (v as unknown[])[1] : v);
          if (valid || utf8 === "replace") assert.equal(pick(decode(input, { utf8 })), want, `${name}`);
          else if (utf8 === "strict") assert.throws(() => decode(input, { utf8 }), (e: Error & { kind?: string }) => e.kind === "invalid_utf8", name);
          else assert.deepEqual((pick(decode(input, { utf8 })) as { bytes: Uint8Array }).bytes, Uint8Array.from(bytes), name);
        }
      }
    });
  }
});
