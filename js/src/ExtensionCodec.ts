import { brand } from "./brand.js";
/** One application ext type: how to write values of it and how to read its payload back. */
export interface ExtensionDefinition<T = unknown> {
  /** The ext type, 0..127 for applications (negative types are reserved by MessagePack). */
  type: number;
  /**
   * Returns the payload for a value this extension handles, or null (or undefined) to decline it;
   * anything else is an EncodeError.
   */
  encode?: (value: unknown) => Uint8Array | null | undefined;
  /** Builds the value from a payload (a copy the callee may keep; a view into the input with `zeroCopy`). */
  decode?: (data: Uint8Array, type: number) => T;
}

/**
 * The registry of application ext types, shared by encoders and decoders through their
 * `extensions` option. Timestamps (type -1) are built in and cannot be replaced.
 */
export class ExtensionCodec {
  /** @internal in registration order, tried one by one on values that are not plain data */
  readonly encoders: Array<ExtensionDefinition & { encode: (value: unknown) => Uint8Array | null | undefined }> = [];
  /** @internal decoders by type + 128 */
  readonly decoders: Array<((data: Uint8Array, type: number) => unknown) | undefined> = new Array(256);
  /** The types registered so far: one definition each (a second would encode with the first and decode with the second). */
  private readonly types = new Set<number>();

  register<T>(definition: ExtensionDefinition<T>): this {
    const { type } = definition;
    if (!Number.isInteger(type) || type < -128 || type > 127) throw new RangeError("ext type must be -128..127");
    if (type === -1) throw new RangeError("ext type -1 is the built-in timestamp");
    if (this.types.has(type)) throw new RangeError(`ext type ${type} is registered already`);
    for (const key of ["encode", "decode"] as const) {
      const f = definition[key];
      if (f !== undefined && typeof f !== "function") throw new TypeError(`an extension's ${key} must be a function, not ${typeof f}`);
    }
    this.types.add(type);
    if (definition.encode) this.encoders.push(definition as never);
    if (definition.decode) this.decoders[type + 128] = definition.decode;
    return this;
  }
}

brand(ExtensionCodec, "ExtensionCodec");
