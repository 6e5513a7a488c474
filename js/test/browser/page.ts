// Runs in the Chromium page: the whole corpus, one-shot and through decodeStream one byte at a
// time, with the bundle of mpk built from src/. The Node side (run.ts) serves the vectors.
import { DecodeError, Decoder, decodeStream, encode, type DecoderOptions } from "../../src/index.js";
import { JsonNumber, JsonObject, parseJson, type Json } from "../support/losslessJson.js";
import { bytesToHex, encodeTyped, fromTyped, hexToBytes, normalEqual, normalize, toCanonicalJson, TYPE_KEYS } from "../support/typed.js";

const LIMIT_OPTIONS: Record<string, string> = {
  depth: "maxDepth", str: "maxStrLength", bin: "maxBinLength", ext: "maxExtLength", array: "maxArrayLength", map: "maxMapLength",
};

interface Outcome {
  passed: number;
  failed: number;
  failures: string[];
}

async function* bytewise(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
}

async function runCase(file: string, raw: JsonObject): Promise<void> {
  const get = (k: string): Json | undefined => raw.entries.find(([key]) => key === k)?.[1];
  const options: Record<string, unknown> = { exact: true, utf8: get("strict_utf8") === true ? "strict" : "raw" };
  const limits = get("limits");
  if (limits instanceof JsonObject) for (const [k, v] of limits.entries) options[LIMIT_OPTIONS[k]!] = (v as JsonNumber).value;
  const decoder = new Decoder(options as DecoderOptions);
  const error = get("error");
  const encodeError = get("encode_error");
  if (typeof encodeError === "string") {
    // a value MessagePack cannot carry: mpk must refuse it, with the error the spec's kind names
    const got = encodeTyped(raw);
    if (!("error" in got) || got.error !== encodeError) throw new Error(`encode: want ${encodeError}, got ${JSON.stringify(got)}`);
    return;
  }
  if (typeof error === "string") {
    const offset = (get("offset") as JsonNumber).value;
    try {
      decoder.decode(hexToBytes(get("msgpack") as string));
    } catch (e) {
      if (e instanceof DecodeError && e.kind === error && e.offset === offset) return;
      throw new Error(`want ${error} at ${offset}, got ${String(e)}`);
    }
    throw new Error(`want ${error} at ${offset}, decoded`);
  }
  const forms = (get("msgpack") as string[]).map(hexToBytes);
  const want = normalize(raw);
  for (const form of forms) {
    const got = normalize(parseJson(toCanonicalJson(decoder.decode(form))));
    if (!normalEqual(got, want)) throw new Error(`${bytesToHex(form)} decoded to ${JSON.stringify(got)}`);
    if (form.length > 4096) continue;
    const streamed: unknown[] = [];
    for await (const v of decodeStream(bytewise(form), options as DecoderOptions)) streamed.push(v);
    if (streamed.length !== 1 || bytesToHex(encode(streamed[0])) !== bytesToHex(encode(decoder.decode(form)))) {
      throw new Error(`${bytesToHex(form)} streamed one byte at a time gave another value`);
    }
  }
  const type = raw.entries.map(([k]) => k).find((k) => TYPE_KEYS.has(k));
  const encoded = bytesToHex(encode(fromTyped(raw)));
  const allowed = type === "number" ? forms.map(bytesToHex) : [bytesToHex(forms[0]!)];
  if (!allowed.includes(encoded)) throw new Error(`encoded ${encoded}, want ${allowed.join(" or ")}`);
}

async function runCorpus(): Promise<Outcome> {
  const files = (await (await fetch("/vectors")).json()) as Array<[string, string]>;
  const outcome: Outcome = { passed: 0, failed: 0, failures: [] };
  for (const [file, text] of files) {
    const list = parseJson(text) as Json[];
    for (const raw of list) {
      const name = ((raw as JsonObject).entries.find(([k]) => k === "name")?.[1] as string) ?? "?";
      try {
        await runCase(file, raw as JsonObject);
        outcome.passed++;
      } catch (e) {
        outcome.failed++;
        outcome.failures.push(`${file}: ${name}: ${(e as Error).message}`);
      }
    }
  }
  return outcome;
}

(globalThis as unknown as { runCorpus: typeof runCorpus }).runCorpus = runCorpus;
