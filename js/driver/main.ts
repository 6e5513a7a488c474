// The interop driver (spec/README.md, "Drivers"): JSON Lines requests on stdin, one answer line per
// request on stdout. Decodes run with { exact: true, utf8: "raw" } so that every wire distinction
// reaches the canonical answer.
import { createInterface } from "node:readline";
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

function decoderFor(limits: Json | undefined, strict: boolean): Decoder {
  const options: Record<string, unknown> = { exact: true, utf8: strict ? "strict" : "raw", int64: "auto" };
  if (limits instanceof JsonObject) {
    for (const [name, value] of limits.entries) {
      const option = LIMIT_OPTIONS[name];
      if (!option || !(value instanceof JsonNumber)) throw new Error(`bad limit ${name}`);
      options[option] = value.value;
    }
  }
  const key = JSON.stringify(options);
  let decoder = decoders.get(key);
  if (!decoder) decoders.set(key, (decoder = new Decoder(options)));
  return decoder;
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
