// spec/README.md, "Maps with duplicate keys": a decoder that builds an object or a Map keeps the
// LAST value of a key that comes more than once (exact mode keeps every pair, in MapPairs).
import assert from "node:assert/strict";
import { test } from "node:test";
import { decode, DecoderStream, MapPairs } from "../src/index.js";

// {"a": 1, "b": 2, "a": 3} and {1: "x", 1: "y"}
const strKeys = new Uint8Array([0x83, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0x02, 0xa1, 0x61, 0x03]);
const intKeys = new Uint8Array([0x82, 0x01, 0xa1, 0x78, 0x01, 0xa1, 0x79]);

test("a duplicate key keeps its last value, in an object and in a Map", async () => {
  const obj = decode(strKeys) as Record<string, number>;
  assert.deepEqual(obj, { a: 3, b: 2 });
  assert.deepEqual(Object.keys(obj), ["a", "b"]);
  assert.deepEqual([...(decode(strKeys, { map: "Map" }) as Map<string, number>)], [["a", 3], ["b", 2]]);
  assert.deepEqual([...(decode(intKeys) as Map<number, string>)], [[1, "y"]]);
  // the stream decoder agrees, the map split across chunks
  const stream = new DecoderStream();
  const writer = stream.writable.getWriter();
  void writer.write(strKeys.subarray(0, 5)).then(() => writer.write(strKeys.subarray(5))).then(() => writer.close());
  const reader = stream.readable.getReader();
  assert.deepEqual((await reader.read()).value, { a: 3, b: 2 });
  // keys equal as JavaScript values are one key of a Map: the int 1 and the float 1.0 (README)
  const intAndFloat = new Uint8Array([0x82, 0x01, 0xa1, 0x78, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xa1, 0x79]);
  assert.deepEqual([...(decode(intAndFloat) as Map<number, string>)], [[1, "y"]]);
  assert.equal((decode(intAndFloat, { exact: true }) as MapPairs).pairs.length, 2);
  // exact mode keeps every pair
  assert.deepEqual((decode(strKeys, { exact: true }) as MapPairs).pairs, [["a", 1], ["b", 2], ["a", 3]]);
});
