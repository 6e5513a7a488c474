// The browser bench page: decode every common workload with mpk, msgpackr, protobuf.js and JSON.parse.
// Results go to the page (table and chart) and to globalThis.benchResults (read by headless.mjs).
import * as mpk from "/mpk/mpk.min.js";

const params = new URLSearchParams(location.search);
const status = (s) => { document.getElementById("status").textContent = s; };
const fetchBytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());

async function load() {
  const manifest = (await (await fetch("/workloads/manifest.json")).json()).workloads;
  const roots = {};
  for (const file of ["seed.proto", "workloads.proto"]) {
    roots[file] = protobuf.parse(await (await fetch("/proto/" + file)).text(), { keepCase: true }).root;
  }
  const out = [];
  for (const w of manifest) {
    const item = { id: w.id, title: w.title, mp: await fetchBytes("/workloads/" + w.files.msgpack), json: await fetchBytes("/workloads/" + w.files.json) };
    if (w.files.pb) {
      item.pb = await fetchBytes("/workloads/" + w.files.pb);
      item.type = roots[w.proto.startsWith("seed.") ? "seed.proto" : "workloads.proto"].lookupType(w.proto);
    }
    out.push(item);
  }
  return out;
}

function libraries(w) {
  const unpackr = new msgpackr.Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
  const td = new TextDecoder();
  const libs = [
    ["mpk", () => mpk.decode(w.mp)],
    // bin payloads as views into the input, as msgpackr and protobuf.js return them by default
    ["mpk zeroCopy", () => mpk.decode(w.mp, { zeroCopy: true })],
    ["msgpackr", () => unpackr.unpack(w.mp)],
  ];
  if (w.pb) libs.push(["protobuf.js", () => w.type.decode(w.pb)]);
  libs.push(["JSON.parse", () => JSON.parse(td.decode(w.json))]);
  return libs;
}

/** time per call in ns: calls repeated until a sample lasts about targetMs */
function sample(fn, n) {
  const t = performance.now();
  for (let i = 0; i < n; i++) fn();
  return ((performance.now() - t) * 1e6) / n;
}
function calibrate(fn, targetMs) {
  let n = 1;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < n; i++) fn();
    const ms = performance.now() - t;
    if (ms >= targetMs / 4 || n >= 1 << 20) return Math.max(1, Math.round((n * targetMs) / Math.max(ms, 0.001)));
    n *= 4;
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const fmt = (ns) => ns == null ? "—" : ns >= 1e6 ? (ns / 1e6).toFixed(2) + " ms" : ns >= 1e3 ? (ns / 1e3).toFixed(1) + " µs" : ns.toFixed(0) + " ns";
const pause = () => new Promise((r) => setTimeout(r, 0));

async function run(rounds, targetMs) {
  const work = await load();
  const rows = [];
  for (const w of work) {
    status(`${w.title} ...`);
    await pause();
    const libs = libraries(w).filter(([name, fn]) => {
      try { fn(); return true; } catch (e) { console.warn(name, w.id, e); return false; }
    });
    const n = new Map(libs.map(([name, fn]) => [name, calibrate(fn, targetMs)]));
    const times = new Map(libs.map(([name]) => [name, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < libs.length; k++) {
        const [name, fn] = libs[(k + r) % libs.length];
        times.get(name).push(sample(fn, n.get(name)));
      }
    }
    const med = Object.fromEntries([...times].map(([name, t]) => [name, median(t)]));
    rows.push({ workload: w.id, title: w.title, bytes: { msgpack: w.mp.length, pb: w.pb ? w.pb.length : null, json: w.json.length }, ns: med });
  }
  return rows;
}

const LIBS = ["mpk", "mpk zeroCopy", "msgpackr", "protobuf.js", "JSON.parse"];
const COLORS = ["#1f77b4", "#9ecae1", "#ff7f0e", "#2ca02c", "#7f7f7f"];

function render(rows, rounds) {
  let h = `<table><tr><th>workload</th><th>bytes MP / pb / JSON</th>${LIBS.map((l) => `<th>${l}</th>`).join("")}${LIBS.slice(2).map((l) => `<th>${l} / mpk</th>`).join("")}</tr>`;
  for (const r of rows) {
    const best = Math.min(...LIBS.map((l) => r.ns[l] ?? Infinity));
    h += `<tr><td>${r.title}</td><td>${r.bytes.msgpack} / ${r.bytes.pb ?? "—"} / ${r.bytes.json}</td>`;
    h += LIBS.map((l) => `<td class="${r.ns[l] === best ? "win" : ""}">${fmt(r.ns[l])}</td>`).join("");
    h += LIBS.slice(2).map((l) => `<td>${r.ns[l] && r.ns.mpk ? (r.ns[l] / r.ns.mpk).toFixed(2) + "×" : "—"}</td>`).join("");
    h += "</tr>";
  }
  document.getElementById("table").innerHTML = h + `</table><p>${navigator.userAgent}; medians of ${rounds} rounds.</p>`;
  // grouped bars, log scale (the workloads span decades)
  const W = Math.max(700, rows.length * 60), H = 320, pad = 50, gw = (W - pad) / rows.length;
  const all = rows.flatMap((r) => LIBS.map((l) => r.ns[l]).filter(Boolean));
  const lo = Math.log10(Math.min(...all)) - 0.2, hi = Math.log10(Math.max(...all)) + 0.1;
  const y = (v) => H - 90 - ((Math.log10(v) - lo) / (hi - lo)) * (H - 110);
  let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-size="10">`;
  for (let e = Math.ceil(lo); e <= hi; e++) s += `<line x1="${pad}" x2="${W}" y1="${y(10 ** e)}" y2="${y(10 ** e)}" stroke="#ddd"/><text x="2" y="${y(10 ** e) + 3}">${fmt(10 ** e)}</text>`;
  rows.forEach((r, i) => {
    LIBS.forEach((l, k) => {
      if (!r.ns[l]) return;
      const x = pad + i * gw + 4 + (k * (gw - 8)) / LIBS.length;
      s += `<rect x="${x}" y="${y(r.ns[l])}" width="${(gw - 8) / LIBS.length - 1}" height="${H - 90 - y(r.ns[l])}" fill="${COLORS[k]}"><title>${l}: ${fmt(r.ns[l])}</title></rect>`;
    });
    s += `<text transform="translate(${pad + i * gw + gw / 2},${H - 85}) rotate(40)">${r.workload}</text>`;
  });
  LIBS.forEach((l, k) => { s += `<rect x="${pad + k * 110}" y="4" width="10" height="10" fill="${COLORS[k]}"/><text x="${pad + k * 110 + 14}" y="13">${l}</text>`; });
  document.getElementById("chart").innerHTML = s + "</svg>";
}

async function go() {
  const rounds = Number(document.getElementById("rounds").value) || 9;
  const targetMs = params.has("quick") ? 10 : 40;
  document.getElementById("run").disabled = true;
  try {
    const rows = await run(rounds, targetMs);
    render(rows, rounds);
    const versions = {};
    for (const pkg of ["msgpackr", "protobufjs"]) versions[pkg] = (await (await fetch(`/node_modules/${pkg}/package.json`)).json()).version;
    globalThis.benchResults = { userAgent: navigator.userAgent, rounds, targetMs, versions, rows };
    status("done");
  } catch (e) {
    status("failed: " + e);
    globalThis.benchResults = { error: String(e) };
  } finally {
    document.getElementById("run").disabled = false;
  }
}

document.getElementById("run").addEventListener("click", go);
if (params.has("rounds")) document.getElementById("rounds").value = params.get("rounds");
if (params.has("auto")) go();
