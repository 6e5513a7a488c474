// UTF-8 for str payloads. Short strings are decoded and written by hand, because a call into
// TextDecoder/TextEncoder costs more than the loop below for them; long ones go to the platform.
// The hand-written decoder follows the WHATWG Encoding Standard's UTF-8 decoder
// (https://encoding.spec.whatwg.org/#utf-8-decoder), so both paths replace invalid sequences
// with U+FFFD in exactly the same places.

const REPLACEMENT = 0xfffd;
const CHUNK = 4096; // code units handed to String.fromCharCode at once (argument-count limits)

let textDecoder: TextDecoder | undefined;
let textEncoder: TextEncoder | undefined;

/** Set by decodeUtf8 when the last str it decoded was not valid UTF-8. */
let lastUtf8Invalid = false;

/**
 * Decodes bytes[start, end) as UTF-8, or returns undefined if they are not valid UTF-8 (one pass:
 * the replacing decoder notes whether it replaced anything).
 */
export function decodeUtf8Strict(bytes: Uint8Array, start: number, end: number, threshold: number): string | undefined {
  const s = decodeUtf8(bytes, start, end, threshold, true);
  return lastUtf8Invalid ? undefined : s;
}

/**
 * Decodes bytes[start, end) with WHATWG's replacement rules. With `validate`, notes (for
 * decodeUtf8Strict) whether it had to replace anything.
 */
export function decodeUtf8(bytes: Uint8Array, start: number, end: number, threshold: number, validate = false): string {
  lastUtf8Invalid = false;
  const n = end - start;
  if (n > ASCII_MAX || n >= NODE_SLICE_MIN) return decodeLong(bytes, start, end, validate);
  // ASCII, the common case for keys, short values, URLs and dates, is cheaper by hand than
  // through TextDecoder up to ASCII_MAX bytes; other text only below `threshold`.
  let i = start;
  while (i < end && bytes[i]! < 0x80) i++;
  if (i === end) return asciiString(bytes, start, end);
  if (n > threshold) return decodeLong(bytes, start, end, validate);
  return decodeGeneral(bytes, start, end);
}

function decodeLong(bytes: Uint8Array, start: number, end: number, validate: boolean): string {
  if (end - start >= LATIN1_LONG_MIN) {
    const ascii = nodeAsciiLatin1(bytes, start, end);
    if (ascii !== undefined) return ascii;
  }
  const s = nodeUtf8Slice !== undefined ? nodeUtf8Slice.call(bytes, start, end) : decodeLongPortable(bytes, start, end);
  // TextDecoder replaces silently; a U+FFFD in its output means either a replacement or a real
  // U+FFFD in the input, and only then is the slow path needed to tell which.
  if (validate && s.indexOf("\ufffd") !== -1) return decodeGeneral(bytes, start, end);
  return s;
}

/** The platform's UTF-8 decoder: TextDecoder (WHATWG replacement; U+FEFF at the start kept). */
export function decodeLongPortable(bytes: Uint8Array, start: number, end: number): string {
  textDecoder ??= new TextDecoder("utf-8", { ignoreBOM: true }); // a str may begin with U+FEFF: keep it
  return textDecoder.decode(bytes.subarray(start, end));
}

/**
 * Node's own UTF-8 decoder, Buffer.prototype.utf8Slice (it takes any Uint8Array as `this`), where
 * there is one; elsewhere decodeLongPortable. Measured in Node 20 on ASCII strs (one process,
 * busy machine): 1 KiB 0.55 µs and 4 KiB 0.65 µs against 1.5 µs and 3.8 µs through
 * TextDecoder.decode, whose call and subarray cost more; non-ASCII 64 B 0.1 µs against 0.4 µs.
 * It keeps a leading U+FEFF and replaces bad sequences as TextDecoder does (test/utf8.test.ts
 * checks both paths against TextDecoder).
 */
export const nodeUtf8Slice: ((this: Uint8Array, start: number, end: number) => string) | undefined = (() => {
  const B = (globalThis as { Buffer?: { prototype?: { utf8Slice?: unknown } } }).Buffer;
  const f = B?.prototype?.utf8Slice;
  return typeof f === "function" ? (f as (this: Uint8Array, start: number, end: number) => string) : undefined;
})();

/**
 * Node's buffer.isAscii (a native SIMD check: 24 µs for 1 MiB), reached without an import through
 * process.getBuiltinModule (Node 20.16 and 22.3 on); undefined elsewhere (browsers, older Node).
 */
export const nodeIsAscii: ((bytes: Uint8Array) => boolean) | undefined = (() => {
  try {
    const get = (globalThis as { process?: { getBuiltinModule?: unknown } }).process?.getBuiltinModule;
    if (typeof get !== "function") return undefined;
    const f = (get as (id: string) => { isAscii?: unknown } | undefined)("buffer")?.isAscii;
    if (typeof f !== "function") return undefined;
    const isAscii = f as (bytes: Uint8Array) => boolean;
    // taken only if it answers as expected on a plain Uint8Array
    if (isAscii(new Uint8Array([0x61, 0x7f])) === true && isAscii(new Uint8Array([0x61, 0x80])) === false) return isAscii;
  } catch {
    // no such luck: utf8Slice
  }
  return undefined;
})();

const nodeLatin1Slice: ((this: Uint8Array, start: number, end: number) => string) | undefined = (() => {
  const B = (globalThis as { Buffer?: { prototype?: { latin1Slice?: unknown } } }).Buffer;
  const f = B?.prototype?.latin1Slice;
  return typeof f === "function" ? (f as (this: Uint8Array, start: number, end: number) => string) : undefined;
})();

/**
 * In Node, strs of this many bytes and more are first tried as ASCII (nodeAsciiLatin1) before
 * utf8Slice. Node 20.20, ASCII, same process, CPU time, medians of 21 windows (loaded machine),
 * utf8Slice's time over isAscii + latin1Slice's: 256 B 0.63, 1 KiB 0.88, 4 KiB 1.17, 16 KiB 1.48,
 * 64 KiB 1.22, 256 KiB 1.14, 1 MiB 1.13-3.2, 4 MiB 2.04 (above 1,031,913 bytes both make an
 * external string, and latin1Slice's is a plain copy: 264 µs against 1,040 µs for 1 MiB in a
 * steady process). Infinity where either primitive is missing (browsers: TextDecoder as before).
 */
export const LATIN1_LONG_MIN = nodeIsAscii !== undefined && nodeLatin1Slice !== undefined ? 4096 : Infinity;

/**
 * bytes[start, end) as a string if they are all ASCII (then latin1Slice, one unit a byte, makes
 * the same string as UTF-8 decoding, without decoding), else undefined. Text that is not ASCII
 * usually shows it in its first bytes: those are looked at in JavaScript first, so that such text
 * does not pay the whole check before utf8Slice (measured without that look: 1-5% slower on
 * non-ASCII strs of 1 KiB-1 MiB). Node only (see LATIN1_LONG_MIN).
 */
export function nodeAsciiLatin1(bytes: Uint8Array, start: number, end: number): string | undefined {
  const look = Math.min(end, start + 32);
  for (let i = start; i < look; i++) if (bytes[i]! >= 0x80) return undefined;
  return nodeIsAscii!(bytes.subarray(start, end)) ? nodeLatin1Slice!.call(bytes, start, end) : undefined;
}

/**
 * In Node, strs of this many bytes and more go to utf8Slice (decodeLong) instead of the hand-made
 * ASCII path: Node 20, ASCII, CPU time, medians of 31 on a busy machine, asciiString or asciiStr
 * against utf8Slice: 17 bytes 0.96, 32 1.05, 48 1.16, 64 1.24, 128 1.53, 256 2.12 (the time of the
 * hand path over utf8Slice's). Elsewhere (no utf8Slice) ASCII_MAX decides alone.
 */
export const NODE_SLICE_MIN = nodeUtf8Slice !== undefined ? 48 : Infinity;

const fromCharCode = String.fromCharCode;

const UNIT_ARRAYS = 257;
/** Longest ASCII str decoded by hand (measured with js/bench; the hand path needs UNIT_ARRAYS > it). */
const ASCII_MAX = 256;
const unitArrays: Array<number[] | undefined> = new Array(UNIT_ARRAYS).fill(undefined);

/** bytes[start, end) are all below 0x80. */
export function asciiString(b: Uint8Array, start: number, end: number): string {
  switch (end - start) {
    case 0: return "";
    case 1: return fromCharCode(b[start]!);
    case 2: return fromCharCode(b[start]!, b[start + 1]!);
    case 3: return fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!);
    case 4: return fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!, b[start + 3]!);
    case 5: return fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!, b[start + 3]!, b[start + 4]!);
    case 6: return fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!, b[start + 3]!, b[start + 4]!, b[start + 5]!);
    case 7: return fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!, b[start + 3]!, b[start + 4]!, b[start + 5]!, b[start + 6]!);
    case 8: return fromCharCode(b[start]!, b[start + 1]!, b[start + 2]!, b[start + 3]!, b[start + 4]!, b[start + 5]!, b[start + 6]!, b[start + 7]!);
    default: {
      const n = end - start;
      if (n > CHUNK) return decodeGeneral(b, start, end);
      // A reused plain array of exactly n elements: V8 applies one faster than a typed array,
      // and setting an array's length is a slow runtime call, so there is one array per length.
      if (n >= UNIT_ARRAYS) return fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
      const units = (unitArrays[n] ??= new Array<number>(n).fill(0));
      for (let i = 0; i < n; i++) units[i] = b[start + i]!;
      return fromCharCode.apply(null, units);
    }
  }
}

// scratch for decodeGeneral, never shortened (setting an array's length is slow)
const units: number[] = new Array<number>(CHUNK + 4).fill(0);

function decodeGeneral(b: Uint8Array, start: number, end: number): string {
  let out = "";
  let n = 0;
  let invalid = false;
  let needed = 0;
  let seen = 0;
  let cp = 0;
  let lower = 0x80;
  let upper = 0xbf;
  for (let i = start; i < end; i++) {
    const byte = b[i]!;
    if (needed === 0) {
      if (byte < 0x80) {
        units[n++] = byte;
      } else if (byte >= 0xc2 && byte <= 0xdf) {
        needed = 1;
        cp = byte & 0x1f;
      } else if (byte >= 0xe0 && byte <= 0xef) {
        if (byte === 0xe0) lower = 0xa0;
        else if (byte === 0xed) upper = 0x9f; // no surrogates
        needed = 2;
        cp = byte & 0xf;
      } else if (byte >= 0xf0 && byte <= 0xf4) {
        if (byte === 0xf0) lower = 0x90;
        else if (byte === 0xf4) upper = 0x8f; // nothing above U+10FFFF
        needed = 3;
        cp = byte & 0x7;
      } else {
        units[n++] = REPLACEMENT;
        invalid = true;
      }
    } else if (byte < lower || byte > upper) {
      // the sequence so far is replaced and this byte starts over
      needed = seen = cp = 0;
      lower = 0x80;
      upper = 0xbf;
      units[n++] = REPLACEMENT;
      invalid = true;
      i--;
    } else {
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (byte & 0x3f);
      if (++seen === needed) {
        if (cp > 0xffff) {
          cp -= 0x10000;
          units[n++] = 0xd800 | (cp >> 10);
          units[n++] = 0xdc00 | (cp & 0x3ff);
        } else {
          units[n++] = cp;
        }
        needed = seen = cp = 0;
      }
    }
    if (n >= CHUNK) {
      out += unitsToString(n);
      n = 0;
    }
  }
  if (needed !== 0) {
    units[n++] = REPLACEMENT;
    invalid = true;
  }
  out += unitsToString(n);
  lastUtf8Invalid = invalid;
  return out;
}

/** The string of units[0, n). */
function unitsToString(n: number): string {
  if (n < UNIT_ARRAYS) {
    const exact = (unitArrays[n] ??= new Array<number>(n).fill(0));
    for (let i = 0; i < n; i++) exact[i] = units[i]!;
    return fromCharCode.apply(null, exact);
  }
  return fromCharCode.apply(null, units.slice(0, n));
}

/**
 * Writes s[from...] as UTF-8 at out[at...] and returns the end; out must have room for 3 bytes
 * per unit. `from` must not split a surrogate pair.
 */
export function writeUtf8(s: string, out: Uint8Array, at: number, from = 0): number {
  const n = s.length;
  for (let i = from; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[at++] = c;
    } else if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6);
      out[at++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && (next & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c & 0x3ff) << 10) + (next & 0x3ff);
          i++;
          out[at++] = 0xf0 | (c >> 18);
          out[at++] = 0x80 | ((c >> 12) & 0x3f);
          out[at++] = 0x80 | ((c >> 6) & 0x3f);
          out[at++] = 0x80 | (c & 0x3f);
          continue;
        }
        c = REPLACEMENT;
      }
      out[at++] = 0xe0 | (c >> 12);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    }
  }
  return at;
}

/**
 * Node's own UTF-8 writer, Buffer.prototype.utf8Write (it takes any Uint8Array as `this`):
 * `nodeUtf8Write.call(out, s, at, room)` writes s at out[at...] in at most `room` bytes, whole
 * characters only (lone surrogates as U+FFFD, as TextEncoder), and returns the bytes written. It
 * does not say how many units it took, so a write that may have stopped short (less than 4 bytes
 * of room left) is done again with encodeIntoAt. Measured in Node 20 (CPU time, medians of 31
 * windows, one process, 64 strings a window): 48-unit ASCII strings 90 ns a call against 126 ns
 * through encodeInto (whose subarray and result object cost the difference), 256 units 107 against
 * 129 ns, 1 KiB 142 against 157 ns, 4 KiB the same; non-ASCII 1.04-1.16x. Elsewhere undefined.
 */
export const nodeUtf8Write: ((this: Uint8Array, s: string, at: number, room: number) => number) | undefined = (() => {
  const B = (globalThis as { Buffer?: { prototype?: { utf8Write?: unknown } } }).Buffer;
  const f = B?.prototype?.utf8Write;
  if (typeof f !== "function") return undefined;
  const write = f as (this: Uint8Array, s: string, at: number, room: number) => number;
  // taken only if it writes into a plain Uint8Array as expected (a Node that wanted a Buffer as
  // `this`, or counted otherwise, gets the portable path instead of a broken encoder)
  try {
    const probe = new Uint8Array(8);
    if (write.call(probe, "a\u00e9\u20ac", 1, 5) === 3 && probe[1] === 0x61 && probe[2] === 0xc3 && probe[4] === 0) return write;
  } catch {
    // no such luck: the portable path
  }
  return undefined;
})();

/**
 * TextEncoder.encodeInto of s at out[at...], into whatever room out has there: `read` units of s
 * were written as `written` bytes (read < s.length when out ran out of room; it stops between code
 * points, lone surrogates written as U+FFFD).
 */
export function encodeIntoAt(s: string, out: Uint8Array, at: number): { read: number; written: number } {
  textEncoder ??= new TextEncoder();
  return textEncoder.encodeInto(s, out.subarray(at)) as { read: number; written: number };
}
