// The benchmark itself, the same in Node and in the browser page: every library is a record
// (label, encode, decode), timed in one process, interleaved round by round; the medians of the
// rounds are reported, with the ratio against the peers. A library whose result does not equal
// the data is reported as failing its check and gets no number.

let sink;

function now() {
  return performance.now();
}

/** ns per call of fn, timing n calls */
function time(fn, n) {
  const t0 = now();
  for (let i = 0; i < n; i++) sink = fn();
  return ((now() - t0) * 1e6) / n;
}

function calibrate(fn, targetMs) {
  let n = 1;
  for (;;) {
    const t0 = now();
    for (let i = 0; i < n; i++) sink = fn();
    let ms = now() - t0;
    if (ms >= targetMs / 4 || n >= 1 << 24) {
      // once more, keeping the shorter: one garbage collection (or a coarse browser clock) in the
      // first try would leave a count so small that a round reads 0 ns
      const t1 = now();
      for (let i = 0; i < n; i++) sink = fn();
      ms = Math.min(ms, now() - t1);
      if (ms < targetMs / 8 && n < 1 << 24) {
        n *= 4;
        continue;
      }
      return Math.max(1, Math.round((n * targetMs) / Math.max(ms, 1e-3)));
    }
    n *= 4;
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** contenders: [label, fn]; returns label -> median ns per call */
function measure(contenders, rounds, targetMs) {
  const counts = contenders.map(([, fn]) => calibrate(fn, targetMs));
  const samples = contenders.map(() => []);
  for (let r = 0; r < rounds; r++) {
    // rotate the order each round so that no library always runs right after the same one
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + r) % contenders.length;
      samples[i].push(time(contenders[i][1], counts[i]));
    }
  }
  return Object.fromEntries(contenders.map(([label], i) => [label, median(samples[i])]));
}

/**
 * Bins in a dataset's JSON text: {"$bin": length, "seed": n} stands for a Uint8Array of that length
 * filled from the seed (JSON has no bytes). Returns the value itself when it holds none.
 */
export function revive(v) {
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const y = revive(x);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : v;
  }
  if (v === null || typeof v !== "object") return v;
  if (typeof v.$bin === "number") {
    const bytes = new Uint8Array(v.$bin);
    let a = (v.seed ?? 1) >>> 0;
    for (let i = 0; i < bytes.length; i++) bytes[i] = (a = (Math.imul(a, 1103515245) + 12345) >>> 0) >>> 24;
    return bytes;
  }
  let changed = false;
  const out = {};
  for (const k of Object.keys(v)) {
    out[k] = revive(v[k]);
    if (out[k] !== v[k]) changed = true;
  }
  return changed ? out : v;
}

export function deepEqual(a, b) {
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    if (a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  }
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k])) return false;
  return true;
}

/**
 * datasets: [name, jsonText]; codecs: [{label, encode?, decode?}] where decode takes the mpk bytes;
 * json: {encode(value) -> bytes, decode(bytes) -> value} is the JSON baseline ("JSON") and
 * JSON.parse of a ready string is added as "JSON.parse(string)".
 * Returns rows: {dataset, msgpackBytes, jsonBytes, decode: {label: ns|null}, encode: {label: ns|null}}
 */
export function runSuite({ datasets, codecs, json, rounds = 7, targetMs = 40, encodeToo = true, log = () => {} }) {
  const rows = [];
  for (const [name, text] of datasets) {
    const parsed = JSON.parse(text);
    const value = revive(parsed);
    // a dataset with bins has no JSON form: no JSON baseline
    const withJson = value === parsed && !text.includes('"$bin"');
    const minified = JSON.stringify(value);
    const jsonBytes = withJson ? json.encode(value) : new Uint8Array(0);
    const mpk = codecs[0];
    const bytes = mpk.encode(value).slice();
    const decoders = [];
    const failed = [];
    for (const c of codecs) {
      if (!c.decode) continue;
      if (deepEqual(c.decode(bytes), value)) decoders.push([c.label, () => c.decode(bytes)]);
      else failed.push(`${c.label} decode`);
    }
    if (withJson) {
      decoders.push(["JSON", () => json.decode(jsonBytes)]);
      decoders.push(["JSON.parse(string)", () => JSON.parse(minified)]);
    }
    const decode = measure(decoders, rounds, targetMs);
    let encode = {};
    if (encodeToo) {
      const encoders = [];
      for (const c of codecs) {
        if (!c.encode) continue;
        if (deepEqual(mpk.decode(c.encode(value)), value)) encoders.push([c.label, () => c.encode(value)]);
        else failed.push(`${c.label} encode`);
      }
      if (withJson) encoders.push(["JSON", () => json.encode(value)]);
      encode = measure(encoders, rounds, targetMs);
    }
    rows.push({ dataset: name, msgpackBytes: bytes.length, jsonBytes: jsonBytes.length, decode, encode, failed });
    log(`${name}: done${failed.length ? ` (failed checks: ${failed.join(", ")})` : ""}`);
  }
  return rows;
}

/** true when v holds a Uint8Array anywhere */
export function holdsBin(v) {
  if (v instanceof Uint8Array) return true;
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some(holdsBin);
  for (const k in v) if (holdsBin(v[k])) return true;
  return false;
}

/** true when v holds a Uint8Array whose memory is buffer (a view into the input) */
export function holdsViewOf(v, buffer) {
  if (v instanceof Uint8Array) return v.buffer === buffer;
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some((x) => holdsViewOf(x, buffer));
  for (const k in v) if (holdsViewOf(v[k], buffer)) return true;
  return false;
}

/** v with every Uint8Array replaced by its base64 string (standard alphabet, padded), as gen.py writes bins into the .json files */
export function binsAsBase64(v) {
  if (v instanceof Uint8Array) {
    let bin = "";
    for (let i = 0; i < v.length; i += 0x8000) bin += String.fromCharCode.apply(null, v.subarray(i, i + 0x8000));
    return btoa(bin);
  }
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(binsAsBase64);
  const out = {};
  for (const k of Object.keys(v)) out[k] = binsAsBase64(v[k]);
  return out;
}

/**
 * The common workloads (workloads.mjs): [{id, label, msgpack, jsonText, pbType, pb}].
 * codecs: [{label, encode?, decode?, bins?: "only" | "never"}]; codecs[0] (mpk) decodes each
 * workload's bytes into the value every library is then checked and timed on ("only": timed on the
 * workloads holding bins alone, "never": on the others alone).
 * json: {encode(value) -> bytes, decode(bytes) -> value}: "JSON", plus "JSON.parse(string)"; on
 * workloads holding bins, of the workload's .json text, whose bins are base64 strings (JSON has no
 * bytes): parsed and stringified as such, with no conversion of the strings to bytes timed.
 * pb: {label, copyingLabel, codec(type) -> {decode(bytes) -> message, decodeCopying?(bytes) -> message,
 * encode(message) -> bytes} | null}: timed on the workload's .pb bytes and checked by encoding them
 * back to the same length; decodeCopying (bins copied out of the input) on workloads holding bins.
 * Returns rows {id, label, hasBin, msgpackBytes, jsonBytes, pbBytes, decode: {label: ns}, encode: {label: ns}, failed}.
 */
export function runWorkloads({ workloads, codecs, json, pb = null, rounds = 7, targetMs = 40, encodeToo = true, log = () => {} }) {
  const rows = [];
  const mpk = codecs[0];
  for (const w of workloads) {
    const value = mpk.decode(w.msgpack);
    const hasBin = holdsBin(value);
    const failed = [];
    const runs = codecs.filter((c) => !(c.bins === "only" && !hasBin) && !(c.bins === "never" && hasBin));
    const bytes = mpk.encode(value).slice();
    if (!deepEqual(mpk.decode(bytes), value)) failed.push("mpk round trip");
    const decoders = [];
    for (const c of runs) {
      if (!c.decode) continue;
      if (deepEqual(c.decode(bytes), value)) decoders.push([c.label, () => c.decode(bytes)]);
      else failed.push(`${c.label} decode`);
    }
    let jsonBytes = null;
    // JSON's value: the data itself, or on workloads holding bins its JSON form, the common .json
    // file's (bins as base64 strings, what JSON users send), checked against the MessagePack value
    let jsonValue = value;
    if (hasBin && w.jsonText != null) {
      jsonValue = JSON.parse(w.jsonText);
      if (!deepEqual(jsonValue, binsAsBase64(value))) {
        failed.push("JSON text (not the MessagePack value with bins as base64)");
        jsonValue = null;
      }
    }
    if (w.jsonText != null && jsonValue != null) {
      jsonBytes = json.encode(jsonValue);
      const minified = JSON.stringify(jsonValue);
      if (deepEqual(json.decode(jsonBytes), jsonValue)) {
        decoders.push(["JSON", () => json.decode(jsonBytes)]);
        decoders.push(["JSON.parse(string)", () => JSON.parse(minified)]);
      } else {
        failed.push("JSON decode");
        jsonBytes = null;
      }
    }
    let pbCodec = null;
    if (pb && w.pb && w.pbType) {
      pbCodec = pb.codec(w.pbType);
      const message = pbCodec && pbCodec.decode(w.pb);
      if (pbCodec && pbCodec.encode(message).length === w.pb.length) {
        decoders.push([pb.label, () => pbCodec.decode(w.pb)]);
        pbCodec.message = message;
        // on workloads holding bins, protobufjs with bins of their own too, checked to hold no view of the input
        if (hasBin && pbCodec.decodeCopying) {
          const copied = pbCodec.decodeCopying(w.pb);
          if (pbCodec.encode(copied).length === w.pb.length && !holdsViewOf(copied, w.pb.buffer)) decoders.push([pb.copyingLabel, () => pbCodec.decodeCopying(w.pb)]);
          else failed.push(`${pb.copyingLabel} (${w.pbType})`);
        }
      } else {
        failed.push(`${pb.label} (${w.pbType})`);
        pbCodec = null;
      }
    }
    const decode = measure(decoders, rounds, targetMs);
    let encode = {};
    if (encodeToo) {
      const encoders = [];
      for (const c of runs) {
        if (!c.encode) continue;
        if (deepEqual(mpk.decode(c.encode(value)), value)) encoders.push([c.label, () => c.encode(value)]);
        else failed.push(`${c.label} encode`);
      }
      if (jsonBytes) encoders.push(["JSON", () => json.encode(jsonValue)]);
      if (pbCodec) encoders.push([pb.label, () => pbCodec.encode(pbCodec.message)]);
      encode = measure(encoders, rounds, targetMs);
    }
    rows.push({ id: w.id, label: w.label, hasBin, msgpackBytes: bytes.length, jsonBytes: jsonBytes?.length ?? null, pbBytes: w.pb?.length ?? null, decode, encode, failed });
    log(`${w.id}: done${failed.length ? ` (failed checks: ${failed.join(", ")})` : ""}`);
  }
  return rows;
}

/** the inverse of workloads.mjs's workloadsToJson, in any JavaScript runtime (the browser page) */
export function workloadsFromJson(text) {
  const bytes = (s) => {
    if (s == null) return null;
    const bin = atob(s);
    const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u;
  };
  return JSON.parse(text).map((w) => ({ ...w, msgpack: bytes(w.msgpack), pb: bytes(w.pb) }));
}
