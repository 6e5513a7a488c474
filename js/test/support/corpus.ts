// Loads every case of spec/vectors/*.json (relative to the repo root) and answers the questions the
// corpus tests ask of a case: its value, its forms, its error, and the decoder options it needs.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { DecoderOptions } from "../../src/index.js";
import { JsonNumber, JsonObject, parseJson, type Json } from "./losslessJson.js";
import { hexToBytes, TYPE_KEYS } from "./typed.js";

/** js/build/test/test/support -> the repository root */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../..");
/** spec/vectors, or another folder of case files named by MPK_VECTORS (to try new ones) */
export const VECTORS = process.env.MPK_VECTORS ?? join(REPO_ROOT, "spec", "vectors");

export interface Case {
  file: string;
  name: string;
  /** the typed value (the case object itself: its one type key is the value) */
  typed?: Json;
  /** the type key, e.g. "int" or "number" */
  type?: string;
  forms: Uint8Array[];
  error?: string;
  offset?: number;
  /** an encode request that must fail with `error` (no bytes) */
  encodeError?: boolean;
  options: DecoderOptions;
}

const LIMIT_OPTIONS: Record<string, string> = {
  depth: "maxDepth",
  str: "maxStrLength",
  bin: "maxBinLength",
  ext: "maxExtLength",
  array: "maxArrayLength",
  map: "maxMapLength",
};

function get(obj: JsonObject, key: string): Json | undefined {
  return obj.entries.find(([k]) => k === key)?.[1];
}

export function loadCorpus(): Case[] {
  const cases: Case[] = [];
  for (const file of readdirSync(VECTORS).filter((f) => f.endsWith(".json")).sort()) {
    const list = parseJson(readFileSync(join(VECTORS, file), "utf8"));
    if (!Array.isArray(list)) throw new Error(`${file} is not a list of cases`);
    list.forEach((raw, i) => {
      if (!(raw instanceof JsonObject)) throw new Error(`${file}[${i}] is not an object`);
      const name = (get(raw, "name") as string | undefined) ?? `#${i}`;
      const strict = get(raw, "strict_utf8") === true;
      const options: Record<string, unknown> = { exact: true, utf8: strict ? "strict" : "raw" };
      const limits = get(raw, "limits");
      if (limits instanceof JsonObject) {
        for (const [k, v] of limits.entries) options[LIMIT_OPTIONS[k]!] = (v as JsonNumber).value;
      }
      const msgpack = get(raw, "msgpack");
      const error = get(raw, "error");
      const encodeError = get(raw, "encode_error");
      if (typeof encodeError === "string") {
        // a value MessagePack cannot carry: encoding it must fail with this kind
        const type = raw.entries.map(([k]) => k).find((k) => TYPE_KEYS.has(k));
        cases.push({ file, name, typed: raw, type, error: encodeError, encodeError: true, forms: [], options });
      } else if (typeof error === "string") {
        cases.push({
          file, name, error,
          offset: (get(raw, "offset") as JsonNumber).value,
          forms: [hexToBytes(msgpack as string)],
          options,
        });
      } else {
        const type = raw.entries.map(([k]) => k).find((k) => TYPE_KEYS.has(k));
        cases.push({ file, name, typed: raw, type, forms: (msgpack as string[]).map(hexToBytes), options });
      }
    });
  }
  return cases;
}
