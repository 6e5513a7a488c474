// The install steps of README.md, as a new user follows them: the package packed with `npm pack`,
// installed from the tarball into an empty project (offline: it has no dependencies), used from
// ESM and CommonJS; and @arethetypeswrong/cli finds no problem with its types.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const jsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];

test("npm pack, npm install <tarball>, import and require", () => {
  const dir = mkdtempSync(join(tmpdir(), "mpk-install-"));
  try {
    execFileSync(npm, ["pack", "--pack-destination", dir, ...quiet], { cwd: jsDir, stdio: "pipe" });
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack made a tarball");
    const app = join(dir, "app");
    execFileSync("mkdir", [app]);
    writeFileSync(join(app, "package.json"), '{ "name": "app", "private": true, "type": "module" }\n');
    execFileSync(npm, ["install", "--offline", ...quiet, join(dir, tarball)], { cwd: app, stdio: "pipe" });
    writeFileSync(
      join(app, "esm.js"),
      'import { encode, decode } from "mpk";\nimport { decode as decodeOnly } from "mpk/decode";\n' +
        'const bytes = encode({ a: [1, "x"] });\nconsole.log(JSON.stringify([decode(bytes), decodeOnly(bytes), bytes.buffer.byteLength === bytes.length]));\n',
    );
    writeFileSync(
      join(app, "cjs.cjs"),
      'const { encode, decode } = require("mpk");\nconst { decode: decodeOnly } = require("mpk/decode");\n' +
        'const bytes = encode({ a: [1, "x"] });\nconsole.log(JSON.stringify([decode(bytes), decodeOnly(bytes), bytes.buffer.byteLength === bytes.length]));\n',
    );
    const want = '[{"a":[1,"x"]},{"a":[1,"x"]},true]\n';
    assert.equal(execFileSync(process.execPath, ["esm.js"], { cwd: app, encoding: "utf8" }), want);
    assert.equal(execFileSync(process.execPath, ["cjs.cjs"], { cwd: app, encoding: "utf8" }), want);
    // the types as every resolver sees them (node10, node16 from CJS and ESM, bundler)
    execFileSync(join(jsDir, "node_modules", ".bin", "attw"), [join(dir, tarball), "--no-color"], { cwd: jsDir, stdio: "pipe" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
