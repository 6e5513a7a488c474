import { Encoder, type EncoderOptions } from "./Encoder.js";

const defaultEncoder = /* @__PURE__ */ new Encoder();

/** Encodes one value with an Encoder made from `options` (a shared one when there are none). */
export function encode(value: unknown, options?: EncoderOptions): Uint8Array {
  return (options === undefined ? defaultEncoder : new Encoder(options)).encode(value);
}
