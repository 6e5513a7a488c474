// make bench-js: the Node benchmark, then the decode benchmark in headless Chromium, then the
// tables in bench/results/js.md and the rows in bench/results/js.json (the sidecar, bench/README.md).
// Run from the repository root after `make js-build`, `make bench-workloads` and the protobufjs
// code (mk/js.mk makes all three).
//   node js/bench/run.mjs [--quick] [--rounds=N] [--no-browser] [--no-node] [--only=id,...]
// --quick (or MPK_BENCH_QUICK=1): a few short rounds, for a first look; the files say so.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { withChromiumPage } from "./chromium.mjs";
import { Packr, Unpackr, isNativeAccelerationEnabled } from "msgpackr";
import { Decoder as MsgpackDecoder, Encoder as MsgpackEncoder } from "@msgpack/msgpack";
import { Decoder as MpkDecoder, encode as mpkEncode, Encoder as MpkEncoder } from "../build/esm/index.js";
import { loadWorkloads, workloadsToJson } from "./workloads.mjs";
import { runWorkloads } from "./suite.mjs";
import { protobufCodec } from "./pb.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..");
const quick = process.argv.includes("--quick") || process.env.MPK_BENCH_QUICK === "1";
const withBrowser = !process.argv.includes("--no-browser");
const withNode = !process.argv.includes("--no-node");
const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
const rounds = roundsArg ? Number(roundsArg.slice(9)) : quick ? 2 : 9;
const targetMs = quick ? 4 : 25;
const pbPath = join(repoRoot, "build", "js-bench", "workloads_pb.cjs");
if (!existsSync(pbPath)) throw new Error(`${pbPath} is missing: \`make bench-js\` makes it with pbjs`);
const started = Date.now();

const version = (pkg) => JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
const versions = {
  mpk: JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8")).version,
  msgpackr: version("msgpackr"),
  "msgpackr-extract": version("msgpackr-extract"),
  "@msgpack/msgpack": version("@msgpack/msgpack"),
  protobufjs: version("protobufjs"),
  node: process.versions.node,
};

// msgpackr's Node entry installs the addon into its unpack.js module; a second instance of that
// module (another URL, the same file) has no addon: msgpackr in pure JavaScript, in the same run.
const pureUnpack = await import(pathToFileURL(join(here, "node_modules", "msgpackr", "unpack.js")).href + "?pure");
if (!isNativeAccelerationEnabled) throw new Error("msgpackr-extract did not load: cannot measure msgpackr with its addon");
if (pureUnpack.isNativeAccelerationEnabled) throw new Error("the pure msgpackr instance has the addon");

const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7).split(",");
const workloads = loadWorkloads(repoRoot, mpkEncode).filter((w) => !only || only.some((o) => w.id.startsWith(o)));
const log = (s) => console.log(`${s} [${((Date.now() - started) / 1000).toFixed(1)} s]`);

// Variants keep like with like. Decode: "Node" / "Chromium" hold mpk's default (bins copied) with
// msgpackr's copyBuffers on workloads holding bins; "... zero-copy" holds mpk's zeroCopy with the
// libraries whose decoded bins are views into the input (msgpackr's default, @msgpack/msgpack,
// protobufjs). Encode: "Node" holds mpk's owned results; "Node shared" mpk's sharedBuffer with
// msgpackr (whose results share its buffer too).
const VIEW_LIBS = new Set(["msgpackr (addon)", "msgpackr (pure JS)", "msgpackr", "@msgpack/msgpack", "protobufjs (static)"]);


const packr = new Packr({ useRecords: false });
// int64 "number": 64-bit ints come back as numbers, as JSON.parse and msgpackr (int64AsType) give them
const mpk = new MpkDecoder({ int64: "number" });
const mpkZeroCopy = new MpkDecoder({ int64: "number", zeroCopy: true });
const mpkShared = new MpkEncoder({ sharedBuffer: true });
const unpackrOptions = { useRecords: false, mapsAsObjects: true, int64AsType: "number" };
const unpackr = new Unpackr(unpackrOptions);
const pureUnpackr = new pureUnpack.Unpackr(unpackrOptions);
// msgpackr's decoded bins are views into the input unless copyBuffers: compare like with like
const copyingUnpackr = new Unpackr({ ...unpackrOptions, copyBuffers: true });
const msgpackEncoder = new MsgpackEncoder();
const msgpackDecoder = new MsgpackDecoder();
const require = createRequire(import.meta.url);
// the Reader of the protobufjs/minimal the generated code requires (the same file, so the same module)
const pb = protobufCodec(require(pbPath), require(join(here, "node_modules", "protobufjs", "minimal.js")).Reader);

console.log(`node: ${workloads.length} workloads, ${rounds} rounds of ~${targetMs} ms${quick ? " (quick)" : ""}`);
const nodeRows = !withNode ? [] : runWorkloads({
  workloads,
  codecs: [
    // encode: mpk's default returns memory of its own (a copy per call); "shared" is the
    // sharedBuffer option, views into one buffer as msgpackr's results are
    { label: "mpk", encode: mpkEncode, decode: (b) => mpk.decode(b) },
    { label: "mpk (shared)", encode: (v) => mpkShared.encode(v) },
    { label: "mpk (zeroCopy)", decode: (b) => mpkZeroCopy.decode(b), bins: "only" },
    { label: "msgpackr (addon)", encode: (v) => packr.pack(v), decode: (b) => unpackr.unpack(b) },
    { label: "msgpackr (addon, copyBuffers)", decode: (b) => copyingUnpackr.unpack(b), bins: "only" },
    { label: "msgpackr (pure JS)", decode: (b) => pureUnpackr.unpack(b) },
    { label: "@msgpack/msgpack", encode: (v) => msgpackEncoder.encode(v), decode: (b) => msgpackDecoder.decode(b) },
  ],
  json: { encode: (v) => Buffer.from(JSON.stringify(v)), decode: (b) => JSON.parse(b.toString()) },
  pb,
  rounds,
  targetMs,
  log,
});

let browserRows = null;
let chromiumVersion = null;
if (withBrowser) ({ rows: browserRows, version: chromiumVersion } = await runBrowser());

const seconds = Math.round((Date.now() - started) / 1000);
const out = report();
if (only || !withNode || !withBrowser) {
  console.log(out);
  console.log("(partial run: bench/results/js.md and js.json left as they were)");
  process.exit(0);
}
mkdirSync(join(repoRoot, "bench", "results"), { recursive: true });
writeFileSync(join(repoRoot, "bench", "results", "js.md"), out);
writeFileSync(join(repoRoot, "bench", "results", "js.json"), JSON.stringify(sidecar(), null, 1) + "\n");
console.log(out);
console.log(`bench/results/js.md and js.json written (${seconds} s)`);

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
    plugins: [{ name: "mpk-bench-pb", setup: (b) => b.onResolve({ filter: /^mpk-bench-pb$/ }, () => ({ path: pbPath })) }],
  });
  const files = {
    "/": ["text/html", "<!doctype html><meta charset=utf-8><title>mpk bench</title><script src=/bench.js></script>"],
    "/bench.js": ["text/javascript", bundle.outputFiles[0].text],
    "/workloads.json": ["application/json", workloadsToJson(workloads)],
    "/favicon.ico": ["image/x-icon", ""], // else the console shows the browser's request for it as a 404
  };
  return withChromiumPage(files, {}, async (page, context) => {
    log("chromium: running");
    const rows = await page.evaluate((o) => globalThis.runBrowserBench(o), { rounds, targetMs, encodeToo: false });
    return { rows, version: context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent)) };
  });
}

// ---- the sidecar ----------------------------------------------------------------------------

function kindOf(label) {
  if (label.startsWith("mpk")) return "mpk";
  if (label === "JSON") return "json";
  if (label.startsWith("protobuf")) return "protobuf";
  return "msgpack";
}

function sidecarRows(rows, env) {
  const out = [];
  const push = (r, op, variant, library, ns) => {
    if (ns == null || library === "JSON.parse(string)") return;
    const bytes = kindOf(library) === "json" ? r.jsonBytes : kindOf(library) === "protobuf" ? r.pbBytes : r.msgpackBytes;
    out.push({ workload: r.id, label: r.label, op, variant, library, kind: kindOf(library), ns_per_op: Math.round(ns * 10) / 10, ...(bytes ? { bytes } : {}) });
  };
  for (const r of rows) {
    for (const [lib, ns] of Object.entries(r.decode)) {
      if (!r.hasBin) push(r, "decode", env, lib, ns);
      else if (lib === "mpk (zeroCopy)" || VIEW_LIBS.has(lib)) push(r, "decode", `${env} zero-copy`, lib, ns);
      else push(r, "decode", env, lib, ns);
    }
    for (const [lib, ns] of Object.entries(r.encode ?? {})) {
      if (lib === "mpk (shared)") push(r, "encode", `${env} shared`, lib, ns);
      else if (lib.startsWith("msgpackr")) {
        push(r, "encode", env, lib, ns);
        push(r, "encode", `${env} shared`, lib, ns);
      } else push(r, "encode", env, lib, ns);
    }
  }
  return out;
}

function sidecar() {
  return {
    name: "js",
    title: "TypeScript (js/, npm package mpk)",
    date: dateString(),
    machine: machine(),
    quick,
    versions: { ...versions, ...(chromiumVersion ? { chromium: chromiumVersion } : {}) },
    rows: [...sidecarRows(nodeRows, "Node"), ...sidecarRows(browserRows ?? [], "Chromium")],
  };
}

// ---- the tables -----------------------------------------------------------------------------
function dateString() {
  return new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

function machine() {
  return `${cpus().length} cores (${cpus()[0]?.model ?? "?"})`;
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
  if (n == null) return "—";
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`;
}

function table(rows, kind, labels, ratios) {
  const head = ["workload", "msgpack / JSON / pb size", ...labels, ...ratios.map(([l]) => l)];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const row of rows) {
    const t = row[kind];
    lines.push(`| ${[`${row.id}`, `${size(row.msgpackBytes)} / ${size(row.jsonBytes)} / ${size(row.pbBytes)}`, ...labels.map((l) => fmt(t[l])), ...ratios.map(([, peer, mine = "mpk"]) => ratio(t[peer], t[mine]))].join(" | ")} |`);
  }
  return lines.join("\n");
}

function report() {
  const failed = [...nodeRows, ...(browserRows ?? [])].flatMap((r) => r.failed.map((f) => `${r.id}: ${f}`));
  const s = [];
  s.push("## js — mpk (TypeScript) vs msgpackr, @msgpack/msgpack, protobufjs and JSON");
  s.push("");
  if (quick) s.push("**Quick run (QUICK=1 / MPK_BENCH_QUICK=1): a few short rounds, not figures to quote.**\n");
  s.push(`${dateString()}; machine: ${machine()}, shared with other builds, so only ratios within one run mean anything; the run took ${seconds} s.`);
  s.push(`Versions: mpk ${versions.mpk}, msgpackr ${versions.msgpackr}, msgpackr-extract ${versions["msgpackr-extract"]}, @msgpack/msgpack ${versions["@msgpack/msgpack"]}, protobufjs ${versions.protobufjs}, Node ${versions.node}${chromiumVersion ? `, Chromium ${chromiumVersion}` : ""}.`);
  s.push("");
  s.push(`Workloads: the common ones (\`build/bench-workloads\`, \`make bench-workloads\`), plus js_ascii_strings and js_geojson_properties made by js/bench. Medians of ${rounds} interleaved rounds of ~${targetMs} ms each; time per call (lower is better); ratios are the peer's time over mpk's (above 1.00x: mpk is faster).`);
  s.push("mpk decodes with `new Decoder({int64: \"number\"})` and msgpackr with `new Unpackr({useRecords: false, mapsAsObjects: true, int64AsType: \"number\"})` (64-bit ints as numbers, like JSON.parse); msgpackr encodes with `new Packr({useRecords: false})`; \"(addon)\" has msgpackr-extract loaded, \"(pure JS)\" is a second instance of its decoder without it.");
  s.push("Bins: mpk copies decoded bins by default and msgpackr returns views into the input unless `copyBuffers: true`; on workloads holding bins, \"copy vs msgpackr copyBuffers\" compares the copying modes and \"zeroCopy vs msgpackr\" mpk's `zeroCopy` with msgpackr's views. Encode: mpk's default returns memory of its own per call; \"mpk (shared)\" is `new Encoder({sharedBuffer: true})`, views into one reused buffer, as msgpackr's results are.");
  s.push("protobufjs: static code (`pbjs -t static-module` from `bench/workloads/*.proto` at bench time), `Type.decode(pb bytes)` / `Type.encode(message).finish()`, on the workloads with a message (its bins are views into the input). google-protobuf is not measured: protoc 3.21 has no JavaScript generator and its plugin (protoc-gen-js) is a binary download.");
  s.push("JSON decode is `JSON.parse(bytes.toString())` in Node and `JSON.parse(new TextDecoder().decode(bytes))` in Chromium (the way a body arrives); JSON encode is `JSON.stringify` + UTF-8 encode; `JSON.parse(string)` parses a ready string. On workloads holding bins, JSON has no bytes: its rows parse and stringify the workload's common .json text, whose bins are base64 strings (what JSON users send; no conversion between base64 and bytes is timed), checked against the MessagePack value.");
  s.push("On workloads holding bins, \"protobufjs (static, copied bins)\" decodes through a protobufjs Reader whose `bytes` fields are copied out of the input (protobufjs's own are views), the protobuf counterpart of mpk's default and msgpackr's `copyBuffers`.");
  s.push("Every library's result is checked against the data first; a failed check leaves its cell blank (—).");
  if (failed.length) s.push(`Failed checks: ${failed.join("; ")}.`);
  s.push("Reproduce: `make bench-js` (script `js/bench/run.mjs`; `QUICK=1` for a short run). Rows: `bench/results/js.json`.");
  s.push("");
  s.push("### Node — decode");
  s.push("");
  s.push(table(nodeRows, "decode", ["mpk", "mpk (zeroCopy)", "msgpackr (addon)", "msgpackr (addon, copyBuffers)", "msgpackr (pure JS)", "@msgpack/msgpack", "protobufjs (static)", "protobufjs (static, copied bins)", "JSON", "JSON.parse(string)"],
    [["vs msgpackr (addon)", "msgpackr (addon)"], ["copy vs msgpackr copyBuffers", "msgpackr (addon, copyBuffers)"], ["zeroCopy vs msgpackr", "msgpackr (addon)", "mpk (zeroCopy)"], ["vs msgpackr (pure JS)", "msgpackr (pure JS)"], ["vs protobufjs", "protobufjs (static)"], ["copy vs protobufjs copied", "protobufjs (static, copied bins)"], ["vs JSON", "JSON"]]));
  s.push("");
  s.push("### Node — encode");
  s.push("");
  s.push(table(nodeRows, "encode", ["mpk", "mpk (shared)", "msgpackr (addon)", "@msgpack/msgpack", "protobufjs (static)", "JSON"],
    [["owned vs msgpackr", "msgpackr (addon)"], ["shared vs msgpackr", "msgpackr (addon)", "mpk (shared)"], ["vs @msgpack/msgpack", "@msgpack/msgpack"], ["vs protobufjs", "protobufjs (static)"], ["vs JSON", "JSON"]]));
  if (browserRows) {
    s.push("");
    s.push("### Chromium (headless) — decode");
    s.push("");
    s.push(table(browserRows, "decode", ["mpk", "mpk (zeroCopy)", "msgpackr", "msgpackr (copyBuffers)", "@msgpack/msgpack", "protobufjs (static)", "protobufjs (static, copied bins)", "JSON", "JSON.parse(string)"],
      [["vs msgpackr", "msgpackr"], ["copy vs msgpackr copyBuffers", "msgpackr (copyBuffers)"], ["zeroCopy vs msgpackr", "msgpackr", "mpk (zeroCopy)"], ["vs protobufjs", "protobufjs (static)"], ["copy vs protobufjs copied", "protobufjs (static, copied bins)"], ["vs JSON", "JSON"], ["vs JSON.parse(string)", "JSON.parse(string)"]]));
  }
  s.push("");
  return s.join("\n");
}
