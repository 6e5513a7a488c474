// make bench-js: the Node benchmark, then the decode benchmark in headless Chromium, then the
// tables in bench/results/js.md. Run from the repository root after `make js-build`.
//   node js/bench/run.mjs [--quick] [--rounds=N] [--no-browser] [--no-node] [--only=name,...]
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { withChromiumPage } from "./chromium.mjs";
import { Packr, Unpackr, isNativeAccelerationEnabled } from "msgpackr";
import { Decoder as MsgpackDecoder, Encoder as MsgpackEncoder } from "@msgpack/msgpack";
import { decode as mpkDecode, Decoder as MpkDecoder, encode as mpkEncode, Encoder as MpkEncoder } from "../build/esm/index.js";
import { loadDatasets } from "./datasets.mjs";
import { runSuite } from "./suite.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..");
const quick = process.argv.includes("--quick");
const withBrowser = !process.argv.includes("--no-browser");
const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
const rounds = roundsArg ? Number(roundsArg.slice(9)) : quick ? 3 : 15;
const targetMs = quick ? 10 : 40;

const version = (pkg) => JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
const versions = {
  mpk: JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8")).version,
  msgpackr: version("msgpackr"),
  "msgpackr-extract": version("msgpackr-extract"),
  "@msgpack/msgpack": version("@msgpack/msgpack"),
  node: process.versions.node,
};

// msgpackr's Node entry installs the addon into its unpack.js module; a second instance of that
// module (another URL, the same file) has no addon: msgpackr in pure JavaScript, in the same run.
const pureUnpack = await import(pathToFileURL(join(here, "node_modules", "msgpackr", "unpack.js")).href + "?pure");
if (!isNativeAccelerationEnabled) throw new Error("msgpackr-extract did not load: cannot measure msgpackr with its addon");
if (pureUnpack.isNativeAccelerationEnabled) throw new Error("the pure msgpackr instance has the addon");

const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7).split(",");
const withNode = !process.argv.includes("--no-node");
const datasets = loadDatasets(repoRoot)
  .filter(([name]) => !only || only.some((o) => name.startsWith(o)))
  .map(([name, text]) => [name, JSON.stringify(JSON.parse(text))]);
const log = (s) => console.log(s);

const packr = new Packr({ useRecords: false });
const mpkShared = new MpkEncoder({ sharedBuffer: true });
const mpkZeroCopy = new MpkDecoder({ zeroCopy: true });
// int64AsType "number": 64-bit ints come back as numbers, as JSON.parse gives them (its default is bigint)
const unpackrOptions = { useRecords: false, mapsAsObjects: true, int64AsType: "number" };
const unpackr = new Unpackr(unpackrOptions);
const pureUnpackr = new pureUnpack.Unpackr(unpackrOptions);
// msgpackr's decoded bins are views into the input unless copyBuffers: compare like with like
const copyingUnpackr = new Unpackr({ ...unpackrOptions, copyBuffers: true });
const msgpackEncoder = new MsgpackEncoder();
const msgpackDecoder = new MsgpackDecoder();

console.log(`node: ${datasets.length} datasets, ${rounds} rounds`);
const nodeRows = !withNode ? [] : runSuite({
  datasets,
  codecs: [
    // encode: mpk's default returns memory of its own (a copy per call); "shared" is the
    // sharedBuffer option, views into one buffer as msgpackr's results are
    { label: "mpk", encode: mpkEncode, decode: mpkDecode },
    { label: "mpk (shared)", encode: (v) => mpkShared.encode(v) },
    { label: "mpk (zeroCopy)", decode: (b) => mpkZeroCopy.decode(b) },
    { label: "msgpackr (addon)", encode: (v) => packr.pack(v), decode: (b) => unpackr.unpack(b) },
    { label: "msgpackr (addon, copyBuffers)", decode: (b) => copyingUnpackr.unpack(b) },
    { label: "msgpackr (pure JS)", decode: (b) => pureUnpackr.unpack(b) },
    { label: "@msgpack/msgpack", encode: (v) => msgpackEncoder.encode(v), decode: (b) => msgpackDecoder.decode(b) },
  ],
  json: { encode: (v) => Buffer.from(JSON.stringify(v)), decode: (b) => JSON.parse(b.toString()) },
  rounds,
  targetMs,
  log,
});

let browserRows = null;
let chromiumVersion = null;
if (withBrowser) ({ rows: browserRows, version: chromiumVersion } = await runBrowser());

const out = report();
if (only || !withNode || !withBrowser || quick) {
  console.log(out);
  console.log("(partial run: bench/results/js.md left as it was)");
  process.exit(0);
}
mkdirSync(join(repoRoot, "bench", "results"), { recursive: true });
writeFileSync(join(repoRoot, "bench", "results", "js.md"), out);
console.log(out);

async function runBrowser() {
  const bundle = await esbuild.build({
    entryPoints: [join(here, "browser-entry.mjs")],
    bundle: true,
    minify: true,
    write: false,
    format: "iife",
    target: "es2020",
    nodePaths: [join(here, "node_modules")],
    // msgpackr's browser build, pure JS
    conditions: ["browser"],
    platform: "browser",
  });
  const files = {
    "/": ["text/html", "<!doctype html><meta charset=utf-8><title>mpk bench</title><script src=/bench.js></script>"],
    "/bench.js": ["text/javascript", bundle.outputFiles[0].text],
    "/datasets.json": ["application/json", JSON.stringify(datasets)],
  };
  return withChromiumPage(files, {}, async (page, context) => {
    console.log("chromium: running");
    const rows = await page.evaluate((o) => globalThis.runBrowserBench(o), { rounds, targetMs, encodeToo: false });
    return { rows, version: context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent)) };
  });
}

function fmt(ns) {
  if (ns == null) return "—";
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns.toFixed(0)} ns`;
}

function ratio(peer, mine) {
  if (peer == null || mine == null) return "—";
  return `${(peer / mine).toFixed(2)}x`;
}

function size(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`;
}

function table(rows, kind, labels, ratios) {
  const head = ["dataset", "msgpack / JSON size", ...labels, ...ratios.map(([l]) => l)];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const row of rows) {
    const t = row[kind];
    lines.push(`| ${[row.dataset, `${size(row.msgpackBytes)} / ${size(row.jsonBytes)}`, ...labels.map((l) => fmt(t[l])), ...ratios.map(([, peer, mine = "mpk"]) => ratio(t[peer], t[mine]))].join(" | ")} |`);
  }
  return lines.join("\n");
}

function report() {
  const date = new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
  const failed = [...nodeRows, ...(browserRows ?? [])].flatMap((r) => r.failed.map((f) => `${r.dataset}: ${f}`));
  const s = [];
  s.push("## js — mpk (TypeScript) vs msgpackr, @msgpack/msgpack and JSON");
  s.push("");
  s.push(`${date}; machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), shared with other builds, so only ratios within one run mean anything.`);
  s.push(`Versions: mpk ${versions.mpk}, msgpackr ${versions.msgpackr}, msgpackr-extract ${versions["msgpackr-extract"]}, @msgpack/msgpack ${versions["@msgpack/msgpack"]}, Node ${versions.node}${chromiumVersion ? `, Chromium ${chromiumVersion}` : ""}.`);
  s.push("");
  s.push(`Medians of ${rounds} interleaved rounds of ~${targetMs} ms each; time per call (lower is better); ratios are the peer's time over mpk's (above 1.00x: mpk is faster).`);
  s.push("msgpackr runs as `new Packr({useRecords: false})` / `new Unpackr({useRecords: false, mapsAsObjects: true, int64AsType: \"number\"})` (64-bit ints as numbers, like JSON.parse); \"(addon)\" has msgpackr-extract loaded, \"(pure JS)\" is a second instance of its decoder without it.");
  s.push("@msgpack/msgpack uses one reused `Encoder` / `Decoder`. JSON decode is `JSON.parse(bytes.toString())` in Node and `JSON.parse(new TextDecoder().decode(bytes))` in Chromium (the way a body arrives); JSON encode is `JSON.stringify` + UTF-8 encode; `JSON.parse(string)` parses a ready string.");
  s.push("Every library's result is checked against the data first; a failed check leaves its cell blank (—).");
  if (failed.length) s.push(`Failed checks: ${failed.join("; ")}.`);
  s.push("Reproduce: `make bench-js` (script `js/bench/run.mjs`).");
  s.push("");
  s.push("### Node — decode");
  s.push("");
  s.push(table(nodeRows, "decode", ["mpk", "mpk (zeroCopy)", "msgpackr (addon)", "msgpackr (addon, copyBuffers)", "msgpackr (pure JS)", "@msgpack/msgpack", "JSON", "JSON.parse(string)"], [["vs msgpackr (addon)", "msgpackr (addon)"], ["copy vs msgpackr copyBuffers", "msgpackr (addon, copyBuffers)"], ["zeroCopy vs msgpackr", "msgpackr (addon)", "mpk (zeroCopy)"], ["vs msgpackr (pure JS)", "msgpackr (pure JS)"], ["vs JSON", "JSON"]]));
  s.push("");
  s.push("### Node — encode");
  s.push("");
  s.push(table(nodeRows, "encode", ["mpk", "mpk (shared)", "msgpackr (addon)", "@msgpack/msgpack", "JSON"], [["owned vs msgpackr", "msgpackr (addon)"], ["shared vs msgpackr", "msgpackr (addon)", "mpk (shared)"], ["vs @msgpack/msgpack", "@msgpack/msgpack"], ["vs JSON", "JSON"]]));
  if (browserRows) {
    s.push("");
    s.push("### Chromium (headless) — decode");
    s.push("");
    s.push(table(browserRows, "decode", ["mpk", "msgpackr", "@msgpack/msgpack", "JSON", "JSON.parse(string)"], [["vs msgpackr", "msgpackr"], ["vs JSON", "JSON"], ["vs JSON.parse(string)", "JSON.parse(string)"]]));
  }
  s.push("");
  return s.join("\n");
}
