import { decodeUtf8Strict } from "./utils/utf8.js";

// The key cache: map keys repeat (every record of a list has the same ones), and so do short str
// values (languages, tags, enum-like words), so the bytes of a short str are hashed and, when the
// same bytes were seen before, the string made then is reused.
// Keys are hashed by their first and last four bytes only (two reads instead of a loop; keys that
// differ only in the middle share a slot and take turns, which costs speed only).
// Reuse saves building the string and lets V8 find the property without hashing a new string.
// Bounds: keys of at most KEY_MAX_BYTES bytes, SLOTS entries (direct-mapped; a collision replaces
// the older key), about SLOTS * (KEY_MAX_BYTES + 17) bytes in all. Only valid UTF-8 is cached, so a
// cached string is the same under every utf8 mode.

/** Longest key, in bytes, that the cache holds. */
export const KEY_MAX_BYTES = 32;
const SLOT_BITS = 12;
const SLOTS = 1 << SLOT_BITS;
/** Slots in the key cache (slot numbers are below this). */
export const KEY_SLOTS = SLOTS;

const keys: Array<string | undefined> = new Array(SLOTS).fill(undefined);
const lengths = new Uint8Array(SLOTS);
// A key's first and last four bytes (its bytes packed little-endian when shorter than four): they
// are read for the hash anyway, and for keys of up to 8 bytes they are all of the key, so most
// keys are compared with two integer comparisons. Longer ones compare the rest with `allBytes`.
const firsts = new Int32Array(SLOTS);
const lasts = new Int32Array(SLOTS);
const allBytes = new Uint8Array(SLOTS * KEY_MAX_BYTES);
const allBytesView = new DataView(allBytes.buffer);

/**
 * The string for buf[start, start + n) (n <= KEY_MAX_BYTES), or undefined when it is not valid
 * UTF-8. `view` is a DataView over buf.
 */
export function lookupKey(buf: Uint8Array, view: DataView, start: number, n: number): string | undefined {
  return lookup(buf, view, start, n, true);
}

/** lookupKey for str values: a new string is cached as it is (internalizing pays only for keys). */
export function lookupStr(buf: Uint8Array, view: DataView, start: number, n: number): string | undefined {
  return lookup(buf, view, start, n, false);
}

/**
 * An out-parameter of lookupKey / lookupKeyGuessing (no tuple allocated per key): the slot of the
 * key they found or added last.
 */
export const keyFound = { slot: 0 };

/** The first word of buf[start, start + n): its first four bytes, or all of them packed when fewer. */
function firstWord(buf: Uint8Array, view: DataView, start: number, n: number): number {
  if (n >= 4) return view.getInt32(start, true);
  if (n === 3) return buf[start]! | (buf[start + 1]! << 8) | (buf[start + 2]! << 16);
  if (n === 2) return buf[start]! | (buf[start + 1]! << 8);
  return n === 1 ? buf[start]! : 0;
}

/**
 * lookupKey, trying slot `guess` first (the slot of the key at the same position of the last map:
 * records repeat their keys in order), which saves hashing when it holds these bytes.
 */
export function lookupKeyGuessing(buf: Uint8Array, view: DataView, start: number, n: number, guess: number): string | undefined {
  const first = firstWord(buf, view, start, n);
  const last = n >= 4 ? view.getInt32(start + n - 4, true) : 0;
  if (lengths[guess] === n && firsts[guess] === first && lasts[guess] === last && (n <= 8 || sameMiddle(guess, view, start, n))) {
    const cached = keys[guess];
    if (cached !== undefined) {
      keyFound.slot = guess;
      return cached;
    }
  }
  return lookupWords(buf, view, start, n, first, last, true);
}

/** Whether slot's bytes 4 .. n-4 are those of buf[start, start + n) (n > 8). */
function sameMiddle(slot: number, view: DataView, start: number, n: number): boolean {
  const base = slot * KEY_MAX_BYTES;
  const stop = n - 4;
  let i = 4;
  for (; i + 4 <= stop; i += 4) if (view.getInt32(start + i, true) !== allBytesView.getInt32(base + i, true)) return false;
  // fewer than four bytes left: compare the word that ends with them
  return i === stop || view.getInt32(start + stop - 4, true) === allBytesView.getInt32(base + stop - 4, true);
}

function lookup(buf: Uint8Array, view: DataView, start: number, n: number, key: boolean): string | undefined {
  return lookupWords(buf, view, start, n, firstWord(buf, view, start, n), n >= 4 ? view.getInt32(start + n - 4, true) : 0, key);
}

function lookupWords(buf: Uint8Array, view: DataView, start: number, n: number, first: number, last: number, key: boolean): string | undefined {
  let h = Math.imul(first ^ n, 0x9e3779b1);
  h = Math.imul(h ^ last, 0x85ebca6b);
  h ^= h >>> 15;
  let slot = h >>> (32 - SLOT_BITS);
  if (key) keyFound.slot = slot;
  if (lengths[slot] === n && firsts[slot] === first && lasts[slot] === last) {
    if (n <= 8 || sameMiddle(slot, view, start, n)) {
      const cached = keys[slot];
      if (cached !== undefined) return cached;
    } else {
      slot = middleTwin(slot);
      if (key) keyFound.slot = slot;
      const cached = keys[slot];
      if (cached !== undefined && lengths[slot] === n && firsts[slot] === first && lasts[slot] === last && sameMiddle(slot, view, start, n)) return cached;
    }
  }
  const decoded = decodeUtf8Strict(buf, start, start + n, KEY_MAX_BYTES);
  if (decoded === undefined) return undefined;
  const str = key ? internalize(decoded) : decoded;
  keys[slot] = str;
  lengths[slot] = n;
  firsts[slot] = first;
  lasts[slot] = last;
  const base = slot * KEY_MAX_BYTES;
  for (let i = 0; i < n; i++) allBytes[base + i] = buf[start + i]!; // no subarray: n <= 32
  return str;
}

/**
 * The slot for a key that differs from the one in `slot` only in its middle (same length, same first
 * and last four bytes, so the same hash): the other slot of its pair (slot ^ 1). Such keys come in
 * families in real documents, and in one slot they took turns, each pushing the other out: in
 * twitter.json every user object has both profile_link_color and profile_text_color (18 bytes,
 * "prof...olor"), 346 of its 13,500 keys missed the cache on every decode, each then decoded and
 * internalized again. A third such key takes turns with the second in the twin slot. Measured:
 * js/bench/README.md, session 9.
 */
function middleTwin(slot: number): number {
  return slot ^ 1;
}

/**
 * The engine's own (internalized) copy of s: a property name taken back from an object. Objects
 * built with it then store properties without hashing or looking the string up each time.
 */
function internalize(s: string): string {
  const holder: Record<string, number> = {};
  holder[s] = 0;
  return Object.keys(holder)[0] ?? s;
}
