// The decoder's special paths (long arrays of ints, pairs of floats, records with repeated keys)
// must decode exactly what the general path does and fail with the same kind and offset: values
// made to hit them, and every truncation of those values.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decode, Decoder, encode, ExtensionCodec, Float } from "../src/index.js";
import { errorOf } from "./support/errorOf.js";


/** Bytes of an array of the given element tokens (each a hex string), and where each token starts. */
function arrayOf(tokens: string[]): { bytes: Uint8Array; heads: number[]; headerSize: number } {
  const n = tokens.length;
  const header = n < 16 ? (0x90 + n).toString(16) : `dc${n.toString(16).padStart(4, "0")}`;
  const hex = header + tokens.join("");
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  const heads: number[] = [];
  let at = header.length / 2;
  for (const t of tokens) {
    heads.push(at);
    at += t.length / 2;
  }
  return { bytes, heads, headerSize: header.length / 2 };
}

/** spec/README.md's truncated offset for a flat array cut after k bytes. */
function truncatedAt(k: number, a: ReturnType<typeof arrayOf>): number {
  if (k < a.headerSize || k - a.headerSize < a.heads.length) return 0; // the head, or too few bytes for n elements
  for (let i = 0; i < a.heads.length; i++) {
    const t = a.heads[i]!;
    const stop = i + 1 < a.heads.length ? a.heads[i + 1]! : a.bytes.length;
    if (t >= k) return k; // between tokens
    if (stop > k) return t;
  }
  throw new Error("not cut");
}

// every int head, then things that are not ints
const INT_TOKENS: Array<[string, number]> = [
  ["00", 0], ["7f", 127], ["e0", -32], ["ff", -1],
  ["cc80", 128], ["ccff", 255], ["cd0100", 256], ["cdffff", 65535],
  ["ce00010000", 65536], ["ceffffffff", 4294967295], ["ce80000000", 2147483648],
  ["cf0000000100000000", 2 ** 32], ["d0df", -33], ["d080", -128],
  ["d1ff7f", -129], ["d18000", -32768], ["d2ffff7fff", -32769], ["d280000000", -2147483648], ["d27fffffff", 2147483647],
  ["d3ffffffff00000000", -(2 ** 32)],
];

describe("long arrays of ints", () => {
  test("every int head decodes as the general path does, also after other values", () => {
    const values = INT_TOKENS.map(([, v]) => v);
    assert.deepEqual(decode(arrayOf(INT_TOKENS.map(([t]) => t)).bytes), values);
    // an array that starts with an int and goes on with other values
    const mixed: Array<[string, unknown]> = [...INT_TOKENS, ["c0", null], ["a161", "a"], ["92cd0001c3", [1, true]], ["cb3ff8000000000000", 1.5], ["05", 5]];
    assert.deepEqual(decode(arrayOf(mixed.map(([t]) => t)).bytes), mixed.map(([, v]) => v));
    // and one that starts with something else and goes on with ints
    const late: Array<[string, unknown]> = [["c3", true], ...INT_TOKENS];
    assert.deepEqual(decode(arrayOf(late.map(([t]) => t)).bytes), late.map(([, v]) => v));
  });

  test("round trip of a large array of ints of every size", () => {
    const values: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const k = (Math.imul(i, 2654435761) >>> 0) / 2 ** 32;
      values.push(k < 0.3 ? i % 128 : k < 0.5 ? -(i % 32) - 1 : k < 0.7 ? i * 13 : k < 0.9 ? -i * 100003 : i * 1000003);
    }
    assert.deepEqual(decode(encode(values)), values);
  });

  test("every cut is truncated at the spec's offset", () => {
    for (const order of [INT_TOKENS, [...INT_TOKENS].reverse()]) {
      const a = arrayOf(order.map(([t]) => t));
      for (let k = 0; k < a.bytes.length; k++) {
        const e = errorOf(() => decode(a.bytes.subarray(0, k)));
        assert.equal(e.kind, "truncated", `cut at ${k}`);
        assert.equal(e.offset, truncatedAt(k, a), `cut at ${k}`);
      }
    }
  });

  test("0xc1 inside an array of ints is invalid_byte at its offset", () => {
    const a = arrayOf(["01", "cd0102", "c1", "02", "03"]);
    const e = errorOf(() => decode(a.bytes));
    assert.equal(e.kind, "invalid_byte");
    assert.equal(e.offset, a.heads[2]);
  });
});

describe("the key cache", () => {
  test("keys and short strs that differ in one byte anywhere are never confused", () => {
    // same length, same first and last four bytes (same hash, same slot): only the compare tells them apart
    for (let n = 0; n <= 34; n++) {
      const base = Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26)));
      const variants = [base.join("")];
      for (let at = 0; at < n; at++) {
        const v = [...base];
        v[at] = "Z";
        variants.push(v.join(""));
      }
      // each variant as a key at the same position of consecutive maps (the positional guess), and as a value
      const records = [...variants, ...variants.slice().reverse()].map((k) => ({ [k]: k, other: 1 }));
      assert.deepEqual(decode(encode(records)), records, `length ${n}`);
      const flat = Object.fromEntries(variants.map((k, i) => [k, i]));
      assert.deepEqual(decode(encode([flat, flat])), [flat, flat], `length ${n}`);
    }
  });

  test("families of keys with the same length, first and last four bytes, in turn (the slot and its twin)", () => {
    // profile_link_color and profile_text_color are one such family in twitter.json; a third member
    // takes turns with the second in the twin slot; the values are short strs of the same shape
    const family = ["profile_link_color", "profile_text_color", "profile_fill_color", "profile_linkXcolor"];
    for (const k of [2, 3, 4]) {
      const keys = family.slice(0, k);
      const records = Array.from({ length: 40 }, (_, i) => Object.fromEntries(keys.map((key, j) => [key, j === i % k ? `v${key}` : i])));
      // the same records twice in one input and in two inputs: hits in the slot and its twin
      assert.deepEqual(decode(encode([records, records])), [records, records], `${k} keys`);
      assert.deepEqual(decode(encode(records)), records, `${k} keys`);
      // and in a Map (keys that are not all strs go to a Map; str keys still through the cache)
      const mixed = new Map<unknown, unknown>([[1, 1], ...keys.map((key) => [key, key] as [string, string])]);
      assert.deepEqual(decode(encode([mixed, mixed])), [mixed, mixed]);
    }
  });

  test("non-ASCII keys and invalid UTF-8 keys", () => {
    const keys = ["é", "日本", "€uro", "ñandú-ñandú", "😀", "a😀b", "日本語のキー日本語"];
    const obj = Object.fromEntries(keys.map((k, i) => [k, i]));
    assert.deepEqual(decode(encode([obj, obj, obj])), [obj, obj, obj]);
    // a 2-byte key that is not UTF-8 (a lone continuation byte): replaced, never cached as the valid key
    const bad = Uint8Array.from([0x92, 0x81, 0xa2, 0x61, 0x80, 0x01, 0x81, 0xa2, 0x61, 0x62, 0x02]);
    assert.deepEqual(decode(bad), [{ "a\ufffd": 1 }, { ab: 2 }]);
    assert.equal(errorOf(() => decode(bad, { utf8: "strict" })).kind, "invalid_utf8");
  });
});

describe("the str batch", () => {
  test("long strs of every length and tail, ASCII or not anywhere, in a large input", () => {
    const strs: string[] = [];
    for (let n = 17; n <= 44; n++) {
      const ascii = Array.from({ length: n }, (_, i) => String.fromCharCode(33 + ((i * 7 + n) % 90))).join("");
      strs.push(ascii);
      for (const at of [0, 1, n - 4, n - 3, n - 2, n - 1]) strs.push(ascii.slice(0, at) + "é" + ascii.slice(at + 1));
    }
    const doc = { strs, again: [...strs].reverse(), records: strs.map((s, i) => ({ s, i })) };
    assert.deepEqual(decode(encode(doc)), doc);
  });
});

describe("the str batch over a document of dense and sparse strs", () => {
  test("strs before, inside and after the stretches the passes cover decode exactly", () => {
    const long = (i: number) => `${i}: the quick brown fox ${"é".repeat(i % 3)}jumps`;
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => i * 1.5);
    const doc = {
      first: long(1), // alone: no pass
      lone: numbers(100),
      dense: Array.from({ length: 50 }, (_, i) => long(i)), // a pass starts here...
      gap: numbers(600), // ...and stops in here (long strs sparse)
      sparse: Array.from({ length: 5 }, (_, i) => [long(i), numbers(400)]), // a long str now and then: no new pass
      denseAgain: Array.from({ length: 50 }, (_, i) => ({ name: long(i + 7), tag: "short" })), // a new pass
      last: long(99),
    };
    assert.deepEqual(decode(encode(doc)), doc);
    assert.deepEqual(decode(encode([doc, doc])), [doc, doc]);
  });
});

describe("long arrays of float pairs", () => {
  const f64 = (x: number) => {
    const b = new DataView(new ArrayBuffer(8));
    b.setFloat64(0, x);
    return "cb" + Array.from(new Uint8Array(b.buffer), (c) => c.toString(16).padStart(2, "0")).join("");
  };
  const pair = (x: number, y: number) => "92" + f64(x) + f64(y);
  const tokens = [pair(1.5, -2.25), pair(0.1, 1e300), "92" + f64(3.5) + "01", "92" + "05" + f64(4.5), pair(-0, NaN), "93" + f64(1) + f64(2) + f64(3), "c0", pair(7.5, 8.5), "92ca3fc00000" + f64(2.5), pair(9.5, 10.5)];
  const values = [[1.5, -2.25], [0.1, 1e300], [3.5, 1], [5, 4.5], [-0, NaN], [1, 2, 3], null, [7.5, 8.5], [1.5, 2.5], [9.5, 10.5]];
  const a = arrayOf(tokens);

  test("pairs and whatever else follows decode as the general path does", () => {
    assert.deepEqual(decode(a.bytes), values);
    const exact = decode(a.bytes, { exact: true }) as Array<Array<{ bits: number }>>;
    assert.equal(exact[0]![0]!.bits, 64); // Float objects, not numbers
  });

  test("the depth limit still applies to the pairs", () => {
    assert.deepEqual(decode(a.bytes, { maxDepth: 2 }), values);
    const deep = errorOf(() => decode(a.bytes, { maxDepth: 1 }));
    assert.equal(deep.kind, "depth_limit");
    assert.equal(deep.offset, a.heads[0]);
  });

  test("every cut fails as on the general path (exact mode, which reads every float on its own)", () => {
    for (let k = 0; k < a.bytes.length; k++) {
      const e = errorOf(() => decode(a.bytes.subarray(0, k)));
      const general = errorOf(() => decode(a.bytes.subarray(0, k), { exact: true }));
      assert.deepEqual([e.kind, e.offset], [general.kind, general.offset], `cut at ${k}`);
      assert.equal(e.kind, "truncated");
    }
  });
});

describe("long arrays of floats", () => {
  const f64 = (x: number) => {
    const b = new DataView(new ArrayBuffer(8));
    b.setFloat64(0, x);
    return "cb" + Array.from(new Uint8Array(b.buffer), (c) => c.toString(16).padStart(2, "0")).join("");
  };
  const f32 = (x: number) => {
    const b = new DataView(new ArrayBuffer(4));
    b.setFloat32(0, x);
    return "ca" + Array.from(new Uint8Array(b.buffer), (c) => c.toString(16).padStart(2, "0")).join("");
  };
  // float 64s and 32s, then other values among them (an int, nil, a str, a nested array, a pair)
  const tokens: Array<[string, unknown]> = [
    [f64(1.5), 1.5], [f64(-0), -0], [f64(NaN), NaN], [f32(0.25), 0.25], [f64(1e300), 1e300], [f32(-3.5), -3.5],
    ["05", 5], [f64(0.1), 0.1], ["c0", null], ["a161", "a"], ["92" + f64(1) + f64(2), [1, 2]], [f32(Infinity), Infinity], [f64(-2.75), -2.75],
  ];
  const a = arrayOf(tokens.map(([t]) => t));
  const values = tokens.map(([, v]) => v);

  test("floats and whatever else follows decode as the general path does", () => {
    assert.deepEqual(decode(a.bytes), values);
    // starting with a float 32 takes the same path
    const b = arrayOf(tokens.slice(3).map(([t]) => t));
    assert.deepEqual(decode(b.bytes), values.slice(3));
    // exact mode (the general path, read() for each element): Float objects of the right size
    const exact = decode(a.bytes, { exact: true }) as Array<{ value: number; bits: number }>;
    assert.deepEqual([exact[0]!.value, exact[0]!.bits, exact[3]!.value, exact[3]!.bits], [1.5, 64, 0.25, 32]);
    const plain = (x: unknown): unknown => (Array.isArray(x) ? x.map(plain) : x instanceof Float ? x.value : x);
    assert.deepEqual(plain(exact), values);
  });

  test("round trip of a large array of doubles", () => {
    const xs = Array.from({ length: 5000 }, (_, i) => Math.sin(i) * 1000 + 0.5);
    assert.deepEqual(decode(encode(xs)), xs);
  });

  test("every cut fails as on the general path (exact mode, which reads every float on its own)", () => {
    for (let k = 0; k < a.bytes.length; k++) {
      const e = errorOf(() => decode(a.bytes.subarray(0, k)));
      const general = errorOf(() => decode(a.bytes.subarray(0, k), { exact: true }));
      assert.deepEqual([e.kind, e.offset], [general.kind, general.offset], `cut at ${k}`);
      assert.equal(e.kind, "truncated");
    }
  });

  test("the depth limit still applies to a nested array among the floats", () => {
    assert.deepEqual(decode(a.bytes, { maxDepth: 2 }), values);
    const deep = errorOf(() => decode(a.bytes, { maxDepth: 1 }));
    assert.equal(deep.kind, "depth_limit");
    assert.equal(deep.offset, a.heads[10]);
  });
});

describe("strs of 17 to 256 bytes outside the batch", () => {
  test("ASCII, non-ASCII at either end, and invalid UTF-8 in every mode", () => {
    for (const n of [17, 18, 31, 32, 33, 100, 255, 256, 257]) {
      const ascii = "x".repeat(n - 1) + "!";
      const lateNonAscii = "y".repeat(n - 2) + "é"; // n bytes, the last two not ASCII
      const early = "é" + "z".repeat(n - 2);
      for (const s of [ascii, lateNonAscii, early]) assert.equal(decode(encode(s)), s, `${n} bytes`);
      // a lone continuation byte as the last byte: replaced, refused, or kept raw
      const bad = new Uint8Array(encode(ascii));
      bad[bad.length - 1] = 0x80;
      assert.equal(decode(bad), "x".repeat(n - 1) + "\ufffd");
      assert.equal(errorOf(() => decode(bad, { utf8: "strict" })).kind, "invalid_utf8");
      const raw = decode(bad, { utf8: "raw" }) as { bytes: Uint8Array };
      assert.equal(raw.bytes[n - 1], 0x80);
    }
  });
});

describe("decoders with different options, one after another and nested", () => {
  test("each decode uses its own decoder's options", () => {
    const asMap = new Decoder({ map: "Map" });
    const short = new Decoder({ maxStrLength: 3 });
    const plain = new Decoder();
    const bytes = encode({ name: "four" });
    for (let i = 0; i < 3; i++) {
      assert.ok(asMap.decode(bytes) instanceof Map);
      assert.deepEqual(plain.decode(bytes), { name: "four" });
      assert.equal(errorOf(() => short.decode(bytes)).kind, "length_limit");
      assert.deepEqual(decode(bytes), { name: "four" });
    }
  });

  test("an ext decoder's own decode does not leave its options behind", () => {
    const inner = new Decoder({ int64: "bigint" });
    const extensions = new ExtensionCodec().register({ type: 7, decode: (data) => inner.decode(data) });
    const outer = new Decoder({ map: "Map", extensions });
    const payload = encode(2 ** 40); // uint 64: a bigint under the inner decoder's int64 option
    const ext = new Uint8Array([0xc7, payload.length, 7, ...payload]);
    // [ext 7 (2^40 as a bigint), {a: 1}] with the outer decoder: the map after the ext is still a Map
    const bytes = new Uint8Array([0x92, ...ext, 0x81, 0xa1, 0x61, 0x01]);
    const [inside, after] = outer.decode(bytes) as [unknown, unknown];
    assert.equal(inside, 2n ** 40n);
    assert.ok(after instanceof Map);
    assert.equal((after as Map<string, number>).get("a"), 1);
    // and each decoder's options hold for its next decode, whichever decoded last
    assert.equal(inner.decode(payload), 2n ** 40n);
    assert.ok(outer.decode(encode({ b: 2 })) instanceof Map);
    assert.deepEqual(decode(encode({ b: 2 })), { b: 2 });
  });
  test("strs around the str batch's longest (BATCH_MAX_BYTES) decode in order, batched or on their own", () => {
    const lengths = [17, 40, 511, 512, 513, 600, 20, 5000, 30, 512, 18];
    for (const unit of ["a", "é", "😀"]) {
      // cut by code points: a lone surrogate would be written as U+FFFD
      const strs = lengths.map((n, i) => [...(unit + String(i)).repeat(n)].slice(0, n).join(""));
      const doc = { strs, pairs: strs.map((s, i) => ({ k: s, n: i })) };
      assert.deepEqual(decode(encode(doc)), doc, unit);
    }
  });
});
