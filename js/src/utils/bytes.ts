/**
 * What decoders accept: bytes. A `Uint8Array` (Node's `Buffer` is one), any other `ArrayBufferView`
 * (its bytes), an `ArrayBuffer` or a `SharedArrayBuffer`. Anything else, a string above all (a Node
 * stream opened with an encoding yields strings), is a TypeError: its characters are not the bytes
 * that were sent.
 */
export type BinaryInput = Uint8Array | ArrayBufferView | ArrayBuffer;

/**
 * The input as a plain Uint8Array over the same memory (no copy). A subclass (Node's Buffer) is
 * viewed as a plain Uint8Array, so that slicing it always copies and always gives a Uint8Array.
 * Throws a TypeError naming the type of anything that is not bytes.
 */
export function toBytes(bytes: BinaryInput): Uint8Array {
  const input: unknown = bytes;
  if (input instanceof Uint8Array) {
    return input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof SharedArrayBuffer !== "undefined" && input instanceof SharedArrayBuffer) return new Uint8Array(input);
  throw new TypeError(`mpk decodes bytes (a Uint8Array, Buffer, ArrayBuffer or ArrayBufferView), not ${typeName(input)}${typeof input === "string" ? " (was the stream opened with an encoding?)" : ""}`);
}

/** A value's type for an error message: "a string", "an Array", "null", "an instance of Foo". */
export function typeName(v: unknown): string {
  if (v === null) return "null";
  const t = typeof v;
  if (t === "undefined") return "undefined";
  if (t !== "object" && t !== "function") return `${/^[aeiou]/.test(t) ? "an" : "a"} ${t}`;
  if (t === "function") return "a function";
  const proto = Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null;
  const name = proto === null ? "" : typeof proto.constructor?.name === "string" ? proto.constructor.name : "";
  if (name === "" || name === "Object") return proto === null ? "an object with a null prototype" : "a plain object";
  // "a Uint8ClampedArray", "a URL": names starting with U are said "you"
  return `${/^[AEIO]/.test(name) ? "an" : "a"} ${name}`;
}
