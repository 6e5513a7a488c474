import { brand } from "./brand.js";
import { DecodeError, type DecodeErrorKind } from "./DecodeError.js";
import { ExtData } from "./ExtData.js";
import type { ExtensionCodec } from "./ExtensionCodec.js";
import { Float } from "./Float.js";
import { DECODER_OPTIONS, decodeLimits, type DecoderOptions } from "./limits.js";
import { checkOptions } from "./utils/options.js";

export type { DecoderOptions } from "./limits.js";
import { MapPairs } from "./MapPairs.js";
import { RawStr } from "./RawStr.js";
import { decodeTimestampPayload, TIMESTAMP_EXT_TYPE } from "./Timestamp.js";
import { decodeUtf8, decodeUtf8Strict, NODE_SLICE_MIN } from "./utils/utf8.js";
import { toBytes, type BinaryInput } from "./utils/bytes.js";
import { KEY_MAX_BYTES, KEY_SLOTS, keyFound, lookupKeyGuessing, lookupStr } from "./keyCache.js";
import { ValueScanner } from "./ValueScanner.js";
import { ASCII_STR_MAX, asciiStr } from "./asciiStr.js";
import { batch, BATCH_MIN_BYTES, BATCH_MIN_INPUT, batchStrs, endBatches, WINDOW } from "./strBatch.js";


const INT64_NUMBER = 0;
const INT64_BIGINT = 1;
const INT64_AUTO = 2;
const UTF8_REPLACE = 0;
const UTF8_STRICT = 1;
const UTF8_RAW = 2;

/**
 * Strings longer than this go to TextDecoder, shorter ones through the hand-written decoder.
 * Measured with bench/strings.ts (Node 20 and Chromium): below ~ 48 bytes the call into
 * TextDecoder costs more than the loop.
 */
const TEXT_DECODER_THRESHOLD = 48;

// The reader's state lives in module variables rather than on `this`: V8 reads them faster in the
// hot loop. A call installs its decoder's options as one object (Config) and changes the variables
// that Cursor names; a nested decode (an ext decoder that decodes) saves and restores those.
let buf: Uint8Array = new Uint8Array(0);
let view: DataView = new DataView(buf.buffer);
let pos = 0;
let end = 0;
let busy = false;
/** True while the outermost decode reads strs from the str batch; batchNext is the next entry. */
let batching = false;
let batchNext = 0;
/** The outermost decode of a large input may start a str batch. */
let batchEligible = false;
/** Where the last long str decoded on its own began. */
let lastLongStr = 0;
/**
 * A long str this close after the one before it starts a batch: bytes between their payloads'
 * starts, or in the str batch's window mode (strBatch.ts, which takes strs of up to 4 KiB) between
 * the end of the one before and the start of this one.
 */
const BATCH_PAIR_DISTANCE = 512;
/** In stream mode truncation throws this instead of a DecodeError: it is expected, and cheap. */
export const TRUNCATED: unique symbol = Symbol("truncated");
let streamMode = false;
/** The depth (enclosing containers) of the container head read last. */
let deepestContainer = 0;
/**
 * Elements that the open containers still owe after the value being read (a map owes two per
 * pair): each will take at least one byte, so a container of n elements can be filled only if
 * n + owed <= end - pos. Every container loop sets it before reading an element that may be a
 * container; only presizing reads it. Checking each count alone is not enough: 1,000 nested
 * array 32 heads each declaring as many elements as there are bytes left pass that check one by
 * one and, presized, would claim 1,000 times the input.
 */
let owed = 0;

/**
 * A decoder's options, resolved once by its constructor. A call installs the whole object
 * (`cfg`), so an option is described here and nowhere else.
 */
class Config {
  readonly maxDepth: number;
  readonly maxStr: number;
  readonly maxBin: number;
  readonly maxExt: number;
  readonly maxArray: number;
  readonly maxMap: number;
  readonly maxNumberKeys: number;
  /** Longest key read through the key cache; longer ones go through read(), which checks the limit. */
  readonly keyMax: number;
  readonly mapAsMap: boolean;
  readonly int64Mode: number;
  readonly utf8Mode: number;
  readonly exact: boolean;
  /** bin, ext and RawStr payloads are copies (false: views into the input, with zeroCopy). */
  readonly copyBytes: boolean;
  readonly timestampAsDate: boolean;
  readonly extDecoders: ExtensionCodec["decoders"] | undefined;

  constructor(options: DecoderOptions) {
    checkOptions(options, DECODER_OPTIONS, "decoder");
    const limits = decodeLimits(options);
    this.maxDepth = limits.depth;
    this.maxStr = limits.str;
    this.maxBin = limits.bin;
    this.maxExt = limits.ext;
    this.maxArray = limits.array;
    this.maxMap = limits.map;
    this.maxNumberKeys = limits.numberKeys;
    this.keyMax = Math.min(KEY_MAX_BYTES, limits.str);
    this.exact = options.exact ?? false;
    this.copyBytes = options.zeroCopy !== true;
    this.mapAsMap = options.map === "Map";
    this.int64Mode = options.int64 === "number" ? INT64_NUMBER : options.int64 === "bigint" ? INT64_BIGINT : INT64_AUTO;
    this.utf8Mode = options.utf8 === "strict" ? UTF8_STRICT : options.utf8 === "raw" ? UTF8_RAW : UTF8_REPLACE;
    this.timestampAsDate = !this.exact && options.timestamp !== "Timestamp";
    this.extDecoders = options.extensions?.decoders;
  }
}

/** The options of the call in progress. */
let cfg = new Config({});

export class Decoder {
  private readonly config: Config;

  constructor(options: DecoderOptions = {}) {
    this.config = new Config(options);
  }

  /** Decodes exactly one value; bytes after it are a trailing_bytes error. */
  decode(input: BinaryInput): unknown {
    const saved = busy ? save() : null;
    busy = true;
    try {
      this.begin(toBytes(input), 0);
      // the str batch is shared module state: only the outermost decode uses it, and only once
      // the input has shown some strs worth batching (a document of numbers does not pay the pass)
      if (!saved && end >= BATCH_MIN_INPUT) {
        batchEligible = true;
        lastLongStr = -BATCH_PAIR_DISTANCE - 1;
      }
      const value = read(0);
      if (pos < end) fail("trailing_bytes", pos);
      return value;
    } catch (e) {
      throw overflowAsDepthLimit(e, 0);
    } finally {
      if (!saved) {
        batchEligible = false;
        if (batching) {
          batching = false;
          endBatches();
        }
      }
      if (saved) restore(saved);
      else busy = false;
    }
  }

  /** Decodes the values laid one after another in the input. */
  *decodeMulti(input: BinaryInput): Generator<unknown, void, undefined> {
    const bytes = toBytes(input);
    let at = 0;
    while (at < bytes.length) {
      const [value, next] = this.decodeAt(bytes, at);
      at = next;
      yield value;
    }
  }

  /**
   * @internal Decodes one value starting at bytes[start]; returns it and the offset after it.
   * With `stream` set, truncation throws TRUNCATED instead of a DecodeError.
   */
  decodeAt(bytes: Uint8Array, start: number, stream = false): [unknown, number] {
    const saved = busy ? save() : null;
    busy = true;
    try {
      this.begin(bytes, start);
      streamMode = stream;
      const value = read(0);
      return [value, pos];
    } catch (e) {
      throw overflowAsDepthLimit(e, start);
    } finally {
      if (saved) restore(saved);
      else busy = false;
    }
  }

  private begin(bytes: Uint8Array, start: number): void {
    if (bytes !== buf) {
      buf = bytes;
      view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    pos = start;
    end = bytes.length;
    owed = 0;
    streamMode = false;
    batching = false; // a nested decode must not read the outer input's str batch
    batchEligible = false;
    cfg = this.config;
  }
}

/**
 * What a call changes, by name: a decode started while another is in progress (an extension's
 * decode calling decode) saves the one in progress and restores it afterwards. Every module
 * variable of this file is either here or listed in test/state.test.ts as scratch that a nested
 * call may change (the test fails otherwise).
 */
interface Cursor {
  cfg: Config;
  buf: Uint8Array;
  view: DataView;
  pos: number;
  end: number;
  owed: number;
  streamMode: boolean;
  batching: boolean;
  batchNext: number;
  batchEligible: boolean;
}

function save(): Cursor {
  return { cfg, buf, view, pos, end, owed, streamMode, batching, batchNext, batchEligible };
}

function restore(c: Cursor): void {
  ({ cfg, buf, view, pos, end, owed, streamMode, batching, batchNext, batchEligible } = c);
}

/**
 * The JavaScript stack ran out before maxDepth was reached (each level of nesting is a few frames
 * of recursion): that is a depth limit too, the one the stack sets. Reported as depth_limit at the
 * first container head (from `start`, in byte order) as deep as the deepest one entered, found by
 * the ValueScanner, which does not recurse. Other errors pass through.
 */
function overflowAsDepthLimit(e: unknown, start: number): unknown {
  if (!(e instanceof RangeError) || !/call stack|recursion/i.test(e.message)) return e;
  const scanner = new ValueScanner({ maxDepth: deepestContainer, maxStrLength: cfg.maxStr, maxBinLength: cfg.maxBin, maxExtLength: cfg.maxExt, maxArrayLength: cfg.maxArray, maxMapLength: cfg.maxMap, maxNumberKeys: cfg.maxNumberKeys, exact: cfg.exact });
  try {
    scanner.scan(buf.subarray(start, end), end - start);
  } catch (found) {
    if (found instanceof DecodeError) return new DecodeError(found.kind, start + found.offset, buf[start + found.offset]);
  }
  return e;
}

function fail(kind: DecodeErrorKind, offset: number): never {
  throw new DecodeError(kind, offset, offset < end ? buf[offset] : undefined);
}

/** The token at `head` does not fit in the input (or, at `end`, a container still owes elements). */
function truncated(head: number): never {
  if (streamMode) throw TRUNCATED;
  throw new DecodeError("truncated", head, head < end ? buf[head] : undefined);
}

/** Reads one value; `depth` counts the containers enclosing it. */
function read(depth: number): unknown {
  if (pos >= end) return truncated(end); // a container still owes elements
  const head = pos;
  const h = buf[pos++]!;
  if (h < 0xc0) {
    if (h < 0x80) return h; // positive fixint 0xxxxxxx: 0..127
    if (h < 0x90) return readMap(head, h & 0x0f, depth); // fixmap 1000xxxx
    if (h < 0xa0) return readArray(head, h & 0x0f, depth); // fixarray 1001xxxx
    return readStr(head, h & 0x1f); // fixstr 101xxxxx
  }
  if (h >= 0xe0) return h - 0x100; // negative fixint 111xxxxx: -32..-1
  switch (h) {
    case 0xc0: return null;
    case 0xc1: return fail("invalid_byte", head); // never used
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xc4: return readBin(head, len8(head)); // bin 8
    case 0xc5: return readBin(head, len16(head)); // bin 16
    case 0xc6: return readBin(head, len32(head)); // bin 32
    case 0xc7: { // ext 8: length, type, payload
      if (pos + 2 > end) return truncated(head);
      const n = buf[pos]!;
      const type = (buf[pos + 1]! << 24) >> 24;
      pos += 2;
      return readExt(head, type, n);
    }
    case 0xc8: { // ext 16
      if (pos + 3 > end) return truncated(head);
      const n = (buf[pos]! << 8) | buf[pos + 1]!;
      const type = (buf[pos + 2]! << 24) >> 24;
      pos += 3;
      return readExt(head, type, n);
    }
    case 0xc9: { // ext 32
      if (pos + 5 > end) return truncated(head);
      const n = view.getUint32(pos);
      const type = (buf[pos + 4]! << 24) >> 24;
      pos += 5;
      return readExt(head, type, n);
    }
    case 0xca: { // float 32
      if (pos + 4 > end) return truncated(head);
      const v = view.getFloat32(pos);
      pos += 4;
      return cfg.exact ? new Float(v, 32) : v;
    }
    case 0xcb: { // float 64
      if (pos + 8 > end) return truncated(head);
      const v = view.getFloat64(pos);
      pos += 8;
      return cfg.exact ? new Float(v, 64) : v;
    }
    case 0xcc: // uint 8
      if (pos + 1 > end) return truncated(head);
      return buf[pos++];
    case 0xcd: { // uint 16
      if (pos + 2 > end) return truncated(head);
      const v = (buf[pos]! << 8) | buf[pos + 1]!;
      pos += 2;
      return v;
    }
    case 0xce: { // uint 32
      if (pos + 4 > end) return truncated(head);
      const v = view.getUint32(pos);
      pos += 4;
      return v;
    }
    case 0xcf: { // uint 64
      if (pos + 8 > end) return truncated(head);
      const hi = view.getUint32(pos);
      const lo = view.getUint32(pos + 4);
      pos += 8;
      return uint64(hi, lo);
    }
    case 0xd0: // int 8
      if (pos + 1 > end) return truncated(head);
      return (buf[pos++]! << 24) >> 24;
    case 0xd1: { // int 16
      if (pos + 2 > end) return truncated(head);
      const v = (((buf[pos]! << 8) | buf[pos + 1]!) << 16) >> 16;
      pos += 2;
      return v;
    }
    case 0xd2: { // int 32
      if (pos + 4 > end) return truncated(head);
      const v = view.getInt32(pos);
      pos += 4;
      return v;
    }
    case 0xd3: { // int 64
      if (pos + 8 > end) return truncated(head);
      const hi = view.getInt32(pos);
      const lo = view.getUint32(pos + 4);
      pos += 8;
      return int64(hi, lo);
    }
    case 0xd4: return readFixExt(head, 1); // fixext 1
    case 0xd5: return readFixExt(head, 2); // fixext 2
    case 0xd6: return readFixExt(head, 4); // fixext 4
    case 0xd7: return readFixExt(head, 8); // fixext 8
    case 0xd8: return readFixExt(head, 16); // fixext 16
    case 0xd9: return readStr(head, len8(head)); // str 8
    case 0xda: return readStr(head, len16(head)); // str 16
    case 0xdb: return readStr(head, len32(head)); // str 32
    case 0xdc: return readArray(head, len16(head), depth); // array 16
    case 0xdd: return readArray(head, len32(head), depth); // array 32
    case 0xde: return readMap(head, len16(head), depth); // map 16
    default: return readMap(head, len32(head), depth); // 0xdf map 32
  }
}

function len8(head: number): number {
  if (pos + 1 > end) return truncated(head);
  return buf[pos++]!;
}

function len16(head: number): number {
  if (pos + 2 > end) return truncated(head);
  const n = (buf[pos]! << 8) | buf[pos + 1]!;
  pos += 2;
  return n;
}

function len32(head: number): number {
  if (pos + 4 > end) return truncated(head);
  const n = view.getUint32(pos);
  pos += 4;
  return n;
}

function uint64(hi: number, lo: number): number | bigint {
  // below 2^53 every value is exact as a number
  if (cfg.int64Mode === INT64_NUMBER || (cfg.int64Mode === INT64_AUTO && hi < 0x200000)) return hi * 0x1_0000_0000 + lo;
  const big = (BigInt(hi) << 32n) | BigInt(lo);
  if (cfg.int64Mode === INT64_BIGINT) return big;
  const n = Number(big);
  return BigInt(n) === big ? n : big;
}

function int64(hi: number, lo: number): number | bigint {
  if (cfg.int64Mode === INT64_NUMBER || (cfg.int64Mode === INT64_AUTO && hi >= -0x200000 && hi < 0x200000)) {
    return hi * 0x1_0000_0000 + lo;
  }
  const big = (BigInt(hi) << 32n) | BigInt(lo);
  if (cfg.int64Mode === INT64_BIGINT) return big;
  const n = Number(big);
  return BigInt(n) === big ? n : big;
}

function readStr(head: number, n: number): unknown {
  if (n > cfg.maxStr) return fail("length_limit", head);
  if (n > end - pos) return truncated(head);
  const start = pos;
  pos += n;
  if (n >= BATCH_MIN_BYTES) {
    if (batching) {
      // entries before this str belong to keys taken from the key cache
      while (batchNext < batch.count && batch.starts[batchNext]! < start) batchNext++;
      if (batchNext < batch.count && batch.starts[batchNext] === start) {
        // valid UTF-8: the same in every utf8 mode
        const at = batch.offsets[batchNext]!;
        const stop = batch.ends[batchNext++]!;
        return at >= 0 ? batch.text.slice(at, stop) : batch.otherText.slice(-1 - at, stop);
      }
    }
    // Batch the rest once two long strs come close together (past where the last pass stopped,
    // if there was one): a document of numbers with a name here and there does not pay a pass.
    if (batchEligible || (batching && start >= batch.scannedTo)) {
      if (start - lastLongStr <= BATCH_PAIR_DISTANCE) startBatch();
      else lastLongStr = WINDOW ? pos : start;
    }
  }
  return decodeStrAt(head, start, n);
}

/**
 * Batches the strs after the one just read (pos, the end of its payload, is a token boundary). The
 * pass stops where long strs become sparse (strBatch.ts).
 */
function startBatch(): void {
  batchEligible = false;
  batchStrs(buf, view, pos, end);
  batchNext = 0;
  batching = true;
}

/** The str of buf[start, start + n), whose head is at `head`, decoded on its own. */
function decodeStrAt(head: number, start: number, n: number): unknown {
  // short strs repeat like keys do: the key cache returns the string made for the same bytes before
  if (n < BATCH_MIN_BYTES) {
    const cached = lookupStr(buf, view, start, n);
    if (cached !== undefined) return cached;
  } else if (n <= ASCII_STR_MAX && n < NODE_SLICE_MIN) {
    // (in Node, from NODE_SLICE_MIN bytes on, utf8Slice makes the string faster: utils/utf8.ts)
    const ascii = asciiStr(buf, start, n);
    if (ascii !== undefined) return ascii;
  }
  const stop = start + n;
  if (cfg.utf8Mode === UTF8_REPLACE) return decodeUtf8(buf, start, stop, TEXT_DECODER_THRESHOLD, false);
  const s = decodeUtf8Strict(buf, start, stop, TEXT_DECODER_THRESHOLD);
  if (s !== undefined) return s;
  if (cfg.utf8Mode === UTF8_STRICT) return fail("invalid_utf8", head);
  return new RawStr(cfg.copyBytes ? buf.slice(start, stop) : buf.subarray(start, stop));
}

function readBin(head: number, n: number): Uint8Array {
  if (n > cfg.maxBin) return fail("length_limit", head);
  if (n > end - pos) return truncated(head);
  pos += n;
  // buf is a plain Uint8Array (toBytes views a Buffer as one), so slice copies
  return cfg.copyBytes ? buf.slice(pos - n, pos) : buf.subarray(pos - n, pos);
}

function readFixExt(head: number, n: number): unknown {
  if (pos + 1 > end) return truncated(head);
  const type = (buf[pos++]! << 24) >> 24;
  return readExt(head, type, n);
}

function readExt(head: number, type: number, n: number): unknown {
  if (n > cfg.maxExt) return fail("length_limit", head);
  if (n > end - pos) return truncated(head);
  const start = pos;
  pos += n;
  if (type === TIMESTAMP_EXT_TYPE) {
    const ts = decodeTimestampPayload(view, start, n);
    if (ts === null) return fail("invalid_timestamp", head);
    return cfg.timestampAsDate ? (ts.toDate() ?? ts) : ts;
  }
  const data = cfg.copyBytes ? buf.slice(start, pos) : buf.subarray(start, pos);
  const decodeExt = cfg.extDecoders?.[type + 128];
  return decodeExt ? decodeExt(data, type) : new ExtData(type, data);
}

function readArray(head: number, n: number, depth: number): unknown[] {
  if (n > cfg.maxArray) return fail("length_limit", head);
  if (depth >= cfg.maxDepth) return fail("depth_limit", head);
  if (n > end - pos) return truncated(head); // every element takes at least one byte
  deepestContainer = depth; // for overflowAsDepthLimit: the last one entered is the deepest
  const d = depth + 1;
  // Short arrays as literals: they come out packed (new Array(n) is holey), which is cheaper to
  // make and to read; pairs and triples (coordinates, table rows) are the common case.
  // (`owed` is set before each element but the last, which owes what the array itself owed)
  const o = owed;
  switch (n) {
    case 0: return [];
    case 1: return [read(d)];
    case 2: {
      // a pair of float 64s (coordinates) read here: the doubles go into the array unboxed
      if (buf[pos] === 0xcb && buf[pos + 9] === 0xcb && pos + 18 <= end && !cfg.exact) {
        const x = view.getFloat64(pos + 1);
        const y = view.getFloat64(pos + 10);
        pos += 18;
        return [x, y];
      }
      owed = o + 1;
      const a = read(d);
      owed = o;
      return [a, read(d)];
    }
    case 3: {
      owed = o + 2;
      const a = read(d);
      owed = o + 1;
      const b = read(d);
      owed = o;
      return [a, b, read(d)];
    }
    case 4: {
      owed = o + 3;
      const a = read(d);
      owed = o + 2;
      const b = read(d);
      owed = o + 1;
      const c = read(d);
      owed = o;
      return [a, b, c, read(d)];
    }
  }
  // Arrays of ints get a loop of their own (their own type feedback, too: sharing one loop with
  // arrays of containers made those 10-20% slower in Chromium).
  const h = buf[pos]!;
  if (h < 0x80 || (h >= 0xcc && h <= 0xd3)) return readIntArray(n, d);
  if (h === 0x92 && buf[pos + 1] === 0xcb) return readPairArray(n, d);
  if (h === 0xcb || h === 0xca) return readFloatArray(n, d);
  const arr = newArray(n);
  const last = o + n - 1;
  for (let i = 0; i < n; i++) {
    owed = last - i;
    arr[i] = read(d);
  }
  return arr;
}

/**
 * The array for a container of n elements: presized when the bytes left can hold its elements and
 * everything the open containers owe, else empty and grown as elements come (the input is then
 * cut short, and decoding fails where spec/README.md says, having built no more than the bytes
 * it read). Either way nothing is allocated beyond what the input can fill.
 */
function newArray<T>(n: number): T[] {
  return n + owed <= end - pos ? new Array<T>(n) : [];
}

/**
 * An array of more than four elements that starts with a pair of float 64s (a ring of coordinates):
 * those pairs are read here, without two calls each.
 */
function readPairArray(n: number, d: number): unknown[] {
  const arr = newArray(n);
  const last = owed + n - 1;
  // the pairs are containers at depth d: the fast path only where the general one accepts them (their
  // length, 2, is within the array limit: the enclosing array's, over 4, passed it)
  const fast = d < cfg.maxDepth && !cfg.exact;
  if (fast) deepestContainer = d;
  const b = buf;
  const v = view;
  let p = pos; // in a register while no call can move it, as in readIntArray
  const stop19 = end - 19;
  for (let i = 0; i < n; i++) {
    if (fast && b[p] === 0x92 && b[p + 1] === 0xcb && b[p + 10] === 0xcb && p <= stop19) {
      const x = v.getFloat64(p + 2);
      const y = v.getFloat64(p + 11);
      p += 19;
      arr[i] = [x, y];
    } else {
      pos = p;
      owed = last - i;
      arr[i] = read(d);
      p = pos;
    }
  }
  pos = p;
  return arr;
}

/**
 * An array of more than four elements that starts with a float (vertices, normals, samples): the
 * floats are read here, without a call into read() each. Through read() every float came back as
 * a boxed number (a heap allocation) before the array unboxed it again. Measured on rb_model3d
 * (30,000 float 64s and 27,000 ints): see js/bench/README.md, session 9. In exact mode floats
 * are Float objects, made by read() (the general path, which this falls back to element by
 * element for anything that is not a whole float).
 */
function readFloatArray(n: number, d: number): unknown[] {
  const arr = newArray(n);
  const last = owed + n - 1;
  const fast = !cfg.exact;
  const b = buf;
  const v = view;
  let p = pos; // in a register while no call can move it, as in readIntArray
  const stop9 = end - 9;
  for (let i = 0; i < n; i++) {
    const h = b[p]!;
    if (h === 0xcb && fast && p <= stop9) {
      arr[i] = v.getFloat64(p + 1);
      p += 9;
    } else if (h === 0xca && fast && p <= stop9 + 4) {
      arr[i] = v.getFloat32(p + 1);
      p += 5;
    } else {
      pos = p;
      owed = last - i;
      arr[i] = read(d);
      p = pos;
    }
  }
  pos = p;
  return arr;
}

/** An array of more than four elements that starts with an int: the ints are read here, without a call. */
function readIntArray(n: number, d: number): unknown[] {
  const arr = newArray(n);
  const last = owed + n - 1;
  const b = buf;
  const v = view;
  // the position in a local (a register) while no call can move it; pos is written back around read()
  let p = pos;
  const stop5 = end - 5;
  for (let i = 0; i < n; i++) {
    // ints, the common scalar of long arrays, without the call into read()
    const h = b[p]!;
    if (h < 0x80) {
      arr[i] = h;
      p++;
    } else if (h >= 0xcd && h <= 0xd2 && h !== 0xcf && h !== 0xd0 && p <= stop5) {
      if (h === 0xcd) {
        arr[i] = (b[p + 1]! << 8) | b[p + 2]!;
        p += 3;
      } else if (h === 0xce) {
        arr[i] = v.getUint32(p + 1);
        p += 5;
      } else if (h === 0xd1) {
        arr[i] = (((b[p + 1]! << 8) | b[p + 2]!) << 16) >> 16;
        p += 3;
      } else {
        arr[i] = v.getInt32(p + 1);
        p += 5;
      }
    } else {
      pos = p;
      owed = last - i;
      arr[i] = read(d);
      p = pos;
    }
  }
  pos = p;
  return arr;
}

function readMap(head: number, n: number, depth: number): unknown {
  if (n > cfg.maxMap) return fail("length_limit", head);
  if (depth >= cfg.maxDepth) return fail("depth_limit", head);
  if (n * 2 > end - pos) return truncated(head); // every key and value takes at least one byte
  deepestContainer = depth;
  if (cfg.exact) return readPairs(n, depth + 1);
  if (cfg.mapAsMap) return readIntoMap(head, new Map(), n, depth + 1, 0);
  return readObject(head, n, depth + 1);
}

// Maps become objects made by this constructor: their prototype is Object.prototype, so they are
// plain objects, but V8 gives objects from one constructor room for more properties in the object
// itself than a {} literal has (slack tracking), which makes adding a dozen keys cheaper.
function PlainObject(): void {}
PlainObject.prototype = Object.prototype;

function readObject(head: number, n: number, depth: number): unknown {
  const obj = new (PlainObject as unknown as new () => Record<string, unknown>)();
  let i = 0;
  let key: unknown;
  let after = firstKeyIndex(depth);
  // what the open containers owe after this pair's value (see `owed`)
  let rest = owed + 2 * n;
  for (; i < n; i++) {
    rest -= 2;
    owed = rest + 1;
    key = readKey(depth, after);
    after = keyAfter; // before the value: nested maps set it too
    if (typeof key !== "string") break;
    owed = rest;
    const value = read(depth);
    if (key === "__proto__") {
      // a plain key like any other: defining it never reaches Object.prototype's setter
      Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
    } else {
      obj[key] = value;
    }
  }
  // a key that is not a str: the rest goes into a Map
  return i === n ? obj : readIntoMap(head, objectToMap(obj), n, depth, i, key, rest);
}

/**
 * A map key: short fixstr keys go through the key cache, anything else through read(). `after`
 * says which guess to try first (see `follows`); afterwards `keyAfter` is the index for the key
 * that follows this one.
 */
function readKey(depth: number, after: number): unknown {
  if (pos < end) {
    const h = buf[pos]!;
    const n = h - 0xa0;
    if (n >= 0 && n <= cfg.keyMax && pos + 1 + n <= end) {
      const start = pos + 1;
      const key = lookupKeyGuessing(buf, view, start, n, follows[after]!);
      if (key !== undefined) {
        const slot = keyFound.slot;
        follows[after] = slot;
        keyAfter = slot;
        pos = start + n;
        return key;
      }
    }
  }
  keyAfter = NO_KEY;
  return read(depth);
}

/**
 * Key cache slots of the key that followed each key last time (records repeat their keys in
 * order, and so do the objects of one kind in a mixed document): follows[slot of a key] is the
 * guess for the next key of the same map; follows[KEY_SLOTS + depth % 64] for a map's first key.
 */
const FIRST_KEYS = 64;
const NO_KEY = KEY_SLOTS + FIRST_KEYS; // after a key that is not in the cache
const follows = new Uint16Array(KEY_SLOTS + FIRST_KEYS + 1);
let keyAfter = NO_KEY;

/** The `after` index for the first key of a map at this depth. */
function firstKeyIndex(depth: number): number {
  return KEY_SLOTS + (depth & (FIRST_KEYS - 1));
}

function objectToMap(obj: Record<string, unknown>): Map<unknown, unknown> {
  const map = new Map<unknown, unknown>();
  for (const k of Object.keys(obj)) map.set(k, obj[k]);
  return map;
}

/**
 * Reads pairs done..n-1 of the map whose head is at `head` into `map`. With `firstKey` (and
 * `rest`, what is owed after its value), pair `done`'s key has been read already.
 *
 * Number and bigint keys count against maxNumberKeys: V8 hashes them in a Map without a seed, so
 * keys crafted to share their hash's low bits make every insertion walk one long chain (measured
 * in Node 20: 4096 such int32 keys took 37 ms against 0.3 ms for random ones, 65536 about 5.5 s;
 * the time grows with the square of the count). The limit bounds that square.
 */
function readIntoMap(head: number, map: Map<unknown, unknown>, n: number, depth: number, done: number, firstKey?: unknown, rest = owed + 2 * n): Map<unknown, unknown> {
  let i = done;
  let numberKeys = 0;
  if (done > 0 || firstKey !== undefined) {
    if (isNumberKey(firstKey) && ++numberKeys > cfg.maxNumberKeys) fail("length_limit", head);
    owed = rest;
    map.set(firstKey, read(depth));
    i++;
  }
  let after = firstKeyIndex(depth);
  for (; i < n; i++) {
    rest -= 2;
    owed = rest + 1;
    const key = readKey(depth, after);
    after = keyAfter;
    if (isNumberKey(key) && ++numberKeys > cfg.maxNumberKeys) fail("length_limit", head);
    owed = rest;
    map.set(key, read(depth));
  }
  return map;
}

function isNumberKey(key: unknown): boolean {
  const t = typeof key;
  return t === "number" || t === "bigint";
}

function readPairs(n: number, depth: number): MapPairs {
  // presized as newArray does, charging two elements a pair
  const pairs: Array<[unknown, unknown]> = 2 * n + owed <= end - pos ? new Array(n) : [];
  let rest = owed + 2 * n;
  for (let i = 0; i < n; i++) {
    rest -= 2;
    owed = rest + 1;
    const key = read(depth);
    owed = rest;
    pairs[i] = [key, read(depth)];
  }
  return new MapPairs(pairs);
}

brand(Decoder, "Decoder");
