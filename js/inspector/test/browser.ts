// The page in headless Chromium (Debian's /usr/bin/chromium through playwright-core; nothing is
// downloaded): opened from file:// under its Content-Security-Policy, a small file loaded, a node
// clicked and its highlighted bytes checked, a byte clicked and its node checked, an export, bad
// hex pasted and its marked offset and kind checked, a ~100 MiB generated file opened (time to
// first rows, scan time, longest frame gap and JS heap printed; only a generous budget asserted),
// and a same-origin URL loaded over http with the MessagePack Accept header. Saves screenshot.png.
import { createServer } from "node:http";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Page } from "playwright-core";
import { encode } from "../../src/encode.js";
import { ExtData } from "../../src/ExtData.js";
import type { Check } from "./unit.js";

const CHROMIUM_FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
/** Only to catch a hang: the large file must be whole on screen within this. */
const LARGE_BUDGET_MS = 60_000;

function cat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Where `needle` first occurs in `hay`. */
function find(hay: Uint8Array, needle: number[]): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

async function cells(page: Page, cls: string): Promise<number[]> {
  return page.$$eval(`#hex .b.${cls}`, (els) => els.map((e) => Number((e as HTMLElement).dataset.o)));
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);

/** The tree's rows on screen once it is scrolled to the bottom. */
async function treeBottom(page: Page): Promise<string[]> {
  await page.$eval("#tree", (e) => void (e.scrollTop = e.scrollHeight));
  await page.waitForTimeout(50); // the scroll event renders the rows
  return page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
}

export async function browserTests(check: Check, pageDir: string, _vectorsDir: string): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "mpk-inspector-"));
  const userDataDir = join(tmp, "profile");
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 760 },
  });
  const server = createServer();
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    const requests: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${String(e)}`));
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("request", (r) => requests.push(r.url()));

    // ---- a small file of several values, from file:// ----
    const record = {
      id: 7,
      name: "tea",
      tags: ["green", "hot"],
      at: new Date("2026-11-26T09:00:00.500Z"),
      raw: new Uint8Array([0, 1, 2, 0xff]),
      point: new ExtData(5, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])),
    };
    const sample = cat([encode(record), encode(42), encode("second"), encode([1.5, null, true])]);
    const samplePath = join(tmp, "sample.mpk");
    const fd = openSync(samplePath, "w");
    writeSync(fd, sample);
    closeSync(fd);
    const indexUrl = pathToFileURL(join(pageDir, "index.html")).href;
    await page.goto(indexUrl);
    await page.setInputFiles("#file", samplePath);
    await page.waitForSelector("body[data-state=ready]");
    const tops = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
    check("page: a file of 4 values shows 4 top-level rows", tops.length === 4 && tops[0]!.includes("#0") && tops[0]!.includes("fixmap") && tops[3]!.includes("fixarray"), JSON.stringify(tops));

    // expand the map, click the "tea" value: its bytes are highlighted, header apart
    await page.click("#tree .row[data-offset='0'] .toggle");
    const kids = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
    check("page: expanding the map shows its 6 keys and 6 values", kids.length === 4 + 12 && kids.some((k) => k.includes("key 1") && k.includes('"name"')), JSON.stringify(kids));
    const tea = find(sample, [0xa3, 0x74, 0x65, 0x61]);
    await page.click(`#tree .row[data-offset='${tea}']`);
    const selectedRange = await page.getAttribute("body", "data-selected");
    const hdr = await cells(page, "hdr");
    const sel = await cells(page, "sel");
    check("page: clicking the str node selects bytes [offset, end)", selectedRange === `${tea}-${tea + 4}`, String(selectedRange));
    check("page: the hex view highlights its head byte and its payload", JSON.stringify(hdr) === JSON.stringify([tea]) && JSON.stringify(sel) === JSON.stringify(range(tea + 1, tea + 4)), `hdr ${hdr} sel ${sel}`);
    const details = await page.textContent("#details");
    check("page: the details name the format, offset and length", !!details && details.includes("fixstr") && details.includes(`${tea} (0x`) && details.includes("4 bytes"), String(details));

    // click a byte inside the timestamp's payload: the timestamp node is selected and shown as a date
    const ts = find(sample, [0xd7, 0xff]);
    await page.click(`#hex .b[data-o='${ts + 5}']`);
    const tsRange = await page.getAttribute("body", "data-selected");
    const tsRow = await page.textContent("#tree .row.selected");
    check("page: clicking a byte selects the deepest value holding it (the timestamp)", tsRange === `${ts}-${ts + 10}` && !!tsRow && tsRow.includes("fixext8") && tsRow.includes("2026-11-26T09:00:00.5Z") && tsRow.includes(`@${ts} len 10`), `${tsRange} ${tsRow}`);
    // a drag from the "tags" array's first str to its second selects the array holding both
    const tagsArr = find(sample, [0x92, 0xa5]);
    await page.hover(`#hex .b[data-o='${tagsArr + 2}']`);
    await page.mouse.down();
    await page.hover(`#hex .b[data-o='${tagsArr + 8}']`);
    await page.mouse.up();
    check("page: dragging over bytes selects the deepest value holding them all", (await page.getAttribute("body", "data-selected")) === `${tagsArr}-${tagsArr + 11}`, String(await page.getAttribute("body", "data-selected")));
    const rawOff = find(sample, [0xc4, 0x04]);
    await page.click(`#hex .b[data-o='${rawOff + 3}']`);
    const binDetails = await page.textContent("#details");
    check("page: bin shows a hex and a base64 preview", !!binDetails && binDetails.includes("bin8") && binDetails.includes("000102ff") && binDetails.includes("AAEC/w=="), String(binDetails));
    const extOff = find(sample, [0xd7, 0x05]);
    await page.click(`#hex .b[data-o='${extOff}']`);
    const extRow = await page.textContent("#tree .row.selected");
    check("page: ext shows its type", !!extRow && extRow.includes("fixext8") && extRow.includes("type 5: 0102030405060708"), String(extRow));

    // keys: from the "tea" str, down to key 2, up and left to the map, right closes nothing, left closes it
    await page.click(`#tree .row[data-offset='${tea}']`);
    await page.keyboard.press("ArrowDown");
    const down = await page.textContent("#tree .row.selected");
    await page.keyboard.press("ArrowLeft");
    const left = await page.getAttribute("#tree .row.selected", "data-offset");
    await page.keyboard.press("ArrowLeft");
    const closed = await page.$$eval("#tree .row", (els) => els.length);
    await page.keyboard.press("ArrowRight");
    const reopened = await page.$$eval("#tree .row", (els) => els.length);
    check("page: arrow keys move through the tree, open and close", !!down && down.includes("key 2") && left === "0" && closed === 4 && reopened === 16, `${down} ${left} ${closed} ${reopened}`);

    // export: a node, then everything, in the mpk tool's notation
    await page.click("#tree .row[data-offset='0']");
    await page.click("#export-node");
    const exported = await page.inputValue("#export");
    const want = '{"id":7,"name":"tea","tags":["green","hot"],"at":{"$ts":"2026-11-26T09:00:00.5Z"},"raw":{"$bin":"AAEC/w=="},"point":{"$ext":[5,"AQIDBAUGBwg="]}}';
    check("page: a node exports in the lossless notation", exported === want, exported);
    await page.click("#export-all");
    const all = await page.inputValue("#export");
    check("page: export all gives JSON Lines, one per value", all === `${want}\n42\n"second"\n[1.5,null,true]\n`, all);
    await page.click(`#tree .row[data-offset='${tea}']`);
    await page.screenshot({ path: resolve("screenshot.png") });

    // ---- dropped on the page; pasted base64 ----
    await page.evaluate((bytes) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(bytes)], "dropped.mpk"));
      document.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, [0x92, 0xc0, 0xc3]);
    await page.waitForSelector("body[data-state=ready]");
    const dropped = await page.textContent("#tree .row");
    check("page: a file dropped on the page opens", !!dropped && dropped.includes("fixarray") && (await page.textContent("#status"))!.includes("dropped.mpk"), String(dropped));
    await page.fill("#text", "gqFhAaFiwg==");
    await page.click("#decode");
    await page.waitForSelector("body[data-state=ready]");
    const fromB64 = await page.textContent("#tree .row");
    check("page: pasted base64 decodes", !!fromB64 && fromB64.includes("fixmap") && fromB64.includes("{2}"), String(fromB64));

    // ---- bad input pasted as hex: the valid prefix, the error's kind and offset marked ----
    await page.fill("#text", "01 a1 61 92 01 c1 05");
    await page.click("#decode");
    await page.waitForSelector("body[data-state=ready]");
    const errKind = await page.getAttribute("#error", "data-kind");
    const errOff = await page.getAttribute("#error", "data-offset");
    const errByte = await cells(page, "errbyte");
    const bad = await cells(page, "bad");
    const badRows = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
    check("page: pasted bad hex marks invalid_byte at byte 5", errKind === "invalid_byte" && errOff === "5" && JSON.stringify(errByte) === "[5]", `${errKind} ${errOff} ${errByte}`);
    check("page: the bytes from the broken value on are marked, the valid prefix is not", JSON.stringify(bad) === JSON.stringify([3, 4, 5, 6]), String(bad));
    check("page: the tree shows the two whole values, then the broken one", badRows.length === 3 && badRows[0]!.includes("positive fixint") && badRows[1]!.includes('"a"') && badRows[2]!.includes("invalid_byte at byte 5"), JSON.stringify(badRows));
    await page.fill("#text", "92 91 01");
    await page.click("#decode");
    await page.waitForSelector("body[data-state=ready]");
    const endTitle = await page.getAttribute("#hex .b.errend", "title");
    check("page: input ending inside a value marks truncated at the input's length", (await page.getAttribute("#error", "data-kind")) === "truncated" && (await page.getAttribute("#error", "data-offset")) === "3" && !!endTitle && endTitle.startsWith("truncated at byte 3"), String(endTitle));
    await page.fill("#text", "93 0");
    await page.click("#decode");
    const textErr = await page.textContent("#error");
    check("page: text that is not hex says so", !!textErr && textErr.includes("odd number of digits"), String(textErr));

    // ---- a large generated file: ~100 MiB, one array of 420000 records then 1000 small values ----
    const n = 420_000;
    const bigPath = join(tmp, "big.mpk");
    const big = openSync(bigPath, "w");
    writeSync(big, new Uint8Array([0xdd, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]));
    let size = 5;
    const chunk: Uint8Array[] = [];
    const blob = new Uint8Array(200).fill(0xab);
    for (let i = 0; i < n; i++) {
      chunk.push(encode({ id: i, name: `item ${i}`, at: new Date(1_700_000_000_000 + i * 1000), tags: ["x", "y"], blob }).slice());
      if (chunk.length === 10000 || i === n - 1) {
        const b = cat(chunk.splice(0));
        writeSync(big, b);
        size += b.length;
      }
    }
    const tail = cat(Array.from({ length: 1000 }, (_, i) => encode(i)));
    writeSync(big, tail);
    size += tail.length;
    closeSync(big);
    await page.evaluate(() => {
      const w = window as unknown as { maxGap: number; last: number; tick: () => void };
      w.maxGap = 0;
      w.last = performance.now();
      w.tick = () => {
        const now = performance.now();
        w.maxGap = Math.max(w.maxGap, now - w.last);
        w.last = now;
        requestAnimationFrame(w.tick);
      };
      requestAnimationFrame(w.tick);
    });
    await page.evaluate(() => void (document.body.dataset.state = "before"));
    const t0 = Date.now();
    await page.setInputFiles("#file", bigPath);
    // open() puts the first rows on screen in the same task that leaves "before"
    await page.waitForSelector("body:not([data-state=before]) #tree .row[data-offset='0']", { timeout: LARGE_BUDGET_MS });
    const firstRows = Date.now() - t0;
    await page.waitForSelector("body[data-state=ready]", { timeout: LARGE_BUDGET_MS });
    const whole = Date.now() - t0;
    const maxGap = await page.evaluate(() => Math.round((window as unknown as { maxGap: number }).maxGap));
    const openMs = await page.getAttribute("body", "data-first-paint-ms");
    const readMs = await page.getAttribute("body", "data-read-ms");
    const scanMs = await page.getAttribute("body", "data-scan-ms");
    const cdp = await context.newCDPSession(page);
    await cdp.send("Performance.enable");
    const metrics = (await cdp.send("Performance.getMetrics")).metrics;
    const heap = metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0;
    const mib = (x: number): string => (x / 1048576).toFixed(1);
    console.log(`inspector: large file ${mib(size)} MiB: first rows on screen ${firstRows} ms after the file was chosen (in the page: reading it ${readMs} ms, then the first screen ${openMs} ms), all values found ${whole} ms after (in the page: ${scanMs} ms after the bytes were in), longest frame gap ${maxGap} ms, JS heap ${mib(heap)} MiB (the file's bytes are an ArrayBuffer outside it)`);
    const bigRows = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
    const bottom = await treeBottom(page);
    check("page: the large file shows its array, then the other values a page at a time", bigRows[0]!.includes("array32") && bigRows[0]!.includes(`[${n}]`) && bottom[bottom.length - 2]!.includes("#199") && bottom[bottom.length - 1]!.includes("items 200–399 of 1001"), JSON.stringify(bigRows.slice(0, 1).concat(bottom.slice(-2))));
    const rowsInDom = await page.$$eval("#tree .row", (els) => els.length);
    const hexInDom = await page.$$eval("#hex .hexrow", (els) => els.length);
    check("page: only the rows on screen are in the DOM", rowsInDom < 80 && hexInDom < 80, `${rowsInDom} tree rows, ${hexInDom} hex rows`);
    await page.$eval("#tree", (e) => void (e.scrollTop = 0));
    await page.click("#tree .row[data-offset='0'] .toggle");
    const inside = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
    await page.$eval("#tree", (e) => void (e.scrollTop = 190 * 18)); // rows are 18 px
    await page.waitForTimeout(50);
    const insideEnd = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent ?? ""));
    const pageRow = insideEnd.findIndex((t) => t.includes(`items 200–399 of ${n}`));
    check("page: the large array opens a page of 200 items", inside[1]!.includes("[0]fixmap") && pageRow > 0 && insideEnd[pageRow - 1]!.includes("[199]"), JSON.stringify(insideEnd.slice(-4)));
    // go to a byte near the end of the array: the record holding it opens, paged to it
    const target = 90_000_000;
    const t1 = Date.now();
    await page.fill("#goto", String(target));
    await page.press("#goto", "Enter");
    const deep = await page.getAttribute("body", "data-selected");
    const deepRow = await page.textContent("#tree .row.selected");
    const [a, b] = (deep ?? "0-0").split("-").map(Number) as [number, number];
    console.log(`inspector: going to byte ${target} of the large file took ${Date.now() - t1} ms`);
    check("page: going to a byte deep in the large file selects the value holding it", a <= target && target < b && b - a < 300 && !!deepRow, `${deep} ${deepRow}`);
    const litLarge = (await cells(page, "sel")).concat(await cells(page, "hdr"));
    check("page: the hex view scrolls (scaled) to that byte and highlights it", litLarge.includes(target), `${litLarge.length} highlighted, ${litLarge.slice(0, 3)}…`);

    const ownFiles = new Set(["index.html", "inspector.css", "inspector.js"].map((f) => pathToFileURL(join(pageDir, f)).href));
    check("page: from file://, no request but its own three files", requests.length >= 3 && requests.every((r) => ownFiles.has(r)), JSON.stringify([...new Set(requests)]));

    // ---- over http: a same-origin URL with the MessagePack Accept header; no other request ----
    let accept = "";
    server.on("request", (req, res) => {
      const path = (req.url ?? "/").split("?")[0]!;
      if (path === "/data/sample.mpk") {
        accept = String(req.headers.accept);
        return void res.writeHead(200, { "content-type": "application/vnd.msgpack" }).end(sample);
      }
      const file = { "/index.html": "text/html", "/inspector.js": "text/javascript", "/inspector.css": "text/css" }[path];
      if (!file) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": file }).end(readFileSync(join(pageDir, path.slice(1))));
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const port = (server.address() as { port: number }).port;
    requests.length = 0;
    await page.goto(`http://127.0.0.1:${port}/index.html`);
    await page.fill("#url", "/data/sample.mpk");
    await page.click("#load");
    await page.waitForSelector("body[data-state=ready]");
    const urlRows = await page.$$eval("#tree .row", (els) => els.length);
    check("page: a same-origin URL loads with Accept: application/vnd.msgpack", urlRows === 4 && accept === "application/vnd.msgpack", `${urlRows} rows, accept ${accept}`);
    await page.fill("#url", "http://example.invalid/x.mpk");
    await page.click("#load");
    const crossErr = await page.textContent("#error");
    check("page: a URL of another origin is refused", !!crossErr && crossErr.includes("only same-origin"), String(crossErr));
    const expected = ["index.html", "inspector.css", "inspector.js", "data/sample.mpk"].map((p) => `http://127.0.0.1:${port}/${p}`);
    check("page: no request but its own files and the URL asked for", JSON.stringify([...requests].sort()) === JSON.stringify(expected.sort()), JSON.stringify(requests));

    for (const p of problems) console.log(p);
    check("page: no page error, console error or CSP violation", problems.length === 0, problems.join("\n"));
  } finally {
    server.close();
    await context.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
