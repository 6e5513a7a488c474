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

  constructor(kind: DecodeErrorKind, offset: number, detail?: string) {
    super(`${detail ?? DESCRIPTIONS[kind]} at byte ${offset}`);
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
  invalid_byte: "invalid head byte 0xc1",
  depth_limit: "nesting deeper than the depth limit",
  length_limit: "length over its limit",
  invalid_timestamp: "invalid timestamp",
  invalid_utf8: "str is not valid UTF-8",
  trailing_bytes: "bytes remain after the value",
};
