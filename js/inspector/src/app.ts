// The inspector page: input (file, drop, pasted hex/base64, same-origin URL), a virtualized tree of
// the values beside a virtualized hex view, details and export. The document is scanned in slices
// between frames (a 100 MiB input never blocks the page for long), and rows are made only for what
// is on screen: a container shows PAGE items at a time, with rows to page through the rest.
import { Doc, isNode, type Item, type Node } from "./doc.js";
import { hex, notation, parseText, writeNotation, payloadPreview, preview, rfc3339, timestampOf, utf8OrNull } from "./notation.js";
import { itemsOf, type WalkError } from "./walker.js";

const PAGE = 200;
const HEX_COLS = 16;
/** Scrollable heights are capped (browsers stop at a few million pixels); beyond, scrolling is scaled. */
const MAX_SCROLL_PX = 8_000_000;
/** Tokens scanned per step; steps run until a slice's time is used, then the page gets a frame. */
const SCAN_STEP = 20000;
const SLICE_MS = 12;

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

type Row =
  | { kind: "node"; node: Node; level: number; label: string; isKey: boolean }
  | { kind: "page"; parent: Node | null; level: number; start: number; text: string }
  | { kind: "missing"; error: WalkError; level: number };

let doc: Doc | null = null;
let rows: Row[] = [];
let selected: Node | null = null;
const expanded = new Set<number>();
/** First item shown of each container (by head offset; -1: the top level). */
const windows = new Map<number, number>();
let scanTimer = 0;
let loadStarted = 0;

/** A list of fixed-height rows of which only those on screen exist in the DOM. */
class VirtualList {
  readonly el: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly box: HTMLElement;
  private count = 0;
  private rowPx = 18;
  constructor(id: string, private readonly renderRow: (i: number) => HTMLElement) {
    this.el = $(id);
    this.spacer = this.el.querySelector(".spacer") as HTMLElement;
    this.box = this.el.querySelector(".rows") as HTMLElement;
    this.el.addEventListener("scroll", () => this.render());
  }
  setCount(n: number): void {
    this.count = n;
    this.spacer.style.height = `${Math.min(n * this.rowPx, MAX_SCROLL_PX)}px`;
    this.render();
  }
  private visible(): number {
    return Math.ceil(this.el.clientHeight / this.rowPx) + 1;
  }
  /** The first row shown at the current scroll position (scaled when the list is very tall). */
  first(): number {
    const full = this.count * this.rowPx;
    const view = this.el.clientHeight;
    if (full <= MAX_SCROLL_PX) return Math.floor(this.el.scrollTop / this.rowPx);
    const frac = this.el.scrollTop / Math.max(1, MAX_SCROLL_PX - view);
    return Math.max(0, Math.min(this.count - this.visible() + 1, Math.round(frac * (this.count - this.visible() + 1))));
  }
  scrollTo(i: number): void {
    const first = this.first();
    const n = this.visible() - 2;
    if (i >= first && i < first + n) return;
    const target = Math.max(0, i - Math.floor(n / 3));
    const full = this.count * this.rowPx;
    const view = this.el.clientHeight;
    this.el.scrollTop = full <= MAX_SCROLL_PX ? target * this.rowPx : (target / Math.max(1, this.count - this.visible() + 1)) * (MAX_SCROLL_PX - view);
    this.render();
  }
  render(): void {
    const first = this.first();
    const last = Math.min(this.count, first + this.visible());
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.appendChild(this.renderRow(i));
    this.box.replaceChildren(frag);
    this.box.style.transform = `translateY(${this.el.scrollTop - (this.count * this.rowPx <= MAX_SCROLL_PX ? this.el.scrollTop % this.rowPx : 0)}px)`;
  }
}

const tree = new VirtualList("tree", treeRow);
const hexList = new VirtualList("hex", hexRow);

// ---- rows of the tree ----

function labelOf(parent: Node | null, index: number): { label: string; isKey: boolean } {
  if (!parent) return { label: `#${index}`, isKey: false };
  if (parent.tok.type === "map") return index % 2 === 0 ? { label: `key ${index >> 1}`, isKey: true } : { label: "→", isKey: false };
  return { label: `[${index}]`, isKey: false };
}

function buildRows(): void {
  rows = [];
  if (!doc) return;
  const visit = (parent: Node | null, level: number): void => {
    const d = doc!;
    const count = d.itemCount(parent);
    const start = windows.get(parent ? parent.offset : -1) ?? 0;
    if (start > 0) rows.push({ kind: "page", parent, level, start: Math.max(0, start - PAGE), text: `▲ items ${Math.max(0, start - PAGE)}–${start - 1}` });
    const items: Item[] = d.items(parent, start, start + PAGE);
    for (const item of items) {
      if (!isNode(item)) {
        rows.push({ kind: "missing", error: item.missing, level });
        continue;
      }
      rows.push({ kind: "node", node: item, level, ...labelOf(parent, item.index) });
      if (expanded.has(item.offset) && itemsOf(item.tok) > 0) visit(item, level + 1);
    }
    const end = start + items.length;
    if (end < count && !(items.length && isNode(items[items.length - 1]!) && (items[items.length - 1] as Node).error)) {
      rows.push({ kind: "page", parent, level, start: end, text: `▼ items ${end}–${Math.min(count, end + PAGE) - 1} of ${count}${parent ? "" : doc!.scanner.done ? "" : " so far"}` });
    }
  };
  visit(null, 0);
}

function el(tag: string, cls: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function treeRow(i: number): HTMLElement {
  const r = rows[i]!;
  const div = el("div", "row");
  div.style.paddingLeft = `${4 + r.level * 16}px`;
  if (r.kind === "page") {
    div.classList.add("more");
    div.textContent = r.text;
    div.addEventListener("click", () => {
      windows.set(r.parent ? r.parent.offset : -1, r.start);
      refreshTree();
    });
    return div;
  }
  if (r.kind === "missing") {
    div.classList.add("missing");
    div.textContent = `⚠ ${r.error.kind} at byte ${r.error.offset}: the input ends before this item`;
    return div;
  }
  const n = r.node;
  const d = doc!;
  const container = itemsOf(n.tok) > 0 && !(n.error && n.error.offset === n.offset);
  const toggle = el("span", "toggle", container ? (expanded.has(n.offset) ? "▾" : "▸") : "");
  div.append(toggle, el("span", r.isKey ? "label key" : "label", r.label), el("span", "fmt", n.tok.format));
  if (n.error && n.error.offset === n.offset) {
    div.classList.add("broken");
    div.append(el("span", "err", `⚠ ${n.error.kind} at byte ${n.error.offset}`));
  } else {
    if (n.error) div.classList.add("broken");
    div.append(el("span", "val", preview(d.bytes, n.tok)));
    const end = d.quickEnd(n);
    div.append(el("span", "meta", `@${n.offset} len ${end >= 0 ? end - n.offset : !n.parent && d.scanning(n.index) ? "? (scanning)" : "?"}`));
    if (n.error) div.append(el("span", "err", ` ⚠ ${n.error.kind} at byte ${n.error.offset} inside`));
  }
  div.dataset.offset = String(n.offset);
  if (selected && selected.offset === n.offset) div.classList.add("selected");
  toggle.addEventListener("click", (e) => {
    e.stopPropagation();
    if (!container) return;
    if (expanded.has(n.offset)) expanded.delete(n.offset);
    else expanded.add(n.offset);
    refreshTree();
  });
  div.addEventListener("click", () => select(n, false));
  div.addEventListener("dblclick", () => toggle.click());
  return div;
}

function refreshTree(): void {
  buildRows();
  tree.setCount(rows.length);
}

// ---- the hex view ----

function hexRow(i: number): HTMLElement {
  const d = doc!;
  const div = el("div", "hexrow");
  const start = i * HEX_COLS;
  div.append(el("span", "off", start.toString(16).padStart(8, "0")));
  const selStart = selected ? selected.offset : -1;
  const selEnd = selected ? d.endOf(selected) : -1;
  const hdrEnd = selected ? selected.offset + selected.tok.headerLen : -1;
  const err = d.scanner.done ? d.error : null;
  const bad = err ? d.validEnd : Infinity;
  let ascii = "";
  for (let o = start; o < start + HEX_COLS; o++) {
    if (o >= d.length) {
      if (err && o === d.length && err.offset === d.length) {
        const mark = el("span", "b errend", "⟂");
        mark.title = `${err.kind} at byte ${err.offset}: the input ends here`;
        mark.dataset.o = String(o);
        div.append(mark);
      }
      break;
    }
    const v = d.bytes[o]!;
    const b = el("span", "b", (v < 16 ? "0" : "") + v.toString(16));
    b.dataset.o = String(o);
    if (o >= selStart && o < selEnd) b.classList.add(o < hdrEnd ? "hdr" : "sel");
    if (o >= bad) b.classList.add("bad");
    if (err && o === err.offset) {
      b.classList.add("errbyte");
      b.title = `${err.kind} at byte ${err.offset}`;
    }
    div.append(b);
    ascii += v >= 0x20 && v < 0x7f ? String.fromCharCode(v) : ".";
  }
  div.append(el("span", "asc", ascii));
  return div;
}

// ---- selection ----

function select(node: Node, fromBytes: boolean): void {
  selected = node;
  showDetails(node);
  if (fromBytes) {
    // open the path down to the node and page each container to it
    let p: Node | null = node.parent;
    let child: Node = node;
    for (;;) {
      windows.set(p ? p.offset : -1, Math.floor(child.index / PAGE) * PAGE);
      if (!p) break;
      expanded.add(p.offset);
      child = p;
      p = p.parent;
    }
    refreshTree();
    const at = rows.findIndex((r) => r.kind === "node" && r.node.offset === node.offset);
    if (at >= 0) tree.scrollTo(at);
  } else {
    tree.render();
    hexList.scrollTo(Math.floor(node.offset / HEX_COLS));
  }
  hexList.render();
  document.body.dataset.selected = `${node.offset}-${doc!.endOf(node)}`;
}

function selectOffset(o: number): void {
  if (!doc) return;
  const path = doc.pathTo(o);
  const node = path[path.length - 1];
  if (node) select(node, true);
}

function showDetails(n: Node): void {
  const d = doc!;
  const t = n.tok;
  const end = d.endOf(n);
  const rowsOut: Array<[string, string]> = [
    ["format", `${t.format} (head byte 0x${t.head.toString(16).padStart(2, "0")})`],
    ["offset", `${n.offset} (0x${n.offset.toString(16)})`],
    ["length", `${end - n.offset} bytes (header ${t.headerLen}${t.len ? `, payload ${t.len}` : ""})`],
    ["depth", String(n.depth)],
  ];
  if (t.type === "array") rowsOut.push(["elements", String(t.count)]);
  if (t.type === "map") rowsOut.push(["pairs", String(t.count)]);
  if (n.error) rowsOut.push(["error", `${n.error.kind} at byte ${n.error.offset}`]);
  else if (t.type === "ext" && t.extType === -1) {
    const { sec, nsec } = timestampOf(d.bytes, t);
    rowsOut.push(["timestamp", rfc3339(sec, nsec) ?? "outside years 0000–9999"], ["sec, nsec", `${sec}, ${nsec}`]);
  } else if (t.type === "bin" || t.type === "ext") {
    if (t.type === "ext") rowsOut.push(["ext type", String(t.extType)]);
    const pv = payloadPreview(d.bytes, t, 256);
    rowsOut.push(["hex", pv.hex + (pv.cut ? "…" : "")], ["base64", pv.base64 + (pv.cut ? "…" : "")]);
  } else if (t.type === "str") {
    const s = utf8OrNull(d.bytes, n.offset + t.headerLen, end);
    rowsOut.push(s === null ? ["invalid UTF-8", hex(d.bytes, n.offset + t.headerLen, Math.min(end, n.offset + t.headerLen + 256))] : ["text", s.length > 2000 ? `${s.slice(0, 2000)}…` : s]);
  } else if (itemsOf(t) === 0) {
    rowsOut.push(["value", preview(d.bytes, t)]);
  }
  const table = document.createElement("table");
  for (const [k, v] of rowsOut) {
    const tr = document.createElement("tr");
    tr.append(el("th", "", k), el("td", "", v));
    table.append(tr);
  }
  $("details").replaceChildren(table);
  ($("export-node") as HTMLButtonElement).disabled = n.error !== null;
}

// ---- export ----

let downloadUrl = "";
function showExport(parts: string[], name: string): void {
  const out = $<HTMLTextAreaElement>("export");
  let text = "";
  for (const p of parts) {
    if (text.length > 200_000) {
      text += "\n… (the rest is in the download)";
      break;
    }
    text += p;
  }
  out.value = text;
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = URL.createObjectURL(new Blob(parts, { type: "application/json" }));
  const a = $<HTMLAnchorElement>("download");
  a.href = downloadUrl;
  a.download = name;
  a.hidden = false;
}

$("export-node").addEventListener("click", () => {
  if (doc && selected && !selected.error) showExport([notation(doc.bytes, selected.offset, selected.depth)], `value-at-${selected.offset}.json`);
});
$("export-all").addEventListener("click", () => {
  if (!doc) return;
  const parts: string[] = [];
  let p = 0;
  const end = doc.validEnd;
  while (p < end) {
    const out: string[] = [];
    p = writeNotation(doc.bytes, p, 0, out);
    parts.push(out.join(""), "\n");
  }
  showExport(parts, "values.jsonl");
});

// ---- loading ----

function status(text: string): void {
  $("status").textContent = text;
}

function showError(text: string | null, e?: WalkError): void {
  const box = $("error");
  box.hidden = text === null;
  box.textContent = text ?? "";
  if (e) {
    box.dataset.kind = e.kind;
    box.dataset.offset = String(e.offset);
  } else {
    delete box.dataset.kind;
    delete box.dataset.offset;
  }
}

function open(bytes: Uint8Array, what: string): void {
  loadStarted = performance.now();
  if (scanTimer) clearTimeout(scanTimer);
  doc = new Doc(bytes);
  selected = null;
  expanded.clear();
  windows.clear();
  showError(null);
  $("details").replaceChildren(el("p", "hint", "Select a value or a byte."));
  ($("export-node") as HTMLButtonElement).disabled = true;
  ($("export-all") as HTMLButtonElement).disabled = false;
  document.body.dataset.state = "scanning";
  delete document.body.dataset.selected;
  const current = doc;
  scanSlice(current, what);
  // the first rows are on screen after the first slice
  refreshTree();
  hexList.setCount(Math.ceil((bytes.length + 1) / HEX_COLS));
  tree.el.scrollTop = 0;
  hexList.el.scrollTop = 0;
  document.body.dataset.firstPaintMs = String(Math.round(performance.now() - loadStarted));
}

// A message to ourselves comes back sooner than setTimeout(0), which browsers clamp to 4 ms.
const channel = new MessageChannel();
let pending: (() => void) | null = null;
channel.port1.onmessage = () => {
  const f = pending;
  pending = null;
  f?.();
};

function scanSlice(d: Doc, what: string): void {
  if (d !== doc) return;
  const t0 = performance.now();
  while (!d.scanner.run(SCAN_STEP) && performance.now() - t0 < SLICE_MS);
  const shownBefore = rows.length;
  if (d.scanner.done) {
    const err = d.error;
    const n = d.scanner.values;
    status(`${what}: ${d.length} bytes, ${n} value${n === 1 ? "" : "s"}${err ? `, then an error` : ""}`);
    $("status").title = `scanned in ${Math.round(performance.now() - loadStarted)} ms`;
    if (err) showError(`${err.kind} at byte ${err.offset}: the ${n} value${n === 1 ? "" : "s"} before byte ${d.validEnd} are whole; the bytes from there on are marked`, err);
    document.body.dataset.scanMs = String(Math.round(performance.now() - loadStarted));
    document.body.dataset.state = "ready";
    refreshTree();
    hexList.render();
    return;
  }
  status(`${what}: scanning… ${d.scanner.values} values, ${Math.floor((100 * d.scanner.valueStart) / Math.max(1, d.length))}%`);
  // rows change only while the top-level page is not full yet
  if (shownBefore < PAGE + 2 || !windows.size) refreshTree();
  pending = () => scanSlice(d, what);
  channel.port2.postMessage(0);
}

function readText(): void {
  const text = $<HTMLTextAreaElement>("text").value;
  const mode = $<HTMLSelectElement>("textmode").value;
  try {
    const bytes = parseText(text, mode as "auto" | "hex" | "base64");
    open(bytes, "pasted text");
  } catch (e) {
    showError(`the pasted text: ${(e as Error).message}`);
  }
}

async function openFile(file: File): Promise<void> {
  status(`reading ${file.name}…`);
  const t0 = performance.now();
  const bytes = new Uint8Array(await file.arrayBuffer());
  document.body.dataset.readMs = String(Math.round(performance.now() - t0));
  open(bytes, file.name);
}

async function loadUrl(): Promise<void> {
  const raw = $<HTMLInputElement>("url").value.trim();
  if (!raw) return;
  let url: URL;
  try {
    url = new URL(raw, location.href);
  } catch {
    return showError(`not a URL: ${raw}`);
  }
  if (location.protocol === "file:") return showError("loading a URL needs the page served over http(s); open the file instead");
  if (url.origin !== location.origin) return showError(`only same-origin URLs are loaded (${location.origin}), not ${url.origin}`);
  status(`loading ${url.pathname}…`);
  try {
    const res = await fetch(url.href, { headers: { Accept: "application/vnd.msgpack" }, credentials: "same-origin" });
    if (!res.ok) return showError(`${url.pathname}: HTTP ${res.status}`);
    open(new Uint8Array(await res.arrayBuffer()), url.pathname);
  } catch (e) {
    showError(`${url.pathname}: ${(e as Error).message}`);
  }
}

$<HTMLInputElement>("file").addEventListener("change", (e) => {
  const f = (e.target as HTMLInputElement).files?.[0];
  if (f) void openFile(f);
});
$("decode").addEventListener("click", readText);
$("load").addEventListener("click", () => void loadUrl());
$("url").addEventListener("keydown", (e) => {
  if (e.key === "Enter") void loadUrl();
});
// keys in the tree: up/down move the selection, right opens (or enters), left closes (or leaves)
tree.el.addEventListener("keydown", (e) => {
  if (!doc || !selected) return;
  const at = rows.findIndex((r) => r.kind === "node" && r.node.offset === selected!.offset);
  if (at < 0) return;
  const node = selected;
  const openable = itemsOf(node.tok) > 0 && !(node.error && node.error.offset === node.offset);
  let next: Node | null = null;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    const step = e.key === "ArrowDown" ? 1 : -1;
    for (let i = at + step; i >= 0 && i < rows.length; i += step) {
      const r = rows[i]!;
      if (r.kind === "node") {
        next = r.node;
        break;
      }
    }
  } else if (e.key === "ArrowRight" && openable) {
    if (!expanded.has(node.offset)) {
      expanded.add(node.offset);
      refreshTree();
    } else {
      const r = rows[at + 1];
      if (r && r.kind === "node") next = r.node;
    }
  } else if (e.key === "ArrowLeft") {
    if (openable && expanded.has(node.offset)) {
      expanded.delete(node.offset);
      refreshTree();
    } else next = node.parent;
  } else return;
  e.preventDefault();
  if (next) {
    select(next, false);
    const i = rows.findIndex((r) => r.kind === "node" && r.node.offset === next!.offset);
    if (i >= 0) tree.scrollTo(i);
  }
});
$("goto").addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || !doc) return;
  const o = Number($<HTMLInputElement>("goto").value.trim());
  if (Number.isInteger(o) && o >= 0 && o < doc.length) {
    selectOffset(o);
    hexList.scrollTo(Math.floor(o / HEX_COLS));
  } else showError(`go to byte: not an offset within 0..${doc.length - 1}`);
});
// a click on a byte selects the deepest value holding it; a drag over bytes, the deepest holding all
let dragFrom = -1;
const byteAt = (e: MouseEvent): number => {
  const o = (e.target as HTMLElement).dataset?.o;
  return o === undefined || !doc ? -1 : Math.min(Number(o), doc.length - 1);
};
$("hex").addEventListener("mousedown", (e) => {
  dragFrom = byteAt(e);
  if (dragFrom >= 0) e.preventDefault(); // no text selection while dragging over bytes
});
$("hex").addEventListener("mouseup", (e) => {
  const to = byteAt(e);
  const from = dragFrom;
  dragFrom = -1;
  if (!doc || from < 0 || to < 0) return;
  if (from === to) return selectOffset(to);
  const a = doc.pathTo(Math.min(from, to));
  const b = doc.pathTo(Math.max(from, to));
  let i = 0;
  while (i < a.length && i < b.length && a[i]!.offset === b[i]!.offset) i++;
  if (i > 0) select(a[i - 1]!, true);
});
let dragDepth = 0;
document.addEventListener("dragenter", (e) => {
  e.preventDefault();
  dragDepth++;
  $("drop").hidden = false;
});
document.addEventListener("dragleave", () => {
  if (--dragDepth <= 0) $("drop").hidden = true;
});
document.addEventListener("dragover", (e) => e.preventDefault());
document.addEventListener("drop", (e) => {
  e.preventDefault();
  dragDepth = 0;
  $("drop").hidden = true;
  const f = e.dataTransfer?.files[0];
  if (f) void openFile(f);
});
window.addEventListener("resize", () => {
  tree.render();
  hexList.render();
});
