// Counts the memory a shared-buffer encode allocates per call (every `new Uint8Array(n)`: the
// encoder's chunks) on the bench's workloads, in the bench's order, in one process: a
// deterministic proxy for an allocation cost that wall-clock timings on a busy machine bury in
// noise. The ideal is 1.00x the output (every shared result is new memory, nothing unused).
//   node js/bench/alloc.mjs [esm build dir, default js/build/esm] [id...]
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadWorkloads } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const dir = args[0] && /[/.]/.test(args[0]) ? args.shift() : resolve(here, "..", "build", "esm");
const ids = args;
const mod = await import(pathToFileURL(resolve(dir, "index.js")).href);
const workloads = loadWorkloads(resolve(here, "..", ".."), mod.encode);
const dec = new mod.Decoder({ int64: "number" });
const Real = Uint8Array;
let bytes = 0;
let count = 0;
// the encoder's `new Uint8Array(n)` finds this class under the global name
globalThis.Uint8Array = class Counting extends Real {
  constructor(a, b, c) {
    if (typeof a === "number") {
      bytes += a;
      count++;
    }
    super(a, b, c);
  }
};
const e = new mod.Encoder({ sharedBuffer: true });
const calls = 100;
for (const w of workloads) {
  if (ids.length && !ids.includes(w.id)) continue;
  const v = dec.decode(w.msgpack);
  for (let i = 0; i < 20; i++) e.encode(v);
  bytes = count = 0;
  let out = 0;
  for (let i = 0; i < calls; i++) out += e.encode(v).length;
  console.log(`${w.id}: output ${out / calls} B, new memory ${(bytes / out).toFixed(2)}x the output in ${(count / calls).toFixed(2)} allocations a call, a result's .buffer ${e.encode(v).buffer.byteLength} B`);
}
