// The per-call state of the decoder and the encoder is described once: each call installs its
// options as one object, and what else it changes is named in one Cursor that a nested call
// (an extension's decode/encode calling decode/encode) saves and restores. A module variable
// added without a place in the Cursor (or a reason to be outside it) fails here.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { decode, Decoder, encode, Encoder, ExtData, ExtensionCodec, Float, MapPairs } from "../src/index.js";

const srcDir = join(resolve(dirname(fileURLToPath(import.meta.url)), "../../.."), "src");

/** Module variables that are not per call, and why. */
const OUTSIDE: Record<string, Record<string, string>> = {
  "Decoder.ts": {
    busy: "whether a call is in progress: what decides to save",
    lastLongStr: "the str batch's trigger; only the outermost call batches",
    deepestContainer: "read only while turning a stack overflow into depth_limit, right after it",
    keyAfter: "a guess for the key cache: a wrong one costs a lookup, never a wrong key",
  },
  "Encoder.ts": {
    busy: "whether a call is in progress: what decides to save",
    largestOutput: "the size a new buffer starts at, kept across calls on purpose",
    lastSharedOutput: "the size of the last shared result, which sizes the next shared chunk, kept across calls on purpose",
    objectPrototypeEnumerable: "a fact about Object.prototype, the same for a nested call",
    overflowSteps: "gathered while a stack overflow unwinds; the encode that catches it reads and clears it",
    overflowAt: "gathered while a stack overflow unwinds; the encode that catches it reads and clears it",
  },
};

function names(list: string): string[] {
  return list.split(",").map((n) => n.trim()).filter(Boolean).sort();
}

describe("state described once", () => {
  for (const file of ["Decoder.ts", "Encoder.ts"]) {
    test(`${file}: every module variable is in Cursor or has a reason to be outside it`, () => {
      const src = readFileSync(join(srcDir, file), "utf8");
      const lets = [...src.matchAll(/^(?:export )?let (\w+)/gm)].map((m) => m[1]!).sort();
      const cursor = /interface Cursor \{([\s\S]*?)\n\}/.exec(src)![1]!;
      const fields = [...cursor.matchAll(/^\s+(\w+):/gm)].map((m) => m[1]!).sort();
      const saved = names(/function save\(\): Cursor \{\s*return \{([^}]*)\};/.exec(src)![1]!);
      const restored = names(/function restore\(c: Cursor\): void \{\s*\(\{([^}]*)\} = c\);/.exec(src)![1]!);
      assert.deepEqual(saved, fields, "save() names every Cursor field");
      assert.deepEqual(restored, fields, "restore() names every Cursor field");
      const outside = Object.keys(OUTSIDE[file]!).sort();
      assert.deepEqual(lets, [...fields, ...outside].sort(), "each module variable is in Cursor or listed with a reason");
    });
  }

  test("no module exports a mutable variable (shared state is an object its module owns)", () => {
    const files = ["Decoder.ts", "Encoder.ts", "strBatch.ts", "keyCache.ts", "ValueScanner.ts", "limits.ts", "utils/utf8.ts", "utils/bytes.ts"];
    for (const file of files) assert.doesNotMatch(readFileSync(join(srcDir, file), "utf8"), /^export let /m, file);
  });

  test("no import cycle among the sources (type imports included): limits.ts imports nothing back", () => {
    const files = readdirSync(srcDir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const imports = new Map<string, string[]>();
    for (const file of files) {
      const src = readFileSync(join(srcDir, file), "utf8");
      const targets = [...src.matchAll(/\bfrom\s+"(\.[^"]+)\.js"/g)].map((m) => relative(srcDir, join(srcDir, dirname(file), m[1]! + ".ts")));
      imports.set(file, targets);
    }
    assert.ok(imports.get("Decoder.ts")!.includes("limits.ts"), "the graph is read");
    // depth-first search for a path from a file back to itself
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === "done") return;
      assert.notEqual(state.get(file), "open", `import cycle: ${[...path, file].join(" -> ")}`);
      state.set(file, "open");
      for (const next of imports.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    assert.deepEqual(imports.get("limits.ts"), ["ExtensionCodec.ts"]);
  });

  test("a nested decode with other options leaves the outer one's options and position alone", () => {
    const inner = encode({ 1: [1.5, { a: 2 }] }).slice(); // str keys: a plain object, unless map: "Map"
    const extensions = new ExtensionCodec().register({ type: 7, decode: (data) => decode(data) });
    const outer = new Decoder({ map: "Map", exact: true, extensions, zeroCopy: true, maxNumberKeys: 1 });
    const bytes = encode([new ExtData(7, inner), { b: 1.5 }, Uint8Array.of(1)]).slice();
    const [nested, after, bin] = outer.decode(bytes) as [unknown, MapPairs, Uint8Array];
    assert.deepEqual(nested, { 1: [1.5, { a: 2 }] }, "the inner decode used its own (default) options");
    assert.deepEqual(after, new MapPairs([["b", new Float(1.5, 64)]]), "the outer one went on with exact");
    assert.equal(bin.buffer, bytes.buffer, "and zeroCopy");
  });

  test("a nested encode with other options leaves the outer one's alone", () => {
    const extensions = new ExtensionCodec().register({ type: 8, encode: (v) => (v instanceof Set ? new Encoder({ float32: false }).encode([...v]) : null) });
    const outer = new Encoder({ float32: true, sortKeys: true, extensions });
    const bytes = outer.encode({ z: new Set([1.5]), a: 1.5 });
    // sorted keys, the outer floats as float 32, the inner as float 64
    assert.equal(Buffer.from(bytes).toString("hex"), "82a161ca3fc00000a17ac70a0891cb3ff8000000000000");
  });
});
