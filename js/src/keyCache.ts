import { decodeUtf8, lastUtf8Invalid } from "./utils/utf8.js";

// The key cache: map keys repeat (every record of a list has the same ones), and so do short str
// values (languages, tags, enum-like words), so the bytes of a short str are hashed and, when the
// same bytes were seen before, the string made then is reused.
// Keys of 4 bytes or more are hashed by their first and last four bytes only (two reads instead of
// a loop; keys that differ only in the middle share a slot and take turns, which costs speed only).
// Reuse saves building the string and lets V8 find the property without hashing a new string.
// Bounds: keys of at most KEY_MAX_BYTES bytes, SLOTS entries (direct-mapped; a collision replaces
// the older key), about SLOTS * (KEY_MAX_BYTES + 9) bytes in all. Only valid UTF-8 is cached, so a
// cached string is the same under every utf8 mode.

/** Longest key, in bytes, that the cache holds. */
export const KEY_MAX_BYTES = 32;
const SLOT_BITS = 12;
const SLOTS = 1 << SLOT_BITS;

const keys: Array<string | undefined> = new Array(SLOTS).fill(undefined);
const lengths = new Uint8Array(SLOTS);
const bytes = new Uint8Array(SLOTS * KEY_MAX_BYTES);
const bytesView = new DataView(bytes.buffer);

/**
 * The string for buf[start, start + n) (n <= KEY_MAX_BYTES), or undefined when it is not valid
 * UTF-8. `view` is a DataView over buf: keys of 4 bytes or more are hashed and compared four bytes
 * at a time (the first and last word go into the hash).
 */
export function lookupKey(buf: Uint8Array, view: DataView, start: number, n: number): string | undefined {
  return lookup(buf, view, start, n, true);
}

/** lookupKey for str values: a new string is cached as it is (internalizing pays only for keys). */
export function lookupStr(buf: Uint8Array, view: DataView, start: number, n: number): string | undefined {
  return lookup(buf, view, start, n, false);
}

/** The slot of the last key found or added by lookupKey / lookupKeyGuessing. */
export let lastKeySlot = 0;

/**
 * lookupKey, trying slot `guess` first (the slot of the key at the same position of the last map:
 * records repeat their keys in order), which saves hashing when it holds these bytes.
 */
export function lookupKeyGuessing(buf: Uint8Array, view: DataView, start: number, n: number, guess: number): string | undefined {
  const cached = keys[guess];
  if (cached !== undefined && lengths[guess] === n && holds(guess, buf, view, start, n)) {
    lastKeySlot = guess;
    return cached;
  }
  return lookup(buf, view, start, n, true);
}

/** Whether slot holds the bytes buf[start, start + n) (its length is n). */
function holds(slot: number, buf: Uint8Array, view: DataView, start: number, n: number): boolean {
  const base = slot * KEY_MAX_BYTES;
  let i = 0;
  for (; i + 4 <= n; i += 4) if (view.getInt32(start + i, true) !== bytesView.getInt32(base + i, true)) return false;
  while (i < n && bytes[base + i] === buf[start + i]) i++;
  return i === n;
}

function lookup(buf: Uint8Array, view: DataView, start: number, n: number, key: boolean): string | undefined {
  let h: number;
  if (n >= 4) {
    h = Math.imul(view.getInt32(start, true) ^ n, 0x9e3779b1);
    h = Math.imul(h ^ view.getInt32(start + n - 4, true), 0x85ebca6b);
    h ^= h >>> 15;
  } else {
    // FNV-1a over the bytes, seeded with the length
    h = 0x811c9dc5 ^ n;
    for (let i = 0; i < n; i++) h = Math.imul(h ^ buf[start + i]!, 0x01000193);
  }
  const slot = h >>> (32 - SLOT_BITS);
  if (key) lastKeySlot = slot;
  const cached = keys[slot];
  if (cached !== undefined && lengths[slot] === n && holds(slot, buf, view, start, n)) return cached;
  const decoded = decodeUtf8(buf, start, start + n, KEY_MAX_BYTES, true);
  if (lastUtf8Invalid) return undefined;
  const str = key ? internalize(decoded) : decoded;
  keys[slot] = str;
  lengths[slot] = n;
  const base = slot * KEY_MAX_BYTES;
  for (let i = 0; i < n; i++) bytes[base + i] = buf[start + i]!; // no subarray: n <= 16
  return str;
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
