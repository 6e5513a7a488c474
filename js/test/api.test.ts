// The public API beyond the corpus: type mapping, options, limits, safety, inputs, extensions.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  decode, decodeMulti, DecodeError, Decoder, encode, EncodeError, Encoder, ExtData, ExtensionCodec, Float, MapPairs, Timestamp, RawStr,
  DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH,
} from "../src/index.js";
import { bytesToHex, hexToBytes } from "./support/typed.js";
import { errorOf } from "./support/errorOf.js";
import { ChunkDecoder } from "../src/ChunkDecoder.js";
import { decodeStream, DecoderStream, EncoderStream } from "../src/index.js";
import { neovimExtensions } from "../src/rpc/index.js";

const hex = (v: unknown, e = new Encoder()) => bytesToHex(e.encode(v));

describe("writer", () => {
  test("numbers take the shortest int, else float 64 (float 32 on request)", () => {
    assert.equal(hex(0), "00");
    assert.equal(hex(-33), "d0df");
    assert.equal(hex(2 ** 32), "cf0000000100000000");
    assert.equal(hex(-(2 ** 40)), "d3ffffff0000000000");
    assert.equal(hex(1.5), "cb3ff8000000000000");
    assert.equal(hex(-0), "cb8000000000000000");
    assert.equal(hex(2 ** 64), "cb43f0000000000000");
    assert.equal(hex(1.5, new Encoder({ float32: true })), "ca3fc00000");
  });
  test("bigints take the shortest int and must fit in 64 bits", () => {
    assert.equal(hex(5n), "05");
    assert.equal(hex(2n ** 64n - 1n), "cfffffffffffffffff");
    assert.equal(hex(-(2n ** 63n)), "d38000000000000000");
    assert.throws(() => encode(2n ** 64n), EncodeError);
  });
  test("undefined is nil; binary views are bin; Map and objects are maps", () => {
    assert.equal(hex(undefined), "c0");
    assert.equal(hex(new DataView(Uint8Array.of(1, 0).buffer)), "c4020100");
    assert.equal(hex(new Map<unknown, unknown>([[1, "a"]])), "8101a161");
    assert.equal(hex({ a: 1 }), "81a16101");
  });
  test("sortKeys gives the same bytes whatever the insertion order", () => {
    const e = new Encoder({ sortKeys: true });
    assert.equal(hex({ b: 1, a: 2 }, e), hex({ a: 2, b: 1 }, e));
    // keys of mixed types are ordered by their encoded bytes
    assert.equal(hex(new Map<unknown, unknown>([[2, 0], ["a", 0], [1, 0]]), e), "8301000200a16100");
  });
  test("strings: lone surrogates become U+FFFD, long strings keep the shortest header", () => {
    assert.equal(hex("\ud800"), "a3efbfbd");
    const s = "é".repeat(20); // 20 units, 40 bytes: str 8
    assert.equal(hex(s).slice(0, 4), "d928");
    assert.equal(decode(encode("a".repeat(100) + "é".repeat(60))), "a".repeat(100) + "é".repeat(60));
    // every string is its UTF-8 under the shortest header, also where the header its UTF-16 length
    // suggests is too short (ASCII first, then text that takes more bytes than units)
    const utf8 = new TextEncoder();
    for (const [ascii, other] of [[0, 10], [5, 11], [20, 10], [31, 1], [0, 16], [100, 60], [200, 40], [250, 3], [0, 255], [500, 11], [0, 511]]) {
      for (const unit of ["é", "€", "😀"]) {
        const str = "a".repeat(ascii!) + unit.repeat(other!);
        const bytes = utf8.encode(str);
        const n = bytes.length;
        const header = n < 32 ? [0xa0 | n] : n < 0x100 ? [0xd9, n] : n < 0x10000 ? [0xda, n >> 8, n & 0xff] : [0xdb, 0, n >> 16, (n >> 8) & 0xff, n & 0xff];
        assert.equal(hex(str), bytesToHex(Uint8Array.from([...header, ...bytes])), `${ascii} ASCII, ${other} of ${unit}`);
      }
    }
  });
  test("short strings: one non-ASCII unit at any position, in objects and arrays too", () => {
    // the writer takes short ASCII strings four units at a time and falls back on other text
    const utf8 = new TextEncoder();
    const strHex = (str: string) => {
      const bytes = utf8.encode(str);
      const n = bytes.length;
      const header = n < 32 ? [0xa0 | n] : n < 0x100 ? [0xd9, n] : [0xda, n >> 8, n & 0xff];
      return bytesToHex(Uint8Array.from([...header, ...bytes]));
    };
    for (let n = 1; n <= 40; n++) {
      for (let at = 0; at < n; at++) {
        for (const unit of ["\u0080", "é", "€", "\ud800"]) {
          const str = "x".repeat(at) + unit + "y".repeat(n - at - 1);
          const expected = strHex(str);
          assert.equal(hex(str), expected, `${n} units, ${unit} at ${at}`);
          assert.equal(hex([str, str]), "92" + expected + expected);
          assert.equal(hex({ [str]: str }), "81" + expected + expected);
        }
      }
      const ascii = "z".repeat(n);
      assert.equal(hex({ [ascii]: [ascii] }), "81" + strHex(ascii) + "91" + strHex(ascii));
    }
  });
  test("objects: own enumerable keys only, also when Object.prototype has enumerable properties", () => {
    const plain = { a: 1, b: "x" };
    const expected = hex({ a: 1, b: "x" });
    assert.equal(expected, "82a16101a162a178");
    // inherited enumerable keys through a prototype of one's own
    assert.equal(hex(Object.assign(Object.create({ inherited: 1 }), plain)), expected);
    assert.equal(hex(Object.assign(Object.create(null), plain)), expected);
    // and through Object.prototype itself, which the writer checks once per encode
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 1;
    try {
      assert.equal(hex(plain), expected);
      assert.equal(hex([plain, { c: plain }]), "92" + expected + "81a163" + expected);
    } finally {
      delete proto.polluted;
    }
    assert.equal(hex(plain), expected);
  });
  test("with maxDepth beyond what the stack allows, deep nesting and cycles are still an EncodeError", () => {
    let deepArray: unknown = [];
    let deepObject: unknown = {};
    let deepMap: unknown = new Map();
    for (let i = 0; i < 200_000; i++) {
      deepArray = [deepArray];
      deepObject = { o: deepObject };
      deepMap = new Map([[1, deepMap]]);
    }
    const cycle: unknown[] = [];
    cycle.push(cycle);
    const cases: Array<[unknown, string, string]> = [[deepArray, "Array", "[0]"], [deepObject, "plain object", ".o"], [deepMap, "Map", ".get(1)"], [cycle, "Array", "[0]"]];
    for (const maxDepth of [1e7, Infinity]) {
      const encoder = new Encoder({ maxDepth });
      for (const [value, type, step] of cases) {
        assert.throws(() => encoder.encode(value), (e: unknown) =>
          e instanceof EncodeError && e.valueType === type && e.path.startsWith("$" + step.repeat(100)) &&
          e.message.startsWith(`cannot encode a${type === "Array" ? "n" : ""} ${type} nested deeper than the JavaScript stack allows (maxDepth ${maxDepth} is beyond it; a cycle?) at $${step}`));
      }
      assert.equal(bytesToHex(encoder.encode([1])), "9101", "the encoder works on");
    }
  });
  test("a cycle is an error, not a stack overflow", () => {
    const a: unknown[] = [];
    a.push(a);
    assert.throws(() => encode(a), (e: unknown) => e instanceof EncodeError && /deeper than maxDepth 1024 \(a cycle\?\)/.test(e.message) && e.path === "$" + "[0]".repeat(1024));
  });
  test("results stay valid after later encodes", () => {
    const first = encode({ x: "first" });
    const copy = first.slice();
    for (let i = 0; i < 5000; i++) encode({ i, s: "x".repeat(i % 50) });
    assert.deepEqual(first, copy);
  });
});

describe("reader", () => {
  test("accepts Uint8Array, ArrayBuffer, other views and Buffer", () => {
    const bytes = encode({ a: [1, 2] }).slice();
    const want = { a: [1, 2] };
    assert.deepEqual(decode(bytes), want);
    assert.deepEqual(decode(bytes.buffer), want);
    assert.deepEqual(decode(new DataView(bytes.buffer)), want);
    assert.deepEqual(decode(Buffer.from(bytes)), want);
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    assert.deepEqual(decode(padded.subarray(3)), want);
  });
  test("int64 modes", () => {
    const big = hexToBytes("cf0020000000000001"); // 2^53 + 1
    const small = hexToBytes("cf0000000000000007");
    const round = hexToBytes("cf1000000000000000"); // 2^60, exact as a number
    assert.equal(decode(big), 2n ** 53n + 1n);
    assert.equal(decode(small), 7);
    assert.equal(decode(round), 2 ** 60);
    assert.equal(decode(big, { int64: "number" }), 2 ** 53);
    assert.equal(decode(small, { int64: "bigint" }), 7n);
    assert.equal(decode(hexToBytes("d3ffffffffffffffff"), { int64: "bigint" }), -1n);
  });
  test("utf8 modes", () => {
    const bad = hexToBytes("a3 61ff62".replace(" ", ""));
    assert.equal(decode(bad), "a\ufffdb");
    assert.deepEqual(errorOf(() => decode(bad, { utf8: "strict" })), new DecodeError("invalid_utf8", 0, 0xa3));
    const raw = decode(bad, { utf8: "raw" });
    assert.ok(raw instanceof RawStr);
    assert.equal(bytesToHex(raw.bytes), "61ff62");
    assert.equal(hex(raw), "a361ff62");
    // the long path (TextDecoder) replaces exactly as the short one
    const long = new Uint8Array(300).fill(0x61);
    long[150] = 0xe0;
    long[151] = 0x80;
    const s = decode(Uint8Array.from([0xda, 1, 44, ...long])) as string;
    assert.equal(s, "a".repeat(150) + "\ufffd\ufffd" + "a".repeat(148));
  });
  test("large inputs (the str batch) decode strs exactly as small ones do", () => {
    const bad = new RawStr(Uint8Array.from([0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xff, 0x69])); // invalid UTF-8
    const cut = new RawStr(Uint8Array.from([0xe3, 0x81, 0x82, 0xe3, 0x81, 0x82, 0xe3, 0x81, 0x82, 0xe3])); // ends mid-sequence
    const cont = new RawStr(Uint8Array.from([0x82, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69])); // starts with a continuation
    const texts = ["plain ascii text", "こんにちは世界、こんにちは", "emoji 😀😀 and more", "a real \ufffd replacement", "x".repeat(300)];
    const small = [...texts, bad, cut, cont];
    const big = Array.from({ length: 40 }, () => small).flat();
    for (const utf8 of ["replace", "raw"] as const) {
      const one = small.map((v) => decode(encode(v), { utf8 }));
      const many = decode(encode(big), { utf8 }) as unknown[];
      assert.deepEqual(many, Array.from({ length: 40 }, () => one).flat(), utf8);
    }
    const okBig = Array.from({ length: 40 }, () => texts).flat();
    assert.deepEqual(decode(encode(okBig), { utf8: "strict" }), okBig);
    assert.deepEqual(errorOf(() => decode(encode([...okBig, bad]), { utf8: "strict" })).kind, "invalid_utf8");
  });
  test("a str that begins with U+FEFF keeps it, short, long and batched", () => {
    for (const s of ["\ufeffab", "\ufeff" + "x".repeat(100), "\ufeff" + "é".repeat(100)]) {
      assert.equal(decode(encode(s)), s);
      assert.deepEqual(decode(encode(Array(100).fill(s))), Array(100).fill(s));
    }
  });
  test("maps: object by default, Map on request, Map whenever a key is not a str", () => {
    const m = encode(new Map<unknown, unknown>([["a", 1], [2, "b"]]));
    const got = decode(m);
    assert.ok(got instanceof Map);
    assert.deepEqual([...(got as Map<unknown, unknown>)], [["a", 1], [2, "b"]]);
    assert.ok(decode(encode({ a: 1 }), { map: "Map" }) instanceof Map);
  });
  test("decoding never touches prototypes", () => {
    const bytes = encode(new Map<unknown, unknown>([["__proto__", { polluted: true }], ["constructor", { prototype: 1 }], ["prototype", 2]]));
    const obj = decode(bytes) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(obj), Object.prototype);
    assert.deepEqual(Object.keys(obj), ["__proto__", "constructor", "prototype"]);
    assert.deepEqual(Object.getOwnPropertyDescriptor(obj, "__proto__")!.value, { polluted: true });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(obj.constructor, { prototype: 1 });
  });
  test("timestamps: Date by default, Timestamp on request or outside Date's range", () => {
    const d = new Date(Date.UTC(2026, 10, 22, 1, 2, 3, 456));
    assert.deepEqual(decode(encode(d)), d);
    const t = decode(encode(d), { timestamp: "Timestamp" }) as Timestamp;
    assert.equal(t.nsec, 456_000_000);
    const far = new Timestamp(2n ** 62n, 1);
    assert.deepEqual(decode(encode(far)), far);
    assert.deepEqual(Timestamp.fromDate(new Date(-1)), new Timestamp(-1, 999_000_000));
    assert.equal(hex(new Date(-1)), "c70cff3b8b87c0ffffffffffffffff");
  });
  test("limits carry the house names and defaults", () => {
    assert.equal(DEFAULT_MAX_DEPTH, 1024);
    assert.equal(DEFAULT_MAX_LENGTH, 4294967295);
    const opts = { maxStrLength: 1, maxBinLength: 1, maxExtLength: 1, maxArrayLength: 1, maxMapLength: 1, maxDepth: 1 };
    for (const v of ["ab", new Uint8Array(2), new ExtData(3, new Uint8Array(2)), [1, 2], { a: 1, b: 2 }]) {
      const bytes = encode([v]).subarray(1);
      assert.deepEqual(errorOf(() => decode(bytes, opts)), new DecodeError("length_limit", 0, bytes[0]));
    }
    assert.deepEqual(errorOf(() => decode(encode([[]]), opts)), new DecodeError("depth_limit", 1, 0x90));
  });
  test("errors name the kind and the byte", () => {
    const e = errorOf(() => decode(hexToBytes("c0c0")));
    assert.equal(e.kind, "trailing_bytes");
    assert.equal(e.offset, 1);
    assert.equal(e.message, "bytes remain after the value (head byte 0xc0) at byte 1");
    assert.equal(e.name, "DecodeError");
    assert.ok(e instanceof Error);
    assert.equal(errorOf(() => decode(hexToBytes("91c1"))).message, "invalid byte (head byte 0xc1) at byte 1");
    assert.equal(errorOf(() => decode(hexToBytes("92c1"))).message, "input ends inside a value (head byte 0x92) at byte 0");
    // the input ends between tokens (the outer array owes an element): no byte to name
    assert.equal(errorOf(() => decode(hexToBytes("92920102"))).message, "input ends inside a value at byte 4");
  });
  test("nesting deeper than the stack allows is a depth_limit, never a RangeError", () => {
    const depth = 100_000;
    const arrays = new Uint8Array(depth + 1).fill(0x91, 0, depth); // [[[...[0]...]]]
    const maps = new Uint8Array(2 * depth + 1);
    for (let i = 0; i < depth; i++) maps.set([0x81, 0xa0], 2 * i); // {"": {"": ...}}
    for (const bytes of [arrays, maps]) {
      const e = errorOf(() => decode(bytes, { maxDepth: depth + 1 }));
      assert.equal(e.kind, "depth_limit");
      assert.equal(bytes[e.offset], bytes[0], "at a container head");
      // the stack holds the default depth and more (where it ends depends on the engine's tiers)
      assert.ok(e.offset > (bytes === arrays ? 1024 : 2048), `at ${e.offset}`);
    }
  });
  test("ext types outside one signed byte are refused", () => {
    for (const type of [128, -129, 1.5, NaN]) assert.throws(() => new ExtData(type, new Uint8Array(1)), RangeError);
    assert.equal(hex(new ExtData(-128, new Uint8Array(1))), "d48000");
    assert.throws(() => encode(2n ** 64n), EncodeError);
    assert.throws(() => encode({ a: [-(2n ** 63n) - 1n] }), (e: unknown) => e instanceof EncodeError && e.path === "$.a[0]" && e.valueType === "bigint");
  });
  test("pairs of float 64s (the coordinate fast path) decode like any other array", () => {
    const pair = encode([1.5, -2.25]).slice();
    assert.equal(bytesToHex(pair), "92cb3ff8000000000000cbc002000000000000");
    assert.deepEqual(decode(pair), [1.5, -2.25]);
    assert.deepEqual(decode(pair, { exact: true }), [new Float(1.5, 64), new Float(-2.25, 64)]);
    assert.deepEqual(decode(hexToBytes("92cb3ff800000000000001")), [1.5, 1]);
    assert.deepEqual(decode(hexToBytes("9201cb3ff8000000000000")), [1, 1.5]);
    // the second float cut off: truncated at its head, as without the fast path
    const cut = errorOf(() => decode(pair.subarray(0, pair.length - 1)));
    assert.equal(cut.kind, "truncated");
    assert.equal(cut.offset, 10);
    assert.equal(errorOf(() => decode(pair.subarray(0, 5))).offset, 1);
  });
  test("keys at the same position of successive maps may differ (the key cache's guess is checked)", () => {
    const list = [{ abcd: 1, k: 0 }, { abce: 2, k: 0 }, { abcd: 3, x: 0 }, { "abcdefghijklmnop": 4 }, { "abcdefghijklmnoq": 5 }, { "é": 6 }, { "ê": 7 }];
    const bytes = encode(list).slice();
    assert.deepEqual(decode(bytes), list);
    assert.deepEqual(decode(bytes), list, "again, with the guesses of the first pass");
  });
  test("long keys (up to 31 bytes, cached too) still meet the str limit", () => {
    const key = "k".repeat(20);
    const bytes = encode({ [key]: 1 }).slice();
    assert.deepEqual(decode(bytes), { [key]: 1 });
    assert.deepEqual(decode(bytes, { maxStrLength: 20 }), { [key]: 1 });
    const e = errorOf(() => decode(bytes, { maxStrLength: 19 }));
    assert.equal(e.kind, "length_limit");
    assert.equal(e.offset, 1);
  });
  test("decodeMulti reads concatenated values", () => {
    assert.deepEqual([...decodeMulti(hexToBytes("01a16192c0c3"))], [1, "a", [null, true]]);
  });
});

describe("ext", () => {
  class Point {
    constructor(readonly x: number, readonly y: number) {}
  }
  const extensions = new ExtensionCodec().register({
    type: 7,
    encode: (v) => (v instanceof Point ? encode([v.x, v.y]) : null),
    decode: (data) => {
      const [x, y] = decode(data) as [number, number]; // a decode inside a decode
      return new Point(x, y);
    },
  });
  test("a registered type round-trips, also nested inside a decode", () => {
    const v = { p: new Point(1, 2), list: [new Point(3, 4)] };
    const bytes = new Encoder({ extensions }).encode(v);
    assert.deepEqual(new Decoder({ extensions }).decode(bytes), v);
  });
  test("an ext decoder that decodes strs inside a large document (nested decode, str batch)", () => {
    const tags = new ExtensionCodec().register({
      type: 8,
      encode: (v) => (v instanceof Set ? encode([...v]) : null),
      decode: (data) => new Set(decode(data) as unknown[]),
    });
    const doc = Array.from({ length: 60 }, (_, i) => ({ title: `a title long enough ${i}`, tags: new Set([`first tag of ${i}`, "second tag, long"]) }));
    const bytes = new Encoder({ extensions: tags }).encode(doc);
    assert.ok(bytes.length > 2048);
    assert.deepEqual(new Decoder({ extensions: tags }).decode(bytes), doc);
  });
  test("an unknown type is ExtData and encodes back the same", () => {
    const bytes = hexToBytes("d5090102");
    const v = decode(bytes);
    assert.deepEqual(v, new ExtData(9, Uint8Array.from([1, 2])));
    assert.equal(hex(v), "d5090102");
  });
  test("an error thrown by an extension's decode passes through unchanged, and ends a stream", async () => {
    class Refusal extends Error {}
    const refusing = new ExtensionCodec().register({ type: 4, decode: () => { throw new Refusal("no"); } });
    const bytes = hexToBytes("9201d40400");
    assert.throws(() => decode(bytes, { extensions: refusing }), Refusal);
    const got: unknown[] = [];
    await assert.rejects((async () => {
      for await (const v of decodeStream((async function* () { yield hexToBytes("07"); yield bytes; yield hexToBytes("08"); })(), { extensions: refusing })) got.push(v);
    })(), Refusal);
    assert.deepEqual(got, [7]);
  });
  test("a type is registered once (a second definition would encode with the first and decode with the second)", () => {
    const codec = new ExtensionCodec().register({ type: 5, decode: () => 1 });
    assert.throws(() => codec.register({ type: 5, decode: () => 2 }), { name: "RangeError", message: "ext type 5 is registered already" });
    assert.throws(() => neovimExtensions().register({ type: 0, encode: () => null }), { name: "RangeError", message: "ext type 0 is registered already" });
    assert.equal(decode(hexToBytes("d40500"), { extensions: codec }), 1);
  });
  test("type -1 is reserved", () => {
    assert.throws(() => new ExtensionCodec().register({ type: -1 }), RangeError);
  });
});

describe("options are checked: a misspelt key or a value of the wrong kind is an error, never ignored", () => {
  const bytes = Uint8Array.of(0x81, 0x01, 0x02);
  const decoderCases: Array<[string, object, RegExp, ErrorConstructor]> = [
    ["a misspelt limit (which would leave the limit off)", { maxStrLenght: 10 }, /unknown decoder option "maxStrLenght" \(the options are map, int64, /, TypeError],
    ["a choice in the wrong case", { map: "map" }, /decoder option map must be "object" or "Map", not "map"/, RangeError],
    ["int64", { int64: "BigInt" }, /decoder option int64 must be "number" or "bigint" or "auto", not "BigInt"/, RangeError],
    ["utf8", { utf8: true }, /decoder option utf8 must be "replace" or "strict" or "raw", not a boolean/, TypeError],
    ["timestamp", { timestamp: "date" }, /decoder option timestamp must be "Date" or "Timestamp"/, RangeError],
    ["a boolean given as a string", { exact: "false" }, /decoder option exact must be a boolean, not a string/, TypeError],
    ["zeroCopy", { zeroCopy: 1 }, /decoder option zeroCopy must be a boolean, not a number/, TypeError],
    ["a NaN limit (which compares false and limits nothing)", { maxDepth: NaN }, /decoder option maxDepth must be an integer >= 0 \(or Infinity\), not NaN/, RangeError],
    ["a negative limit", { maxArrayLength: -1 }, /maxArrayLength must be an integer >= 0/, RangeError],
    ["a fractional limit", { maxNumberKeys: 1.5 }, /maxNumberKeys must be an integer >= 0/, RangeError],
    ["a limit as a string", { maxBinLength: "10" }, /maxBinLength must be a number, not a string/, TypeError],
    ["extensions that are not an ExtensionCodec", { extensions: { decoders: [] } }, /decoder option extensions must be an ExtensionCodec, not a plain object/, TypeError],
  ];
  for (const [name, options, message, kind] of decoderCases) {
    test(`decoder: ${name}`, () => {
      for (const f of [() => decode(bytes, options), () => new Decoder(options), () => [...decodeMulti(bytes, options)], () => new ChunkDecoder(options), () => new DecoderStream(options)]) {
        assert.throws(f, (e: unknown) => e instanceof kind && message.test((e as Error).message));
      }
    });
  }
  test("decoder: options that are not an object", () => {
    assert.throws(() => decode(bytes, null as never), { name: "TypeError", message: "mpk decoder options must be an object, not null" });
    assert.throws(() => decode(bytes, "strict" as never), { name: "TypeError", message: "mpk decoder options must be an object, not a string" });
  });
  test("decoder: undefined values mean the default; Infinity is a limit; good options work", () => {
    assert.deepEqual(decode(bytes, { maxDepth: undefined, map: undefined }), new Map([[1, 2]]));
    assert.deepEqual(decode(bytes, { maxMapLength: Infinity, maxDepth: Infinity, map: "Map", int64: "bigint", utf8: "strict", timestamp: "Timestamp", exact: false, zeroCopy: true, extensions: new ExtensionCodec() }), new Map([[1, 2]]));
    assert.throws(() => decode(bytes, { maxMapLength: 0 }), (e: unknown) => e instanceof DecodeError && e.kind === "length_limit");
  });
  const encoderCases: Array<[string, object, RegExp, ErrorConstructor]> = [
    ["a misspelt key", { ignoreUndefinded: true }, /unknown encoder option "ignoreUndefinded" \(the options are float32, sortKeys, ignoreUndefined, sharedBuffer, extensions, maxDepth\)/, TypeError],
    ["a boolean given as a string", { sortKeys: "yes" }, /encoder option sortKeys must be a boolean, not a string/, TypeError],
    ["float32", { float32: 1 }, /encoder option float32 must be a boolean, not a number/, TypeError],
    ["maxDepth", { maxDepth: -5 }, /encoder option maxDepth must be an integer >= 0/, RangeError],
    ["extensions", { extensions: [] }, /encoder option extensions must be an ExtensionCodec, not an Array/, TypeError],
  ];
  for (const [name, options, message, kind] of encoderCases) {
    test(`encoder: ${name}`, () => {
      for (const f of [() => encode(1, options), () => new Encoder(options), () => new EncoderStream(options)]) {
        assert.throws(f, (e: unknown) => e instanceof kind && message.test((e as Error).message));
      }
    });
  }
  test("an extension's encode returns a Uint8Array or declines with null or undefined; anything else is an EncodeError", () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const declining = new ExtensionCodec().register({ type: 1, encode: () => undefined }).register({ type: 2, encode: (v) => (v instanceof Point ? Uint8Array.of(v.x) : null) });
    assert.equal(hex([new Point(5)], new Encoder({ extensions: declining })), "91d40205");
    const wrong = new ExtensionCodec().register({ type: 3, encode: (v) => (v instanceof Point ? (String(v.x) as never) : null) });
    assert.throws(() => new Encoder({ extensions: wrong }).encode({ p: [new Point(5)] }), (e: unknown) =>
      e instanceof EncodeError && e.path === "$.p[0]" && e.valueType === "Point" && e.message === "cannot encode a Point: the extension of type 3 returned a string, not a Uint8Array (its payload) or null (to decline it) at $.p[0]");
    assert.throws(() => new ExtensionCodec().register({ type: 4, encode: "yes" as never }), { name: "TypeError", message: "an extension's encode must be a function, not string" });
    assert.throws(() => new ExtensionCodec().register({ type: 4, decode: 1 as never }), { name: "TypeError", message: "an extension's decode must be a function, not number" });
  });
});

describe("mpk's value classes check what they are given (it would be written as other bytes)", () => {
  test("ExtData, RawStr, Float and MapPairs refuse the wrong kinds of value", () => {
    assert.throws(() => new ExtData(1, "abc" as never), { name: "TypeError", message: "ExtData's data must be a Uint8Array, not a string" });
    assert.throws(() => new ExtData(1, [1, 2] as never), { name: "TypeError", message: "ExtData's data must be a Uint8Array, not an Array" });
    assert.throws(() => new RawStr("abc" as never), { name: "TypeError", message: "RawStr's bytes must be a Uint8Array, not a string" });
    assert.throws(() => new Float("1.5" as never), { name: "TypeError", message: "Float's value must be a number, not a string" });
    assert.throws(() => new Float(1.5, 16 as never), { name: "RangeError", message: "Float's bits must be 32 or 64, not 16" });
    assert.throws(() => new MapPairs({ a: 1 } as never), { name: "TypeError", message: "MapPairs' pairs must be an Array of [key, value] pairs, not a plain object" });
    // Buffers are Uint8Arrays; both float widths
    assert.equal(hex(new ExtData(1, Buffer.from([7]))), "d40107");
    assert.equal(hex([new Float(1.5, 32), new Float(1.5)]), "92ca3fc00000cb3ff8000000000000");
  });
  test("a MapPairs pair that is not [key, value] is an EncodeError at its path", () => {
    assert.throws(() => encode({ m: new MapPairs([[1, 2], [3] as never]) }), (e: unknown) =>
      e instanceof EncodeError && e.path === "$.m.pairs[1]" && e.valueType === "Array" && /is not a \[key, value\] pair of a MapPairs/.test(e.message));
    assert.throws(() => encode(new MapPairs([5 as never])), (e: unknown) => e instanceof EncodeError && e.path === "$.pairs[0]" && e.valueType === "number");
  });
});
