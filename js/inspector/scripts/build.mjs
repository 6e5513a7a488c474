// Builds the inspector (run from js/inspector): type-checks src/ and test/, bundles the page into
// OUT (default: the top-level build/inspector/) as static files — index.html, inspector.js,
// inspector.css — and the test runner into build/test/run.js.
//   node scripts/build.mjs [OUT]
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import * as esbuild from "esbuild";

const out = resolve(process.argv[2] ?? "../../build/inspector");
execFileSync("node_modules/.bin/tsc", ["-p", "tsconfig.json"], { stdio: "inherit" });

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// a classic script, not a module: module scripts do not load from file://
await esbuild.build({
  entryPoints: ["src/app.ts"],
  outfile: `${out}/inspector.js`,
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  platform: "browser",
  legalComments: "none",
});
copyFileSync("static/index.html", `${out}/index.html`);
copyFileSync("static/inspector.css", `${out}/inspector.css`);

await esbuild.build({
  entryPoints: ["test/run.ts", "test/hostile.ts"],
  outdir: "build/test",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node18",
  packages: "external",
});
