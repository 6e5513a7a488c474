// A str of 17 to 256 bytes that the str batch does not cover (small inputs, or before a batch
// starts) is most often ASCII: one pass copies its bytes into a reused array of char codes and
// checks them at once, and String.fromCharCode makes the string. Cheaper than a call into
// TextDecoder (about 400 ns in Chromium) and than checking first and copying after (measured with
// js/bench/ab-browser.mjs on the product and protobufjs documents).

/** Longest str made here. */
export const ASCII_STR_MAX = 256;
const fromCharCode = String.fromCharCode;
// one array per length: setting an array's length is a slow runtime call, and V8 applies a plain
// array faster than a typed array
const unitArrays: Array<number[] | undefined> = new Array(ASCII_STR_MAX + 1).fill(undefined);

/** The string of buf[start, start + n) (n <= ASCII_STR_MAX) if it is all ASCII, else undefined. */
export function asciiStr(buf: Uint8Array, start: number, n: number): string | undefined {
  const units = (unitArrays[n] ??= new Array<number>(n).fill(0));
  let seen = 0;
  for (let i = 0; i < n; i++) {
    const c = buf[start + i]!;
    seen |= c;
    units[i] = c;
  }
  return seen < 0x80 ? fromCharCode.apply(null, units) : undefined;
}
