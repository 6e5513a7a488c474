// The workloads of `make bench-js`: the common ones of every language's bench
// (build/bench-workloads, written by `make bench-workloads` from bench/workloads/gen.py), each as
// its MessagePack bytes, its JSON text and, where it has a protobuf message, its .pb bytes; plus
// two of issue 10's shapes the common set does not have (ASCII strings of 0-4 KiB, a GeoJSON
// FeatureCollection whose features carry a properties map), made here and encoded by mpk.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { asciiStrings, geoWithProperties } from "./datasets.mjs";

/**
 * [{id, label, msgpack: Uint8Array, jsonText: string | null, pbType: string | null, pb: Uint8Array | null}]
 * encode: mpk's encode, for the workloads made here.
 */
export function loadWorkloads(repoRoot, encode) {
  const dir = join(repoRoot, "build", "bench-workloads");
  const manifestPath = join(dir, "manifest.json");
  if (!existsSync(manifestPath)) throw new Error(`${manifestPath} is missing: run \`make bench-workloads\` first`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const out = [];
  for (const w of manifest.workloads) {
    const f = w.files;
    out.push({
      id: w.id,
      label: w.title,
      msgpack: new Uint8Array(readFileSync(join(dir, f.msgpack))),
      jsonText: f.json ? readFileSync(join(dir, f.json), "utf8") : null,
      pbType: f.pb && w.proto ? w.proto : null,
      pb: f.pb && w.proto ? new Uint8Array(readFileSync(join(dir, f.pb))) : null,
    });
  }
  for (const [id, label, value] of [
    ["js_ascii_strings", "200 ASCII strings of 0-4 KiB (js/bench)", asciiStrings()],
    ["js_geojson_properties", "GeoJSON, 40 polygons with properties (js/bench)", geoWithProperties()],
  ]) {
    out.push({ id, label, msgpack: encode(value).slice(), jsonText: JSON.stringify(value), pbType: null, pb: null });
  }
  return out;
}

/** the same list as JSON (bytes as base64), for the browser page */
export function workloadsToJson(workloads) {
  const b64 = (u) => (u ? Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString("base64") : null);
  return JSON.stringify(workloads.map((w) => ({ ...w, msgpack: b64(w.msgpack), pb: b64(w.pb) })));
}
