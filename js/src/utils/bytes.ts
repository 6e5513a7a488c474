/** What decoders accept: any view of bytes (Node's Buffer is a Uint8Array) or an ArrayBuffer. */
export type BinaryInput = Uint8Array | ArrayBufferView | ArrayBuffer | ArrayLike<number>;

/** The input as a Uint8Array over the same memory (no copy), or a copy of an array of numbers. */
export function toBytes(input: BinaryInput): Uint8Array {
  if (input instanceof Uint8Array) return input;
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof SharedArrayBuffer !== "undefined" && input instanceof SharedArrayBuffer) return new Uint8Array(input);
  return Uint8Array.from(input as ArrayLike<number>);
}
