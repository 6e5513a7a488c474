// What every JavaScript value becomes (README.md, "Type mapping"): a documented MessagePack form,
// or an EncodeError naming the value's type and its path. And who owns the bytes: encode's result
// and decoded payloads are memory of their own unless an option says otherwise.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decode, EncodeError, encode, Encoder, ExtensionCodec, decodeStream, type EncoderOptions } from "../src/index.js";
import { bytesToHex } from "./support/typed.js";
import { DEFER_MIN } from "../src/Encoder.js";

const hex = (v: unknown, options?: EncoderOptions) => bytesToHex(new Encoder(options).encode(v));
const refused = (path: string, valueType: string, message?: RegExp) => (e: unknown) =>
  e instanceof EncodeError && e.path === path && e.valueType === valueType && (message === undefined || message.test(e.message)) && e.message.endsWith(` at ${path}`);

describe("values with a mapping", () => {
  test("a Set is an array of its values, in insertion order", () => {
    assert.equal(hex(new Set([1, "a", 1])), hex([1, "a"]));
    assert.deepEqual(decode(encode({ s: new Set([3, 2]) })), { s: [3, 2] });
  });
  test("boxed primitives are their primitive", () => {
    assert.equal(hex([new Number(1.5), new String("ab"), new Boolean(false), Object(7n)]), hex([1.5, "ab", false, 7]));
  });
  test("ArrayBuffer and DataView are bin of their bytes", () => {
    const bytes = Uint8Array.of(1, 2, 3, 4);
    assert.equal(hex(bytes.buffer), "c40401020304");
    assert.equal(hex(new DataView(bytes.buffer, 1, 2)), "c4020203");
    assert.equal(hex(Buffer.from([9])), "c40109");
  });
  test("an object with toJSON is what toJSON returns (URL, class instances), as JSON.stringify", () => {
    assert.equal(hex(new URL("https://example.com/a")), hex("https://example.com/a"));
    class Money {
      constructor(readonly cents: number) {}
      toJSON() {
        return { amount: this.cents / 100 };
      }
    }
    assert.equal(hex({ price: new Money(250) }), hex({ price: { amount: 2.5 } }));
    // a toJSON that returns its own object again ends at maxDepth, not in a loop
    class Loop {
      toJSON() {
        return this;
      }
    }
    assert.throws(() => encode(new Loop()), (e: unknown) => e instanceof EncodeError && /maxDepth/.test(e.message));
  });
  test("other class instances: their own enumerable properties, as a map", () => {
    class Point {
      constructor(readonly x: number, readonly y: number) {}
      get length() {
        return Math.hypot(this.x, this.y);
      }
    }
    assert.equal(hex(new Point(1, 2)), hex({ x: 1, y: 2 }));
  });
  test("undefined is nil in arrays and objects; ignoreUndefined leaves such properties out", () => {
    assert.equal(hex([undefined, 1]), "92c001");
    assert.equal(hex({ a: undefined, b: 1 }), "82a161c0a16201");
    assert.equal(hex({ a: undefined, b: 1 }, { ignoreUndefined: true }), "81a16201");
    assert.equal(hex({ b: 1, a: undefined }, { ignoreUndefined: true, sortKeys: true }), "81a16201");
    assert.equal(hex([undefined], { ignoreUndefined: true }), "91c0", "arrays keep their positions");
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i % 2 ? undefined : i]));
    assert.deepEqual(decode(new Encoder({ ignoreUndefined: true }).encode(many)), Object.fromEntries(Object.entries(many).filter(([, v]) => v !== undefined)));
  });
});

describe("values without one: EncodeError naming the type and the path", () => {
  const cases: Array<[string, unknown, string, string]> = [
    ["a function", { a: [1, 2, 3, () => 0] }, "$.a[3]", "function"],
    ["a symbol", [Symbol("s")], "$[0]", "symbol"],
    ["an Error", { e: new Error("x") }, "$.e", "Error"],
    ["a TypeError", { e: new TypeError("x") }, "$.e", "TypeError"],
    ["a RegExp", { "odd key": /x/ }, '$["odd key"]', "RegExp"],
    ["a Float32Array", { v: new Float32Array(2) }, "$.v", "Float32Array"],
    ["an Int8Array", [[new Int8Array(1)]], "$[0][0]", "Int8Array"],
    ["a Promise", { p: Promise.resolve() }, "$.p", "Promise"],
    ["a WeakMap", { w: new WeakMap() }, "$.w", "WeakMap"],
    ["a boxed symbol", { s: Object(Symbol("s")) }, "$.s", "Symbol"],
    ["an invalid Date", { d: new Date(NaN) }, "$.d", "Date"],
    ["a function in a Map value", new Map<unknown, unknown>([[1, { f: () => 0 }]]), "$.get(1).f", "function"],
    ["a symbol as a Map key", new Map([[Symbol("k"), 1]]), "$.get(<key>)(key)", "symbol"],
    ["a function in a Set", { s: new Set([1, () => 0]) }, "$.s[1]", "function"],
    ["a function from toJSON", { t: new (class { toJSON = () => () => 0; })() }, "$.t", "function"],
    // a plain object's toJSON is not called (that would cost a lookup on every object): it is a
    // function-valued property like any other
    ["toJSON of a plain object", { t: { x: { toJSON: () => 1 } } }, "$.t.x.toJSON", "function"],
    ["a bigint beyond 64 bits", { n: 2n ** 64n }, "$.n", "bigint"],
    ["a Uint8ClampedArray", { v: new Uint8ClampedArray(1) }, "$.v", "Uint8ClampedArray"],
    // built-in and host objects that name themselves (Symbol.toStringTag) keep their contents in
    // internal slots: as maps of their own properties they would all be {}
    ["a generator", { g: (function* () { yield 1; })() }, "$.g", "Generator"],
    ["a Map iterator", [new Map([[1, 2]]).keys()], "$[0]", "Map Iterator"],
    ["an Array iterator", [[1][Symbol.iterator]()], "$[0]", "Array Iterator"],
    ["a URLSearchParams", { q: new URLSearchParams("a=1") }, "$.q", "URLSearchParams"],
    ["a Blob", { b: new Blob(["x"]) }, "$.b", "Blob"],
    ["a Headers", { h: new Headers({ a: "b" }) }, "$.h", "Headers"],
    ["an Intl.NumberFormat", { f: new Intl.NumberFormat() }, "$.f", "Intl.NumberFormat"],
    ["a FinalizationRegistry", { r: new (globalThis as unknown as { FinalizationRegistry: new (f: () => void) => object }).FinalizationRegistry(() => {}) }, "$.r", "FinalizationRegistry"],
    ["a class instance with a Symbol.toStringTag", { c: new (class { x = 1; get [Symbol.toStringTag]() { return "Tagged"; } })() }, "$.c", "Tagged"],
  ];
  for (const [name, value, path, type] of cases) {
    test(name, () => {
      assert.throws(() => encode(value), refused(path, type));
      assert.throws(() => encode(value, { sortKeys: true }), refused(path, type));
      assert.throws(() => encode(value, { sharedBuffer: true }), refused(path, type));
    });
  }
  test("the message names the type and the path", () => {
    assert.throws(() => encode({ a: [1, 2, 3, () => 0] }), { name: "EncodeError", message: "cannot encode a function: it has no MessagePack form at $.a[3]" });
    assert.throws(() => encode({ v: new Float32Array(1) }), /cannot encode a Float32Array: it has no MessagePack form: as bin its element type and byte order would be lost/);
    assert.throws(() => encode({ v: new Uint16Array(1) }), /^EncodeError: cannot encode a Uint16Array: /);
    assert.throws(() => encode({ v: new Map().entries() }), { message: "cannot encode a Map Iterator: its contents are not in its properties, so it has no MessagePack form (convert it to data first, such as [...iterable], or register an extension) at $.v" });
  });
  test("an extension can give them a form", () => {
    const extensions = new ExtensionCodec().register({
      type: 3,
      encode: (v) => (v instanceof Float32Array ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : null),
      decode: (data) => new Float32Array(data.slice().buffer),
    });
    const bytes = new Encoder({ extensions }).encode({ v: Float32Array.of(1.5) });
    assert.deepEqual(decode(bytes, { extensions }), { v: Float32Array.of(1.5) });
  });
  test("an encoder works on after a refusal", () => {
    const e = new Encoder();
    assert.throws(() => e.encode([() => 0]), EncodeError);
    assert.equal(bytesToHex(e.encode([1])), "9101");
  });
});

describe("owned memory", () => {
  test("encode returns a Uint8Array whose buffer holds only that message", () => {
    const a = encode({ a: 1 });
    const b = encode("x".repeat(100_000));
    assert.equal(a.buffer.byteLength, a.byteLength);
    assert.equal(a.byteOffset, 0);
    assert.equal(b.buffer.byteLength, b.byteLength);
    // transferring one result's buffer leaves the others whole
    const before = a.slice();
    structuredClone(b, { transfer: [b.buffer] });
    assert.equal(b.byteLength, 0);
    assert.deepEqual(a, before);
    const c = new Encoder().encode([1, 2]);
    assert.equal(c.buffer.byteLength, 3);
  });
  test("large bins (copied once, straight into the result) land where they belong", () => {
    // owned results write bins of DEFER_MIN bytes and more last, straight into the result: compare
    // with the shared-buffer encoder, which writes every bin in place
    const shared = new Encoder({ sharedBuffer: true });
    const bin = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
    const big = DEFER_MIN;
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) wide[`k${i}`] = i % 3 === 0 ? bin(big + i, i) : i; // 20 keys: map 16, whose head moves the entries
    const values: unknown[] = [
      bin(big, 1),
      [[1, 2], [-1, -2], bin(big + 1, 2)],
      [bin(big - 1, 3), bin(big, 4), bin(70_000, 5), "tail"],
      { a: bin(big + 100, 6), b: [bin(100, 7), { c: bin(big * 2, 8) }], d: "x" },
      [bin(big + 3, 9), wide, bin(big, 10)],
      { outer: wide },
      new Map<unknown, unknown>([[1, bin(big, 11)], ["k", bin(big + 7, 12)]]),
    ];
    for (const v of values) {
      const owned = encode(v);
      assert.equal(owned.buffer.byteLength, owned.byteLength);
      assert.equal(bytesToHex(owned), bytesToHex(shared.encode(v)));
      assert.deepEqual(decode(owned), v);
    }
    // sorted Map keys of mixed types are each encoded whole (a large bin key included)
    const mixed = new Map<unknown, unknown>([[bin(big, 13), bin(big + 9, 14)], [7, "seven"]]);
    const sorted = new Encoder({ sortKeys: true }).encode(mixed);
    assert.equal(bytesToHex(sorted), bytesToHex(new Encoder({ sortKeys: true, sharedBuffer: true }).encode(mixed)));
    // a failed encode after a large bin leaves nothing behind for the next one
    const e = new Encoder();
    assert.throws(() => e.encode([bin(big, 15), () => 0]), EncodeError);
    assert.equal(bytesToHex(e.encode([1])), "9101");
    // an extension's nested encode keeps its bins apart from the outer one's
    const extensions = new ExtensionCodec().register({ type: 9, encode: (x) => (x instanceof Set ? encode([...x]) : null) });
    const nested = [bin(big, 16), new Set([bin(big + 1, 17)]), bin(big + 2, 18)];
    const withExt = new Encoder({ extensions }).encode(nested);
    assert.equal(bytesToHex(withExt), bytesToHex(new Encoder({ extensions, sharedBuffer: true }).encode(nested)));
  });
  test("sharedBuffer: views into one buffer, each left intact by later encodes", () => {
    const shared = new Encoder({ sharedBuffer: true });
    const a = shared.encode({ a: 1 });
    const b = shared.encode({ b: 2 });
    assert.equal(a.buffer, b.buffer);
    assert.ok(a.buffer.byteLength > a.byteLength);
    assert.deepEqual(decode(a), { a: 1 });
    assert.deepEqual(decode(b), { b: 2 });
  });
  test("sharedBuffer: each result is a plain Uint8Array over exactly its bytes, across new chunks, overflows and nested encodes", () => {
    // sharedView makes results from the DataView's ArrayBuffer: it relies on the output buffer and
    // its DataView lying over the same ArrayBuffer from byte 0 whatever path made the buffer
    const extensions = new ExtensionCodec().register({ type: 3, encode: (x) => (x instanceof Set ? shared.encode([...x]).slice() : null) });
    const shared = new Encoder({ sharedBuffer: true, extensions });
    const values: unknown[] = [];
    for (let i = 0; i < 40; i++) values.push({ i, s: "x".repeat(i * 997 % 5000) }); // some outgrow the chunk mid-write
    values.push("y".repeat(300_000), [1, 2], new Set([1, "z".repeat(70_000)]), { big: new Uint8Array(200_000).fill(5) }, 7);
    const kept: [Uint8Array, string][] = [];
    for (const v of values) {
      const r = shared.encode(v);
      const want = bytesToHex(encode(v, { extensions }));
      assert.equal(Object.getPrototypeOf(r), Uint8Array.prototype);
      assert.equal(bytesToHex(r), want);
      assert.ok(r.byteOffset + r.byteLength <= r.buffer.byteLength);
      kept.push([r, want]);
    }
    // and no later encode wrote over an earlier result
    for (const [r, want] of kept) assert.equal(bytesToHex(r), want);
  });
  test("sharedBuffer: a long string's result holds about its own size, not 3 bytes a unit", () => {
    // Room for a long string was once reserved at 3 bytes a UTF-16 unit: a 1 MiB ASCII string's
    // shared result lay in a 6 MiB buffer (and each such encode allocated 2 MiB)
    const shared = new Encoder({ sharedBuffer: true });
    const s = "x".repeat(1 << 20);
    shared.encode(s);
    for (let i = 0; i < 3; i++) {
      const r = shared.encode(s);
      assert.equal(r.byteLength, (1 << 20) + 5);
      assert.ok(r.buffer.byteLength <= r.byteLength + 4096, `a ${r.byteLength}-byte result in a ${r.buffer.byteLength}-byte buffer`);
    }
    // small results after it share a buffer again
    const a = shared.encode([1, 2]);
    const b = shared.encode([3]);
    assert.equal(a.buffer, b.buffer);
  });
  test("long strings that outgrow the room reserved for them (their ASCII length) come out whole", () => {
    // encodeInto fills the buffer, the buffer grows, and encodeInto goes on where it stopped: the
    // place it stops moves with the bytes before the string (k), across 1- to 4-byte characters,
    // lone surrogates included; headers that the UTF-8 length makes longer than the unit count's
    const utf8Str = (s: string) => {
      const body = Buffer.from(s, "utf8");
      const n = body.length;
      const head = n < 32 ? [0xa0 | n] : n < 0x100 ? [0xd9, n] : n < 0x10000 ? [0xda, n >> 8, n & 0xff] : [0xdb, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
      return Buffer.concat([Buffer.from(head), body]);
    };
    const expected = (k: number, s: string) => Buffer.concat([Buffer.from([0x92, 0xc4, k]), Buffer.alloc(k, 7), utf8Str(s)]).toString("hex");
    const strings = [
      "a€😀é".repeat(100_000), // 500,000 units, 1,000,000 bytes
      "é".repeat(40_000), // str 16 by its units, str 32 by its bytes
      "€".repeat(30_000) + "\ud800" + "x".repeat(20) + "\udc00", // lone surrogates: U+FFFD
      "é".repeat(200), // str 8 by its units, str 16 by its bytes
      "😀".repeat(70_000),
    ];
    const shared = new Encoder({ sharedBuffer: true });
    const owned = new Encoder();
    for (const s of strings) {
      for (let k = 0; k < 8; k++) {
        // a shared chunk sized for a 600 kB output, then this one: the string overflows it
        shared.encode("y".repeat(600_000));
        const want = expected(k, s);
        assert.equal(Buffer.from(shared.encode([new Uint8Array(k).fill(7), s])).toString("hex"), want, `shared, k=${k}, ${s.length} units`);
        assert.equal(Buffer.from(owned.encode([new Uint8Array(k).fill(7), s])).toString("hex"), want, `owned, k=${k}, ${s.length} units`);
      }
      assert.equal(decode(encode(s)), Buffer.from(s, "utf8").toString("utf8")); // lone surrogates as U+FFFD
    }
  });
  test("decoded bin and ext payloads are copies, whatever the input type (Buffer included)", () => {
    const extensions = new ExtensionCodec();
    let seen: Uint8Array | undefined;
    extensions.register({ type: 5, decode: (d) => (seen = d) });
    const bytes = encode([Uint8Array.of(1, 2, 3), new (class {})(), 0]).slice();
    const withExt = Uint8Array.from([0x92, 0xc4, 0x02, 7, 8, 0xd5, 0x05, 9, 9]);
    for (const make of [(b: Uint8Array) => Buffer.from(b), (b: Uint8Array) => b.slice(), (b: Uint8Array) => new DataView(b.slice().buffer)]) {
      const input = make(bytes);
      const [bin] = decode(input) as [Uint8Array];
      assert.equal(Object.getPrototypeOf(bin), Uint8Array.prototype, "a plain Uint8Array, not a Buffer");
      new Uint8Array(input.buffer, input.byteOffset, input.byteLength).fill(0);
      assert.deepEqual(bin, Uint8Array.of(1, 2, 3));
      const extInput = make(withExt);
      const [bin2, ext] = decode(extInput, { extensions }) as [Uint8Array, Uint8Array];
      new Uint8Array(extInput.buffer, extInput.byteOffset, extInput.byteLength).fill(0);
      assert.deepEqual([bin2, ext, seen], [Uint8Array.of(7, 8), Uint8Array.of(9, 9), Uint8Array.of(9, 9)]);
      const [, unknownExt] = decode(make(withExt)) as [Uint8Array, { data: Uint8Array }];
      assert.equal(unknownExt.data.buffer.byteLength, 2);
    }
  });
  test("zeroCopy: views into the input, sharing its memory", () => {
    const input = Buffer.from([0x92, 0xc4, 0x02, 7, 8, 0xd5, 0x05, 9, 9]);
    const [bin, ext] = decode(input, { zeroCopy: true }) as [Uint8Array, { data: Uint8Array }];
    assert.equal(bin.buffer, input.buffer);
    input.fill(0);
    assert.deepEqual([...bin, ...ext.data], [0, 0, 0, 0]);
  });
  test("streams copy payloads even with zeroCopy (their buffer is reused)", async () => {
    const bytes = encode([Uint8Array.of(1, 2), Uint8Array.of(3)]).slice();
    const out: unknown[] = [];
    async function* chunks() {
      yield bytes.subarray(0, 3);
      yield bytes.subarray(3);
      yield bytes.slice();
    }
    for await (const v of decodeStream(chunks(), { zeroCopy: true })) out.push(v);
    assert.deepEqual(out, [[Uint8Array.of(1, 2), Uint8Array.of(3)], [Uint8Array.of(1, 2), Uint8Array.of(3)]]);
  });
});
