// A/B of two mpk source trees in headless Chromium, the browser twin of ab.mjs: the sources before
// a change (copy js/src somewhere first) against js/src, with msgpackr (pure JS, its browser build)
// and JSON (bytes -> TextDecoder -> JSON.parse) alongside, decode only. Each codec is timed over many
// short windows, interleaved; the minimum over the windows is the run least disturbed by other
// processes, the median is shown too. Ratios are the other's time over the current tree's.
// With --profile, the current tree's decode of each dataset is also profiled (V8's sampling
// profiler through the DevTools protocol) and the functions with the most self time are listed.
//   cp -r js/src /tmp/mpk-src-before; <change>
//   node js/bench/ab-browser.mjs --base=/tmp/mpk-src-before [--only=records,twitter] [--rounds=150] [--window-ms=4] [--keep] [--profile] [--js-flags=...]
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { withChromiumPage } from "./chromium.mjs";
import { loadDatasets } from "./datasets.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const basePath = arg("base");
if (!basePath) throw new Error("--base=<a copy of js/src from before the change> is required");
const only = arg("only", "").split(",").filter(Boolean);
const rounds = Number(arg("rounds", 150));
const windowMs = Number(arg("window-ms", 4));
const profile = process.argv.includes("--profile");
const keep = process.argv.includes("--keep"); // the last result stays alive until the next call, as in run.mjs
const jsFlags = arg("js-flags", ""); // e.g. --js-flags=--no-turbo-inlining, to see callees apart in a profile

const datasets = loadDatasets(resolve(here, "..", ".."))
  .filter(([name]) => !only.length || only.some((o) => name.startsWith(o)))
  .map(([name, text]) => [name, JSON.stringify(JSON.parse(text))]);

const entry = `
import * as base from ${JSON.stringify(resolve(basePath, "index.ts"))};
import * as cur from ${JSON.stringify(resolve(here, "..", "src", "index.ts"))};
import { Unpackr } from "msgpackr";
import { revive } from ${JSON.stringify(join(here, "suite.mjs"))};
globalThis.abSetup = (text) => {
  const value = revive(JSON.parse(text));
  const bytes = cur.encode(value).slice();
  const json = new TextEncoder().encode(text);
  const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
  const td = new TextDecoder();
  globalThis.abCodecs = { base: () => base.decode(bytes), cur: () => cur.decode(bytes), msgpackr: () => unpackr.unpack(bytes), JSON: () => JSON.parse(td.decode(json)) };
};
globalThis.abRun = (rounds, windowMs, keep) => {
  const codecs = globalThis.abCodecs;
  const time = (fn, ms) => {
    let n = 0;
    const t0 = performance.now();
    let t;
    do { if (keep) globalThis.abKept = fn(); else fn(); n++; t = performance.now(); } while (t - t0 < ms);
    return (t - t0) / n;
  };
  const samples = Object.fromEntries(Object.keys(codecs).map((k) => [k, []]));
  for (const k in codecs) time(codecs[k], 100);
  for (let r = 0; r < rounds; r++) for (const k in codecs) samples[k].push(time(codecs[k], windowMs));
  return samples;
};
globalThis.abLoop = (ms) => { const t0 = performance.now(); while (performance.now() - t0 < ms) globalThis.abCodecs.cur(); };
`;

const bundle = await esbuild.build({
  stdin: { contents: entry, resolveDir: here, loader: "js" },
  bundle: true,
  minify: false,
  write: false,
  format: "iife",
  target: "es2022",
  nodePaths: [join(here, "node_modules")],
  conditions: ["browser"],
  platform: "browser",
});
const files = {
  "/": ["text/html", "<!doctype html><meta charset=utf-8><title>mpk ab</title><script src=/ab.js></script>"],
  "/ab.js": ["text/javascript", bundle.outputFiles[0].text],
};
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[s.length >> 1] };
};
await withChromiumPage(files, { jsFlags }, async (page) => {
  for (const [name, text] of datasets) {
    await page.evaluate((t) => globalThis.abSetup(t), text);
    const samples = await page.evaluate(([r, w, k]) => globalThis.abRun(r, w, k), [rounds, windowMs, keep]);
    const st = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
    const ratio = (k) => `${k}/cur min ${(st[k].min / st.cur.min).toFixed(2)} median ${(st[k].median / st.cur.median).toFixed(2)}`;
    console.log(`${name} (chromium decode, cur ${(st.cur.min * 1000).toFixed(1)} µs): ${["base", "msgpackr", "JSON"].map(ratio).join(" | ")}`);
    if (profile) await profileCur(page);
  }
});

async function profileCur(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 50 });
  await cdp.send("Profiler.start");
  await page.evaluate(() => globalThis.abLoop(1500));
  const { profile: p } = await cdp.send("Profiler.stop");
  const self = new Map();
  const dt = new Map();
  for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  let total = 0;
  for (const node of p.nodes) {
    const t = dt.get(node.id) ?? 0;
    const f = node.callFrame;
    const key = `${f.functionName || "(anonymous)"}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + t);
    total += t;
  }
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 14);
  for (const [k, t] of top) console.log(`  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
  await cdp.detach();
}
