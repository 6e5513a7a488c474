// A/B of two mpk builds in one Node process, for judging a change on a busy machine: the build
// before the change (copy js/build/esm somewhere first) against js/build/esm, with msgpackr (its
// addon) and JSON alongside. Each codec is timed over many short windows, interleaved; the
// minimum over the windows is the run least disturbed by other processes, the median is shown too.
// Ratios are the other's time over the current build's (above 1.00: the current build is faster).
//   cp -r js/build/esm /tmp/mpk-before; <change, make js-build>
//   node js/bench/ab.mjs --base=/tmp/mpk-before [--only=records,twitter] [--encode] [--rounds=150] [--window-ms=4] [--keep]
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadDatasets } from "./datasets.mjs";
import { revive } from "./suite.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const basePath = arg("base");
if (!basePath) throw new Error("--base=<a copy of js/build/esm from before the change> is required");
const base = await import(pathToFileURL(resolve(basePath, "index.js")).href);
const cur = await import(pathToFileURL(resolve(here, "..", "build", "esm", "index.js")).href);
const { Packr, Unpackr } = createRequire(import.meta.url)("msgpackr");
const only = arg("only", "").split(",").filter(Boolean);
const encodeMode = process.argv.includes("--encode");
const rounds = Number(arg("rounds", 150));
const windowMs = Number(arg("window-ms", 4));
// --keep: the last result stays alive until the next call, as in run.mjs (the garbage collector then
// copies a whole result now and then, which long-lived documents cost in real use too)
const keep = process.argv.includes("--keep");
let kept;
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
const packr = new Packr({ useRecords: false });

function time(fn, ms) {
  let n = 0;
  const t0 = performance.now();
  let t;
  do {
    if (keep) kept = fn();
    else fn();
    n++;
    t = performance.now();
  } while (t - t0 < ms);
  return (t - t0) / n;
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[s.length >> 1] };
};

for (const [name, text] of loadDatasets(resolve(here, "..", ".."))) {
  if (only.length && !only.some((o) => name.startsWith(o))) continue;
  const value = revive(JSON.parse(text)); // bins ({"$bin": n}) as Uint8Arrays; JSON then times their JSON.stringify form
  const bytes = cur.encode(value).slice();
  const json = Buffer.from(JSON.stringify(value));
  const codecs = encodeMode
    ? { base: () => base.encode(value), cur: () => cur.encode(value), msgpackr: () => packr.pack(value), JSON: () => Buffer.from(JSON.stringify(value)) }
    : { base: () => base.decode(bytes), cur: () => cur.decode(bytes), msgpackr: () => unpackr.unpack(bytes), JSON: () => JSON.parse(json.toString()) };
  const samples = Object.fromEntries(Object.keys(codecs).map((k) => [k, []]));
  for (const k in codecs) time(codecs[k], 100); // warm up
  for (let r = 0; r < rounds; r++) for (const k in codecs) samples[k].push(time(codecs[k], windowMs));
  const st = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
  const ratio = (k) => `${k}/cur min ${(st[k].min / st.cur.min).toFixed(2)} median ${(st[k].median / st.cur.median).toFixed(2)}`;
  console.log(`${name} (${encodeMode ? "encode" : "decode"}, cur ${(st.cur.min * 1000).toFixed(1)} µs): ${["base", "msgpackr", "JSON"].map(ratio).join(" | ")}`);
}
