// The page side of the browser benchmark (bundled by esbuild): mpk, msgpackr (its browser build,
// pure JS: no addon exists in a browser), @msgpack/msgpack and protobufjs's static code (made by
// pbjs into build/js-bench, resolved by run.mjs as "mpk-bench-pb"), decode only by default.
import { Decoder as MpkDecoder, encode as mpkEncode } from "../src/index.ts";
import { Packr, Unpackr } from "msgpackr";
import { Decoder as MsgpackDecoder, Encoder as MsgpackEncoder } from "@msgpack/msgpack";
import * as pbRoot from "mpk-bench-pb";
import pbMinimal from "protobufjs/minimal.js";
import { runWorkloads, workloadsFromJson } from "./suite.mjs";
import { protobufCodec } from "./pb.mjs";

globalThis.runBrowserBench = async (options) => {
  const workloads = workloadsFromJson(await (await fetch("/workloads.json")).text());
  const packr = new Packr({ useRecords: false });
  const unpackrOptions = { useRecords: false, mapsAsObjects: true, int64AsType: "number" };
  const unpackr = new Unpackr(unpackrOptions);
  // msgpackr's bins are views into the input unless copyBuffers: the copying peer of mpk's default
  const copyingUnpackr = new Unpackr({ ...unpackrOptions, copyBuffers: true });
  const mpk = new MpkDecoder({ int64: "number" });
  const mpkZeroCopy = new MpkDecoder({ int64: "number", zeroCopy: true });
  const msgpackEncoder = new MsgpackEncoder();
  const msgpackDecoder = new MsgpackDecoder();
  const textEncoder = new TextEncoder();
  const textDecoder = new TextDecoder();
  return runWorkloads({
    workloads,
    codecs: [
      { label: "mpk", encode: mpkEncode, decode: (b) => mpk.decode(b) },
      { label: "mpk (zeroCopy)", decode: (b) => mpkZeroCopy.decode(b), bins: "only" },
      { label: "msgpackr", encode: (v) => packr.pack(v), decode: (b) => unpackr.unpack(b) },
      { label: "msgpackr (copyBuffers)", decode: (b) => copyingUnpackr.unpack(b), bins: "only" },
      { label: "@msgpack/msgpack", encode: (v) => msgpackEncoder.encode(v), decode: (b) => msgpackDecoder.decode(b) },
    ],
    json: { encode: (v) => textEncoder.encode(JSON.stringify(v)), decode: (b) => JSON.parse(textDecoder.decode(b)) },
    pb: protobufCodec(pbRoot.default ?? pbRoot, pbMinimal.Reader),
    ...options,
  });
};
