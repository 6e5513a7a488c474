// Same-process ratios against msgpackr (its addon) and JSON on the bench's workloads, for judging
// speed work on a busy machine: every codec is timed (process CPU time) over many short windows,
// interleaved, and the medians are compared.
// Run after `make js-build` and `make bench-workloads`:
//   node js/bench/versus.mjs [--encode] [--warm-all] [--rounds=61] [--window-ms=3] id...   (ids: build/bench-workloads/manifest.json, js_ascii_strings, js_geojson_properties)
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Decoder, Encoder, encode } from "../build/esm/index.js";
import { median, timeWindow } from "./cputime.mjs";
import { loadWorkloads } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const ids = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const encodeMode = process.argv.includes("--encode");
const rounds = Number(arg("rounds", 61));
const windowMs = Number(arg("window-ms", 3));
const { Packr, Unpackr } = createRequire(import.meta.url)("msgpackr");
const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
const copying = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number", copyBuffers: true });
const mpk = new Decoder({ int64: "number" });
const zeroCopy = new Decoder({ int64: "number", zeroCopy: true });
const shared = new Encoder({ sharedBuffer: true });
const time = (fn) => timeWindow(fn, windowMs);
const workloads = loadWorkloads(resolve(here, "..", ".."), encode);

// --warm-all: first run every codec on every workload for a while, as the full bench does before
// it reaches the later workloads (V8's feedback then has seen many shapes: object encode loops go
// megamorphic, which changes the ratios of documents by 20-40%)
if (process.argv.includes("--warm-all")) {
  for (const w of workloads) {
    const value = mpk.decode(w.msgpack);
    const fns = [() => mpk.decode(w.msgpack), () => unpackr.unpack(w.msgpack), () => encode(value), () => shared.encode(value), () => packr.pack(value)];
    for (const f of fns) timeWindow(f, 20);
  }
}

for (const w of workloads) {
  if (ids.length && !ids.includes(w.id)) continue;
  const value = mpk.decode(w.msgpack);
  const json = Buffer.from(JSON.stringify(value));
  const codecs = encodeMode
    ? { mpk: () => encode(value), "mpk shared": () => shared.encode(value), msgpackr: () => packr.pack(value), JSON: () => Buffer.from(JSON.stringify(value)) }
    : { mpk: () => mpk.decode(w.msgpack), "mpk zeroCopy": () => zeroCopy.decode(w.msgpack), msgpackr: () => unpackr.unpack(w.msgpack), "msgpackr copyBuffers": () => copying.unpack(w.msgpack), JSON: () => JSON.parse(json.toString()) };
  const samples = Object.fromEntries(Object.keys(codecs).map((k) => [k, []]));
  for (const k in codecs) time(codecs[k]); // warm up
  // rotate the order each round, as suite.mjs does, so that no codec always runs right after the
  // same one. (Caveat, session 10: on small messages this tool's encode ratios are not to be
  // trusted: msgpackr's product encode read 1.1-4.7 µs from process to process here, with a fixed
  // order and rotated alike, against 0.8-1.1 µs in processes timing one codec alone and in
  // suite.mjs's own rounds timed by CPU time; the full run is the measure of record.)
  const keys = Object.keys(codecs);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < keys.length; j++) {
      const k = keys[(j + r) % keys.length];
      samples[k].push(time(codecs[k]));
    }
  }
  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const mine = Object.keys(m).filter((k) => k.startsWith("mpk"));
  const parts = mine.map((k) => `${k} ${(m[k] / 1000).toFixed(2)} µs`);
  for (const peer of Object.keys(m).filter((k) => !k.startsWith("mpk"))) parts.push(`${peer}/mpk ${(m[peer] / m.mpk).toFixed(2)}`);
  if (encodeMode) parts.push(`msgpackr/mpk shared ${(m.msgpackr / m["mpk shared"]).toFixed(2)}`);
  else parts.push(`msgpackr/mpk zeroCopy ${(m.msgpackr / m["mpk zeroCopy"]).toFixed(2)}`);
  console.log(`${w.id} ${encodeMode ? "encode" : "decode"}: ${parts.join(" | ")}`);
}
