import { brand } from "./brand.js";
import { typeName } from "./utils/bytes.js";
/**
 * A map as its list of key/value pairs, in wire order, duplicates kept. The decoder returns one
 * for every map when the option `exact: true` is set; the encoder writes one as a map.
 */
export class MapPairs {
  constructor(readonly pairs: Array<[unknown, unknown]>) {
    // each pair is checked when it is encoded
    if (!Array.isArray(pairs)) throw new TypeError(`MapPairs' pairs must be an Array of [key, value] pairs, not ${typeName(pairs)}`);
  }
}

brand(MapPairs, "MapPairs");
