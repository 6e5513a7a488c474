// One page of headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) on a local
// server holding `files` (path -> [media type, body]), for the benches that time code in the
// browser. `use(page, context)` runs with the page at "/"; everything is torn down afterwards.
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export async function withChromiumPage(files, { jsFlags = "" } = {}, use) {
  const server = createServer((req, res) => {
    const file = files[req.url];
    if (!file) return res.writeHead(404).end();
    // cross-origin isolated: performance.now() then ticks in 5 µs steps instead of 100 µs
    res.writeHead(200, { "content-type": file[0], "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" }).end(file[1]);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const userDataDir = mkdtempSync(join(tmpdir(), "mpk-bench-chromium-"));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        ...(jsFlags ? [`--js-flags=${jsFlags}`] : []),
      ],
    });
    try {
      const page = await context.newPage();
      page.on("console", (m) => console.log(`chromium: ${m.text()}`));
      page.on("pageerror", (e) => console.log(`chromium error: ${e.message}`));
      await page.goto(`http://127.0.0.1:${server.address().port}/`);
      return await use(page, context);
    } finally {
      await context.close();
    }
  } finally {
    server.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}
