// Suite js-browser: the corpus inside a real headless Chromium page (Debian's /usr/bin/chromium,
// driven by playwright-core; nothing is downloaded). Serves the page from a localhost server it
// starts, prints every failure and the line "js-browser: N passed, M failed".
import { createServer } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";

const jsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
// spec/vectors, or another folder of case files named by MPK_VECTORS (to try new ones)
const vectorsDir = process.env.MPK_VECTORS ?? resolve(jsDir, "..", "spec", "vectors");

const CHROMIUM_FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

async function main(): Promise<number> {
  const bundle = await esbuild.build({
    entryPoints: [join(jsDir, "test", "browser", "page.ts")],
    bundle: true,
    write: false,
    format: "iife",
    target: "es2020",
    platform: "browser",
  });
  const vectors = readdirSync(vectorsDir).filter((f) => f.endsWith(".json")).sort().map((f) => [f, readFileSync(join(vectorsDir, f), "utf8")]);
  const routes: Record<string, [string, string]> = {
    // a strict CSP: the library must work without eval or new Function
    "/": ["text/html", "<!doctype html><meta charset=utf-8><title>mpk corpus</title><script src=/page.js></script>"],
    "/page.js": ["text/javascript", bundle.outputFiles[0]!.text],
    "/vectors": ["application/json", JSON.stringify(vectors)],
    "/favicon.ico": ["image/x-icon", ""],
  };
  const server = createServer((req, res) => {
    const route = routes[req.url ?? ""];
    if (!route) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": route[0], "content-security-policy": "default-src 'self'; script-src 'self'" }).end(route[1]);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as { port: number }).port;
  const userDataDir = mkdtempSync(join(tmpdir(), "mpk-js-browser-"));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_FLAGS });
  try {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${port}/`);
    type Run = () => Promise<{ passed: number; failed: number; failures: string[] }>;
    const outcome = await page.evaluate(() => (globalThis as unknown as { runCorpus: Run }).runCorpus());
    const checks = await page.evaluate(() => (globalThis as unknown as { runChecks: Run }).runChecks());
    outcome.passed += checks.passed;
    outcome.failed += checks.failed;
    outcome.failures.push(...checks.failures);
    for (const f of outcome.failures) console.log(`FAIL ${f}`);
    for (const e of pageErrors) console.log(`page error: ${e}`);
    const failed = outcome.failed + pageErrors.length;
    console.log(`js-browser: ${outcome.passed} passed, ${failed} failed`);
    return failed === 0 && outcome.passed > 0 ? 0 : 1;
  } finally {
    await context.close();
    server.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.log(`js-browser: could not run: ${String(e)}`);
    console.log("js-browser: 0 passed, 1 failed");
    process.exit(1);
  },
);
