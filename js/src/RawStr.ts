import { brand } from "./brand.js";
import { typeName } from "./utils/bytes.js";
/**
 * A str kept as its bytes. The decoder returns one for a str that is not valid UTF-8 when the
 * option `utf8: "raw"` is set; the encoder writes one back as a str with exactly these bytes.
 */
export class RawStr {
  constructor(readonly bytes: Uint8Array) {
    if (!(bytes instanceof Uint8Array)) throw new TypeError(`RawStr's bytes must be a Uint8Array, not ${typeName(bytes)}`);
  }
}

brand(RawStr, "RawStr");
