// The str batch: before a one-shot decode of a large input, one linear pass over its tokens finds
// every str of at least BATCH_MIN_BYTES bytes, copies their payloads end to end into one
// buffer and turns that into a single string with one TextDecoder call (in Node, window mode
// below: the ASCII ones are not copied but checked, and sliced from the input made a string). The decoder then takes
// each of those strs as a slice of that string, in the same order. One platform call instead of
// one per string, and slices are cheap; this is how pure JavaScript keeps up with JSON.parse on
// string-heavy documents (measured with js/bench, Node 20 and Chromium).
// Non-ASCII strs are batched when every batched payload turns out to be valid UTF-8 (no U+FFFD
// in the result), else the pass runs again for ASCII strs only.
// Slices may keep the batch string alive as long as any of them lives (at most the input's size; in window
// mode at most WINDOW_MAX_SPAN bytes a pass).
// The pass never throws: on anything malformed it stops, and the decoder reports the error.

/**
 * strs shorter than this go through the key cache instead (keyCache.ts, which holds up to 32): short
 * values repeat as keys do (60-85% of them in the bench's documents), and a cache hit costs less
 * than copying them here. Measured with js/bench in Node and Chromium: 17 is 1.06-1.16x faster
 * than 9 on records, twitter and sample-large; 25 is slower than 17 by 1.1-1.3x.
 */
export const BATCH_MIN_BYTES = 17;
/**
 * strs longer than this are not batched: copying one into the batch costs about what decoding it
 * does, and the call it saves is small next to its length. Measured with js/bench/ab.mjs and
 * ab-browser.mjs on "ascii strings (0-4 KiB)": 3.7x faster in Node (where they then go to
 * utf8Slice) and 1.8x in Chromium (TextDecoder one by one); records, twitter.json, citm_catalog
 * and sample-large unchanged (0.9-1.1x).
 */
export const BATCH_MAX_BYTES = 512;
/**
 * A pass stops before its ASCII text would pass this many bytes (its other text: half as many, as
 * that string takes two bytes a unit), and a later close pair starts another. V8 allocates a string
 * of more than 128 KiB in its large-object space, which costs several times more per byte: in
 * Node 20 (CPU time, busy machine, medians of 21) a one-byte string of 96 KiB took 15-20 µs to make
 * and one of 128 KiB 110-130 µs, from TextDecoder and Buffer methods alike. Measured on
 * c_strings (1,024 ASCII strs of 0-1023 bytes, whose batch had grown to about 127 KiB).
 */
export const BATCH_MAX_TEXT = 64 * 1024;
/**
 * In window mode (below), ASCII strs up to this many bytes are batched; longer ones go to utf8Slice
 * one by one. Node 20, same process, CPU time, loaded machine: strs of 3000 bytes decoded 1.1-1.25x
 * faster through the window than through utf8Slice, and 1024 or 2048 here did no better than 4096
 * on c_strings and js_ascii_strings (within the noise, 10-15%).
 */
export const WINDOW_MAX_BYTES = 4096;
/**
 * A window mode pass stops before its window would pass this many bytes: 32 KiB decoded c_strings
 * 1.05-1.1x faster than 64 KiB (same measurement), 16 KiB no better than 32.
 */
export const WINDOW_MAX_SPAN = 32 * 1024;
/** inputs shorter than this are not batched (the pass would cost more than it saves) */
export const BATCH_MIN_INPUT = 1024;
/**
 * The pass stops this many bytes after the last str it batched: in a document of numbers with a few
 * long names, each name then costs a pass over at most this much, not over the rest of the input.
 */
export const BATCH_MAX_GAP = 2048;

let asciiScratch = new Uint8Array(0);
let asciiScratchView = new DataView(asciiScratch.buffer);
let otherScratch = new Uint8Array(0);
let otherScratchView = new DataView(otherScratch.buffer);
/**
 * The batch: what the last pass found, read by the decoder (one object, owned and written by this
 * module only).
 */
class StrBatch {
  /** payload offsets in the input of the batched strs, in input order */
  starts = new Int32Array(0);
  /** where each one starts in its text; non-ASCII ones are stored as -1 - offset in otherText */
  offsets = new Int32Array(0);
  /** where each one ends in its text */
  ends = new Int32Array(0);
  count = 0;
  /** where the last pass stopped (a token boundary, or the end of the input) */
  scannedTo = 0;
  /** the ASCII strs (a one-byte string: slices of it stay one-byte) */
  text = "";
  /** the other strs (two-byte), kept apart so that ASCII slices do not become two-byte strings */
  otherText = "";
  /** whether the last pass was a counted one (see COUNTED) whose strs all proved ASCII */
  counted = false;
}

export const batch = new StrBatch();

/**
 * Window mode, where Node's latin1Slice is there: the ASCII strs are not copied anywhere. The pass
 * only checks that their bytes are ASCII (four at a time, through a Uint32Array over the input's
 * aligned words), and the batch's ASCII text is the input itself from the first batched payload to
 * the end of the last one (at most WINDOW_MAX_SPAN bytes), made a string by one latin1Slice (one
 * unit per byte, whatever the byte: the heads and other tokens between the strs come along, and no
 * str slice covers them). Each str is then a slice of that window. Saves the copy into the
 * scratch and lets the batch take strs of up to WINDOW_MAX_BYTES. Measured in Node 20 (same
 * process, CPU time, medians, loaded machine) against the copying pass: c_strings 1.15-1.4x,
 * arrays of ASCII strs of 256 bytes 1.7x, of 1-3 KiB 1.0-1.25x; twitter, citm_catalog,
 * products100, sample-large within the noise (0.9-1.1x). Elsewhere the copying pass (TextDecoder's
 * UTF-8 of a window would not keep one unit per byte; its windows-1252 would make a two-byte
 * string of a window holding a fixmap or fixarray head). Both modes are tested on the same
 * inputs (test/strBatch.test.ts).
 */
export const WINDOW = nodeLatin1SliceOf() !== undefined;
let textDecoder: TextDecoder | undefined;
let asciiOnly = false;
let otherValid = true;

/**
 * Node's Buffer.byteLength(s, "utf8"): the UTF-8 length of a string, which for a one-byte string
 * (a window made by latin1Slice) is its length plus its number of units of 0x80 and more. Node 20
 * counts that natively (SIMD) for a string on V8's heap: 0.5 µs for a window of 32 KiB, against
 * 5.5 µs for window mode's JavaScript check of the strs in it (same process, CPU time, medians of
 * 21). Undefined elsewhere (and counted mode with it).
 */
export const nodeUtf8Length: ((s: string, encoding: "utf8") => number) | undefined = (() => {
  const B = (globalThis as { Buffer?: { byteLength?: unknown } }).Buffer;
  const f = B?.byteLength;
  if (typeof f !== "function") return undefined;
  const byteLength = f as (s: string, encoding: "utf8") => number;
  try {
    if (byteLength("a\u00e9\u0080", "utf8") === 5) return byteLength;
  } catch {
    // the check per str instead
  }
  return undefined;
})();

/**
 * Counted mode (window mode's variant for inputs dense with long ASCII strs): the pass does not
 * check the batched strs at all; it counts the bytes of 0x80 and more of everything else in the
 * window (heads, lengths, numbers, short strs), and after one latin1Slice of the window,
 * nodeUtf8Length tells how many the window holds in all. Equal counts prove every batched str
 * ASCII (a str's own count cannot be below zero); otherwise the pass is done again in window mode,
 * which checks each str, and the rest of the decode stays there. Taken for a pass when the pass
 * before it, in the same decode, had strs fill at least 7/8 of its window and found no other text
 * (`dense`): in documents of keys and short values counting every token would cost more than the
 * checks it saves. Measured in Node 20 on c_strings (see js/bench/README.md, session 10).
 */
export const COUNTED = WINDOW && nodeUtf8Length !== undefined;
/** whether the last pass of this decode was dense (see COUNTED) */
let dense = false;
/** a counted pass of this decode found a str that is not ASCII: the rest of it checks each str */
let countedFailed = false;

export function clearBatch(): void {
  batch.count = 0;
  batch.text = "";
  batch.otherText = "";
}

/** The end of a decode's batching: clearBatch, and the next decode starts again in window mode. */
export function endBatches(): void {
  clearBatch();
  dense = false;
  countedFailed = false;
}

/** Whether the next pass of this decode takes counted mode (see COUNTED). */
export function countedNext(): boolean {
  return COUNTED && dense && !countedFailed;
}

/**
 * Fills the batch from buf[from, end), in window mode or not (the default: WINDOW), counted or not
 * (the default: countedNext(); counted only in window mode).
 */
export function batchStrs(buf: Uint8Array, view: DataView, from: number, end: number, window = WINDOW, counted = countedNext()): void {
  asciiOnly = false;
  if (window && counted && nodeUtf8Length !== undefined && scanCounted(buf, from, end)) return;
  if (window) viewWords(buf);
  scan(buf, view, from, end, window);
  if (!otherValid) {
    asciiOnly = true;
    scan(buf, view, from, end, window);
  }
  words = NO_WORDS;
}

/**
 * A counted pass (see COUNTED): fills the batch and returns true if every str it batched proved
 * ASCII, else returns false with countedFailed set (the caller then scans in window mode).
 */
function scanCounted(buf: Uint8Array, from: number, end: number): boolean {
  const size = end - from;
  const maxStrs = Math.ceil(size / (BATCH_MIN_BYTES + 1));
  if (batch.starts.length < maxStrs) {
    batch.starts = new Int32Array(Math.max(maxStrs, batch.starts.length * 2));
    batch.offsets = new Int32Array(batch.starts.length);
    batch.ends = new Int32Array(batch.starts.length);
  }
  const p = scanTokensCounted(buf, from, end);
  const wa = scannedAscii;
  const text = wa === 0 ? "" : nodeLatin1Slice!.call(buf, windowStart, windowStart + wa);
  if (wa > 0 && nodeUtf8Length!(text, "utf8") - wa !== scannedHigh) {
    countedFailed = true;
    dense = false;
    return false;
  }
  batch.count = scannedCount;
  batch.scannedTo = p < end ? p : end;
  batch.text = text;
  batch.otherText = "";
  batch.counted = true;
  otherValid = true;
  dense = scannedPayload * 8 >= wa * 7;
  return true;
}

/** The aligned 32-bit words of the input being scanned in window mode; byte i of it is byte i + wordShift of `words`. */
const NO_WORDS: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
let words = NO_WORDS;
let wordShift = 0;

function viewWords(buf: Uint8Array): void {
  const first = (buf.byteOffset + 3) & ~3;
  const count = Math.max(0, (buf.byteOffset + buf.length - first) >> 2);
  words = new Uint32Array(buf.buffer, first, count);
  wordShift = buf.byteOffset - first;
}

/**
 * Whether buf[start, stop) (at least 4 bytes) is all ASCII: its first and last four bytes through
 * the DataView (they cover the bytes before the first whole word and after the last), the rest
 * through `words`, four bytes a load, sixteen a step. Window mode's check.
 */
function asciiRange(view: DataView, start: number, stop: number): boolean {
  const w = words;
  let acc = view.getInt32(start, true) | view.getInt32(stop - 4, true);
  let k = (start + wordShift + 3) >> 2;
  const k1 = (stop + wordShift) >> 2;
  const k4 = k1 - 3;
  for (; k < k4; k += 4) acc |= w[k]! | w[k + 1]! | w[k + 2]! | w[k + 3]!;
  for (; k < k1; k++) acc |= w[k]!;
  return (acc & 0x80808080) === 0;
}

function scan(buf: Uint8Array, view: DataView, from: number, end: number, window: boolean): void {
  const size = end - from;
  if (asciiScratch.length < size) {
    asciiScratch = new Uint8Array(Math.max(size, asciiScratch.length * 2) + 4);
    asciiScratchView = new DataView(asciiScratch.buffer);
    otherScratch = new Uint8Array(asciiScratch.length);
    otherScratchView = new DataView(otherScratch.buffer);
  }
  const maxStrs = Math.ceil(size / (BATCH_MIN_BYTES + 1));
  if (batch.starts.length < maxStrs) {
    batch.starts = new Int32Array(Math.max(maxStrs, batch.starts.length * 2));
    batch.offsets = new Int32Array(batch.starts.length);
    batch.ends = new Int32Array(batch.starts.length);
  }
  const p = scanTokens(buf, view, from, end, window);
  const wa = scannedAscii;
  const wo = scannedOther;
  const units = scannedUnits;
  batch.count = scannedCount;
  batch.scannedTo = p < end ? p : end;
  batch.counted = false;
  textDecoder ??= new TextDecoder("utf-8", { ignoreBOM: true }); // a str may begin with U+FEFF: keep it
  batch.text = wa === 0 ? "" : window ? nodeLatin1Slice!.call(buf, windowStart, windowStart + wa) : asciiText(asciiScratch, wa);
  batch.otherText = wo > 0 ? textDecoder.decode(otherScratch.subarray(0, wo)) : "";
  // The other payloads were each valid UTF-8 only if nothing was replaced and the lengths agree;
  // if not (or a payload holds a real U+FFFD), the caller scans again for ASCII strs only.
  otherValid = wo === 0 || (batch.otherText.length === units && batch.otherText.indexOf("\ufffd") === -1);
  dense = window && wo === 0 && !scannedNonAscii && wa > 0 && scannedPayload * 8 >= wa * 7;
}

/**
 * scratch[0, n), all ASCII, as a string. In Node, Buffer.prototype.latin1Slice (it takes any
 * Uint8Array as `this`) copies the bytes into a one-byte string with no UTF-8 decoding to do:
 * 1.3-1.5x faster than TextDecoder.decode on 32-64 KiB of ASCII (Node 20, CPU time, busy
 * machine). Elsewhere (browsers) TextDecoder, whose UTF-8 decoding of ASCII gives the same string
 * (test/strBatch.test.ts checks both paths).
 */
export function asciiText(scratch: Uint8Array, n: number): string {
  if (nodeLatin1Slice !== undefined) return nodeLatin1Slice.call(scratch, 0, n);
  return asciiTextPortable(scratch, n);
}

/** asciiText without Buffer: TextDecoder (any runtime) */
export function asciiTextPortable(scratch: Uint8Array, n: number): string {
  textDecoder ??= new TextDecoder("utf-8", { ignoreBOM: true });
  return textDecoder.decode(scratch.subarray(0, n));
}

function nodeLatin1SliceOf(): ((this: Uint8Array, start: number, end: number) => string) | undefined {
  const B = (globalThis as { Buffer?: { prototype?: { latin1Slice?: unknown } } }).Buffer;
  const f = B?.prototype?.latin1Slice;
  return typeof f === "function" ? (f as (this: Uint8Array, start: number, end: number) => string) : undefined;
}
const nodeLatin1Slice = nodeLatin1SliceOf();

// What scanTokens found, in module variables: it returns only where it stopped.
/** In window mode, where the window (the batch's ASCII text) starts in the input. */
let windowStart = 0;
let scannedCount = 0;
let scannedAscii = 0;
let scannedOther = 0;
let scannedUnits = 0;
/** payload bytes of the batched ASCII strs */
let scannedPayload = 0;
/** whether the pass met a str of BATCH_MIN_BYTES..WINDOW_MAX_BYTES that is not ASCII */
let scannedNonAscii = false;
/** in counted mode, the bytes of 0x80 and more in the window outside the batched strs */
let scannedHigh = 0;

/**
 * The pass itself, a function of its own with nothing after its loop but stores: V8 compiles a long
 * loop while it runs (on-stack replacement), before the code after the loop has ever run, and code
 * that has never run makes that compiled loop bail out at its end, on every later call in Node 20
 * (measured: 9 bailouts in one bench process, the pass then running unoptimized).
 */
function scanTokens(buf: Uint8Array, view: DataView, from: number, end: number, window: boolean): number {
  const ascii = asciiScratch;
  const asciiView = asciiScratchView;
  const otherView = otherScratchView;
  const other = otherScratch;
  const starts = batch.starts;
  const offsets = batch.offsets;
  const ends = batch.ends;
  let q = 0;
  let wa = 0; // bytes in ascii (= its UTF-16 units); in window mode, the window's
  let ws = 0; // in window mode, where the window starts
  let wo = 0; // bytes in other
  let units = 0; // UTF-16 units in other, if its payloads are valid UTF-8
  let payload = 0; // payload bytes of the batched ASCII strs
  let nonAscii = false;
  let p = from;
  let lastFound = from;
  scanning: while (p < end) {
    if (p - lastFound > BATCH_MAX_GAP) break;
    const token = p;
    const h = buf[p]!;
    let len: number;
    if (h >= 0xa0 && h < 0xc0) {
      len = h & 0x1f; // fixstr, the commonest token (keys)
      p += 1;
      if (len < BATCH_MIN_BYTES) {
        p += len; // past the end only in a cut input: the loop ends, the decoder reports it
        continue;
      }
    } else if (h < 0xa0 || h >= 0xe0) {
      p++; // fixint, fixmap, fixarray: one byte (a container's elements follow as tokens)
      continue;
    } else {
      switch (h) {
        case 0xd9: // str 8
          if (p + 2 > end) break scanning;
          len = buf[p + 1]!;
          p += 2;
          break;
        case 0xda: // str 16
          if (p + 3 > end) break scanning;
          len = (buf[p + 1]! << 8) | buf[p + 2]!;
          p += 3;
          break;
        case 0xdb: // str 32
          if (p + 5 > end) break scanning;
          len = ((buf[p + 1]! << 24) | (buf[p + 2]! << 16) | (buf[p + 3]! << 8) | buf[p + 4]!) >>> 0;
          p += 5;
          break;
        case 0xc4: // bin 8, 16, 32: skip the payload
          if (p + 2 > end) break scanning;
          p += 2 + buf[p + 1]!;
          continue;
        case 0xc5:
          if (p + 3 > end) break scanning;
          p += 3 + ((buf[p + 1]! << 8) | buf[p + 2]!);
          continue;
        case 0xc6:
          if (p + 5 > end) break scanning;
          p += 5 + (((buf[p + 1]! << 24) | (buf[p + 2]! << 16) | (buf[p + 3]! << 8) | buf[p + 4]!) >>> 0);
          continue;
        case 0xc7: // ext 8, 16, 32: length, type, payload
          if (p + 2 > end) break scanning;
          p += 3 + buf[p + 1]!;
          continue;
        case 0xc8:
          if (p + 3 > end) break scanning;
          p += 4 + ((buf[p + 1]! << 8) | buf[p + 2]!);
          continue;
        case 0xc9:
          if (p + 5 > end) break scanning;
          p += 6 + (((buf[p + 1]! << 24) | (buf[p + 2]! << 16) | (buf[p + 3]! << 8) | buf[p + 4]!) >>> 0);
          continue;
        case 0xc1:
          break scanning; // invalid: the decoder reports it
        default:
          p += FIXED_SIZE[h - 0xc0]!; // nil, bool, numbers, fixext, array/map 16/32 headers
          continue;
      }
    }
    const stop = p + len;
    if (stop > end) break;
    if (len > (window ? WINDOW_MAX_BYTES : BATCH_MAX_BYTES)) {
      p = stop; // decoded on its own: the platform's decoder takes it faster than a copy into the batch
      continue;
    }
    if (len >= BATCH_MIN_BYTES) {
      // wa: in window mode the window's length so far, else the ASCII text's
      if ((window ? (wa > 0 ? stop - ws : len) > WINDOW_MAX_SPAN : wa + len > BATCH_MAX_TEXT) || wo + len > BATCH_MAX_TEXT / 2) {
        p = token; // this str starts the next pass (see BATCH_MAX_TEXT)
        break;
      }
      let i = p;
      let o = wa;
      if (window) {
        // checked, not copied: the window is the input itself
        if (asciiRange(view, p, stop)) {
          if (wa === 0) ws = p;
          i = stop;
          o = stop - ws;
        }
      } else {
        // four bytes at a time while they are ASCII, then byte by byte
        const stop4 = stop - 3;
        while (i < stop4) {
          const x = view.getInt32(i, true);
          if ((x & 0x80808080) !== 0) break;
          asciiView.setInt32(o, x, true);
          i += 4;
          o += 4;
        }
        if (i < stop && i >= stop4 && len >= 4) {
          // the last one to three bytes: copy the word that ends with them (over bytes already copied)
          const x = view.getInt32(stop - 4, true);
          if ((x & 0x80808080) === 0) {
            asciiView.setInt32(o + (stop - i) - 4, x, true);
            o += stop - i;
            i = stop;
          }
        }
        for (; i < stop; i++) {
          const c = buf[i]!;
          if (c >= 0x80) break;
          ascii[o++] = c;
        }
      }
      lastFound = stop;
      if (i === stop) {
        starts[q] = p;
        offsets[q] = window ? p - ws : wa;
        ends[q] = o;
        q++;
        wa = o;
        payload += len;
      } else {
        nonAscii = true;
        if (!asciiOnly && len <= BATCH_MAX_BYTES && (buf[p]! & 0xc0) !== 0x80) {
          // (longer other text, batched in window mode only if ASCII, goes to the platform's decoder on its own)
          // A payload that starts with a continuation byte could join the one before it: left out.
          // UTF-16 units of valid UTF-8: one per byte that is not a continuation (10xxxxxx), two
          // for the lead of a 4-byte sequence (11110xxx). Four bytes at a time while no such lead.
          let u = units;
          let k = wo;
          i = p;
          const stop4 = stop - 3;
          while (i < stop4) {
            const x = view.getInt32(i, true);
            const leads = (x & 0xf0f0f0f0) ^ 0xf0f0f0f0; // a zero byte where a byte is >= 0xf0
            if (((leads - 0x01010101) & ~leads & 0x80808080) !== 0) break;
            otherView.setInt32(k, x, true);
            const continuation = x & 0x80808080 & ~(x << 1); // 0x80 in each byte 10xxxxxx
            u += 4 - (Math.imul((continuation >>> 7) & 0x01010101, 0x01010101) >>> 24);
            i += 4;
            k += 4;
          }
          for (; i < stop; i++) {
            const c = buf[i]!;
            other[k++] = c;
            if ((c & 0xc0) !== 0x80) u += c >= 0xf0 ? 2 : 1;
          }
          starts[q] = p;
          offsets[q] = -1 - units;
          ends[q] = u;
          q++;
          wo = k;
          units = u;
        }
      }
    }
    p = stop;
  }
  scannedCount = q;
  scannedAscii = wa;
  windowStart = ws;
  scannedOther = wo;
  scannedUnits = units;
  scannedPayload = payload;
  scannedNonAscii = nonAscii;
  return p;
}

/** The bytes of 0x80 and more in buf[a, b) (b <= buf.length). */
function highBytes(buf: Uint8Array, a: number, b: number): number {
  let n = 0;
  for (let i = a; i < b; i++) n += buf[i]! >>> 7;
  return n;
}

/**
 * The counted pass (see COUNTED): scanTokens's walk, in window mode, with no check of the strs it
 * batches (every one of BATCH_MIN_BYTES..WINDOW_MAX_BYTES bytes is taken) and a count instead of
 * the bytes of 0x80 and more in every other token of the window (scannedHigh): its head, its length
 * bytes, its payload if it is not batched. A function of its own for the same reason as scanTokens.
 */
function scanTokensCounted(buf: Uint8Array, from: number, end: number): number {
  const starts = batch.starts;
  const offsets = batch.offsets;
  const ends = batch.ends;
  let q = 0;
  let wa = 0; // the window's length so far (0: no str batched yet)
  let ws = 0; // where the window starts
  let high = 0; // bytes of 0x80 and more outside the batched strs since the window started
  let highAtEnd = 0; // high at the end of the last batched str (the window's end)
  let payload = 0;
  let p = from;
  let lastFound = from;
  scanning: while (p < end) {
    if (p - lastFound > BATCH_MAX_GAP) break;
    const token = p;
    const h = buf[p]!;
    let len: number;
    if (h >= 0xa0 && h < 0xc0) {
      len = h & 0x1f; // fixstr
      p += 1;
    } else if (h < 0xa0 || h >= 0xe0) {
      p++; // fixint, fixmap, fixarray
      if (h >= 0x80) high++; // (bytes before the window are dropped when it starts)
      continue;
    } else {
      let next: number;
      switch (h) {
        case 0xd9: // str 8
          if (p + 2 > end) break scanning;
          len = buf[p + 1]!;
          p += 2;
          break;
        case 0xda: // str 16
          if (p + 3 > end) break scanning;
          len = (buf[p + 1]! << 8) | buf[p + 2]!;
          p += 3;
          break;
        case 0xdb: // str 32
          if (p + 5 > end) break scanning;
          len = ((buf[p + 1]! << 24) | (buf[p + 2]! << 16) | (buf[p + 3]! << 8) | buf[p + 4]!) >>> 0;
          p += 5;
          break;
        case 0xc4: // bin 8, 16, 32
          if (p + 2 > end) break scanning;
          next = p + 2 + buf[p + 1]!;
          break;
        case 0xc5:
          if (p + 3 > end) break scanning;
          next = p + 3 + ((buf[p + 1]! << 8) | buf[p + 2]!);
          break;
        case 0xc6:
          if (p + 5 > end) break scanning;
          next = p + 5 + (((buf[p + 1]! << 24) | (buf[p + 2]! << 16) | (buf[p + 3]! << 8) | buf[p + 4]!) >>> 0);
          break;
        case 0xc7: // ext 8, 16, 32
          if (p + 2 > end) break scanning;
          next = p + 3 + buf[p + 1]!;
          break;
        case 0xc8:
          if (p + 3 > end) break scanning;
          next = p + 4 + ((buf[p + 1]! << 8) | buf[p + 2]!);
          break;
        case 0xc9:
          if (p + 5 > end) break scanning;
          next = p + 6 + (((buf[p + 1]! << 24) | (buf[p + 2]! << 16) | (buf[p + 3]! << 8) | buf[p + 4]!) >>> 0);
          break;
        case 0xc1:
          break scanning;
        default:
          next = p + FIXED_SIZE[h - 0xc0]!;
          break;
      }
      if (h < 0xd9 || h > 0xdb) {
        // not a str: counted whole, if it can lie inside the window (one that ends past the
        // longest window ends it: no str after it can be batched in this pass, so a large bin
        // is never counted byte by byte)
        if (wa > 0 && next! - ws <= WINDOW_MAX_SPAN) high += highBytes(buf, token, next! < end ? next! : end);
        p = next!;
        continue;
      }
    }
    const stop = p + len!;
    if (stop > end) break;
    if (len! < BATCH_MIN_BYTES || len! > WINDOW_MAX_BYTES) {
      if (wa > 0 && stop - ws <= WINDOW_MAX_SPAN) high += highBytes(buf, token, stop); // (as above)
      p = stop;
      continue;
    }
    if (wa > 0 && stop - ws > WINDOW_MAX_SPAN) {
      p = token; // this str starts the next pass
      break;
    }
    if (wa === 0) {
      ws = p; // the window starts here: what came before it is not in the count
      high = 0;
    } else {
      high += highBytes(buf, token, p); // the head
    }
    starts[q] = p;
    offsets[q] = p - ws;
    ends[q] = stop - ws;
    q++;
    wa = stop - ws;
    highAtEnd = high;
    payload += len!;
    lastFound = stop;
    p = stop;
  }
  scannedCount = q;
  scannedAscii = wa;
  windowStart = ws;
  scannedOther = 0;
  scannedUnits = 0;
  scannedPayload = payload;
  scannedNonAscii = false;
  scannedHigh = highAtEnd;
  return p;
}

/** Token sizes (head included) of the fixed-size heads 0xc0..0xdf; strs, bins and exts are handled apart. */
const FIXED_SIZE = new Uint8Array([
  1, 1, 1, 1, 0, 0, 0, 0, 0, 0, // c0 nil, c1, c2 false, c3 true, c4-c9 (apart)
  5, 9, // ca float 32, cb float 64
  2, 3, 5, 9, // cc-cf uint 8/16/32/64
  2, 3, 5, 9, // d0-d3 int 8/16/32/64
  3, 4, 6, 10, 18, // d4-d8 fixext 1/2/4/8/16
  0, 0, 0, // d9-db str (apart)
  3, 5, 3, 5, // dc array 16, dd array 32, de map 16, df map 32
]);
