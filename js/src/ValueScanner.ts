import { DecodeError } from "./DecodeError.js";
import type { DecoderOptions } from "./limits.js";
import { decodeLimits, type DecodeLimits } from "./limits.js";
import { decodeTimestampPayload, TIMESTAMP_EXT_TYPE } from "./Timestamp.js";
import { decodeUtf8Strict } from "./utils/utf8.js";

/**
 * Walks the tokens of one incomplete value as its bytes arrive, without building anything, so
 * that a stream reports an error as soon as the bytes prove it (spec/README.md: a stream reports
 * errors as bytes arrive, truncation only at the end) and learns where the value ends. Resumable:
 * each call goes on from where the last one stopped, so every byte is looked at once (a token
 * whose header or checked payload is cut off is read again from its head, a few bytes).
 *
 * It checks what a stream can prove before the value is whole, in byte order and in the spec's
 * order within a token: 0xc1, length and count limits, depth, and once their payloads are
 * complete, timestamps and (with utf8 "strict") strs. A container's count is never compared with
 * the bytes present, since more may come.
 */
export class ValueScanner {
  private readonly limits: DecodeLimits;
  private readonly strictUtf8: boolean;
  /** Items still owed by each open container, outermost first (a map owes two per pair). */
  private readonly owed: number[] = [];
  /** For each open container: the number keys a map has had so far (see maxNumberKeys), -1 for an array. */
  private readonly numberKeys: number[] = [];
  /** For each open container: its head's offset. */
  private readonly heads: number[] = [];
  /** Maps decode to MapPairs (exact): their keys are not hashed, and not limited. */
  private readonly exact: boolean;
  /** Where the next token starts, from the value's first byte. */
  private pos = 0;
  /** The last token of the value has been read (its payload may still be arriving). */
  private whole = false;

  constructor(options: DecoderOptions = {}) {
    this.limits = decodeLimits(options);
    this.strictUtf8 = options.utf8 === "strict";
    this.exact = options.exact === true;
  }

  /** Starts over on a new value, at bytes[0] of the next scan. */
  reset(): void {
    this.owed.length = 0;
    this.numberKeys.length = 0;
    this.heads.length = 0;
    this.pos = 0;
    this.whole = false;
  }

  /**
   * Scans bytes[0, end) (the value's bytes so far; the same bytes as before plus new ones).
   * Returns the value's length once all of it is there, else -1. Throws DecodeError (offsets from
   * bytes[0]) for an error the bytes prove.
   */
  scan(bytes: Uint8Array, end: number): number {
    const owed = this.owed;
    let p = this.pos;
    while (!this.whole) {
      if (p >= end) break;
      const head = p;
      const h = bytes[p]!;
      let header = 1; // bytes before the payload
      let length = 0; // payload bytes
      let items = -1; // for a container, the items it owes
      let check = CHECK_NONE;
      if (h < 0x80 || h >= 0xe0) {
        // fixint
      } else if (h < 0x90) {
        items = this.container(head, h, h & 0x0f, true);
      } else if (h < 0xa0) {
        items = this.container(head, h, h & 0x0f, false);
      } else if (h < 0xc0) {
        length = this.str(head, h, h & 0x1f);
        check = this.strictUtf8 ? CHECK_UTF8 : CHECK_NONE;
      } else if (h === 0xc1) {
        throw new DecodeError("invalid_byte", head, h);
      } else if (h >= 0xc4 && h <= 0xc9) {
        // bin 8/16/32, ext 8/16/32: length field (and the ext's type byte)
        const field = 1 << ((h - 0xc4) % 3);
        const ext = h >= 0xc7;
        header = 1 + field + (ext ? 1 : 0);
        if (p + header > end) break;
        length = readLength(bytes, p + 1, field);
        if (length > (ext ? this.limits.ext : this.limits.bin)) throw new DecodeError("length_limit", head, h);
        if (ext && (bytes[p + header - 1]! << 24) >> 24 === TIMESTAMP_EXT_TYPE) check = timestampCheck(head, h, length);
      } else if (h >= 0xd4 && h <= 0xd8) {
        // fixext 1/2/4/8/16: type byte, payload
        header = 2;
        if (p + header > end) break;
        length = 1 << (h - 0xd4);
        if (length > this.limits.ext) throw new DecodeError("length_limit", head, h);
        if ((bytes[p + 1]! << 24) >> 24 === TIMESTAMP_EXT_TYPE) check = timestampCheck(head, h, length);
      } else if (h >= 0xd9 && h <= 0xdb) {
        // str 8/16/32
        const field = 1 << (h - 0xd9);
        header = 1 + field;
        if (p + header > end) break;
        length = this.str(head, h, readLength(bytes, p + 1, field));
        check = this.strictUtf8 ? CHECK_UTF8 : CHECK_NONE;
      } else if (h >= 0xdc) {
        // array 16/32, map 16/32
        const field = h & 1 ? 4 : 2;
        header = 1 + field;
        if (p + header > end) break;
        items = this.container(head, h, readLength(bytes, p + 1, field), h >= 0xde);
      } else {
        header = FIXED_SIZE[h - 0xc0]!; // nil, bool, float, int: a fixed size
        if (p + header > end) break;
      }
      const stop = p + header + length;
      if (check !== CHECK_NONE) {
        // content checks need the whole payload: wait for it, then read this token again
        if (stop > end) break;
        this.checkPayload(bytes, head, p + header, length, check);
      }
      p = stop;
      // a whole number key of a map (a map owes an even count before each key): counted as the
      // decoder counts them, so that the map's length_limit comes with the key over the limit
      const open = owed.length - 1;
      if (open >= 0 && this.numberKeys[open]! >= 0 && (owed[open]! & 1) === 0 && (h < 0x80 || h >= 0xe0 || (h >= 0xca && h <= 0xd3))) {
        const mapHead = this.heads[open]!;
        if (++this.numberKeys[open]! > this.limits.numberKeys) throw new DecodeError("length_limit", mapHead, bytes[mapHead]);
      }
      if (items > 0) {
        owed.push(items);
        this.numberKeys.push(h >= 0x80 && h < 0x90 || h >= 0xde ? (this.exact ? -1 : 0) : -1);
        this.heads.push(head);
        continue;
      }
      // a whole item: it pays what its container owes, and may complete containers around it
      for (;;) {
        const top = owed.length - 1;
        if (top < 0) {
          this.whole = true;
          break;
        }
        if (--owed[top]! > 0) break;
        owed.pop();
        this.numberKeys.pop();
        this.heads.pop();
      }
    }
    this.pos = p;
    return this.whole && p <= end ? p : -1;
  }

  /** A container head: its limits and depth; the items it owes. */
  private container(head: number, h: number, count: number, map: boolean): number {
    if (count > (map ? this.limits.map : this.limits.array)) throw new DecodeError("length_limit", head, h);
    if (this.owed.length >= this.limits.depth) throw new DecodeError("depth_limit", head, h);
    return map ? count * 2 : count;
  }

  private str(head: number, h: number, length: number): number {
    if (length > this.limits.str) throw new DecodeError("length_limit", head, h);
    return length;
  }

  private checkPayload(bytes: Uint8Array, head: number, start: number, length: number, check: number): void {
    if (check === CHECK_UTF8) {
      if (decodeUtf8Strict(bytes, start, start + length, 0) === undefined) throw new DecodeError("invalid_utf8", head, bytes[head]);
      return;
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset + start, length);
    if (decodeTimestampPayload(view, 0, length) === null) throw new DecodeError("invalid_timestamp", head, bytes[head]);
  }
}

/**
 * A timestamp's length is known from its header: one that no timestamp has is reported there,
 * before its payload is buffered (`c9 ff ff ff ff ff` would otherwise wait for 4 GiB). The
 * nanoseconds need the payload.
 */
function timestampCheck(head: number, h: number, length: number): number {
  if (length !== 4 && length !== 8 && length !== 12) throw new DecodeError("invalid_timestamp", head, h);
  return CHECK_TIMESTAMP;
}

const CHECK_NONE = 0;
const CHECK_UTF8 = 1;
const CHECK_TIMESTAMP = 2;

/** A big-endian unsigned length field of 1, 2 or 4 bytes. */
function readLength(bytes: Uint8Array, at: number, size: number): number {
  if (size === 1) return bytes[at]!;
  if (size === 2) return (bytes[at]! << 8) | bytes[at + 1]!;
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

/** Token sizes of the fixed-size heads 0xc0..0xd3 (nil, bool, floats, ints); others are read apart. */
const FIXED_SIZE = new Uint8Array([
  1, 0, 1, 1, 0, 0, 0, 0, 0, 0, // c0 nil, c1, c2 false, c3 true, c4-c9 (apart)
  5, 9, // ca float 32, cb float 64
  2, 3, 5, 9, // cc-cf uint 8/16/32/64
  2, 3, 5, 9, // d0-d3 int 8/16/32/64
]);
