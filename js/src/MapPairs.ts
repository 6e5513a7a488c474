import { brand } from "./brand.js";
/**
 * A map as its list of key/value pairs, in wire order, duplicates kept. The decoder returns one
 * for every map when the option `exact: true` is set; the encoder writes one as a map.
 */
export class MapPairs {
  constructor(readonly pairs: Array<[unknown, unknown]>) {}
}

brand(MapPairs, "MapPairs");
