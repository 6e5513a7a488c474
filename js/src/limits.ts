// The decoder's options and limits, apart from the decoder: the stream's scanner reads the same
// limits, and nothing here imports anything back.
import type { ExtensionCodec } from "./ExtensionCodec.js";

export type DecoderOptions = Readonly<
  Partial<{
    /** What a map with only str keys becomes: a plain object or a `Map`. Defaults to "object". Maps with other keys always give a `Map`. */
    map: "object" | "Map";
    /**
     * What an int 64 / uint 64 becomes: always a number (may round), always a bigint, or ("auto") a
     * number when the value is exactly representable as one, else a bigint. Defaults to "auto".
     */
    int64: "number" | "bigint" | "auto";
    /**
     * What a str that is not valid UTF-8 becomes: a string with U+FFFD in place of the bad bytes
     * ("replace", as TextDecoder does), a DecodeError of kind invalid_utf8 ("strict"), or a
     * `RawStr` holding the bytes ("raw"). Defaults to "replace".
     */
    utf8: "replace" | "strict" | "raw";
    /** What a timestamp (ext -1) becomes. "Date" falls back to a `Timestamp` outside Date's range. Defaults to "Date". */
    timestamp: "Date" | "Timestamp";
    /**
     * Keep every wire distinction: floats as `Float`, maps as `MapPairs` (duplicates and order
     * kept), timestamps as `Timestamp`. For tools that must re-encode byte for byte. Defaults to false.
     */
    exact: boolean;
    /**
     * Decoded bin, ext and RawStr payloads are views into the input instead of copies: no copy,
     * but they share the input's memory (writing to either changes the other) and keep all of it
     * alive. Stream decoders ignore it: their buffer is reused. Defaults to false.
     */
    zeroCopy: boolean;
    /** Decoders for application ext types; unknown types give `ExtData`. */
    extensions: ExtensionCodec;
    /** Containers enclosing a value, itself included. Defaults to 1024 (DEFAULT_MAX_DEPTH). */
    maxDepth: number;
    /** Bytes of one str. Defaults to 4294967295 (DEFAULT_MAX_LENGTH). */
    maxStrLength: number;
    /** Bytes of one bin. Defaults to 4294967295. */
    maxBinLength: number;
    /** Payload bytes of one ext, timestamps included. Defaults to 4294967295. */
    maxExtLength: number;
    /** Elements of one array. Defaults to 4294967295. */
    maxArrayLength: number;
    /** Key/value pairs of one map. Defaults to 4294967295. */
    maxMapLength: number;
    /**
     * Number and bigint keys of one map decoded to a `Map` (more is a length_limit at the map's
     * head). Defaults to 1024 (DEFAULT_MAX_NUMBER_KEYS): V8 hashes such keys without a seed, and
     * crafted ones make building the Map take time growing with the square of their count. Raise it
     * for input you trust.
     */
    maxNumberKeys: number;
  }>
>;


/** Default nesting limit: a top-level array is at depth 1, so 1024 nested containers are accepted. */
export const DEFAULT_MAX_DEPTH = 1024;
/** Default str/bin/ext/array/map length limit: the format's own maximum (UINT32_MAX). */
export const DEFAULT_MAX_LENGTH = 4294967295;

/**
 * Default limit on the number and bigint keys of one map decoded to a `Map` (see DecoderOptions'
 * maxNumberKeys): crafted ones cost time growing with the square of their count.
 */
export const DEFAULT_MAX_NUMBER_KEYS = 1024;

/** What each decoder option takes (utils/options.ts checks options against it). */
export const DECODER_OPTIONS = {
  map: ["object", "Map"],
  int64: ["number", "bigint", "auto"],
  utf8: ["replace", "strict", "raw"],
  timestamp: ["Date", "Timestamp"],
  exact: "boolean",
  zeroCopy: "boolean",
  extensions: "extensions",
  maxDepth: "limit",
  maxStrLength: "limit",
  maxBinLength: "limit",
  maxExtLength: "limit",
  maxArrayLength: "limit",
  maxMapLength: "limit",
  maxNumberKeys: "limit",
} as const;

/** The decode limits of some options, each defaulted where the options leave it out. */
export interface DecodeLimits {
  readonly depth: number;
  readonly str: number;
  readonly bin: number;
  readonly ext: number;
  readonly array: number;
  readonly map: number;
  readonly numberKeys: number;
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
    numberKeys: options.maxNumberKeys ?? DEFAULT_MAX_NUMBER_KEYS,
  };
}
