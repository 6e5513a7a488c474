// Checks an options object before a codec resolves it: a misspelt key or a value of the wrong kind
// would otherwise be ignored without a word (a `maxStrLenght` leaves the limit off, `map: "map"`
// gives objects, a NaN limit compares false and limits nothing).
import { kindOf } from "../brand.js";
import { typeName } from "./bytes.js";

/** What an option takes: a boolean, a limit (an integer >= 0, or Infinity), an ExtensionCodec, or one of some strings. */
export type OptionSpec = "boolean" | "limit" | "extensions" | readonly string[];

/**
 * Throws a TypeError for options that are not an object, for a key not in `specs` and for a value
 * of the wrong type, and a RangeError for a limit that is not an integer >= 0 (or Infinity) or a
 * string that is not one of the choices. A key set to `undefined` means its default.
 */
export function checkOptions(options: unknown, specs: Readonly<Record<string, OptionSpec>>, what: string): void {
  if (typeof options !== "object" || options === null) throw new TypeError(`mpk ${what} options must be an object, not ${typeName(options)}`);
  for (const key of Object.keys(options)) {
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const spec = Object.prototype.hasOwnProperty.call(specs, key) ? specs[key] : undefined;
    if (spec === undefined) throw new TypeError(`unknown ${what} option "${key}" (the options are ${Object.keys(specs).join(", ")})`);
    const name = `${what} option ${key}`;
    if (spec === "boolean") {
      if (typeof value !== "boolean") throw new TypeError(`${name} must be a boolean, not ${typeName(value)}`);
    } else if (spec === "limit") {
      if (typeof value !== "number") throw new TypeError(`${name} must be a number, not ${typeName(value)}`);
      if (!(value >= 0 && (Number.isInteger(value) || value === Infinity))) throw new RangeError(`${name} must be an integer >= 0 (or Infinity), not ${value}`);
    } else if (spec === "extensions") {
      if (typeof value !== "object" || value === null || kindOf(value) !== "ExtensionCodec") throw new TypeError(`${name} must be an ExtensionCodec, not ${typeName(value)}`);
    } else if (!spec.includes(value as string)) {
      throw new (typeof value === "string" ? RangeError : TypeError)(`${name} must be ${spec.map((s) => `"${s}"`).join(" or ")}, not ${typeof value === "string" ? JSON.stringify(value) : typeName(value)}`);
    }
  }
}
