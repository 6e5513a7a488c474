// Suite "inspector": the Node checks of test/unit.ts, then the page in headless Chromium
// (test/browser.ts). Prints every failure and closes with "inspector: N passed, M failed".
//   node build/test/run.js PAGE_DIR VECTORS_DIR MPK_TOOL
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { browserTests } from "./browser.js";
import { unitTests } from "./unit.js";

const [pageDir = "../../build/inspector", vectorsDir = "../../spec/vectors", mpkTool = "../../build/inspector-c/mpk"] = process.argv.slice(2);
let passed = 0;
let failed = 0;
function check(name: string, ok: boolean, detail?: string): void {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL ${name}${detail ? `\n  ${detail.replace(/\n/g, "\n  ")}` : ""}`);
  }
}

async function main(): Promise<void> {
  unitTests(check, resolve(vectorsDir), existsSync(mpkTool) ? resolve(mpkTool) : null);
  console.log(`inspector: node checks done (${passed} passed, ${failed} failed so far)`);
  if (!process.argv.includes("--no-browser")) await browserTests(check, resolve(pageDir), resolve(vectorsDir));
}

main().then(
  () => {
    console.log(`inspector: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  },
  (e: unknown) => {
    console.log(`inspector: could not run: ${e instanceof Error ? e.stack : String(e)}`);
    console.log(`inspector: ${passed} passed, ${failed + 1} failed`);
    process.exit(1);
  },
);
