// Runs in the Chromium page: the whole corpus, one-shot and through decodeStream one byte at a
// time, with the bundle of mpk built from src/. The Node side (run.ts) serves the vectors.
import { DecodeError, decode, Decoder, decodeStream, DecoderStream, encode, EncodeError, Encoder, type DecoderOptions } from "../../src/index.js";
import { asciiText, BATCH_MAX_TEXT } from "../../src/strBatch.js";
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

/**
 * The browser paths of the safety guarantees (test/safety.test.ts and test/mapping.test.ts check
 * them in Node): each check throws on failure.
 */
const CHECKS: Record<string, () => Promise<void> | void> = {
  "decode and DecoderStream refuse a string with a TypeError naming it": async () => {
    expectThrow(() => decode("\x92\x01\x02" as unknown as Uint8Array), (e) => e instanceof TypeError && /not a string/.test(e.message));
    const stream = new DecoderStream();
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    void writer.write(Uint8Array.of(7)).catch(() => {});
    void writer.write("abc" as unknown as Uint8Array).catch(() => {});
    const first = await reader.read();
    if (first.value !== 7) throw new Error(`first value ${String(first.value)}`);
    await expectReject(reader.read(), (e) => e instanceof TypeError && /not a string/.test(e.message));
    // decodeStream of a fetch-like body (a ReadableStream) with a string chunk: the value before it, then the TypeError
    const body = new ReadableStream({ start(c) { c.enqueue(Uint8Array.of(5)); c.enqueue("abc"); c.close(); } });
    const got: unknown[] = [];
    await expectReject((async () => { for await (const v of decodeStream(body as ReadableStream<Uint8Array>)) got.push(v); })(), (e) => e instanceof TypeError && /not a string/.test(e.message));
    if (got.join() !== "5") throw new Error(`values before the string: ${got.join()}`);
    await expectReject((async () => { for await (const _ of decodeStream(Uint8Array.of(1) as never)); })(), (e) => e instanceof TypeError && /decode bytes held in memory/.test(e.message));
  },
  "a stream error after a value in the same chunk is at its offset": async () => {
    async function* one() {
      yield Uint8Array.of(0x01, 0xc1);
    }
    await expectReject(
      (async () => {
        for await (const _ of decodeStream(one()));
      })(),
      (e) => e instanceof DecodeError && e.kind === "invalid_byte" && e.offset === 1,
    );
  },
  "1,000 nested array 32 heads of 2^20 are truncated without claiming gigabytes": () => {
    const bytes = new Uint8Array(5000 + 2 ** 20);
    for (let i = 0; i < 1000; i++) bytes.set([0xdd, 0x00, 0x10, 0x00, 0x00], i * 5);
    expectThrow(() => decode(bytes), (e) => e instanceof DecodeError && e.kind === "truncated" && e.offset === bytes.length);
  },
  "encode returns memory of its own; transferring it leaves other results whole": () => {
    const a = encode({ a: 1 });
    const b = encode("x".repeat(100_000));
    if (a.buffer.byteLength !== a.byteLength || b.buffer.byteLength !== b.byteLength) throw new Error("result buffers hold more than the message");
    const before = Array.from(a);
    const channel = new MessageChannel();
    channel.port1.postMessage(b, [b.buffer]);
    channel.port1.close();
    if (b.byteLength !== 0 || Array.from(a).join() !== before.join()) throw new Error("transfer touched another result");
    const shared = new Encoder({ sharedBuffer: true });
    if (shared.encode(1).buffer !== shared.encode(2).buffer) throw new Error("sharedBuffer results do not share");
  },
  "EncodeError names the type and path; a Set is an array": () => {
    expectThrow(() => encode({ a: [1, 2, 3, () => 0] }), (e) => e instanceof EncodeError && e.path === "$.a[3]" && e.valueType === "function");
    expectThrow(() => encode({ v: new Float32Array(1) }), (e) => e instanceof EncodeError && e.path === "$.v" && e.valueType === "Float32Array");
    if (bytesToHex(encode(new Set([1, 2]))) !== "920102") throw new Error("Set");
  },
  "the str batch without Buffer (TextDecoder for its ASCII text): strs across several passes decode exactly": () => {
    if (typeof (globalThis as { Buffer?: unknown }).Buffer !== "undefined") throw new Error("this page has a Buffer");
    const value: string[] = [];
    for (let i = 0; value.length < 1500; i++) value.push(`${i}:${(i % 7 === 0 ? "é" : "ab").repeat(20 + (i * 37) % 200)}`);
    if (encode(value).length < 4 * BATCH_MAX_TEXT) throw new Error("too small to take several passes");
    const got = decode(encode(value)) as string[];
    for (let i = 0; i < value.length; i++) if (got[i] !== value[i]) throw new Error(`str ${i}`);
    const scratch = Uint8Array.from({ length: 300 }, (_, i) => 32 + (i % 90));
    if (asciiText(scratch, 300) !== String.fromCharCode(...scratch)) throw new Error("asciiText");
  },
  "host objects named by Symbol.toStringTag are refused; misspelt options are errors": () => {
    expectThrow(() => encode({ h: new Headers() }), (e) => e instanceof EncodeError && e.path === "$.h" && e.valueType === "Headers");
    expectThrow(() => encode([new Blob(["x"])]), (e) => e instanceof EncodeError && e.path === "$[0]" && e.valueType === "Blob");
    expectThrow(() => encode(new Map().values()), (e) => e instanceof EncodeError && e.valueType === "Map Iterator");
    expectThrow(() => decode(Uint8Array.of(1), { maxStrLenght: 1 } as never), (e) => e instanceof TypeError && /unknown decoder option "maxStrLenght"/.test(e.message));
    expectThrow(() => new Encoder({ sortKeys: "yes" } as never), (e) => e instanceof TypeError && /sortKeys must be a boolean/.test(e.message));
  },
  "decoded bins are copies unless zeroCopy": () => {
    const input = Uint8Array.of(0xc4, 0x02, 7, 8);
    const copy = decode(input) as Uint8Array;
    const view = decode(input, { zeroCopy: true }) as Uint8Array;
    input.fill(0);
    if (copy.join() !== "7,8" || view.join() !== "0,0") throw new Error(`copy ${copy.join()}, view ${view.join()}`);
  },
};

function expectThrow(f: () => unknown, ok: (e: unknown) => boolean): void {
  try {
    f();
  } catch (e) {
    if (ok(e)) return;
    throw new Error(`unexpected error: ${String(e)}`);
  }
  throw new Error("no error");
}

async function expectReject(p: Promise<unknown>, ok: (e: unknown) => boolean): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (ok(e)) return;
    throw new Error(`unexpected error: ${String(e)}`);
  }
  throw new Error("no error");
}

async function runChecks(): Promise<Outcome> {
  const outcome: Outcome = { passed: 0, failed: 0, failures: [] };
  for (const [name, check] of Object.entries(CHECKS)) {
    try {
      await check();
      outcome.passed++;
    } catch (e) {
      outcome.failed++;
      outcome.failures.push(`${name}: ${(e as Error).message}`);
    }
  }
  return outcome;
}

(globalThis as unknown as { runCorpus: typeof runCorpus }).runCorpus = runCorpus;
(globalThis as unknown as { runChecks: typeof runChecks }).runChecks = runChecks;
