// Builds everything under build/: the ESM and CJS packages with their .d.ts (tsc), the minified
// browser bundles (esbuild), and the compiled tests. Run from js/: `node scripts/build.mjs`.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import * as esbuild from "esbuild";

const tsc = "node_modules/.bin/tsc";
const run = (project) => execFileSync(tsc, ["-p", project], { stdio: "inherit" });

run("tsconfig.json");
run("tsconfig.cjs.json");
// build/cjs holds CommonJS under a "type": "module" package
writeFileSync("build/cjs/package.json", '{ "type": "commonjs" }\n');
run("tsconfig.test.json");

mkdirSync("build/browser", { recursive: true });
const bundle = (entry, outfile, format, globalName) =>
  esbuild.build({ entryPoints: [entry], outfile, bundle: true, minify: true, format, globalName, target: "es2020", legalComments: "none" });
await Promise.all([
  bundle("src/index.ts", "build/browser/mpk.min.js", "esm"),
  bundle("src/index.ts", "build/browser/mpk.iife.min.js", "iife", "mpk"),
  bundle("src/decodeOnly.ts", "build/browser/mpk-decode.min.js", "esm"),
]);
