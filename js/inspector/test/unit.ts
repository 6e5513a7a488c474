// The inspector's reading of bytes, checked in Node against the corpus (spec/vectors), the mpk
// codec (js/src) and the C `mpk` tool: tokens and errors, offsets by lookup, and the notation.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeMulti } from "../../src/decode.js";
import { DecodeError } from "../../src/DecodeError.js";
import { encode } from "../../src/encode.js";
import { Doc, isNode } from "../src/doc.js";
import { notation, parseText } from "../src/notation.js";
import { Scanner, isError, skipValue, skipWithin, type WalkError } from "../src/walker.js";

export type Check = (name: string, ok: boolean, detail?: string) => void;

interface Case {
  name?: string;
  msgpack: string[] | string;
  error?: string;
  offset?: number;
  limits?: unknown;
  utf8?: unknown;
}

const fromHex = (h: string): Uint8Array => parseText(h.replace(/-/g, ""));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

function scanAll(bytes: Uint8Array): { starts: number[]; ends: number[]; error: WalkError | null } {
  const starts: number[] = [];
  const ends: number[] = [];
  const s = new Scanner(bytes, bytes.length, (_i, a, b) => {
    starts.push(a);
    ends.push(b);
  });
  while (!s.run(1000));
  return { starts, ends, error: s.error };
}

/** The codec's verdict on values laid end to end: how many decode, then its error if any. */
function codecVerdict(bytes: Uint8Array): { values: number; error: WalkError | null } {
  let values = 0;
  try {
    for (const _ of decodeMulti(bytes)) values++;
    return { values, error: null };
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    return { values, error: { kind: e.kind as WalkError["kind"], offset: e.offset } };
  }
}

export function unitTests(check: Check, vectorsDir: string, mpkTool: string | null): void {
  const files = readdirSync(vectorsDir).filter((f) => f.endsWith(".json") && f !== "encode_errors.json").sort();
  const forms: Array<{ name: string; bytes: Uint8Array; shortest: string }> = [];
  for (const file of files) {
    const cases = JSON.parse(readFileSync(join(vectorsDir, file), "utf8")) as Case[];
    for (const c of cases) {
      const name = `${file}: ${c.name ?? JSON.stringify(c.msgpack)}`;
      if (c.error === undefined) {
        for (const h of c.msgpack as string[]) forms.push({ name, bytes: fromHex(h), shortest: (c.msgpack as string[])[0]!.replace(/-/g, "") });
      } else if (c.limits === undefined && c.utf8 === undefined && c.error !== "invalid_utf8") {
        const bytes = fromHex(c.msgpack as string);
        const r = scanAll(bytes);
        if (bytes.length === 0) {
          // no bytes are no values: a stream may be empty
          check(`walker: ${name}: no values, no error`, r.error === null && r.starts.length === 0);
        } else if (c.error === "trailing_bytes") {
          // values laid end to end are what the inspector shows: the first value ends at the offset,
          // and whatever follows is judged as a value of its own
          check(`walker: ${name}`, r.ends[0] === c.offset && (r.error === null || r.error.offset >= c.offset!), JSON.stringify(r));
        } else {
          check(`walker: ${name}`, r.error?.kind === c.error && r.error.offset === c.offset, `got ${JSON.stringify(r.error)}, want ${c.error} at ${c.offset}`);
        }
      }
    }
  }

  // every valid form: one value, ending at the end, and every byte's lookup lands on a node holding it
  let bad: string[] = [];
  for (const f of forms) {
    const r = scanAll(f.bytes);
    if (r.error || r.starts.length !== 1 || r.ends[0] !== f.bytes.length) bad.push(`${f.name} ${toHex(f.bytes)}: ${JSON.stringify(r)}`);
  }
  check(`walker: each of ${forms.length} valid corpus forms is one whole value`, bad.length === 0, bad.slice(0, 5).join("\n"));
  bad = [];
  for (const f of forms) {
    const doc = new Doc(f.bytes);
    while (!doc.scanner.run(1000));
    // every byte of small forms; of the few large ones (64 KiB strs, 1024 nested arrays) a sample
    const step = f.bytes.length > 1024 ? 61 : 1;
    for (let o = 0; o < f.bytes.length; o = o + step < f.bytes.length || o === f.bytes.length - 1 ? o + step : f.bytes.length - 1) {
      const path = doc.pathTo(o);
      const last = path[path.length - 1];
      if (!last || last.offset > o || doc.endOf(last) <= o) {
        bad.push(`${f.name} byte ${o}: ${path.map((n) => n.offset).join(">")}`);
        break;
      }
      // the deepest: no item of the node found holds the byte
      const kids = doc.itemCount(last) ? doc.items(last, 0, doc.itemCount(last)) : [];
      if (kids.some((k) => isNode(k) && k.offset <= o && o < doc.endOf(k))) {
        bad.push(`${f.name} byte ${o}: not the deepest`);
        break;
      }
    }
  }
  check("doc: every byte of every valid form looks up the deepest node holding it", bad.length === 0, bad.slice(0, 5).join("\n"));

  // against the codec: random values, cut and with bytes changed, laid end to end
  let seed = 12345;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const value = (d: number): unknown => {
    switch (rnd(d > 3 ? 6 : 9)) {
      case 0: return rnd(2) ? null : rnd(2) === 1;
      case 1: return rnd(1 << 20) - (1 << 19);
      case 2: return rnd(1000) / 7;
      case 3: return "s".repeat(rnd(40));
      case 4: return new Uint8Array(rnd(300));
      case 5: return new Date(rnd(1 << 30) * 1000);
      case 6: return Array.from({ length: rnd(5) }, () => value(d + 1));
      default: return Object.fromEntries(Array.from({ length: rnd(4) }, (_, i) => [`k${i}`, value(d + 1)]));
    }
  };
  bad = [];
  let runs = 0;
  for (let i = 0; i < 3000; i++) {
    const parts = Array.from({ length: 1 + rnd(3) }, () => encode(value(0)));
    const whole = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      whole.set(p, o);
      o += p.length;
    }
    let bytes = whole.subarray(0, rnd(whole.length + 1));
    if (rnd(2)) {
      bytes = bytes.slice();
      for (let k = 0; k < 3 && bytes.length; k++) bytes[rnd(bytes.length)] = rnd(256);
    }
    const mine = scanAll(bytes);
    const theirs = codecVerdict(bytes);
    runs++;
    if (mine.starts.length !== theirs.values || JSON.stringify(mine.error) !== JSON.stringify(theirs.error)) {
      bad.push(`${toHex(bytes)}: inspector ${mine.starts.length} values, ${JSON.stringify(mine.error)}; codec ${theirs.values}, ${JSON.stringify(theirs.error)}`);
    }
  }
  check(`walker: ${runs} cut and changed random streams: the same values and error as the codec's decodeMulti`, bad.length === 0, bad.slice(0, 5).join("\n"));

  // depth: 1024 nested arrays are fine, the 1025th head is depth_limit
  const deep = (n: number): Uint8Array => new Uint8Array([...Array<number>(n).fill(0x91), 0x01]);
  check("walker: 1024 nested arrays are one value", skipValue(deep(1024), 0, 1025, 0) === 1025);
  check("walker: a skip with a token budget gives up past it, and not before", skipWithin(deep(1024), 0, 1025, 0, 1024) === null && skipWithin(deep(1024), 0, 1025, 0, 1025) === 1025);
  const tooDeep = skipValue(deep(1025), 0, 1026, 0);
  check("walker: the 1025th nested array is depth_limit at its head", isError(tooDeep) && tooDeep.kind === "depth_limit" && tooDeep.offset === 1024, JSON.stringify(tooDeep));

  // a broken input: the whole values come first, then the broken one with its error
  const doc = new Doc(fromHex("01 a1 61 92 01 c1"));
  while (!doc.scanner.run(1000));
  const top = doc.items(null, 0, 10);
  check(
    "doc: a broken input shows its whole values, then the broken one marked",
    doc.error?.kind === "invalid_byte" && doc.error.offset === 5 && top.length === 3 && isNode(top[2]!) && top[2].error?.offset === 5 && doc.validEnd === 3,
    JSON.stringify({ error: doc.error, n: top.length, validEnd: doc.validEnd }),
  );
  const inner = isNode(top[2]!) ? doc.items(top[2], 0, 2) : [];
  check("doc: inside the broken array, the item before the error is whole and the bad one carries it", inner.length === 2 && isNode(inner[1]!) && inner[1].error?.kind === "invalid_byte" && inner[0] !== undefined && isNode(inner[0]) && inner[0].error === null);

  // hostile inputs in a child with a 48 MiB heap: each fails with its error, allocating nothing
  // for what a head declares (hostile.ts)
  const hostile = execFileSync(process.execPath, ["--max-old-space-size=48", fileURLToPath(new URL("hostile.js", import.meta.url))], { encoding: "utf8", timeout: 60_000 })
    .trim().split("\n").map((l) => JSON.parse(l) as { name: string; error: WalkError | null; rows: number; inner: number; path: number; heapMiB: number });
  const want: Record<string, string> = {
    "array32 of 2^32-1": "truncated@0",
    "str32 of 4 GiB": "truncated@0",
    "nested arrays": "depth_limit@1024",
    "map16 heads": "depth_limit@3072", // 3-byte heads: the 1025th is at 3072
    "array of 1000000": "none",
  };
  for (const h of hostile) {
    const got = h.error ? `${h.error.kind}@${h.error.offset}` : "none";
    check(`hostile under a 48 MiB heap: ${h.name} is ${want[h.name]}`, got === want[h.name] && h.rows >= 1 && h.path >= 1, JSON.stringify(h));
  }
  check("hostile: all five inputs ran", hostile.length === 5, String(hostile.length));
  const big = hostile.find((h) => h.name === "array of 1000000");
  check("hostile: the million-element array pages to its end and looks up its last bytes", !!big && big.inner === 200 && big.path === 2, JSON.stringify(big));

  // text input
  check("parseText: hex with spaces, dashes, colons and 0x", toHex(parseText("0x93 01-02:03")) === "93010203");
  check("parseText: base64", toHex(parseText("kwECAw==")) === "93010203");
  let threw = "";
  try {
    parseText("930");
  } catch (e) {
    threw = String(e);
  }
  check("parseText: odd hex is refused", threw.includes("odd"), threw);

  // the notation: what the C tool reads back to the same bytes as its own to-json
  if (mpkTool === null) {
    check("notation: the C mpk tool is built (make inspector builds it)", false);
    return;
  }
  const stream = Buffer.concat(forms.map((f) => Buffer.from(f.bytes)));
  const mineLines: string[] = [];
  let p = 0;
  for (const f of forms) {
    mineLines.push(notation(stream, p, 0));
    p += f.bytes.length;
  }
  const theirsText = execFileSync(mpkTool, ["to-json"], { input: stream, maxBuffer: 1 << 28 }).toString();
  const theirsLines = theirsText.split("\n").filter((l) => l !== "");
  const back = (text: string): Uint8Array => new Uint8Array(execFileSync(mpkTool, ["from-json"], { input: text, maxBuffer: 1 << 28 }));
  const mineBack = scanAll(back(mineLines.join("\n") + "\n"));
  const theirsBack = scanAll(back(theirsText));
  const mineBytes = back(mineLines.join("\n") + "\n");
  const theirsBytes = back(theirsText);
  bad = [];
  let sameText = 0;
  for (let i = 0; i < forms.length; i++) {
    const a = toHex(mineBytes.subarray(mineBack.starts[i], mineBack.ends[i]));
    const b = toHex(theirsBytes.subarray(theirsBack.starts[i], theirsBack.ends[i]));
    if (a !== b) bad.push(`${forms[i]!.name}: inspector ${mineLines[i]} -> ${a}; mpk to-json ${theirsLines[i]} -> ${b}`);
    if (mineLines[i] === theirsLines[i]) sameText++;
    try {
      JSON.parse(mineLines[i]!);
    } catch {
      bad.push(`${forms[i]!.name}: not JSON: ${mineLines[i]}`);
    }
  }
  check(`notation: all ${forms.length} corpus forms read back by 'mpk from-json' as the same bytes as 'mpk to-json' output`, bad.length === 0 && mineBack.starts.length === forms.length, bad.slice(0, 5).join("\n"));
  console.log(`notation: ${sameText} of ${forms.length} exports are the same text as 'mpk to-json' prints`);
}
