// The DecodeError a call throws; anything else it throws passes through, and no throw fails the test.
import { DecodeError } from "../../src/index.js";

export function errorOf(f: () => unknown): DecodeError {
  try {
    f();
  } catch (e) {
    if (e instanceof DecodeError) return e;
    throw e;
  }
  throw new Error("no error");
}
