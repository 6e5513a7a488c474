// What any decoder written in JavaScript pays in Chromium, against JSON.parse (native C++), on the
// bench's workloads without bins: the analysis behind the Chromium "vs JSON" cells that stay below
// 1.0x (js/bench/README.md). In one page, interleaved, medians of many short windows:
//   mpk      mpk's decode of the workload's MessagePack bytes
//   JSON     JSON.parse(new TextDecoder().decode(json bytes)), the bench's JSON row
//   build    the floor of the structure: the same value built from a ready list of operations
//            (array of n, object of n, number, str #k...) whose strings all exist already, so
//            nothing is parsed and no string is made: the allocations and stores of the result
//   strs     the floor of the strings: every str value longer than 16 bytes (shorter ones and
//            keys repeat, and a cache can hand them out) made from its bytes the cheapest way
//            found, one TextDecoder.decode of all of them end to end (bytes already together,
//            which a decoder would first have to copy) and one slice each
// build + strs is a lower bound for a JavaScript decoder; where it is above JSON's time, 1.0x
// JSON.parse is out of reach by construction.
// --profile lists the functions with the most self time in mpk's decode of each workload (V8's
// sampling profiler through the DevTools protocol).
// --base=<a copy of js/src> adds that tree's decode ("base"), for A/B work in the browser.
//   node js/bench/floor-browser.mjs [--rounds=61] [--window-ms=4] [--base=/tmp/mpk-src-before] [id...]
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { withChromiumPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const rounds = Number(arg("rounds", 61));
const windowMs = Number(arg("window-ms", 4));
const basePath = arg("base", "");
const profile = process.argv.includes("--profile");
const cpuAll = process.argv.includes("--cpu-all-threads");
const cpu = cpuAll || process.argv.includes("--cpu");
const jsFlags = arg("js-flags", ""); // e.g. --js-flags=--trace-deopt (V8's output goes to Chromium's stderr)
const ids = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const dir = resolve(here, "..", "..", "build", "bench-workloads");
const chosen = ids.length ? ids : ["product", "products100", "rb_twitter", "c_strings", "utf8_strings", "twitter", "citm_catalog", "js_msgpack_lite_example", "js_msgpackr_example4", "js_sample_large", "js_sample_large_scored"];
const workloads = chosen.map((id) => [id, readFileSync(join(dir, `${id}.json`), "utf8"), readFileSync(join(dir, `${id}.msgpack`)).toString("base64")]);

const entry = `
import { Decoder } from ${JSON.stringify(resolve(here, "..", "src", "index.ts"))};
${basePath ? `import { Decoder as BaseDecoder } from ${JSON.stringify(resolve(basePath, "index.ts"))};` : "const BaseDecoder = null;"}
const OP_ARRAY = 0, OP_OBJECT = 1, OP_STR = 2, OP_NUM = 3, OP_TRUE = 4, OP_FALSE = 5, OP_NULL = 6;
function program(value) {
  const ops = [], nums = [], strs = [], long = [];
  const enc = new TextEncoder();
  const str = (s, key) => {
    ops.push(OP_STR, strs.length);
    strs.push(s);
    if (!key && enc.encode(s).length > 16) long.push(s);
  };
  const walk = (v) => {
    if (Array.isArray(v)) { ops.push(OP_ARRAY, v.length); for (const x of v) walk(x); }
    else if (v === null) ops.push(OP_NULL);
    else if (typeof v === "object") { const ks = Object.keys(v); ops.push(OP_OBJECT, ks.length); for (const k of ks) { ops.push(OP_STR, strs.length); strs.push(k); walk(v[k]); } }
    else if (typeof v === "string") str(v, false);
    else if (typeof v === "number") { ops.push(OP_NUM, nums.length); nums.push(v); }
    else ops.push(v ? OP_TRUE : OP_FALSE);
  };
  walk(value);
  const bytes = enc.encode(long.join(""));
  const ends = []; let u = 0; for (const s of long) ends.push(u += s.length);
  return { ops: Int32Array.from(ops), nums: Float64Array.from(nums), strs, bytes, ends: Int32Array.from(ends) };
}
let P, i;
function node() {
  switch (P.ops[i++]) {
    case OP_ARRAY: { const n = P.ops[i++]; const a = new Array(n); for (let k = 0; k < n; k++) a[k] = node(); return a; }
    case OP_OBJECT: { const n = P.ops[i++]; const o = {}; for (let k = 0; k < n; k++) { i++; const key = P.strs[P.ops[i++]]; o[key] = node(); } return o; }
    case OP_STR: return P.strs[P.ops[i++]];
    case OP_NUM: return P.nums[P.ops[i++]];
    case OP_TRUE: return true;
    case OP_FALSE: return false;
    default: return null;
  }
}
const td = new TextDecoder();
function strings() {
  const all = td.decode(P.bytes);
  const out = new Array(P.ends.length);
  let from = 0;
  for (let k = 0; k < P.ends.length; k++) { out[k] = all.slice(from, P.ends[k]); from = P.ends[k]; }
  return out;
}
globalThis.floorSetup = (text, b64) => {
  const bin = atob(b64); const mp = new Uint8Array(bin.length); for (let k = 0; k < bin.length; k++) mp[k] = bin.charCodeAt(k);
  const value = JSON.parse(text);
  P = program(value);
  const json = new TextEncoder().encode(JSON.stringify(value));
  const dec = new Decoder({ int64: "number" });
  globalThis.floorCodecs = {
    mpk: () => dec.decode(mp),
    JSON: () => JSON.parse(td.decode(json)),
    build: () => { i = 0; return node(); },
    strs: () => strings(),
  };
  if (BaseDecoder) {
    const base = new BaseDecoder({ int64: "number" });
    globalThis.floorCodecs.base = () => base.decode(mp);
  }
  return P.ends.length;
};
globalThis.floorLoop = (ms) => { const t0 = performance.now(); while (performance.now() - t0 < ms) globalThis.kept = globalThis.floorCodecs.mpk(); };
globalThis.floorCalls = (k, ms) => { const fn = globalThis.floorCodecs[k]; let n = 0; const t0 = performance.now(); do { globalThis.kept = fn(); n++; } while (performance.now() - t0 < ms); return n; };
globalThis.floorRepeat = (k, n) => { const fn = globalThis.floorCodecs[k]; for (let i = 0; i < n; i++) globalThis.kept = fn(); return n; };
globalThis.floorNames = () => Object.keys(globalThis.floorCodecs);
globalThis.floorRun = (rounds, windowMs) => {
  const codecs = globalThis.floorCodecs;
  const time = (fn, ms) => { let n = 0; const t0 = performance.now(); let t; do { globalThis.kept = fn(); n++; t = performance.now(); } while (t - t0 < ms); return ((t - t0) * 1000) / n; };
  const samples = Object.fromEntries(Object.keys(codecs).map((k) => [k, []]));
  for (const k in codecs) time(codecs[k], 100);
  for (let r = 0; r < rounds; r++) for (const k in codecs) samples[k].push(time(codecs[k], windowMs));
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, med(v)]));
};
`;
const bundle = await esbuild.build({ stdin: { contents: entry, resolveDir: here, loader: "js" }, bundle: true, write: false, format: "iife", target: "es2022", platform: "browser" });
const files = {
  "/": ["text/html", "<!doctype html><meta charset=utf-8><title>mpk floor</title><script src=/floor.js></script>"],
  "/floor.js": ["text/javascript", bundle.outputFiles[0].text],
};
const us = (x) => `${x.toFixed(1)} µs`;
const bundleLines = bundle.outputFiles[0].text.split("\n");
await withChromiumPage(files, { jsFlags }, async (page) => {
  for (const [id, text, b64] of workloads) {
    const longStrs = await page.evaluate(([t, b]) => globalThis.floorSetup(t, b), [text, b64]);
    const m = cpu ? await cpuRun(page) : await page.evaluate(([r, w]) => globalThis.floorRun(r, w), [rounds, windowMs]);
    const floor = m.build + m.strs;
    const ab = m.base ? ` | base/mpk ${(m.base / m.mpk).toFixed(2)}` : "";
    console.log(`${id}: mpk ${us(m.mpk)} | JSON ${us(m.JSON)} (JSON/mpk ${(m.JSON / m.mpk).toFixed(2)}) | build ${us(m.build)} + strs ${us(m.strs)} (${longStrs} strs > 16 B) = floor ${us(floor)}: JSON/floor ${(m.JSON / floor).toFixed(2)}, mpk/floor ${(m.mpk / floor).toFixed(2)}${ab}`);
    if (profile) await profileMpk(page);
  }
});

/**
 * --cpu: each codec timed by the CPU time of Chromium's renderer main thread (from
 * /proc/<pid>/task/<pid>/schedstat, in ns; --cpu-all-threads adds its other threads: GC helpers,
 * the compiler's), not by the page's clock: on a machine shared with
 * other work the time the renderer waits for a core is then not counted, as process.cpuUsage
 * does for the Node tools. Each sample is a fixed count of calls (about 4 windows' worth), minus
 * the same page round trip with no calls; medians of `rounds` samples, interleaved.
 */
function descendants(root) {
  const parent = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  const out = [];
  for (const pid of parent.keys()) {
    let p = pid;
    while (p > 1 && p !== root) p = parent.get(p) ?? 0;
    if (p === root && pid !== root) out.push(pid);
  }
  return out;
}
function renderers() {
  return descendants(process.pid).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer"); } catch { return false; }
  });
}
function cpuNs(pids) {
  let ns = 0;
  for (const pid of pids) {
    // the main thread (where the page's JavaScript runs) unless --cpu-all-threads
    let tids = [String(pid)];
    if (cpuAll) try { tids = readdirSync(`/proc/${pid}/task`); } catch {}
    for (const tid of tids) {
      try { ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]); } catch {}
    }
  }
  return ns;
}
async function cpuRun(page) {
  const pids = renderers();
  const names = await page.evaluate(() => globalThis.floorNames());
  const counts = {};
  for (const k of names) counts[k] = Math.max(1, await page.evaluate(([k, ms]) => globalThis.floorCalls(k, ms), [k, 4 * windowMs]));
  const sample = async (k, n) => {
    const t0 = cpuNs(pids);
    await page.evaluate(([k, n]) => globalThis.floorRepeat(k, n), [k, n]);
    return cpuNs(pids) - t0;
  };
  const samples = Object.fromEntries(names.map((k) => [k, []]));
  const empty = [];
  for (let r = 0; r < rounds; r++) {
    const order = r & 1 ? [...names].reverse() : names;
    empty.push(await sample(names[0], 0));
    for (const k of order) samples[k].push(await sample(k, counts[k]));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const e = med(empty);
  return Object.fromEntries(names.map((k) => [k, Math.max(0, med(samples[k]) - e) / counts[k] / 1000]));
}

async function profileMpk(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 50 });
  await cdp.send("Profiler.start");
  await page.evaluate(() => globalThis.floorLoop(1500));
  const { profile: p } = await cdp.send("Profiler.stop");
  const self = new Map();
  const dt = new Map();
  for (let k = 0; k < p.samples.length; k++) dt.set(p.samples[k], (dt.get(p.samples[k]) ?? 0) + (p.timeDeltas[k] ?? 0));
  let total = 0;
  for (const node of p.nodes) {
    const t = dt.get(node.id) ?? 0;
    const f = node.callFrame;
    const key = `${f.functionName || "(anonymous)"}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + t);
    total += t;
  }
  for (const [k, t] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
  // the source lines with the most samples (positionTicks: lines of the page's bundle)
  const lines = new Map();
  let ticks = 0;
  for (const node of p.nodes) for (const { line, ticks: n } of node.positionTicks ?? []) {
    const key = `${node.callFrame.functionName || "(anonymous)"}:${line}`;
    lines.set(key, (lines.get(key) ?? 0) + n);
    ticks += n;
  }
  for (const [k, n] of [...lines.entries()].sort((a, b) => b[1] - a[1]).slice(0, 16)) {
    const line = Number(k.slice(k.lastIndexOf(":") + 1));
    console.log(`    ${((100 * n) / ticks).toFixed(1).padStart(5)}% line ${k}  ${(bundleLines[line - 1] ?? "").trim().slice(0, 110)}`);
  }
  await cdp.detach();
}
