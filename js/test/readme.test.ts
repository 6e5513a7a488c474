// The README's first example runs as written (importing the package by its name, as a user would),
// and the package's entry points resolve for import and require.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const jsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

test("the README's first example runs", () => {
  const readme = readFileSync(join(jsDir, "README.md"), "utf8");
  const example = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(example, "README has a js example");
  // inside js/, so that "mpk" resolves to this package (self-reference through "exports")
  const dir = join(jsDir, "build", "readme");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "example.mjs");
  writeFileSync(file, example);
  execFileSync(process.execPath, [file], { stdio: "pipe" });
});

test("the README's extension and MessagePack-RPC examples run", () => {
  const readme = readFileSync(join(jsDir, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const extension = blocks.find((b) => b.includes("new ExtensionCodec()"));
  const rpc = blocks.find((b) => b.includes('from "mpk/rpc/node"') && b.includes("listen("));
  assert.ok(extension && rpc, "README has both examples");
  const dir = join(jsDir, "build", "readme");
  mkdirSync(dir, { recursive: true });
  // the extension example ends with a decode whose result its comment shows: check that result
  const checked = extension + '\nconst got = new Decoder({ extensions }).decode(bytes);\nif (!(got.at instanceof Point) || got.at.x !== 1 || got.at.y !== 2) throw new Error("not the Point back");\n';
  for (const [name, code] of [["extension.mjs", checked], ["rpc.mjs", rpc]] as const) {
    const file = join(dir, name);
    writeFileSync(file, code);
    execFileSync(process.execPath, [file], { stdio: "pipe", timeout: 30_000 });
  }
});

test("the package resolves for import and require, with the decode-only entry", async () => {
  const esm = await import("mpk");
  const cjs = createRequire(join(jsDir, "package.json"))("mpk");
  const cjsDecode = createRequire(join(jsDir, "package.json"))("mpk/decode");
  const bytes = esm.encode({ a: [1, "x"] });
  assert.deepEqual(cjs.decode(bytes), { a: [1, "x"] });
  assert.deepEqual(cjsDecode.decode(bytes), { a: [1, "x"] });
  assert.equal(cjsDecode.encode, undefined);
});

test("an app that imports decode only gets no encoder in its bundle", async () => {
  const result = await esbuild.build({
    stdin: { contents: 'import { decode } from "mpk/decode"; console.log(decode(new Uint8Array([1])));', resolveDir: jsDir },
    bundle: true,
    minify: true,
    write: false,
    format: "esm",
  });
  const code = result.outputFiles[0]!.text;
  assert.ok(code.includes("trailing_bytes"), "the decoder is there");
  // the writer's own messages and its TextEncoder path (Timestamp.fromDate stays: it is the Timestamp class)
  assert.ok(!code.includes("encodeInto") && !code.includes("(a cycle?)") && !code.includes("does not fit in 64 bits"), "the encoder is not");
});
