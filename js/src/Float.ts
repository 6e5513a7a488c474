import { brand } from "./brand.js";
import { typeName } from "./utils/bytes.js";
/**
 * A float that remembers its width. The decoder returns one for every float when the option
 * `exact: true` is set (so 1.0 stays distinguishable from the int 1); the encoder writes one as
 * float 32 or float 64 as asked.
 */
export class Float {
  constructor(
    readonly value: number,
    readonly bits: 32 | 64 = 64,
  ) {
    if (typeof value !== "number") throw new TypeError(`Float's value must be a number, not ${typeName(value)}`);
    if (bits !== 32 && bits !== 64) throw new RangeError(`Float's bits must be 32 or 64, not ${String(bits)}`);
  }
}

brand(Float, "Float");
