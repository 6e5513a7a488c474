// The interop driver (spec/README.md, "Drivers"): JSON Lines requests on stdin, one answer line per
// request on stdout. Decodes run with { exact: true, utf8: "raw" } so that every wire distinction
// reaches the canonical answer. Stream requests go through the stream layer, ChunkDecoder (feed each
// chunk, then finish), with the same options.
import { createInterface } from "node:readline";
import { ChunkDecoder } from "../src/ChunkDecoder.js";
import { DecodeError, Decoder, Encoder, type DecoderOptions } from "../src/index.js";
import { JsonNumber, JsonObject, parseJson, type Json } from "../test/support/losslessJson.js";
import { encodeTyped, hexToBytes, toCanonicalJson } from "../test/support/typed.js";

const encoder = new Encoder();
const decoders = new Map<string, Decoder>();

const LIMIT_OPTIONS: Record<string, keyof DecoderOptions> = {
  depth: "maxDepth",
  str: "maxStrLength",
  bin: "maxBinLength",
  ext: "maxExtLength",
  array: "maxArrayLength",
  map: "maxMapLength",
};

function optionsFor(limits: Json | undefined, strict: boolean): Record<string, unknown> {
  const options: Record<string, unknown> = { exact: true, utf8: strict ? "strict" : "raw", int64: "auto" };
  if (limits instanceof JsonObject) {
    for (const [name, value] of limits.entries) {
      const option = LIMIT_OPTIONS[name];
      if (!option || !(value instanceof JsonNumber)) throw new Error(`bad limit ${name}`);
      options[option] = value.value;
    }
  }
  return options;
}

function decoderFor(limits: Json | undefined, strict: boolean): Decoder {
  const options = optionsFor(limits, strict);
  const key = JSON.stringify(options);
  let decoder = decoders.get(key);
  if (!decoder) decoders.set(key, (decoder = new Decoder(options)));
  return decoder;
}

// {"stream": hex, "cuts": [...]}: the bytes fed to a ChunkDecoder in chunks split at the cuts, then
// finish(); the values it completed, in order, and the error it threw, if any.
function streamAnswer(hex: string, cutsField: Json | undefined, limits: Json | undefined, strict: boolean): string {
  let bytes: Uint8Array;
  let stream: ChunkDecoder;
  const cuts: number[] = [];
  try {
    bytes = hexToBytes(hex);
    stream = new ChunkDecoder(optionsFor(limits, strict));
    if (cutsField !== undefined) {
      if (!Array.isArray(cutsField)) throw new Error("cuts");
      for (const c of cutsField) {
        if (!(c instanceof JsonNumber) || !Number.isInteger(Number(c.value))) throw new Error("cut");
        const at = Number(c.value);
        if (at < 0 || at > bytes.length) throw new Error("cut");
        cuts.push(at);
      }
    }
  } catch {
    return '{"error":"bad_request"}';
  }
  cuts.sort((a, b) => a - b);
  cuts.push(bytes.length);
  const values: unknown[] = [];
  let error = "";
  try {
    let at = 0;
    for (const end of cuts) {
      if (end <= at) continue;
      stream.feed(bytes.slice(at, end), values);
      at = end;
    }
    stream.finish();
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    error = `,"error":"${e.kind}","offset":${e.offset}`;
  }
  return `{"values":[${values.map((v) => toCanonicalJson(v)).join(",")}]${error}}`;
}

function answer(line: string): string {
  let request: Json;
  try {
    request = parseJson(line);
  } catch {
    return '{"error":"bad_request"}';
  }
  if (!(request instanceof JsonObject)) return '{"error":"bad_request"}';
  const field = (name: string) => request.entries.find(([k]) => k === name)?.[1];
  const toEncode = field("encode");
  if (toEncode !== undefined) {
    // spec/README.md: mpk's refusal of a timestamp nsec outside 0..999999999 is invalid_timestamp,
    // of anything else MessagePack cannot carry (ints beyond 64 bits, ext types beyond a byte)
    // bad_request; a request that is not a typed value is bad_request too
    try {
      return JSON.stringify(encodeTyped(toEncode, encoder));
    } catch {
      return '{"error":"bad_request"}';
    }
  }
  const streamed = field("stream");
  if (typeof streamed === "string") {
    return streamAnswer(streamed, field("cuts"), field("limits"), field("strict_utf8") === true);
  }
  const hex = field("decode");
  if (typeof hex === "string") {
    let decoder: Decoder;
    let bytes: Uint8Array;
    try {
      decoder = decoderFor(field("limits"), field("strict_utf8") === true);
      bytes = hexToBytes(hex);
    } catch {
      return '{"error":"bad_request"}';
    }
    try {
      return `{"value":${toCanonicalJson(decoder.decode(bytes))}}`;
    } catch (e) {
      if (e instanceof DecodeError) return `{"error":"${e.kind}","offset":${e.offset}}`;
      throw e;
    }
  }
  return '{"error":"bad_request"}';
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  process.stdout.write(answer(line) + "\n");
});
