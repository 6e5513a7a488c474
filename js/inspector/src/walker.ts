// The inspector's view of MessagePack: tokens with their byte offsets and format names, read one at
// a time from one head-byte table, and a walk that finds where a value ends without building it.
// Errors follow spec/README.md's one-shot rules (kinds, offsets, the order of the checks), with the
// default limits: depth 1024, lengths and counts up to the format's maxima.

export type ValueType = "nil" | "bool" | "int" | "float" | "str" | "bin" | "ext" | "array" | "map";
export type ErrorKind = "truncated" | "invalid_byte" | "depth_limit" | "invalid_timestamp";

/** Containers enclosing a value, itself included, that a decoder accepts (spec/README.md). */
export const MAX_DEPTH = 1024;

/**
 * How a format lays out its token after the head byte:
 * "inline" — nothing follows (the value or the count is in the head byte: fixint, nil, fixmap…);
 * "fixed"  — `size` payload bytes follow (ints, floats), or a type byte and `size` bytes (fixext);
 * "len"    — a big-endian length or count of `size` bytes follows (then the ext type byte for ext).
 */
interface Format {
  readonly name: string;
  readonly type: ValueType | null; // null: 0xc1, never used
  readonly shape: "inline" | "fixed" | "len";
  readonly size: number;
}

const F = (name: string, type: ValueType | null, shape: Format["shape"], size = 0): Format => ({ name, type, shape, size });

/** FORMAT_OF[head byte]: the one head-byte table. */
const FORMAT_OF: readonly Format[] = (() => {
  const t: Format[] = [];
  const posFix = F("positive fixint", "int", "inline");
  const fixmap = F("fixmap", "map", "inline");
  const fixarray = F("fixarray", "array", "inline");
  const fixstr = F("fixstr", "str", "inline");
  const negFix = F("negative fixint", "int", "inline");
  for (let b = 0; b <= 0x7f; b++) t[b] = posFix;
  for (let b = 0x80; b <= 0x8f; b++) t[b] = fixmap;
  for (let b = 0x90; b <= 0x9f; b++) t[b] = fixarray;
  for (let b = 0xa0; b <= 0xbf; b++) t[b] = fixstr;
  const named: Format[] = [
    F("nil", "nil", "inline"), F("(never used)", null, "inline"), F("false", "bool", "inline"), F("true", "bool", "inline"),
    F("bin8", "bin", "len", 1), F("bin16", "bin", "len", 2), F("bin32", "bin", "len", 4),
    F("ext8", "ext", "len", 1), F("ext16", "ext", "len", 2), F("ext32", "ext", "len", 4),
    F("float32", "float", "fixed", 4), F("float64", "float", "fixed", 8),
    F("uint8", "int", "fixed", 1), F("uint16", "int", "fixed", 2), F("uint32", "int", "fixed", 4), F("uint64", "int", "fixed", 8),
    F("int8", "int", "fixed", 1), F("int16", "int", "fixed", 2), F("int32", "int", "fixed", 4), F("int64", "int", "fixed", 8),
    F("fixext1", "ext", "fixed", 1), F("fixext2", "ext", "fixed", 2), F("fixext4", "ext", "fixed", 4), F("fixext8", "ext", "fixed", 8), F("fixext16", "ext", "fixed", 16),
    F("str8", "str", "len", 1), F("str16", "str", "len", 2), F("str32", "str", "len", 4),
    F("array16", "array", "len", 2), F("array32", "array", "len", 4), F("map16", "map", "len", 2), F("map32", "map", "len", 4),
  ];
  for (let i = 0; i < 32; i++) t[0xc0 + i] = named[i]!;
  for (let b = 0xe0; b <= 0xff; b++) t[b] = negFix;
  return t;
})();

/** One token: a scalar with its payload, or a container's head. */
export interface Token {
  readonly offset: number;
  readonly head: number;
  readonly format: string;
  readonly type: ValueType;
  /** Bytes of the head, the length field and the ext type byte. */
  readonly headerLen: number;
  /** Payload bytes after the header (str, bin, ext, ints and floats; 0 for containers and inline values). */
  readonly len: number;
  /** Elements of an array, pairs of a map (0 otherwise). */
  readonly count: number;
  /** The ext type (-128..127) of an ext; 0 otherwise. */
  readonly extType: number;
}

export interface WalkError {
  readonly kind: ErrorKind;
  readonly offset: number;
}

/** The format name of a head byte ("fixmap", "str8", "fixext8"…), as `mpk dump` prints it. */
export function formatName(head: number): string {
  return FORMAT_OF[head]!.name;
}

export function isError(x: unknown): x is WalkError {
  return typeof x === "object" && x !== null && "kind" in x;
}

/** Items (map keys and values counted apart) a container token holds. */
export function itemsOf(t: Token): number {
  return t.type === "map" ? t.count * 2 : t.type === "array" ? t.count : 0;
}

function uintBE(bytes: Uint8Array, p: number, size: number): number {
  let n = 0;
  for (let i = 0; i < size; i++) n = n * 256 + bytes[p + i]!;
  return n;
}

/**
 * Reads the token whose head byte is at `p` (p < end), checking, in the spec's order, the head byte,
 * that the length field and ext type are present, the depth of a container (`depth`: containers
 * enclosing it, itself included), that its declared size fits in the bytes left (an array of n
 * elements needs n bytes, a map of n pairs 2n), and a timestamp's length and nanoseconds.
 */
export function readToken(bytes: Uint8Array, p: number, end: number, depth: number): Token | WalkError {
  const head = bytes[p]!;
  const f = FORMAT_OF[head]!;
  if (f.type === null) return { kind: "invalid_byte", offset: p };
  let headerLen = 1;
  let len = 0;
  let count = 0;
  let extType = 0;
  if (f.shape === "inline") {
    if (f.type === "map") count = head & 0x0f;
    else if (f.type === "array") count = head & 0x0f;
    else if (f.type === "str") len = head & 0x1f;
  } else if (f.shape === "fixed") {
    if (f.type === "ext") {
      if (p + 2 > end) return { kind: "truncated", offset: p };
      extType = (bytes[p + 1]! << 24) >> 24;
      headerLen = 2;
    }
    len = f.size;
  } else {
    headerLen = 1 + f.size + (f.type === "ext" ? 1 : 0);
    if (p + headerLen > end) return { kind: "truncated", offset: p };
    const n = uintBE(bytes, p + 1, f.size);
    if (f.type === "ext") extType = (bytes[p + 1 + f.size]! << 24) >> 24;
    if (f.type === "array" || f.type === "map") count = n;
    else len = n;
  }
  const left = end - p - headerLen;
  if (f.type === "array" || f.type === "map") {
    if (depth > MAX_DEPTH) return { kind: "depth_limit", offset: p };
    if ((f.type === "map" ? count * 2 : count) > left) return { kind: "truncated", offset: p };
  } else if (len > left) {
    return { kind: "truncated", offset: p };
  }
  if (f.type === "ext" && extType === -1 && !validTimestamp(bytes, p + headerLen, len)) return { kind: "invalid_timestamp", offset: p };
  return { offset: p, head, format: f.name, type: f.type, headerLen, len, count, extType };
}

function validTimestamp(bytes: Uint8Array, p: number, len: number): boolean {
  if (len === 4) return true;
  if (len === 8) return Math.floor(uintBE(bytes, p, 4) / 4) <= 999_999_999; // nsec: the upper 30 bits
  if (len === 12) return uintBE(bytes, p, 4) <= 999_999_999;
  return false;
}

/**
 * Where the value at `p` ends, or its first error. `depth`: containers enclosing the value. The walk keeps one counter per open container (at most
 * MAX_DEPTH), never recursion.
 */
export function skipValue(bytes: Uint8Array, p: number, end: number, depth: number): number | WalkError {
  return skipWithin(bytes, p, end, depth, Infinity)!;
}

/** skipValue that gives up (null) after `maxTokens` tokens. */
export function skipWithin(bytes: Uint8Array, p: number, end: number, depth: number, maxTokens: number): number | WalkError | null {
  const owing: number[] = [];
  for (let tokens = 0; ; tokens++) {
    if (tokens >= maxTokens) return null;
    if (p >= end) return { kind: "truncated", offset: end }; // a container still owes items
    const t = readToken(bytes, p, end, depth + owing.length + 1);
    if (isError(t)) return t;
    p += t.headerLen + t.len;
    const items = itemsOf(t);
    if (items > 0) owing.push(items);
    while (owing.length > 0 && owing[owing.length - 1] === 0) owing.pop();
    if (owing.length === 0) return p;
    owing[owing.length - 1]!--;
  }
}

/**
 * Finds the top-level values of an input one after another, resumable so that a page can scan a
 * large input in slices between frames. `run` reads at most `maxTokens` tokens and returns whether
 * the scan is over (the input ended, or an error was found: then `error` is set and `errorStart` is
 * the head of the value holding it; the values before it are whole).
 */
export class Scanner {
  /** Whole values found so far. */
  values = 0;
  /** Where the value being scanned starts (after the scan: the input length, or the broken value). */
  valueStart = 0;
  error: WalkError | null = null;
  done = false;
  private pos = 0;
  private tokens = 0;
  private readonly owing: number[] = [];

  /**
   * `onValue(index, start, end, tokens)` is called for every whole value.
   */
  constructor(
    private readonly bytes: Uint8Array,
    private readonly end: number,
    private readonly onValue: (index: number, start: number, end: number, tokens: number) => void,
  ) {
    this.done = end === 0;
  }

  run(maxTokens: number): boolean {
    const { bytes, end, owing } = this;
    let p = this.pos;
    let budget = maxTokens;
    while (!this.done && budget-- > 0) {
      if (p >= end) {
        if (owing.length > 0) this.error = { kind: "truncated", offset: end };
        this.done = true;
        break;
      }
      const t = readToken(bytes, p, end, owing.length + 1);
      if (isError(t)) {
        this.error = t;
        this.done = true;
        break;
      }
      this.tokens++;
      p += t.headerLen + t.len;
      const items = itemsOf(t);
      if (items > 0) owing.push(items);
      while (owing.length > 0 && owing[owing.length - 1] === 0) owing.pop();
      if (owing.length === 0) {
        this.onValue(this.values++, this.valueStart, p, this.tokens);
        this.valueStart = p;
        this.tokens = 0;
      } else {
        owing[owing.length - 1]!--;
      }
    }
    this.pos = p;
    return this.done;
  }
}
