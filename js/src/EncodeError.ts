import { brand } from "./brand.js";

/**
 * A value the encoder refuses: one with no MessagePack form (a function, a symbol, an Error, a
 * typed array other than Uint8Array...), a number or bigint out of range, or nesting deeper than
 * maxDepth. `path` says where in the encoded value it is (`$` is the value itself: `$.a[3]`,
 * `$["odd key"]`, `$.m.get(1)` for the value of key 1 of a Map) and `valueType` what it is.
 */
export class EncodeError extends Error {
  /** Where the refused value is, from `$`, the value given to encode. */
  path = "$";
  /** What the refused value is: "function", "symbol", "Error", "Float32Array", "bigint"... */
  readonly valueType: string;
  /** @internal the path's steps, innermost first, while the error unwinds */
  private readonly steps: string[] = [];
  private located = false;
  private readonly reason: string;

  /** `reason` says what is wrong with the value, `valueType` what it is. */
  constructor(reason: string, valueType: string) {
    super(reason);
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = "EncodeError";
    this.reason = reason;
    this.valueType = valueType;
  }

  /** @internal the refused value is inside the container being written, at this step. */
  within(step: string): this {
    if (!this.located) this.steps.push(step);
    return this;
  }

  /** @internal the error leaves encode(): its path and message are final. */
  locate(): this {
    if (this.located) return this;
    this.located = true;
    const steps = this.steps.reverse();
    this.path = "$" + steps.join("");
    // a cycle makes a path of maxDepth steps: the message shows its two ends
    const shown = steps.length > 24 ? "$" + steps.slice(0, 12).join("") + "…" + steps.slice(-12).join("") : this.path;
    this.message = `${this.reason} at ${shown}`;
    return this;
  }
}

brand(EncodeError, "EncodeError");

/** The step to an object's property: `.name` for identifiers, else `["key"]`. */
export function keyStep(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** The step to a Map entry's value: `.get(key)`, the key as it would be written in JavaScript. */
export function mapKeyStep(key: unknown): string {
  if (typeof key === "string") return `.get(${JSON.stringify(key)})`;
  if (typeof key === "number" || typeof key === "boolean" || key === null || key === undefined) return `.get(${String(key)})`;
  if (typeof key === "bigint") return `.get(${key}n)`;
  return ".get(<key>)";
}
