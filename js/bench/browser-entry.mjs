// The page side of the browser benchmark (bundled by esbuild): mpk, msgpackr (its browser build,
// pure JS: no addon exists in a browser) and @msgpack/msgpack, decode only by default.
import { decode as mpkDecode, encode as mpkEncode } from "../src/index.ts";
import { Packr, Unpackr } from "msgpackr";
import { Decoder as MsgpackDecoder, Encoder as MsgpackEncoder } from "@msgpack/msgpack";
import { runSuite } from "./suite.mjs";

globalThis.runBrowserBench = async (options) => {
  const datasets = await (await fetch("/datasets.json")).json();
  const packr = new Packr({ useRecords: false });
  const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number" });
  const msgpackEncoder = new MsgpackEncoder();
  const msgpackDecoder = new MsgpackDecoder();
  const textEncoder = new TextEncoder();
  const textDecoder = new TextDecoder();
  return runSuite({
    datasets,
    codecs: [
      { label: "mpk", encode: mpkEncode, decode: mpkDecode },
      { label: "msgpackr", encode: (v) => packr.pack(v), decode: (b) => unpackr.unpack(b) },
      { label: "@msgpack/msgpack", encode: (v) => msgpackEncoder.encode(v), decode: (b) => msgpackDecoder.decode(b) },
    ],
    json: { encode: (v) => textEncoder.encode(JSON.stringify(v)), decode: (b) => JSON.parse(textDecoder.decode(b)) },
    ...options,
  });
};
