// Values as text: the `mpk` tool's lossless JSON notation (c/README.md, "The lossless notation") for
// export, and short previews for the tree's rows. Both read the bytes through the walker's tokens,
// so they know what a decoded JavaScript value forgets (float 32 or 64, key types, duplicate keys,
// a str's invalid UTF-8); timestamps are decoded by the mpk codec itself (js/src/Timestamp.ts).
import { decodeTimestampPayload } from "../../src/Timestamp.js";
import { isError, readToken, skipValue, type Token } from "./walker.js";

const TAGS = new Set(["$bin", "$ext", "$ts", "$f32", "$f64", "$strhex", "$map"]);
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const replacingUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** The str's text, or null when its bytes are not UTF-8. */
export function utf8OrNull(bytes: Uint8Array, start: number, end: number): string | null {
  try {
    return fatalUtf8.decode(bytes.subarray(start, end));
  } catch {
    return null;
  }
}

export function hex(bytes: Uint8Array, start: number, end: number): string {
  let s = "";
  for (let i = start; i < end; i++) s += (bytes[i]! < 16 ? "0" : "") + bytes[i]!.toString(16);
  return s;
}

export function base64(bytes: Uint8Array, start: number, end: number): string {
  const parts: string[] = [];
  // btoa takes a binary string; 3 * 8192 bytes at a time keep fromCharCode's arguments few
  for (let i = start; i < end; i += 3 * 8192) {
    const chunk = bytes.subarray(i, Math.min(end, i + 3 * 8192));
    parts.push(btoa(String.fromCharCode(...chunk)));
  }
  return parts.join("");
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** An int token's value, exact. */
export function intValue(bytes: Uint8Array, t: Token): bigint | number {
  const p = t.offset + 1;
  const v = view(bytes);
  switch (t.format) {
    case "positive fixint": return t.head;
    case "negative fixint": return t.head - 256;
    case "uint8": return v.getUint8(p);
    case "uint16": return v.getUint16(p);
    case "uint32": return v.getUint32(p);
    case "uint64": return v.getBigUint64(p);
    case "int8": return v.getInt8(p);
    case "int16": return v.getInt16(p);
    case "int32": return v.getInt32(p);
    default: return v.getBigInt64(p);
  }
}

/** The shortest decimal that reads back as the same float 32. */
function float32Text(f: number): string {
  if (Object.is(f, -0)) return "-0.0"; // toPrecision drops the sign of -0
  for (let digits = 1; digits < 17; digits++) {
    const s = f.toPrecision(digits);
    if (Math.fround(Number(s)) === f) return numberText(Number(s));
  }
  return numberText(f);
}

/** A finite number as JSON that always reads back as a float: a `.` or an exponent. */
function numberText(f: number): string {
  if (Object.is(f, -0)) return "-0.0";
  const s = String(f);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

function floatNotation(bytes: Uint8Array, t: Token): string {
  const v = view(bytes);
  const is32 = t.format === "float32";
  const f = is32 ? v.getFloat32(t.offset + 1) : v.getFloat64(t.offset + 1);
  const tag = is32 ? "$f32" : "$f64";
  if (Number.isNaN(f)) {
    const bits = hex(bytes, t.offset + 1, t.offset + 1 + t.len);
    return `{"${tag}":"${bits === (is32 ? "7fc00000" : "7ff8000000000000") ? "NaN" : `NaN:${bits}`}"}`;
  }
  if (!Number.isFinite(f)) return `{"${tag}":"${f > 0 ? "Infinity" : "-Infinity"}"}`;
  return is32 ? `{"$f32":${float32Text(f)}}` : numberText(f);
}

/** A timestamp token's seconds and nanoseconds (the walker has checked its length and nsec). */
export function timestampOf(bytes: Uint8Array, t: Token): { sec: bigint; nsec: number } {
  const ts = decodeTimestampPayload(view(bytes), t.offset + t.headerLen, t.len)!;
  return { sec: ts.sec, nsec: ts.nsec };
}

const YEAR_0 = -62167219200n; // 0000-01-01T00:00:00Z
const YEAR_10000 = 253402300800n;

/** RFC 3339 in UTC with the nanoseconds without trailing zeros, for years 0000-9999; else null. */
export function rfc3339(sec: bigint, nsec: number): string | null {
  if (sec < YEAR_0 || sec >= YEAR_10000) return null;
  const base = new Date(Number(sec) * 1000).toISOString().slice(0, 19);
  const frac = nsec === 0 ? "" : `.${String(nsec).padStart(9, "0").replace(/0+$/, "")}`;
  return `${base}${frac}Z`;
}

function timestampNotation(bytes: Uint8Array, t: Token): string {
  const { sec, nsec } = timestampOf(bytes, t);
  const text = rfc3339(sec, nsec);
  return text === null ? `{"$ts":[${sec},${nsec}]}` : `{"$ts":"${text}"}`;
}

/**
 * Appends the value at `p` in the lossless notation to `out` and returns where it ends. The value
 * must be whole (the walker found no error in it); `depth` is the containers enclosing it.
 */
export function writeNotation(bytes: Uint8Array, p: number, depth: number, out: string[]): number {
  const t = readToken(bytes, p, bytes.length, depth + 1);
  if (isError(t)) throw new Error(`${t.kind} at byte ${t.offset}`);
  const payload = p + t.headerLen;
  const end = payload + t.len;
  switch (t.type) {
    case "nil": out.push("null"); return end;
    case "bool": out.push(t.format); return end;
    case "int": out.push(String(intValue(bytes, t))); return end;
    case "float": out.push(floatNotation(bytes, t)); return end;
    case "str": {
      const s = utf8OrNull(bytes, payload, end);
      out.push(s === null ? `{"$strhex":"${hex(bytes, payload, end)}"}` : JSON.stringify(s));
      return end;
    }
    case "bin": out.push(`{"$bin":"${base64(bytes, payload, end)}"}`); return end;
    case "ext":
      out.push(t.extType === -1 ? timestampNotation(bytes, t) : `{"$ext":[${t.extType},"${base64(bytes, payload, end)}"]}`);
      return end;
    case "array": {
      out.push("[");
      let q = payload;
      for (let i = 0; i < t.count; i++) {
        if (i > 0) out.push(",");
        q = writeNotation(bytes, q, depth + 1, out);
      }
      out.push("]");
      return q;
    }
    case "map": {
      const plain = plainObject(bytes, t, depth);
      out.push(plain ? "{" : `{"$map":[`);
      let q = payload;
      for (let i = 0; i < t.count; i++) {
        if (i > 0) out.push(",");
        if (!plain) out.push("[");
        q = writeNotation(bytes, q, depth + 1, out);
        out.push(plain ? ":" : ",");
        q = writeNotation(bytes, q, depth + 1, out);
        if (!plain) out.push("]");
      }
      out.push(plain ? "}" : "]}");
      return q;
    }
  }
}

/** Whether a map is written as a JSON object: every key a UTF-8 str, and not one key naming a tag. */
function plainObject(bytes: Uint8Array, t: Token, depth: number): boolean {
  let q = t.offset + t.headerLen;
  for (let i = 0; i < t.count; i++) {
    const k = readToken(bytes, q, bytes.length, depth + 2);
    if (isError(k) || k.type !== "str") return false;
    const s = utf8OrNull(bytes, q + k.headerLen, q + k.headerLen + k.len);
    if (s === null || (t.count === 1 && TAGS.has(s))) return false;
    const v = skipValue(bytes, q + k.headerLen + k.len, bytes.length, depth + 1);
    if (isError(v)) return false;
    q = v;
  }
  return true;
}

/** The value at `p` in the notation, as one JSON text. */
export function notation(bytes: Uint8Array, p: number, depth: number): string {
  const out: string[] = [];
  writeNotation(bytes, p, depth, out);
  return out.join("");
}

const PREVIEW_BYTES = 16;

/** A short text for a row: the value of a scalar, a date for a timestamp, a hex excerpt of bin/ext. */
export function preview(bytes: Uint8Array, t: Token): string {
  const payload = t.offset + t.headerLen;
  const end = payload + t.len;
  const cut = Math.min(end, payload + PREVIEW_BYTES);
  const more = end > cut ? "…" : "";
  switch (t.type) {
    case "nil": return "null";
    case "bool": return t.format;
    case "int": return String(intValue(bytes, t));
    case "float": {
      const f = t.format === "float32" ? view(bytes).getFloat32(payload) : view(bytes).getFloat64(payload);
      return Number.isFinite(f) ? numberText(f) : String(f);
    }
    case "str": {
      const s = utf8OrNull(bytes, payload, end);
      if (s === null) return `invalid UTF-8: ${hex(bytes, payload, cut)}${more}`;
      return JSON.stringify(s.length > 80 ? s.slice(0, 80) : s) + (s.length > 80 ? "…" : "");
    }
    case "bin": return `${hex(bytes, payload, cut)}${more}`;
    case "ext": {
      if (t.extType === -1) {
        const { sec, nsec } = timestampOf(bytes, t);
        return rfc3339(sec, nsec) ?? `sec ${sec} nsec ${nsec}`;
      }
      return `type ${t.extType}: ${hex(bytes, payload, cut)}${more}`;
    }
    case "array": return `[${t.count}]`;
    case "map": return `{${t.count}}`;
  }
}

/** A bin or ext payload as text for the details panel: hex and base64 of its first `max` bytes. */
export function payloadPreview(bytes: Uint8Array, t: Token, max: number): { hex: string; base64: string; cut: boolean } {
  const payload = t.offset + t.headerLen;
  const end = Math.min(payload + t.len, payload + max);
  return { hex: hex(bytes, payload, end), base64: base64(bytes, payload, end), cut: end < payload + t.len };
}

/**
 * Reads hex (whitespace, `-`, `:` and 0x prefixes ignored) or base64 (standard or URL-safe) text;
 * "auto" takes text of hex digits only as hex. Throws an Error saying what is wrong.
 */
export function parseText(text: string, mode: "auto" | "hex" | "base64" = "auto"): Uint8Array {
  const compact = text.replace(/0x/gi, "").replace(/[\s:-]/g, "");
  if (mode === "hex" || (mode === "auto" && /^[0-9a-fA-F]*$/.test(compact))) {
    const bad = compact.search(/[^0-9a-fA-F]/);
    if (bad !== -1) throw new Error(`not hex: '${compact[bad]}'`);
    if (compact.length % 2 !== 0) throw new Error(`hex with an odd number of digits (${compact.length})`);
    const out = new Uint8Array(compact.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(compact.substr(i * 2, 2), 16);
    return out;
  }
  const b64 = text.replace(/\s/g, "");
  const bad = b64.search(/[^A-Za-z0-9+/=_-]/);
  if (bad !== -1) throw new Error(`neither hex nor base64: '${b64[bad]}' at character ${bad}`);
  let s: string;
  try {
    s = atob(b64.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    throw new Error("base64 of a length that is not possible");
  }
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
