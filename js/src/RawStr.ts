import { brand } from "./brand.js";
/**
 * A str kept as its bytes. The decoder returns one for a str that is not valid UTF-8 when the
 * option `utf8: "raw"` is set; the encoder writes one back as a str with exactly these bytes.
 */
export class RawStr {
  constructor(readonly bytes: Uint8Array) {}
}

brand(RawStr, "RawStr");
