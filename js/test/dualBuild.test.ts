// One identity per class across the ESM and the CJS build loaded in one process (an app whose
// dependencies mix import and require): each build's values are understood by the other.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const jsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
type Mpk = typeof import("../src/index.js");

test("the ESM and CJS builds mix: classes, brands and instanceof", async () => {
  const esm = (await import(pathToFileURL(join(jsDir, "build", "esm", "index.js")).href)) as Mpk;
  const cjs = createRequire(join(jsDir, "package.json"))(join(jsDir, "build", "cjs", "index.js")) as Mpk;
  assert.notEqual(esm.Timestamp, cjs.Timestamp, "two copies of each class are loaded");
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

  // the case: an ESM Timestamp through the CJS encoder is a timestamp, not the map {sec, nsec}
  assert.equal(hex(cjs.encode(new esm.Timestamp(1, 0))), "d6ff00000001");
  assert.equal(hex(esm.encode(new cjs.Timestamp(1, 0))), "d6ff00000001");
  for (const [a, b] of [[esm, cjs], [cjs, esm]] as const) {
    assert.equal(hex(b.encode(new a.ExtData(5, Uint8Array.of(1)))), "d40501");
    assert.equal(hex(b.encode(new a.Float(1, 32))), "ca3f800000");
    assert.equal(hex(b.encode(new a.MapPairs([[1, 2], [1, 3]]))), "8201020103");
    assert.equal(hex(b.encode(new a.RawStr(Uint8Array.of(0xff)))), "a1ff");
    // values decoded by one are instances of the other's classes
    const ts = a.decode(b.encode(new b.Timestamp(2n ** 40n, 5)), { timestamp: "Timestamp" });
    assert.ok(ts instanceof b.Timestamp && ts instanceof a.Timestamp);
    assert.ok(a.decode(Uint8Array.of(0xd4, 5, 1)) instanceof b.ExtData);
    assert.ok(a.decode(Uint8Array.of(0xca, 0x3f, 0x80, 0, 0), { exact: true }) instanceof b.Float);
    // errors too
    assert.throws(() => a.decode(Uint8Array.of(0xc1)), (e: unknown) => e instanceof b.DecodeError && e instanceof a.DecodeError);
    assert.throws(() => a.encode(() => 0), (e: unknown) => e instanceof b.EncodeError);
    // an ExtensionCodec from one configures the other's Encoder and Decoder
    class Point {
      constructor(readonly x: number) {}
    }
    const ext = new a.ExtensionCodec().register({ type: 9, encode: (v) => (v instanceof Point ? Uint8Array.of(v.x) : null), decode: (d) => new Point(d[0]!) });
    assert.deepEqual(new b.Decoder({ extensions: ext }).decode(new b.Encoder({ extensions: ext }).encode(new Point(4))), new Point(4));
    assert.ok(new b.Encoder() instanceof a.Encoder);
  }
  // a subclass keeps ordinary instanceof: another copy's base-class instance is not one of it
  class MyTimestamp extends esm.Timestamp {}
  assert.ok(!(new cjs.Timestamp(1) instanceof MyTimestamp));
  assert.ok(new MyTimestamp(1) instanceof cjs.Timestamp);
});
