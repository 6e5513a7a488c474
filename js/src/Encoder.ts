import { brand, kindOf } from "./brand.js";
import { EncodeError, keyStep, mapKeyStep } from "./EncodeError.js";
import type { ExtData } from "./ExtData.js";
import type { ExtensionCodec } from "./ExtensionCodec.js";
import type { Float } from "./Float.js";
import { DEFAULT_MAX_DEPTH } from "./limits.js";
import type { MapPairs } from "./MapPairs.js";
import type { RawStr } from "./RawStr.js";
import { encodeTimestampPayload, Timestamp } from "./Timestamp.js";
import { typeName } from "./utils/bytes.js";
import { encodeIntoAt, nodeUtf8Write, writeUtf8 } from "./utils/utf8.js";
import { checkOptions } from "./utils/options.js";

export type EncoderOptions = Readonly<
  Partial<{
    /** Write numbers that are not integers as float 32 (rounding them) instead of float 64. Defaults to false. */
    float32: boolean;
    /** Write map keys in sorted order, for deterministic output. Defaults to false (insertion order). */
    sortKeys: boolean;
    /** Encoders for application ext types, tried on objects that are not plain data. */
    extensions: ExtensionCodec;
    /** Containers enclosing a value, itself included (so a cycle is an error, not a stack overflow). Defaults to 1024. */
    maxDepth: number;
    /** Leave out object properties whose value is `undefined` (as JSON.stringify does) instead of writing nil. Defaults to false. */
    ignoreUndefined: boolean;
    /**
     * Return views into a buffer shared with earlier and later results instead of a Uint8Array of
     * its own: no copy per call, for hot loops that write each result out before the next encode.
     * Such a result's `.buffer` holds other results too: never transfer it, and copy the result
     * (`.slice()`) to keep it. Defaults to false.
     */
    sharedBuffer: boolean;
  }>
>;

/**
 * Strings shorter than this (in UTF-16 code units) are written by the hand-written loop, longer
 * ones with TextEncoder.encodeInto. Where the two cross depends on the engine's cost of calling
 * encodeInto (measured writing ASCII strings of 16..512 units): in Node 20 about 100 ns, which the
 * loop (about 2.5 ns a unit) reaches near 40 units; in Chromium about 400 ns, reached near 400.
 */
const TEXT_ENCODER_THRESHOLD = isNode() ? 48 : 512;

function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof p?.versions?.node === "string";
}
/** Size of the shared output buffer; results are views into it, so small results cost no copy. */
const CHUNK_SIZE = 64 * 1024;
const MIN_FREE = 2048;

// Writer state, in module variables for the same reason as in Decoder.ts (Cursor below names what
// a call changes).
let target: Uint8Array = new Uint8Array(0);
let view: DataView = new DataView(target.buffer);
let start = 0;
let pos = 0;
let busy = false;
/** The longest output written so far (capped), the size a new chunk starts at. */
let largestOutput = 0;
const LARGEST_OUTPUT_CAP = 4 * 1024 * 1024; // so that a small result never pins a huge buffer

/**
 * Owned results: bins of this many bytes and more are not copied into the output buffer. Only
 * their head is written, the bin is noted (deferAt, deferBins) and copied once, straight into the
 * result, when the call ends (withDeferred), instead of twice (into the buffer, then the buffer
 * into the result). Measured in Node 20 (same process, CPU time, loaded machine): 16 bins of
 * 64 KiB encode 1.25-1.35x faster; messages with one bin of 6-8 KiB (test3, test4, rb_image) were
 * 0.87-1.0x with it at 1 KiB (the bookkeeping costs what the saved copy of a few KiB does, and
 * the result's allocation dominates either way), so smaller bins are copied as before.
 * (A bin changed by the caller's own code during the same encode, a toJSON or an extension that
 * runs after it, is written as it is at the end of the call.)
 */
export const DEFER_MIN = 16 * 1024;
/** Whether this call defers large bins (owned results, and not while encoding keys to sort them). */
let deferring = false;
/** Where each deferred bin goes, relative to `start` (its bytes come before the byte there). */
let deferAt: number[] = [];
let deferBins: Uint8Array[] = [];

/** What each encoder option takes (utils/options.ts checks options against it). */
const ENCODER_OPTIONS = {
  float32: "boolean",
  sortKeys: "boolean",
  ignoreUndefined: "boolean",
  sharedBuffer: "boolean",
  extensions: "extensions",
  maxDepth: "limit",
} as const;

/**
 * An encoder's options, resolved once by its constructor. A call installs the whole object
 * (`cfg`), so an option is described here and nowhere else.
 */
class Config {
  readonly float32: boolean;
  readonly sortKeys: boolean;
  readonly maxDepth: number;
  readonly extEncoders: ExtensionCodec["encoders"] | undefined;
  readonly ignoreUndefined: boolean;
  readonly sharedBuffer: boolean;

  constructor(options: EncoderOptions) {
    checkOptions(options, ENCODER_OPTIONS, "encoder");
    this.float32 = options.float32 ?? false;
    this.sortKeys = options.sortKeys ?? false;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.extEncoders = options.extensions?.encoders;
    this.ignoreUndefined = options.ignoreUndefined ?? false;
    this.sharedBuffer = options.sharedBuffer ?? false;
  }
}

/** The options of the call in progress. */
let cfg = new Config({});

export class Encoder {
  private readonly config: Config;

  constructor(options: EncoderOptions = {}) {
    this.config = new Config(options);
  }

  /**
   * Encodes one value into a Uint8Array of its own (with `sharedBuffer`, a view into a buffer
   * shared with other results). Throws EncodeError for a value with no MessagePack form.
   */
  encode(value: unknown): Uint8Array {
    const saved = busy ? save() : null;
    busy = true;
    try {
      if (saved) {
        target = new Uint8Array(256);
        view = new DataView(target.buffer);
        start = pos = 0;
        deferAt = [];
        deferBins = [];
      }
      cfg = this.config;
      if (cfg.sharedBuffer) {
        if (!saved) startShared();
      } else if (!saved && target.length - start < MIN_FREE) {
        // a fresh chunk (also when the last one was detached by a transfer)
        newChunk(0);
      }
      objectPrototypeEnumerable = hasEnumerable(Object.prototype);
      deferring = !cfg.sharedBuffer;
      pos = start;
      write(value, 0);
      if (pos - start > largestOutput) largestOutput = Math.min(pos - start, LARGEST_OUTPUT_CAP);
      // owned: a copy, and the next encode writes over the same bytes; shared: a view, and the
      // next one writes after it
      if (!cfg.sharedBuffer) return deferBins.length === 0 ? target.slice(start, pos) : withDeferred();
      const out = sharedView(start, pos);
      if (!saved) lastSharedOutput = pos - start;
      start = (pos + 7) & ~7;
      return out;
    } catch (e) {
      pos = start;
      if (deferBins.length !== 0) clearDeferred();
      throw e instanceof EncodeError ? e.locate() : stackOverflow(e);
    } finally {
      if (saved) restore(saved);
      else busy = false;
    }
  }
}

/**
 * What a call changes, by name: an encode started while another is in progress (an extension's
 * encode calling encode) saves the one in progress and restores it afterwards. Every module
 * variable of this file is either here or listed in test/state.test.ts as kept across calls (the
 * test fails otherwise).
 */
interface Cursor {
  cfg: Config;
  target: Uint8Array;
  view: DataView;
  start: number;
  pos: number;
  deferring: boolean;
  deferAt: number[];
  deferBins: Uint8Array[];
}

function save(): Cursor {
  return { cfg, target, view, start, pos, deferring, deferAt, deferBins };
}

function restore(c: Cursor): void {
  ({ cfg, target, view, start, pos, deferring, deferAt, deferBins } = c);
}

/**
 * The owned result when bins were deferred: the output with each deferred bin copied in at its
 * place, in one buffer of exactly the result's size.
 */
function withDeferred(): Uint8Array {
  let size = pos - start;
  for (const b of deferBins) size += b.length;
  const out = new Uint8Array(size);
  let from = start;
  let o = 0;
  for (let i = 0; i < deferBins.length; i++) {
    const at = start + deferAt[i]!;
    o = copyOut(out, o, from, at);
    const bin = deferBins[i]!;
    out.set(bin, o);
    o += bin.length;
    from = at;
  }
  copyOut(out, o, from, pos);
  clearDeferred();
  return out;
}

/**
 * Copies target[from, to) to out[o...] and returns the end: a loop for the few bytes between bins
 * (a bin's head, a small array around it), where making a subarray for `set` costs more.
 */
function copyOut(out: Uint8Array, o: number, from: number, to: number): number {
  if (to - from > 64) {
    out.set(target.subarray(from, to), o);
    return o + to - from;
  }
  for (let i = from; i < to; i++) out[o++] = target[i]!;
  return o;
}

/** Forgets the deferred bins (the caller's memory is not kept alive by the encoder). */
function clearDeferred(): void {
  deferAt.length = 0;
  deferBins.length = 0;
}

/**
 * With sharedBuffer, an encode starts a new chunk when the rest of the current one is smaller than
 * the last shared output (the likeliest size of the next), with room for one such output if it
 * is SHARED_ALONE_MIN bytes or more, else for 8 of them (at least CHUNK_SIZE). Results are never
 * written over, so every shared result is new memory; what this saves is memory allocated and never used, and copies. Before, an encode
 * started a new chunk only when less than 2 KiB was left, so the next large output overflowed the
 * chunk halfway and was copied into one of twice its size, half of which was never used: counted
 * with js/bench/alloc.mjs (deterministic), new memory per call was 1.0-2.0x the output on the
 * bench's large workloads (1 MiB string 2.0x), now 1.0x. Room for 4 outputs a chunk allocates as
 * little but was slower: 200 ASCII strs of 0-4 KiB (415 kB out) 1.13-1.24x the time of one output
 * a chunk (CPU time, same process, js/bench/ab-workloads.mjs), as the memory zeroed at allocation
 * has left the cache by the time the later outputs are written into it.
 */
const SHARED_ALONE_MIN = 128 * 1024;
/** The size of the last shared-buffer result (of an encode not nested in another). */
let lastSharedOutput = 0;

/** Makes sure the shared chunk has room for an output like the last one (see above). */
function startShared(): void {
  const expected = Math.min(lastSharedOutput, LARGEST_OUTPUT_CAP);
  if (target.length - start >= expected + MIN_FREE) return;
  const size = expected >= SHARED_ALONE_MIN ? expected + MIN_FREE : Math.max(CHUNK_SIZE, 8 * expected + MIN_FREE);
  target = new Uint8Array(size);
  view = new DataView(target.buffer);
  start = pos = 0;
}

/**
 * A shared-buffer result: a view of target[from, to). Made with the Uint8Array constructor over the
 * chunk's ArrayBuffer, read from the DataView (`view.buffer`), rather than `target.subarray`:
 * subarray looks up the species constructor on every call and a typed array's `.buffer` getter is
 * slow in V8, while a DataView's is cheap. Measured in Node 20 (CPU time, one process, medians of
 * 21 windows, a 192-byte view): subarray 121-132 ns, `new Uint8Array(typedArray.buffer, ...)`
 * 135-148 ns, `new Uint8Array(dataView.buffer, ...)` 78-84 ns. In the encoder (same process, the
 * builds before and after loaded in both orders, medians of 61 windows): shared encode of [1,2]
 * 1.15-1.28x, table16 1.05-1.10x, product 1.02-1.03x. Standard JavaScript in every runtime, so it
 * is its own portable path (the browser suite runs it too). target and view always lie over the
 * same ArrayBuffer from byte 0 (every assignment sets both; mapping.test.ts checks the results).
 */
function sharedView(from: number, to: number): Uint8Array {
  return new Uint8Array(view.buffer, from, to - from);
}

/** Moves the output so far into a new buffer with room for `extra` more bytes. */
function newChunk(extra: number): void {
  const used = pos - start;
  // Start at the size the largest output so far needed, so that a large value is written into
  // one buffer instead of through a chain of doublings and copies.
  const size = Math.max(CHUNK_SIZE, (used + extra) * 2, largestOutput + MIN_FREE);
  largestOutput = Math.min(Math.max(largestOutput, used + extra), LARGEST_OUTPUT_CAP);
  const next = new Uint8Array(size);
  if (used > 0) next.set(target.subarray(start, pos));
  target = next;
  view = new DataView(next.buffer);
  start = 0;
  pos = used;
}

function ensure(n: number): void {
  if (pos + n > target.length) newChunk(n);
}

function write(v: unknown, depth: number): void {
  switch (typeof v) {
    case "string": return writeStr(v);
    case "number": return writeNumber(v);
    case "boolean":
      ensure(1);
      target[pos++] = v ? 0xc3 : 0xc2;
      return;
    case "object":
      if (v === null) {
        ensure(1);
        target[pos++] = 0xc0;
        return;
      }
      return writeObject(v, depth);
    case "undefined":
      ensure(1);
      target[pos++] = 0xc0;
      return;
    case "bigint": return writeBigInt(v);
    default: return refuse(v, "has no MessagePack form");
  }
}

/** Throws the EncodeError for `v`, naming its type; `why` completes "cannot encode <type>: ". */
function refuse(v: unknown, why: string): never {
  const type = typeName(v);
  const valueType = typeof v === "object" && v !== null ? type.replace(/^an? /, "") : typeof v;
  throw new EncodeError(`cannot encode ${type}: it ${why}`, valueType);
}

// Int32 heads, chosen without branches (random ints of mixed sizes made the branches mispredict):
// the index is clz32 of the value (or of ~value for negatives, plus 33); the tables give the head
// byte, a mask that lets the value itself into a fixint's head, the payload's size in bytes and
// the shift that puts the payload at the top of a big-endian 32-bit store.
const INT_HEAD = new Uint8Array(66);
const INT_FIX_MASK = new Uint8Array(66);
const INT_SIZE = new Uint8Array(66);
const INT_SHIFT = new Uint8Array(66);
for (let c = 0; c <= 32; c++) {
  // non-negative: fixint below 2^7 (clz >= 25), uint 8 below 2^8, uint 16 below 2^16, else uint 32
  // (values from 2^31 on are not int32 and take the other path)
  const size = c >= 25 ? 0 : c >= 24 ? 1 : c >= 16 ? 2 : 4;
  INT_HEAD[c] = size === 0 ? 0x00 : size === 1 ? 0xcc : size === 2 ? 0xcd : 0xce;
  INT_FIX_MASK[c] = size === 0 ? 0x7f : 0;
  // negative, by clz32(~v): fixint from -32 (~v < 32), int 8 from -128, int 16 from -32768, else int 32
  const neg = c >= 27 ? 0 : c >= 25 ? 1 : c >= 17 ? 2 : 4;
  INT_HEAD[33 + c] = neg === 0 ? 0x00 : neg === 1 ? 0xd0 : neg === 2 ? 0xd1 : 0xd2;
  INT_FIX_MASK[33 + c] = neg === 0 ? 0xff : 0;
  INT_SIZE[c] = size;
  INT_SIZE[33 + c] = neg;
  INT_SHIFT[c] = 32 - 8 * size;
  INT_SHIFT[33 + c] = 32 - 8 * neg;
}

function writeNumber(v: number): void {
  if (pos + 9 > target.length) newChunk(9);
  if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
    // an int32 (-0 is not: it stays a float to keep its sign)
    const sign = v >> 31; // 0 or -1
    const i = Math.clz32(v ^ sign) + (sign & 33);
    const p = pos;
    target[p] = INT_HEAD[i]! | (v & INT_FIX_MASK[i]!);
    // all 4 bytes are written (room for 9 was ensured); pos moves past the payload only
    view.setUint32(p + 1, v << INT_SHIFT[i]!);
    pos = p + 1 + INT_SIZE[i]!;
    return;
  }
  if (!cfg.float32 && v !== Math.floor(v)) {
    // a fraction (or NaN): float 64, the common case after int32 (coordinates, prices)
    target[pos] = 0xcb;
    view.setFloat64(pos + 1, v);
    pos += 9;
    return;
  }
  writeWideNumber(v);
}

/** Numbers beyond int32/uint32: 64-bit ints, and everything that is not an integer. */
function writeWideNumber(v: number): void {
  if (!Number.isInteger(v) || (v === 0 && 1 / v < 0)) return writeFloat(v);
  if (v >= 0) {
    if (v < 0x1_0000_0000) {
      target[pos++] = 0xce;
      view.setUint32(pos, v);
      pos += 4;
    } else if (v < 18446744073709551616) {
      target[pos++] = 0xcf;
      const lo = v % 0x1_0000_0000;
      view.setUint32(pos, (v - lo) / 0x1_0000_0000);
      view.setUint32(pos + 4, lo);
      pos += 8;
    } else {
      writeFloat(v);
    }
  } else if (v >= -9223372036854775808) {
    target[pos++] = 0xd3;
    const hi = Math.floor(v / 0x1_0000_0000);
    view.setInt32(pos, hi);
    view.setUint32(pos + 4, v - hi * 0x1_0000_0000);
    pos += 8;
  } else {
    writeFloat(v);
  }
}

function writeFloat(v: number, float32 = cfg.float32): void {
  if (float32) {
    target[pos++] = 0xca;
    view.setFloat32(pos, v);
    pos += 4;
  } else {
    target[pos++] = 0xcb;
    view.setFloat64(pos, v);
    pos += 8;
  }
}

const UINT64_LIMIT = 1n << 64n;
const INT64_MIN = -(1n << 63n);

function writeBigInt(v: bigint): void {
  if (v >= -0x8000_0000n && v < 0x1_0000_0000n) return writeNumber(Number(v));
  ensure(9);
  if (v >= 0n && v < UINT64_LIMIT) {
    target[pos++] = 0xcf;
    view.setBigUint64(pos, v);
  } else if (v < 0n && v >= INT64_MIN) {
    target[pos++] = 0xd3;
    view.setBigInt64(pos, v);
  } else {
    throw new EncodeError(`cannot encode the bigint ${v}: it does not fit in 64 bits`, "bigint");
  }
  pos += 8;
}

function writeStrHeader(n: number): void {
  if (n < 32) {
    target[pos++] = 0xa0 | n; // fixstr
  } else if (n < 0x100) {
    target[pos++] = 0xd9;
    target[pos++] = n;
  } else if (n < 0x10000) {
    target[pos++] = 0xda;
    target[pos++] = n >> 8;
    target[pos++] = n;
  } else {
    target[pos++] = 0xdb;
    view.setUint32(pos, n);
    pos += 4;
  }
}

function strHeaderSize(n: number): number {
  return n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
}

/**
 * Strings of fewer than 32 units that are ASCII (most keys and short values) in a function small
 * enough for V8 to inline into the loops over objects and arrays; the rest in writeLongerStr.
 */
function writeStr(s: string): void {
  const n = s.length;
  if (n < 32) {
    const at = pos + 1;
    if (at + n > target.length) return writeLongerStr(s);
    const out = target;
    let i = 0;
    // four units a step: one test of all four, fewer loop branches
    for (; i + 4 <= n; i += 4) {
      const c0 = s.charCodeAt(i);
      const c1 = s.charCodeAt(i + 1);
      const c2 = s.charCodeAt(i + 2);
      const c3 = s.charCodeAt(i + 3);
      if ((c0 | c1 | c2 | c3) >= 0x80) return writeLongerStr(s);
      out[at + i] = c0;
      out[at + i + 1] = c1;
      out[at + i + 2] = c2;
      out[at + i + 3] = c3;
    }
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return writeLongerStr(s);
      out[at + i] = c;
    }
    out[at - 1] = 0xa0 | n; // fixstr
    pos = at + n;
    return;
  }
  writeLongerStr(s);
}

function writeLongerStr(s: string): void {
  const n = s.length;
  if (n < TEXT_ENCODER_THRESHOLD) {
    ensure(5 + 3 * n);
    // Most strings are ASCII: write them hoping so, with the header their length implies.
    const head = pos;
    const out = target; // a local: the loop then keeps the array's data pointer in a register
    const at = head + (n < 32 ? 1 : n < 0x100 ? 2 : 3);
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      out[at + i] = c;
    }
    const p = at + i;
    if (i === n) {
      if (n < 32) {
        target[head] = 0xa0 | n;
      } else if (n < 0x100) {
        target[head] = 0xd9;
        target[head + 1] = n;
      } else {
        target[head] = 0xda;
        target[head + 1] = n >> 8;
        target[head + 2] = n;
      }
      pos = p;
      return;
    }
    // Other text: the rest as UTF-8 right after the ASCII prefix, then the header its length
    // needs, moving the bytes when that differs from the one reserved (rare: lengths near 32, 256).
    const reserved = p - i - head;
    const stop = writeUtf8(s, target, p, i);
    const length = stop - head - reserved;
    const needed = strHeaderSize(length);
    if (needed !== reserved) target.copyWithin(head + needed, head + reserved, stop);
    pos = head;
    writeStrHeader(length);
    pos = head + needed + length;
    return;
  }
  writeLongStr(s);
}

/**
 * Strings of TEXT_ENCODER_THRESHOLD units and more, by the platform's UTF-8 writer (Node's
 * utf8Write, else TextEncoder.encodeInto). Room is reserved for the string's ASCII length only
 * (n bytes), not for the 3 bytes a unit UTF-8 can take: the writer fills whatever room the buffer
 * has, and only when it runs out (other text than ASCII near the end of the buffer) does the
 * buffer grow and encodeInto go on from the unit where it stopped (writeLongStrRest). Reserving 3n made a shared-buffer encode of a 1 MiB string
 * allocate 2 MiB of new buffer per call (a 6 MiB chunk every third call, deterministic: counted
 * with js/bench/alloc.mjs) where its output is 1 MiB, and made a result's `.buffer` 6 MiB.
 */
function writeLongStr(s: string): void {
  const n = s.length;
  // Reserve the header an ASCII string of this length takes, then move the bytes if the real
  // length takes another one (the shortest form is required; UTF-8 is never shorter than n).
  const reserved = strHeaderSize(n);
  ensure(reserved + n);
  const head = pos - start; // relative: growing moves the output to a new chunk
  let end = writeLongStrNode(s, pos + reserved);
  if (end < 0) {
    // the portable path, and Node's when utf8Write may have stopped short
    const r = encodeIntoAt(s, target, pos + reserved);
    end = pos + reserved + r.written;
    if (r.read < n) end = writeLongStrRest(s, end, r.read);
  }
  const length = end - (start + head) - reserved;
  const needed = strHeaderSize(length);
  if (needed !== reserved) {
    pos = end;
    ensure(needed - reserved);
    const from = start + head + reserved;
    target.copyWithin(from - reserved + needed, from, from + length);
  }
  pos = start + head;
  writeStrHeader(length);
  pos += length;
}

/**
 * In Node, s written at target[at...] by Buffer.prototype.utf8Write (nodeUtf8Write: faster than
 * encodeInto on strings up to about 1 KiB, see utils/utf8.ts); returns the end, or -1 where there
 * is no utf8Write or where it may have stopped short of the end of s (less than 4 bytes of room
 * left: it does not say how many units it wrote), for writeLongStr to write s with encodeInto.
 */
function writeLongStrNode(s: string, at: number): number {
  if (nodeUtf8Write === undefined) return -1;
  const room = target.length - at;
  const written = nodeUtf8Write.call(target, s, at, room);
  return room - written >= 4 ? at + written : -1;
}

/**
 * The rest of a long string, s[read...], when the buffer ran out of room at `end`: a buffer with
 * room for 3 bytes a unit, and encodeInto again from the unit where it stopped (encodeInto stops
 * between code points, never inside a surrogate pair). Returns the new end.
 */
function writeLongStrRest(s: string, end: number, read: number): number {
  pos = end;
  ensure(3 * (s.length - read));
  return pos + encodeIntoAt(s.substring(read), target, pos).written;
}

function writeRawStr(bytes: Uint8Array): void {
  ensure(5 + bytes.length);
  writeStrHeader(bytes.length);
  target.set(bytes, pos);
  pos += bytes.length;
}

function writeBin(bytes: Uint8Array): void {
  const n = bytes.length;
  const defer = deferring && n >= DEFER_MIN;
  ensure(defer ? 5 : 5 + n);
  if (n < 0x100) {
    target[pos++] = 0xc4;
    target[pos++] = n;
  } else if (n < 0x10000) {
    target[pos++] = 0xc5;
    target[pos++] = n >> 8;
    target[pos++] = n;
  } else {
    target[pos++] = 0xc6;
    view.setUint32(pos, n);
    pos += 4;
  }
  if (defer) {
    deferAt.push(pos - start);
    deferBins.push(bytes);
    return;
  }
  target.set(bytes, pos);
  pos += n;
}

function writeArrayHeader(n: number): void {
  ensure(5);
  if (n < 16) {
    target[pos++] = 0x90 | n; // fixarray
  } else if (n < 0x10000) {
    target[pos++] = 0xdc;
    target[pos++] = n >> 8;
    target[pos++] = n;
  } else {
    target[pos++] = 0xdd;
    view.setUint32(pos, n);
    pos += 4;
  }
}

function writeMapHeader(n: number): void {
  ensure(5);
  if (n < 16) {
    target[pos++] = 0x80 | n; // fixmap
  } else if (n < 0x10000) {
    target[pos++] = 0xde;
    target[pos++] = n >> 8;
    target[pos++] = n;
  } else {
    target[pos++] = 0xdf;
    view.setUint32(pos, n);
    pos += 4;
  }
}

function writeExt(type: number, data: Uint8Array): void {
  const n = data.length;
  ensure(6 + n);
  if (n === 1) target[pos++] = 0xd4;
  else if (n === 2) target[pos++] = 0xd5;
  else if (n === 4) target[pos++] = 0xd6;
  else if (n === 8) target[pos++] = 0xd7;
  else if (n === 16) target[pos++] = 0xd8;
  else if (n < 0x100) {
    target[pos++] = 0xc7;
    target[pos++] = n;
  } else if (n < 0x10000) {
    target[pos++] = 0xc8;
    target[pos++] = n >> 8;
    target[pos++] = n;
  } else {
    target[pos++] = 0xc9;
    view.setUint32(pos, n);
    pos += 4;
  }
  target[pos++] = type & 0xff;
  target.set(data, pos);
  pos += n;
}

function tooDeep(v: unknown): never {
  const type = typeName(v);
  throw new EncodeError(`cannot encode ${type} nested deeper than maxDepth ${cfg.maxDepth} (a cycle?)`, type.replace(/^an? /, ""));
}

/**
 * Where the JavaScript stack ran out, when maxDepth is set beyond it: the steps of the path
 * (innermost first) and the container there, gathered by inside() as the RangeError unwinds, and
 * turned into an EncodeError by the encode that catches it (stackOverflow()).
 */
let overflowSteps: string[] = [];
let overflowAt: object | undefined;

/** Marks a step of overflowSteps that is an object's key, made into a step (keyStep) later. */
const KEY_MARK = "\u0000";

/**
 * An error from writing the element at `step` of `container` (for an object, `step` is the key,
 * with `isKey`): an EncodeError learns its path.
 */
function inside(e: unknown, step: string, container: object, isKey = false): unknown {
  if (e instanceof EncodeError) return e.within(isKey ? keyStep(step) : step);
  if (e instanceof RangeError) {
    // Perhaps a stack overflow, and this frame has next to no stack left: note where, and nothing
    // more. Making the error here can fail, and a regular expression compiled here (keyStep's,
    // typeName's) aborted V8 with "RegExpCompiler Allocation failed"; a frame too short even for
    // this passes the overflow on to the next one out.
    if (overflowAt === undefined) overflowAt = container;
    overflowSteps.push(isKey ? KEY_MARK + step : step);
  }
  return e;
}

/**
 * The error an encode throws for `e`, which is not an EncodeError: the stack ran out before
 * maxDepth (set far above the default) was reached is an EncodeError like maxDepth's, at the
 * innermost container whose frame could note it; anything else passes through.
 */
function stackOverflow(e: unknown): unknown {
  const steps = overflowSteps;
  const at = overflowAt;
  overflowSteps = [];
  overflowAt = undefined;
  if (!(e instanceof RangeError) || at === undefined || !/call stack|recursion/i.test(e.message)) return e;
  const type = typeName(at);
  const error = new EncodeError(`cannot encode ${type} nested deeper than the JavaScript stack allows (maxDepth ${cfg.maxDepth} is beyond it; a cycle?)`, type.replace(/^an? /, ""));
  for (const step of steps) error.within(step.startsWith(KEY_MARK) ? keyStep(step.slice(1)) : step);
  return error.locate();
}

function writeArray(v: unknown[], depth: number): void {
  if (depth >= cfg.maxDepth) tooDeep(v);
  const n = v.length;
  writeArrayHeader(n);
  let i = 0;
  try {
    if (n > 0 && typeof v[0] === "number") i = writeNumbers(v, n);
    for (; i < n; i++) {
      const item: unknown = v[i];
      // numbers, strings and nested arrays (tables, coordinates) straight away, without write's dispatch
      if (typeof item === "number") writeNumber(item);
      else if (typeof item === "string") writeStr(item);
      else if (Array.isArray(item)) writeArray(item, depth + 1);
      else write(item, depth + 1);
    }
  } catch (e) {
    throw inside(e, `[${i}]`, v);
  }
}

/**
 * Writes the numbers that v starts with and returns the index of the first other item. A function
 * of its own, so small that V8 always inlines writeNumber into it: inlined into writeArray, it
 * competed with the other calls there for V8's inlining budget and lost in some runs (when
 * writeArray was optimized while writing strings), and then every float of an array of doubles
 * went through a call, boxed: canada.json took 2-4x as long.
 */
function writeNumbers(v: unknown[], n: number): number {
  let i = 0;
  for (; i < n; i++) {
    const item = v[i];
    if (typeof item !== "number") break;
    writeNumber(item);
  }
  return i;
}

function writeObject(v: object, depth: number): void {
  if (Array.isArray(v)) return writeArray(v, depth);
  if (depth >= cfg.maxDepth) tooDeep(v);
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype) return writePlainObject(v as Record<string, unknown>, depth, objectPrototypeEnumerable);
  if (proto === null) return writePlainObject(v as Record<string, unknown>, depth, false);
  if (v instanceof Uint8Array) return writeBin(v);
  const extEncoders = cfg.extEncoders;
  if (extEncoders !== undefined) {
    for (const ext of extEncoders) {
      const data: unknown = ext.encode(v);
      // null (or undefined: a function that returns nothing) declines the value
      if (data === null || data === undefined) continue;
      if (!(data instanceof Uint8Array)) {
        const type = typeName(v);
        throw new EncodeError(`cannot encode ${type}: the extension of type ${ext.type} returned ${typeName(data)}, not a Uint8Array (its payload) or null (to decline it)`, type.replace(/^an? /, ""));
      }
      return writeExt(ext.type, data);
    }
  }
  return writeOther(v, depth);
}

/** Other objects than arrays, plain objects and Uint8Arrays: the mapping in README.md. */
function writeOther(v: object, depth: number): void {
  // mpk's own classes, by their brand: the same in every copy of mpk (brand.ts)
  switch (kindOf(v)) {
    case "Timestamp": {
      const ts = v as Timestamp;
      return writeExt(-1, encodeTimestampPayload(ts.sec, ts.nsec));
    }
    case "ExtData": {
      const ext = v as ExtData;
      return writeExt(ext.type, ext.data);
    }
    case "RawStr": return writeRawStr((v as RawStr).bytes);
    case "Float": {
      const f = v as Float;
      ensure(9);
      return writeFloat(f.value, f.bits === 32);
    }
    case "MapPairs": return writePairs((v as MapPairs).pairs, depth);
  }
  if (v instanceof Map) return writeMap(v, depth);
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) return refuse(v, "is an invalid Date (no instant to write)");
    const ts = Timestamp.fromDate(v);
    return writeExt(-1, encodeTimestampPayload(ts.sec, ts.nsec));
  }
  // a Set: an array of its values, in insertion order (it decodes as an Array)
  if (v instanceof Set) return writeArray([...(v as Set<unknown>)], depth);
  // bytes: bin (they decode as a Uint8Array)
  if (v instanceof ArrayBuffer) return writeBin(new Uint8Array(v));
  if (typeof SharedArrayBuffer !== "undefined" && v instanceof SharedArrayBuffer) return writeBin(new Uint8Array(v));
  if (v instanceof DataView) return writeBin(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  if (ArrayBuffer.isView(v)) {
    return refuse(v, "has no MessagePack form: as bin its element type and byte order would be lost (write `new Uint8Array(a.buffer, a.byteOffset, a.byteLength)` for its bytes, or register an extension)");
  }
  // boxed primitives: their primitive, as JSON.stringify does
  if (v instanceof Number || v instanceof String || v instanceof Boolean || (typeof BigInt !== "undefined" && v instanceof BigInt)) {
    return write((v as { valueOf(): unknown }).valueOf(), depth);
  }
  // an object that says how it is serialized (URL, Decimal, Luxon's DateTime...): what its
  // toJSON returns, as JSON.stringify does (one level deeper, so a toJSON returning its own
  // object again ends at maxDepth)
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return write(toJSON.call(v, ""), depth + 1);
  if (v instanceof Error || v instanceof RegExp || v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || v instanceof Symbol || isWeakRef(v)) {
    return refuse(v, "has no MessagePack form (convert it to data first, or register an extension)");
  }
  // A built-in or host object that names itself with Symbol.toStringTag (an iterator or a
  // generator, a Blob, Headers, URLSearchParams, an Intl formatter, a FinalizationRegistry...):
  // its contents live in internal slots, not in properties, so as a map it would come out `{}`.
  const tag = (v as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag];
  if (typeof tag === "string") {
    throw new EncodeError(`cannot encode ${/^[AEIO]/.test(tag) ? "an" : "a"} ${tag}: its contents are not in its properties, so it has no MessagePack form (convert it to data first, such as [...iterable], or register an extension)`, tag);
  }
  // any other object (a class instance): its own enumerable string keys, like a plain object
  return writePlainObject(v as Record<string, unknown>, depth, true);
}

/** WeakRef is ES2021, after the ES2020 this package targets. */
function isWeakRef(v: object): boolean {
  const WeakRefClass = (globalThis as { WeakRef?: abstract new (...args: never[]) => object }).WeakRef;
  return WeakRefClass !== undefined && v instanceof WeakRefClass;
}

function writePairs(pairs: Array<[unknown, unknown]>, depth: number): void {
  writeMapHeader(pairs.length);
  let i = 0;
  try {
    for (; i < pairs.length; i++) {
      const pair: unknown = pairs[i];
      // anything else would be written as nils or lose values
      if (!Array.isArray(pair) || pair.length !== 2) refuse(pair, "is not a [key, value] pair of a MapPairs");
      write(pair[0], depth + 1);
      write(pair[1], depth + 1);
    }
  } catch (e) {
    throw inside(e, `.pairs[${i}]`, pairs);
  }
}

/**
 * Whether Object.prototype has enumerable properties (something added some), checked once per
 * encode (about 10 ns): only then can `for…in` give keys of a plain object that are not its own.
 * Testing every key with hasOwnProperty is free while V8 folds the test away, but V8 stops doing
 * that once the loop has met objects of many shapes, and then it took 7% of twitter.json's time.
 */
let objectPrototypeEnumerable = false;

function hasEnumerable(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/** `inherits`: whether `for…in` may give inherited keys, which are skipped. */
function writePlainObject(obj: Record<string, unknown>, depth: number, inherits: boolean): void {
  if (cfg.sortKeys) {
    let keys = Object.keys(obj).sort();
    if (cfg.ignoreUndefined) keys = keys.filter((k) => obj[k] !== undefined);
    writeMapHeader(keys.length);
    for (const key of keys) {
      writeStr(key);
      try {
        write(obj[key], depth + 1);
      } catch (e) {
        throw inside(e, key, obj, true);
      }
    }
    return;
  }
  // One pass with for-in (no array of keys): reserve the 1-byte header of a fixmap, count, and
  // move the entries down in the rare case that the count needs a longer header.
  ensure(1);
  const head = pos - start; // relative: writing may move the output to a new chunk
  pos++;
  let n = 0;
  let key = "";
  const ignoreUndefined = cfg.ignoreUndefined;
  try {
    for (key in obj) {
      if (inherits && !Object.prototype.hasOwnProperty.call(obj, key)) continue;
      const value = obj[key];
      if (value === undefined && ignoreUndefined) continue;
      writeStr(key);
      // strings and numbers, most values, without write's dispatch
      if (typeof value === "string") writeStr(value);
      else if (typeof value === "number") writeNumber(value);
      else write(value, depth + 1);
      n++;
    }
  } catch (e) {
    throw inside(e, key, obj, true);
  }
  const at = start + head;
  if (n < 16) {
    target[at] = 0x80 | n;
    return;
  }
  const extra = n < 0x10000 ? 2 : 4;
  ensure(extra);
  const from = start + head; // again: ensure may have moved the output
  target.copyWithin(from + 1 + extra, from + 1, pos);
  pos += extra;
  // deferred bins among the entries move with them
  for (let i = deferAt.length - 1; i >= 0 && deferAt[i]! > head; i--) deferAt[i] = deferAt[i]! + extra;
  if (extra === 2) {
    target[from] = 0xde;
    target[from + 1] = n >> 8;
    target[from + 2] = n;
  } else {
    target[from] = 0xdf;
    view.setUint32(from + 1, n);
  }
}

function writeMap(map: Map<unknown, unknown>, depth: number): void {
  let step = "";
  try {
    writeMapEntries(map, depth, (key, isKey) => (step = mapKeyStep(key) + (isKey ? "(key)" : "")));
  } catch (e) {
    throw inside(e, step, map);
  }
}

/** Writes a Map; `at` is told each entry's key before its key and before its value is written. */
function writeMapEntries(map: Map<unknown, unknown>, depth: number, at: (key: unknown, isKey: boolean) => void): void {
  writeMapHeader(map.size);
  if (!cfg.sortKeys) {
    for (const [key, value] of map) {
      at(key, true);
      write(key, depth + 1);
      at(key, false);
      write(value, depth + 1);
    }
    return;
  }
  const entries = [...map];
  if (entries.every(([key]) => typeof key === "string")) {
    entries.sort(([a], [b]) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0));
    for (const [key, value] of entries) {
      at(key, true);
      write(key, depth + 1);
      at(key, false);
      write(value, depth + 1);
    }
    return;
  }
  // mixed key types: order by the keys' encoded bytes (each key whole in the buffer: no deferred bins)
  const wasDeferring = deferring;
  deferring = false;
  let encodedKeys: Uint8Array[] = [];
  try {
    encodedKeys = entries.map(([key]) => {
      at(key, true);
      const from = pos - start; // relative: writing may move the output to a new chunk
      write(key, depth + 1);
      const bytes = target.slice(start + from, pos);
      pos = start + from;
      return bytes;
    });
  } finally {
    deferring = wasDeferring;
  }
  const order = entries.map((_, i) => i).sort((a, b) => compareBytes(encodedKeys[a]!, encodedKeys[b]!));
  for (const i of order) {
    const bytes = encodedKeys[i]!;
    ensure(bytes.length);
    target.set(bytes, pos);
    pos += bytes.length;
    at(entries[i]![0], false);
    write(entries[i]![1], depth + 1);
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

brand(Encoder, "Encoder");
