// Run by unit.ts in a Node child with a small heap (--max-old-space-size): hostile inputs through
// the page's document model, as the page would handle them (scan, first rows, opening the broken
// value, a lookup by offset). Prints one JSON line per input: the error found and the rows made.
import { Doc, isNode } from "../src/doc.js";

function fill(head: number[], n: number, byte: number): Uint8Array {
  const out = new Uint8Array(head.length + n).fill(byte);
  out.set(head);
  return out;
}

const inputs: Record<string, Uint8Array> = {
  // array 32 declaring 2^32-1 elements, 1 MB present
  "array32 of 2^32-1": fill([0xdd, 0xff, 0xff, 0xff, 0xff], 1 << 20, 0x01),
  // str 32 declaring 4 GiB, 1 MB present
  "str32 of 4 GiB": fill([0xdb, 0xff, 0xff, 0xff, 0xff], 1 << 20, 0x61),
  // 1 MB of nested array heads
  "nested arrays": fill([], 1 << 20, 0x91),
  // 1 MB of map 16 heads, each declaring 65535 pairs
  "map16 heads": fill([], 1 << 20, 0xde),
  // an array of a million 1-byte elements, whole: its last page and a lookup near its end
  "array of 1000000": fill([0xdd, 0x00, 0x0f, 0x42, 0x40], 1_000_000, 0x07),
};

for (const [name, bytes] of Object.entries(inputs)) {
  const doc = new Doc(bytes);
  while (!doc.scanner.run(100000));
  const top = doc.items(null, 0, 200);
  let inner = 0;
  const first = top[0];
  if (first && isNode(first)) {
    const n = doc.itemCount(first);
    inner = doc.items(first, Math.max(0, n - 200), n).length;
  }
  const path = doc.pathTo(bytes.length - 2);
  console.log(JSON.stringify({ name, error: doc.error, rows: top.length, inner, path: path.length, heapMiB: Math.round(process.memoryUsage().heapUsed / 1048576) }));
}
