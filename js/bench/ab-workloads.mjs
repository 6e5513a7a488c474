// A/B of two mpk builds on the bench's workloads (build/bench-workloads), in one Node process:
// the build before a change (a copy of js/build/esm) against js/build/esm, msgpackr (its addon)
// alongside. Every codec is timed by the process's CPU time over many short windows, interleaved,
// and medians are compared, as in versus.mjs (on a loaded machine CPU-time ratios hold far better
// than wall-clock ones). Ratios are the other's time over the current build's (above 1: current faster).
//   cp -r js/build/esm /tmp/mpk-before; <change, make js-build>
//   node js/bench/ab-workloads.mjs --base=/tmp/mpk-before [--encode] [--shared] [--rounds=41] [--window-ms=3] id...
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, timeWindow } from "./cputime.mjs";
import { loadWorkloads } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const basePath = arg("base");
if (!basePath) throw new Error("--base=<a copy of js/build/esm from before the change> is required");
const base = await import(pathToFileURL(resolve(basePath, "index.js")).href);
const cur = await import(pathToFileURL(resolve(here, "..", "build", "esm", "index.js")).href);
const ids = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const encodeMode = process.argv.includes("--encode");
const shared = process.argv.includes("--shared");
const rounds = Number(arg("rounds", 41));
const windowMs = Number(arg("window-ms", 3));
const { Packr, Unpackr } = createRequire(import.meta.url)("msgpackr");
const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
const encOpts = { sharedBuffer: shared };
const baseEnc = new base.Encoder(encOpts);
const curEnc = new cur.Encoder(encOpts);
const baseDec = new base.Decoder({ int64: "number" });
const curDec = new cur.Decoder({ int64: "number" });
const time = (fn) => timeWindow(fn, windowMs);

for (const w of loadWorkloads(resolve(here, "..", ".."), cur.encode)) {
  if (ids.length && !ids.includes(w.id)) continue;
  const value = curDec.decode(w.msgpack);
  const codecs = encodeMode
    ? { base: () => baseEnc.encode(value), cur: () => curEnc.encode(value), msgpackr: () => packr.pack(value) }
    : { base: () => baseDec.decode(w.msgpack), cur: () => curDec.decode(w.msgpack), msgpackr: () => unpackr.unpack(w.msgpack) };
  if (encodeMode && Buffer.compare(Buffer.from(baseEnc.encode(value)), Buffer.from(curEnc.encode(value))) !== 0) throw new Error(`${w.id}: the builds' bytes differ`);
  const samples = Object.fromEntries(Object.keys(codecs).map((k) => [k, []]));
  for (const k in codecs) time(codecs[k]); // warm up
  for (let r = 0; r < rounds; r++) {
    const keys = Object.keys(codecs);
    // alternate the order each round
    if (r & 1) keys.reverse();
    for (const k of keys) samples[k].push(time(codecs[k]));
  }
  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  console.log(`${w.id} ${encodeMode ? (shared ? "encode shared" : "encode") : "decode"}: cur ${(m.cur / 1000).toFixed(2)} µs | base/cur ${(m.base / m.cur).toFixed(2)} | msgpackr/cur ${(m.msgpackr / m.cur).toFixed(2)} | msgpackr/base ${(m.msgpackr / m.base).toFixed(2)}`);
}
