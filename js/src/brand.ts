// One identity for each class across every copy of mpk in a process. An app whose dependencies mix
// `import` and `require` loads the ESM and the CJS build side by side, each with its own classes:
// a Timestamp made by one is not `instanceof` the other's. Each class's prototype therefore
// carries a brand under a symbol from the global registry (Symbol.for gives every copy the same
// symbol), the encoder reads the brand instead of testing instanceof, and each class answers
// `instanceof` for instances of its namesakes in other copies.

/** The brand's key: the same symbol in every copy of mpk. */
export const KIND: unique symbol = Symbol.for("mpk.kind") as never;

/** The brand of a value: the name of the mpk class it is an instance of, in whichever copy. */
export function kindOf(v: object): unknown {
  return (v as { [KIND]?: unknown })[KIND];
}

/**
 * Brands a class: its instances carry `name` under KIND, and `x instanceof cls` also holds for an
 * instance of the class of that name from another copy of mpk. A subclass keeps the ordinary
 * instanceof (an instance of the base class from another copy is not one of the subclass).
 */
export function brand(cls: abstract new (...args: never[]) => unknown, name: string): void {
  Object.defineProperty(cls.prototype, KIND, { value: name });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, v: unknown): boolean {
      if (Function.prototype[Symbol.hasInstance].call(this, v)) return true;
      return this === cls && typeof v === "object" && v !== null && kindOf(v) === name;
    },
  });
}
