import { brand } from "./brand.js";
/** The closed set of decode error kinds, spelled as in spec/README.md. */
export type DecodeErrorKind =
  | "truncated"
  | "invalid_byte"
  | "depth_limit"
  | "length_limit"
  | "invalid_timestamp"
  | "invalid_utf8"
  | "trailing_bytes";

/**
 * Every way decoding can fail: `kind` says what broke and `offset` where, counted in bytes from the
 * start of the input (for a stream, from the start of the stream).
 */
export class DecodeError extends Error {
  readonly kind: DecodeErrorKind;
  readonly offset: number;

  /**
   * `head` is the byte at `offset` when there is one (the head byte of the offending token, or
   * for trailing_bytes the first byte after the value); the message names it in hex.
   */
  constructor(kind: DecodeErrorKind, offset: number, head?: number) {
    super(`${DESCRIPTIONS[kind]}${head === undefined ? "" : ` (head byte 0x${head.toString(16).padStart(2, "0")})`} at byte ${offset}`);
    // Targets that compile classes down lose the prototype of Error subclasses; restore it so
    // `instanceof DecodeError` holds everywhere.
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = "DecodeError";
    this.kind = kind;
    this.offset = offset;
  }
}

const DESCRIPTIONS: Record<DecodeErrorKind, string> = {
  truncated: "input ends inside a value",
  invalid_byte: "invalid byte",
  depth_limit: "nesting deeper than the depth limit",
  length_limit: "length over its limit",
  invalid_timestamp: "invalid timestamp",
  invalid_utf8: "str is not valid UTF-8",
  trailing_bytes: "bytes remain after the value",
};

brand(DecodeError, "DecodeError");
