// Property tests (fast-check): random values round-trip; random bytes, and corpus forms with
// random damage, never throw anything but DecodeError.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { DecodeError, Decoder, decode, encode } from "../src/index.js";
import { loadCorpus } from "./support/corpus.js";

const RUNS = 2000;

// -0 decodes as -0 and NaN as NaN, which deepStrictEqual compares as equal
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.maxSafeInteger(),
    fc.double(),
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ maxLength: 300 }),
    fc.uint8Array({ maxLength: 64 }),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }).filter((b) => b < -(2n ** 53n) || b > 2n ** 53n),
  ),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 8 }), fc.dictionary(fc.string({ maxLength: 10 }), tie("node"), { maxKeys: 8 })),
}));

test("random values round-trip", () => {
  fc.assert(
    fc.property(value.node, (v) => {
      assert.deepStrictEqual(decode(encode(v)), normalizeExpected(v));
    }),
    { numRuns: RUNS },
  );
});

test("large random values round-trip (the str batch is used above 1 KiB)", () => {
  const str = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme-ascii", minLength: 9, maxLength: 300 }), fc.string({ unit: "grapheme", maxLength: 20 }));
  const record = fc.dictionary(fc.string({ maxLength: 20 }), fc.oneof(str, fc.integer(), fc.array(str, { maxLength: 5 }), fc.uint8Array({ maxLength: 20 })), { maxKeys: 12 });
  fc.assert(
    fc.property(fc.array(record, { minLength: 20, maxLength: 80 }), (v) => {
      assert.deepStrictEqual(decode(encode(v)), normalizeExpected(v));
    }),
    { numRuns: 300 },
  );
});

/** What decoding gives back for a value: bigints that a number holds exactly come back as numbers (int64 "auto"). */
function normalizeExpected(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v) === Number(v) && BigInt(Number(v)) === v ? Number(v) : v;
  if (Array.isArray(v)) return v.map(normalizeExpected);
  if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) Object.defineProperty(out, k, { value: normalizeExpected((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

function onlyDecodeErrors(decoder: Decoder, bytes: Uint8Array): void {
  try {
    decoder.decode(bytes);
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    assert.ok(e.offset >= 0 && e.offset <= bytes.length, `offset ${e.offset} outside 0..${bytes.length}`);
  }
}

test("random bytes throw nothing but DecodeError", () => {
  const decoders = [new Decoder(), new Decoder({ utf8: "strict", map: "Map", int64: "bigint" }), new Decoder({ exact: true, utf8: "raw" })];
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      for (const d of decoders) onlyDecodeErrors(d, bytes);
    }),
    { numRuns: RUNS * 5 },
  );
});

test("corpus forms with random damage throw nothing but DecodeError", () => {
  const forms = loadCorpus().flatMap((c) => c.forms).filter((f) => f.length > 0 && f.length < 2048);
  const decoder = new Decoder();
  fc.assert(
    fc.property(fc.nat(forms.length - 1), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), fc.nat(), (which, flips, cut) => {
      const bytes = forms[which]!.slice();
      for (const [at, b] of flips) bytes[at % bytes.length] = b;
      onlyDecodeErrors(decoder, bytes.subarray(0, bytes.length - (cut % 3)));
    }),
    { numRuns: RUNS * 2 },
  );
});
