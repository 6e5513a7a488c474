import { Decoder } from "./Decoder.js";
import type { DecoderOptions } from "./limits.js";
import type { BinaryInput } from "./utils/bytes.js";

const defaultDecoder = /* @__PURE__ */ new Decoder();

/** Decodes exactly one value; throws DecodeError on bad input or bytes left over. */
export function decode(input: BinaryInput, options?: DecoderOptions): unknown {
  return (options === undefined ? defaultDecoder : new Decoder(options)).decode(input);
}

/** Decodes the values laid one after another in the input, one at a time. */
export function decodeMulti(input: BinaryInput, options?: DecoderOptions): Generator<unknown, void, undefined> {
  return (options === undefined ? defaultDecoder : new Decoder(options)).decodeMulti(input);
}
