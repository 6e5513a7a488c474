import { brand } from "./brand.js";
/** An ext value whose type has no decoder registered: the type (-128..127) and the payload. */
export class ExtData {
  constructor(
    readonly type: number,
    readonly data: Uint8Array,
  ) {
    // the type is one signed byte on the wire: anything else would be written as another type
    if (!Number.isInteger(type) || type < -128 || type > 127) throw new RangeError(`ext type ${type} is outside -128..127`);
  }
}

brand(ExtData, "ExtData");
