import { brand } from "./brand.js";
import { typeName } from "./utils/bytes.js";
/** An ext value whose type has no decoder registered: the type (-128..127) and the payload. */
export class ExtData {
  constructor(
    readonly type: number,
    readonly data: Uint8Array,
  ) {
    // the type is one signed byte on the wire: anything else would be written as another type
    if (!Number.isInteger(type) || type < -128 || type > 127) throw new RangeError(`ext type ${type} is outside -128..127`);
    // anything else would be written as bytes it does not hold (a string or an array as zeros)
    if (!(data instanceof Uint8Array)) throw new TypeError(`ExtData's data must be a Uint8Array, not ${typeName(data)}`);
  }
}

brand(ExtData, "ExtData");
