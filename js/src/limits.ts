import type { DecoderOptions } from "./Decoder.js";

/** Default nesting limit: a top-level array is at depth 1, so 1024 nested containers are accepted. */
export const DEFAULT_MAX_DEPTH = 1024;
/** Default str/bin/ext/array/map length limit: the format's own maximum (UINT32_MAX). */
export const DEFAULT_MAX_LENGTH = 4294967295;

/** The decode limits of some options, each defaulted where the options leave it out. */
export interface DecodeLimits {
  readonly depth: number;
  readonly str: number;
  readonly bin: number;
  readonly ext: number;
  readonly array: number;
  readonly map: number;
}

/**
 * Reads the limits out of decoder options: the one reading shared by the decoder and the stream's
 * scanner, which must refuse exactly the same values.
 */
export function decodeLimits(options: DecoderOptions): DecodeLimits {
  return {
    depth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    str: options.maxStrLength ?? DEFAULT_MAX_LENGTH,
    bin: options.maxBinLength ?? DEFAULT_MAX_LENGTH,
    ext: options.maxExtLength ?? DEFAULT_MAX_LENGTH,
    array: options.maxArrayLength ?? DEFAULT_MAX_LENGTH,
    map: options.maxMapLength ?? DEFAULT_MAX_LENGTH,
  };
}
