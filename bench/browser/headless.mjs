// Runs the browser bench page (bench/browser) in headless Chromium (Debian's /usr/bin/chromium,
// driven by js/'s playwright-core) and writes bench/results/browser.md and its sidecar
// bench/results/browser.json. Part of `make bench` (step bench-browser-headless).
//   node bench/browser/headless.mjs [--rounds=N] [--quick]
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const quick = process.argv.includes("--quick");
const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
const rounds = roundsArg ? Number(roundsArg.slice(9)) : quick ? 3 : 9;
// playwright-core is js/'s dev dependency (make js-build installs it); it never downloads a browser
const { chromium } = createRequire(join(root, "js", "package.json"))("playwright-core");

const server = spawn("python3", [join(here, "serve.py"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((ok, fail) => {
  let buf = "";
  server.stdout.on("data", (d) => {
    buf += d;
    const m = buf.match(/open (http:\/\/\S+)/);
    if (m) ok(m[1]);
  });
  server.on("exit", (code) => fail(new Error(`serve.py exited with ${code}`)));
});
let results;
try {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => console.log(`chromium error: ${e.message}`));
    await page.goto(`${url}?auto&rounds=${rounds}${quick ? "&quick" : ""}`);
    await page.waitForFunction(() => globalThis.benchResults, null, { timeout: 30 * 60 * 1000, polling: 1000 });
    results = await page.evaluate(() => globalThis.benchResults);
  } finally {
    await browser.close();
  }
} finally {
  server.kill();
}
if (results.error) {
  console.error(`browser bench failed: ${results.error}`);
  process.exit(1);
}

const fmt = (ns) => ns == null ? "—" : ns >= 1e6 ? (ns / 1e6).toFixed(2) + " ms" : ns >= 1e3 ? (ns / 1e3).toFixed(1) + " µs" : ns.toFixed(0) + " ns";
const date = new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
const chromeVersion = (results.userAgent.match(/Chrome\/(\S+)/) || [])[1] || "?";
const LIBS = [["mpk", "mpk"], ["mpk zeroCopy", "mpk"], ["msgpackr", "msgpack"], ["protobuf.js", "protobuf"], ["JSON.parse", "json"]];
const md = [
  "## Browser page (headless Chromium): decode, mpk vs msgpackr vs protobuf.js vs JSON.parse",
  "",
  `${date}${quick ? " (QUICK=1 run: fewer rounds)" : ""}. Chromium ${chromeVersion} (headless), msgpackr ${results.versions.msgpackr} (pure JS), ` +
    `protobufjs ${results.versions.protobufjs} (\`Type.decode\`, reflection from the .proto files). The page of \`make bench-browser\`, ` +
    `run by \`bench/browser/headless.mjs\`: medians of ${results.rounds} interleaved rounds of about ${results.targetMs} ms; ` +
    "JSON is `JSON.parse(new TextDecoder().decode(bytes))`. msgpackr and protobuf.js return bin payloads as views into the input; " +
    "mpk copies them unless asked for views (`mpk zeroCopy`, its `zeroCopy: true` option). × is the other library's time over plain mpk's (above 1: mpk is faster).",
  "",
  "| workload | bytes MP / pb / JSON | mpk | mpk zeroCopy | msgpackr | protobuf.js | JSON.parse | × msgpackr | × protobuf.js | × JSON.parse |",
  "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
];
const rows = [];
for (const r of results.rows) {
  const x = (l) => (r.ns[l] && r.ns.mpk ? (r.ns[l] / r.ns.mpk).toFixed(2) : "—");
  md.push(`| ${r.title} | ${r.bytes.msgpack} / ${r.bytes.pb ?? "—"} / ${r.bytes.json} | ${LIBS.map(([l]) => fmt(r.ns[l])).join(" | ")} | ${x("msgpackr")} | ${x("protobuf.js")} | ${x("JSON.parse")} |`);
  for (const [l, kind] of LIBS) {
    if (r.ns[l] == null) continue;
    const bytes = kind === "protobuf" ? r.bytes.pb : kind === "json" ? r.bytes.json : r.bytes.msgpack;
    rows.push({ workload: r.workload, label: r.title, op: "decode", variant: "Chromium page", library: l, kind, ns_per_op: r.ns[l], bytes });
  }
}
writeFileSync(join(root, "bench", "results", "browser.md"), md.join("\n") + "\n");
writeFileSync(join(root, "bench", "results", "browser.json"), JSON.stringify({
  name: "browser", title: "Browser page (headless Chromium)", date, quick, machine: "",
  versions: { chromium: chromeVersion, msgpackr: results.versions.msgpackr, protobufjs: results.versions.protobufjs }, rows,
}, null, 1) + "\n");
console.log(`bench/results/browser.md: ${results.rows.length} workloads`);
