// The typed-value notation of spec/README.md, both ways:
//   fromTyped:        typed value (as parsed by losslessJson) -> the JS value mpk encodes exactly
//   toCanonicalJson:  a value decoded with { exact: true, utf8: "raw" } -> canonical typed JSON text
//   normalize:        any typed value -> one comparable form, so that equal values compare equal
// The driver and the corpus tests share this file.

import { encode, EncodeError, Encoder, ExtData, Float, MapPairs, RawStr, Timestamp } from "../../src/index.js";
import { JsonNumber, JsonObject, type Json } from "./losslessJson.js";

export class TypedError extends Error {}
/**
 * mpk's Timestamp refused an nsec outside 0..999999999 (the library's RangeError is the cause):
 * MessagePack cannot carry it (spec: invalid_timestamp).
 */
export class TimestampNsecError extends Error {
  constructor(readonly cause: RangeError) {
    super(cause.message);
  }
}

/**
 * Encodes a typed value the way an encode_error case or an encode request needs: the hex, or the
 * spec's error kind when mpk refuses the value (spec/README.md, "Drivers"). mpk's own refusals
 * only: its Timestamp's nsec check is invalid_timestamp, its RangeErrors (a bigint beyond 64 bits,
 * an ext type beyond a byte, a length beyond 2^32-1) are bad_request. A typed value this file
 * cannot read throws TypedError.
 */
export function encodeTyped(typed: Json, encoder?: Encoder): { hex: string } | { error: string } {
  let value: unknown;
  try {
    value = fromTyped(typed);
    return { hex: bytesToHex(encoder ? encoder.encode(value) : encode(value)) };
  } catch (e) {
    if (e instanceof TimestampNsecError) return { error: "invalid_timestamp" };
    // mpk's refusals of out-of-range values (a bigint beyond 64 bits; ext types and timestamp secs
    // are refused by their constructors)
    if (e instanceof RangeError || e instanceof EncodeError) return { error: "bad_request" };
    throw e;
  }
}

const bad = (what: string): never => {
  throw new TypedError(`not a typed value: ${what}`);
};

export function hexToBytes(hex: string): Uint8Array {
  const clean = hex.replace(/-/g, "");
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(clean)) bad(`hex ${hex}`);
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += (b < 16 ? "0" : "") + b.toString(16);
  return s;
}

/** The one key of a typed value and its member. */
export function typedEntry(t: Json): [string, Json] {
  if (!(t instanceof JsonObject)) return bad(JSON.stringify(t));
  // a case carries other keys too (name, msgpack, error...); the type is the one key left
  const entries = t.entries.filter(([k]) => TYPE_KEYS.has(k));
  if (entries.length !== 1) return bad(t.entries.map(([k]) => k).join(","));
  return entries[0]!;
}

export const TYPE_KEYS = new Set([
  "nil", "bool", "number", "bignum", "string", "binary", "array", "map", "ext", "timestamp",
  "int", "float32", "float64", "string_hex", "typed_array", "typed_map",
]);

function integer(m: Json): bigint {
  if (m instanceof JsonNumber && m.isInteger) return BigInt(m.text);
  if (typeof m === "string" && /^-?\d+$/.test(m)) return BigInt(m);
  return bad(`integer ${String(m)}`);
}

function floatOf(m: Json): number {
  if (m instanceof JsonNumber) return m.value;
  if (m === "NaN") return NaN;
  if (m === "Infinity") return Infinity;
  if (m === "-Infinity") return -Infinity;
  return bad(`float ${String(m)}`);
}

function looseNumber(m: JsonNumber): unknown {
  return m.isInteger ? BigInt(m.text) : new Float(m.value, 64);
}

function fromPlain(j: Json): unknown {
  if (j === null || typeof j === "boolean" || typeof j === "string") return j;
  if (j instanceof JsonNumber) return looseNumber(j);
  if (Array.isArray(j)) return j.map(fromPlain);
  return new MapPairs(j.entries.map(([k, v]) => [k, fromPlain(v)]));
}

/** The JS value that mpk encodes to exactly the typed value. */
export function fromTyped(t: Json): unknown {
  const [type, m] = typedEntry(t);
  switch (type) {
    case "nil":
      if (m !== null) bad("nil");
      return null;
    case "bool":
      if (typeof m !== "boolean") bad("bool");
      return m;
    case "number":
      if (!(m instanceof JsonNumber)) return bad("number");
      return looseNumber(m);
    case "bignum":
    case "int":
      return integer(m);
    case "float32":
      return new Float(floatOf(m), 32);
    case "float64":
      return new Float(floatOf(m), 64);
    case "string":
      if (typeof m !== "string") bad("string");
      return m;
    case "string_hex":
      if (typeof m !== "string") bad("string_hex");
      return new RawStr(hexToBytes(m as string));
    case "binary":
      if (typeof m !== "string") bad("binary");
      return hexToBytes(m as string);
    case "array":
      if (!Array.isArray(m)) bad("array");
      return (m as Json[]).map(fromPlain);
    case "map":
      if (!(m instanceof JsonObject)) bad("map");
      return fromPlain(m);
    case "typed_array":
      if (!Array.isArray(m)) bad("typed_array");
      return (m as Json[]).map(fromTyped);
    case "typed_map":
      if (!Array.isArray(m)) bad("typed_map");
      return new MapPairs(
        (m as Json[]).map((pair) => {
          if (!Array.isArray(pair) || pair.length !== 2) return bad("typed_map pair");
          return [fromTyped(pair[0]!), fromTyped(pair[1]!)] as [unknown, unknown];
        }),
      );
    case "ext": {
      if (!Array.isArray(m) || m.length !== 2 || typeof m[1] !== "string") return bad("ext");
      return new ExtData(Number(integer(m[0]!)), hexToBytes(m[1])); // mpk checks the type's range
    }
    case "timestamp": {
      if (!Array.isArray(m) || m.length !== 2) return bad("timestamp");
      const nsec = integer(m[1]!);
      try {
        return new Timestamp(integer(m[0]!), Number(nsec));
      } catch (e) {
        if (e instanceof RangeError && (nsec < 0n || nsec > 999_999_999n)) throw new TimestampNsecError(e);
        throw e; // sec beyond int64: a RangeError, bad_request
      }
    }
  }
  return bad(type);
}

const SAFE = 2n ** 53n - 1n;

function intJson(n: bigint): string {
  return n >= -SAFE && n <= SAFE ? n.toString() : `"${n}"`;
}

function floatJson(v: number): string {
  if (Number.isNaN(v)) return '"NaN"';
  if (v === Infinity) return '"Infinity"';
  if (v === -Infinity) return '"-Infinity"';
  if (Object.is(v, -0)) return "-0.0";
  const s = String(v);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/** Canonical typed JSON for a value decoded with { exact: true, utf8: "raw" }. */
export function toCanonicalJson(v: unknown): string {
  if (v === null) return '{"nil":null}';
  switch (typeof v) {
    case "boolean": return `{"bool":${v}}`;
    case "number": return `{"int":${intJson(BigInt(v))}}`;
    case "bigint": return `{"int":${intJson(v)}}`;
    case "string": return `{"string":${JSON.stringify(v)}}`;
  }
  if (v instanceof Float) return `{"float${v.bits}":${floatJson(v.value)}}`;
  if (v instanceof RawStr) return `{"string_hex":"${bytesToHex(v.bytes)}"}`;
  if (v instanceof Uint8Array) return `{"binary":"${bytesToHex(v)}"}`;
  if (Array.isArray(v)) return `{"typed_array":[${v.map(toCanonicalJson).join(",")}]}`;
  if (v instanceof MapPairs) {
    return `{"typed_map":[${v.pairs.map(([k, x]) => `[${toCanonicalJson(k)},${toCanonicalJson(x)}]`).join(",")}]}`;
  }
  if (v instanceof Timestamp) return `{"timestamp":[${intJson(v.sec)},${v.nsec}]}`;
  if (v instanceof ExtData) return `{"ext":[${v.type},"${bytesToHex(v.data)}"]}`;
  throw new TypedError(`no canonical form for ${Object.prototype.toString.call(v)}`);
}

// ---- comparison -----------------------------------------------------------------------------

/** One form per value: plain JSON-able data with tags, numbers as strings where exactness matters. */
export type Normal = unknown;

const utf8 = new TextEncoder();

/** A loose number keeps its exact integer text, so that ints beyond 2^53 compare exactly. */
function looseNormal(j: JsonNumber): Normal {
  return ["number", j.value, j.isInteger ? BigInt(j.text).toString() : null];
}

function normalizePlain(j: Json): Normal {
  if (j === null) return ["nil"];
  if (typeof j === "boolean") return ["bool", j];
  if (typeof j === "string") return ["str", bytesToHex(utf8.encode(j))];
  if (j instanceof JsonNumber) return looseNormal(j);
  if (Array.isArray(j)) return ["array", j.map(normalizePlain)];
  return ["map", j.entries.map(([k, v]) => [normalizePlain(k), normalizePlain(v)])];
}

export function normalize(t: Json): Normal {
  const [type, m] = typedEntry(t);
  switch (type) {
    case "nil": return ["nil"];
    case "bool": return ["bool", m];
    case "number": return looseNormal(m as JsonNumber);
    case "bignum":
    case "int": return ["int", integer(m).toString()];
    case "float32": return ["float32", floatOf(m)];
    case "float64": return ["float64", floatOf(m)];
    case "string": return ["str", bytesToHex(utf8.encode(m as string))];
    case "string_hex": return ["str", bytesToHex(hexToBytes(m as string))];
    case "binary": return ["bin", bytesToHex(hexToBytes(m as string))];
    case "array": return ["array", (m as Json[]).map(normalizePlain)];
    case "map": return normalizePlain(m);
    case "typed_array": return ["array", (m as Json[]).map(normalize)];
    case "typed_map": return ["map", (m as Json[][]).map(([k, v]) => [normalize(k!), normalize(v!)])];
    case "ext": {
      const [extType, hex] = m as [Json, string];
      return ["ext", Number(integer(extType)), bytesToHex(hexToBytes(hex))];
    }
    case "timestamp": {
      const [sec, nsec] = m as [Json, Json];
      return ["timestamp", integer(sec).toString(), Number(integer(nsec))];
    }
  }
  return bad(type);
}

const sameFloat = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Object.is(a, b);

/** Equality of normalized values; "number" (loose) equals any int/float of the same numeric value. */
export function normalEqual(a: Normal, b: Normal): boolean {
  const x = a as unknown[];
  const y = b as unknown[];
  if (x[0] === "number" || y[0] === "number") {
    const num = (v: unknown[]): number | undefined =>
      v[0] === "number" || v[0] === "float32" || v[0] === "float64" ? (v[1] as number) : v[0] === "int" ? Number(v[1]) : undefined;
    const p = num(x);
    const q = num(y);
    if (p === undefined || q === undefined) return false;
    // loose numbers compare by value: an int beyond 2^53 against its float is compared exactly
    const exactOf = (v: unknown[]): string | null => (v[0] === "int" ? (v[1] as string) : v[0] === "number" ? (v[2] as string | null) : null);
    const ex = exactOf(x);
    const ey = exactOf(y);
    if (ex !== null && ey !== null) return ex === ey;
    return sameFloat(p, q) || p === q;
  }
  if (x[0] !== y[0]) return false;
  switch (x[0]) {
    case "nil": return true;
    case "float32":
    case "float64": return sameFloat(x[1] as number, y[1] as number);
    case "array":
    case "map": {
      const xs = x[1] as Normal[];
      const ys = y[1] as Normal[];
      if (xs.length !== ys.length) return false;
      if (x[0] === "array") return xs.every((v, i) => normalEqual(v, ys[i]));
      return xs.every((pair, i) => {
        const [k1, v1] = pair as Normal[];
        const [k2, v2] = ys[i] as Normal[];
        return normalEqual(k1, k2) && normalEqual(v1, v2);
      });
    }
    default: return JSON.stringify(x) === JSON.stringify(y);
  }
}
