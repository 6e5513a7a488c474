// The Node cells below issue 10's bar, against what any JavaScript codec pays for the same bytes,
// measured in one process (CPU time over many short windows, calls in batches, interleaved, medians;
// see cputime.mjs). The per-cell analysis of js/bench/README.md quotes it.
//   encode: mpk owned and shared, msgpackr, and the floor of an owned result: `own` = one
//           Uint8Array.prototype.slice of the output's size out of a larger buffer (the allocation of
//           an ArrayBuffer of its own and the copy, which a view into a shared buffer does not pay).
//           `strs written`: every string of 48 units and more written by utf8Write, one call each (both
//           libraries' way for such strings in Node), `bins copied`: every bin `set` into a buffer.
//           An owned encode at 1.0x msgpackr's shared one needs mpk's shared encode faster than
//           msgpackr by at least `own`: "owned reachable" is msgpackr / (mpk shared + own).
//   decode: mpk, msgpackr (addon), and the floors of what the value holds:
//           `bins`  every bin payload copied (one slice each), what an owned bin costs over a view;
//           `strs`  every str of 17 bytes and more made by Node's own primitive, one call each
//                   (Buffer.prototype.utf8Slice over the bytes in place; latin1Slice for ASCII ones,
//                   whichever is cheaper is taken), what a JavaScript decoder pays without an addon;
//           `window` mpk's way in Node for ASCII strs: each str's bytes checked for ASCII in
//                   JavaScript (32-bit words, as strBatch.ts's asciiRange), then one latin1Slice of
//                   up to 32 KiB of them and one String.prototype.slice each (the strs lie end to
//                   end here, so no heads in between are checked or copied: a lower bound);
//           msgpackr-extract makes its strs in native code, several per call.
//   --alloc: no workloads; instead the ways to make an owned result of n bytes (its own ArrayBuffer,
//           as encode's default returns), per size, against a view (what a shared result costs):
//           `slice` (Uint8Array.prototype.slice, what Encoder.ts does), `new+set` (new Uint8Array(n),
//           then set), `AB.slice` (ArrayBuffer.prototype.slice, then a view), `allocUnsafeSlow+set`
//           (a Node Buffer over memory not zeroed), `new` (new Uint8Array(n) alone: the least that
//           writing straight into an exact-size buffer would pay, knowing n beforehand for free).
//   node js/bench/floor-node.mjs [--rounds=21] [--window-ms=3] id...
//   node js/bench/floor-node.mjs --alloc [--rounds=21] [--window-ms=3] [size...]
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, timeWindow } from "./cputime.mjs";
import { loadWorkloads } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const rounds = Number(arg("rounds", 21));
const windowMs = Number(arg("window-ms", 3));
const ids = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const mpk = await import(pathToFileURL(resolve(here, "..", "build", "esm", "index.js")).href);
const { Packr, Unpackr } = createRequire(import.meta.url)("msgpackr");
const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
const copying = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number", copyBuffers: true });
const owned = new mpk.Encoder();
const shared = new mpk.Encoder({ sharedBuffer: true });
const dec = new mpk.Decoder({ int64: "number" });
const utf8Slice = Buffer.prototype.utf8Slice;
const latin1Slice = Buffer.prototype.latin1Slice;
const utf8Write = Buffer.prototype.utf8Write;

function measure(codecs) {
  const samples = Object.fromEntries(Object.keys(codecs).map((k) => [k, []]));
  for (const k in codecs) timeWindow(codecs[k], windowMs); // warm up
  for (let r = 0; r < rounds; r++) {
    const keys = Object.keys(codecs);
    if (r & 1) keys.reverse();
    for (const k of keys) samples[k].push(timeWindow(codecs[k], windowMs));
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

/** every string of 48 units and more (values and keys) and every bin of the value, in order */
function leaves(value) {
  const allStrs = [];
  const allBins = [];
  const walk = (v) => {
    if (v instanceof Uint8Array) allBins.push(v);
    else if (typeof v === "string") {
      if (v.length >= 48) allStrs.push(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) walk(k), walk(v[k]);
  };
  walk(value);
  return { allStrs, allBins };
}

/** the value's bins, and its strs of 17 bytes and more as [start, end, ascii] ranges of one buffer of their UTF-8 */
function parts(value) {
  const bins = [];
  const strs = [];
  const walk = (v) => {
    if (v instanceof Uint8Array) bins.push(v);
    else if (typeof v === "string") {
      if (Buffer.byteLength(v) >= 17) strs.push(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) walk(v[k]);
  };
  walk(value);
  const text = Buffer.from(strs.join(""));
  const ranges = [];
  let at = 0;
  for (const s of strs) {
    const n = Buffer.byteLength(s);
    ranges.push([at, at + n, /^[\x00-\x7f]*$/.test(s)]);
    at += n;
  }
  const bytes = new Uint8Array(text.length + 8);
  bytes.set(text, 4); // the payloads start at 4: words and bytes are those of an input read at an offset
  for (const r of ranges) { r[0] += 4; r[1] += 4; }
  return { bins, text: bytes, ranges };
}

const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);

if (process.argv.includes("--alloc")) {
  const sizes = ids.length ? ids.map(Number) : [16, 64, 65, 128, 192, 512, 1024, 8192, 65536, 1 << 20];
  const src = new Uint8Array((1 << 20) + 64).map((_, i) => i * 7);
  const dv = new DataView(src.buffer);
  for (const n of sizes) {
    const m = measure({
      view: () => src.subarray(8, 8 + n),
      slice: () => src.slice(8, 8 + n),
      "new+set": () => {
        const o = new Uint8Array(n);
        o.set(src.subarray(8, 8 + n));
        return o;
      },
      "new+setDV": () => {
        const o = new Uint8Array(n);
        o.set(new Uint8Array(dv.buffer, 8, n));
        return o;
      },
      "new+loop": () => {
        const o = new Uint8Array(n);
        for (let i = 0; i < n; i++) o[i] = src[8 + i];
        return o;
      },
      "AB.slice": () => new Uint8Array(src.buffer.slice(8, 8 + n)),
      "allocUnsafeSlow+set": () => {
        const o = Buffer.allocUnsafeSlow(n);
        o.set(src.subarray(8, 8 + n));
        return o;
      },
      new: () => new Uint8Array(n),
    });
    console.log(`${n} B: ${Object.entries(m).map(([k, v]) => `${k} ${fmt(v)}`).join(", ")}`);
  }
  process.exit(0);
}
for (const w of loadWorkloads(resolve(here, "..", ".."), mpk.encode)) {
  if (ids.length && !ids.includes(w.id)) continue;
  const value = dec.decode(w.msgpack);
  const out = shared.encode(value);
  const big = new Uint8Array(out.length + 64);
  big.set(out, 8);
  const { allStrs, allBins } = leaves(value);
  const scratch = new Uint8Array(out.length + 64);
  const codecs = {
    owned: () => owned.encode(value),
    shared: () => shared.encode(value),
    msgpackr: () => packr.pack(value),
    own: () => big.slice(8, 8 + out.length),
  };
  // what any encoder pays for the payloads alone: every str of 48 units and more written by Node's
  // own UTF-8 writer (utf8Write, one call each, as mpk and msgpackr both do), shorter ones and keys
  // not counted; every bin copied in (set), no heads
  if (allStrs.length) {
    codecs.strsWrite = () => {
      let at = 0;
      for (const s of allStrs) at += utf8Write.call(scratch, s, at, scratch.length - at);
      return at;
    };
  }
  if (allBins.length) {
    codecs.binsSet = () => {
      let at = 0;
      for (const b of allBins) {
        scratch.set(b, at);
        at += b.length;
      }
      return at;
    };
  }
  const e = measure(codecs);
  const payload = [e.strsWrite !== undefined ? `strs written ${fmt(e.strsWrite)} (${allStrs.length} of 48+ units)` : "", e.binsSet !== undefined ? `bins copied ${fmt(e.binsSet)} (${allBins.length})` : ""].filter(Boolean).join(", ");
  console.log(`${w.id} encode (${out.length} B): mpk owned ${fmt(e.owned)}, shared ${fmt(e.shared)}, msgpackr ${fmt(e.msgpackr)}, own-result floor ${fmt(e.own)}${payload ? `, ${payload}` : ""} | shared vs msgpackr ${(e.msgpackr / e.shared).toFixed(2)}, owned vs msgpackr ${(e.msgpackr / e.owned).toFixed(2)}, owned reachable at most ${(e.msgpackr / (e.shared + e.own)).toFixed(2)}`);
  const { bins, text, ranges } = parts(value);
  const d = {
    mpk: () => dec.decode(w.msgpack),
    msgpackr: () => unpackr.unpack(w.msgpack),
  };
  if (bins.length) {
    d.copyBuffers = () => copying.unpack(w.msgpack);
    d.bins = () => {
      let last;
      for (const b of bins) last = b.slice();
      return last;
    };
  }
  if (ranges.length) {
    d.strsUtf8 = () => {
      let last;
      for (const [a, b] of ranges) last = utf8Slice.call(text, a, b);
      return last;
    };
    const words = new Uint32Array(text.buffer, 0, text.length >> 2);
    const view = new DataView(text.buffer);
    const asciiRange = (start, stop) => {
      if (stop - start < 4) {
        let acc = 0;
        for (let i = start; i < stop; i++) acc |= text[i];
        return acc < 0x80;
      }
      let acc = view.getInt32(start, true) | view.getInt32(stop - 4, true);
      let k = (start + 3) >> 2;
      const k1 = stop >> 2;
      const k4 = k1 - 3;
      for (; k < k4; k += 4) acc |= words[k] | words[k + 1] | words[k + 2] | words[k + 3];
      for (; k < k1; k++) acc |= words[k];
      return (acc & 0x80808080) === 0;
    };
    d.window = () => {
      let last;
      let i = 0;
      while (i < ranges.length) {
        const from = ranges[i][0];
        let j = i;
        while (j < ranges.length && ranges[j][1] - from <= 32768 && ranges[j][2] && asciiRange(ranges[j][0], ranges[j][1])) j++;
        if (j === i) {
          last = utf8Slice.call(text, ranges[i][0], ranges[i][1]);
          i++;
          continue;
        }
        const win = latin1Slice.call(text, from, ranges[j - 1][1]);
        for (let k = i; k < j; k++) last = win.slice(ranges[k][0] - from, ranges[k][1] - from);
        i = j;
      }
      return last;
    };
    d.strsBest = () => {
      let last;
      for (const [a, b, ascii] of ranges) last = ascii ? latin1Slice.call(text, a, b) : utf8Slice.call(text, a, b);
      return last;
    };
  }
  const m = measure(d);
  const extra = [
    m.copyBuffers !== undefined ? `msgpackr copyBuffers ${fmt(m.copyBuffers)}, bins floor ${fmt(m.bins)} (${bins.length} bins)` : "",
    m.strsUtf8 !== undefined ? `strs floor ${fmt(Math.min(m.strsUtf8, m.strsBest))} (${ranges.length} strs >= 17 B; utf8Slice each ${fmt(m.strsUtf8)}; window ${fmt(m.window)})` : "",
  ].filter(Boolean);
  console.log(`${w.id} decode: mpk ${fmt(m.mpk)}, msgpackr ${fmt(m.msgpackr)} (vs msgpackr ${(m.msgpackr / m.mpk).toFixed(2)})${extra.length ? ", " + extra.join(", ") : ""}`);
}
