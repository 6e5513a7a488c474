// The document behind the page: the input's bytes, its top-level values found by a sliced scan, and
// nodes made on demand. Nothing is decoded before it is shown: a container's items are found by
// skipping its earlier items (with a checkpoint every CHECKPOINT items, so paging and lookups by
// offset do not start over), and a node's end is found when asked.
import { Scanner, formatName, isError, itemsOf, readToken, skipValue, skipWithin, type Token, type WalkError } from "./walker.js";

/** Every CHECKPOINT-th item's offset is kept, per container and for the top level. */
const CHECKPOINT = 64;
/** Top-level values that took more tokens than this have their end remembered by the scan. */
const BIG_VALUE_TOKENS = 4096;
/** Tokens a node's end may cost to find before a row shows it as unknown. */
const QUICK_END_TOKENS = 20000;

export interface Node {
  readonly tok: Token;
  readonly offset: number;
  /** Containers enclosing this value. */
  readonly depth: number;
  readonly parent: Node | null;
  /** Index among the parent's items (map keys and values counted apart), or among top-level values. */
  readonly index: number;
  /** The first error inside this value, when its bytes are broken. */
  readonly error: WalkError | null;
}

/** A row of the top level or of a container: a node, or the place where the input ended short. */
export type Item = Node | { readonly missing: WalkError; readonly offset: number };

export function isNode(i: Item): i is Node {
  return "tok" in i;
}

export class Doc {
  readonly scanner: Scanner;
  private readonly topCheckpoints: number[] = [];
  private readonly itemCheckpoints = new Map<number, number[]>();
  private readonly ends = new Map<number, number>();

  constructor(readonly bytes: Uint8Array) {
    this.scanner = new Scanner(bytes, bytes.length, (i, start, end, tokens) => {
      if (i % CHECKPOINT === 0) this.topCheckpoints.push(start);
      if (tokens > BIG_VALUE_TOKENS) this.ends.set(start, end);
    });
  }

  get length(): number {
    return this.bytes.length;
  }

  /** The scan's verdict once done: the first error of the input, or null. */
  get error(): WalkError | null {
    return this.scanner.error;
  }

  /** Top-level rows known so far: whole values, then the broken one when the scan found an error. */
  get topCount(): number {
    const s = this.scanner;
    return s.values + ((s.error || !s.done) && s.valueStart < this.length ? 1 : 0);
  }

  /** Whether the top-level value at `index` is still being scanned. */
  scanning(index: number): boolean {
    return !this.scanner.done && index === this.scanner.values;
  }

  /** The byte where the valid prefix ends (the broken value's head, or the input length). */
  get validEnd(): number {
    return this.scanner.done ? this.scanner.valueStart : this.length;
  }

  /** Items of a container node (keys and values apart), or top-level rows for null. */
  itemCount(node: Node | null): number {
    return node ? itemsOf(node.tok) : this.topCount;
  }

  /** Rows [from, to) of a container or of the top level; shorter when the bytes break off. */
  items(parent: Node | null, from: number, to: number): Item[] {
    const out: Item[] = [];
    to = Math.min(to, this.itemCount(parent));
    if (from >= to) return out;
    let p = this.itemOffset(parent, from);
    for (let i = from; i < to; i++) {
      if (isError(p)) break;
      if (p >= this.length) {
        out.push({ missing: { kind: "truncated", offset: this.length }, offset: this.length });
        break;
      }
      const node = this.nodeAt(parent, i, p);
      out.push(node);
      if (node.error || i + 1 === to) break;
      p = this.endOf(node);
    }
    return out;
  }

  /** The node whose head is at `p`, item `index` of `parent`. */
  private nodeAt(parent: Node | null, index: number, p: number): Node {
    const depth = parent ? parent.depth + 1 : 0;
    const tok = readToken(this.bytes, p, this.length, depth + 1);
    if (isError(tok)) {
      // a head that cannot be read: a one-byte pseudo-token carries the error
      return { tok: { offset: p, head: this.bytes[p]!, format: formatName(this.bytes[p]!), type: "nil", headerLen: 1, len: 0, count: 0, extType: 0 }, offset: p, depth, parent, index, error: tok };
    }
    let error: WalkError | null = null;
    if (!this.ends.has(p)) {
      const e = this.scanner.error;
      // only the broken value, or a node enclosing the error inside it, can hold it
      if (e && p >= this.scanner.valueStart && p <= e.offset) {
        const r = skipValue(this.bytes, p, this.length, depth);
        if (isError(r)) error = r;
        else this.ends.set(p, r);
      }
    }
    return { tok, offset: p, depth, parent, index, error };
  }

  /** Where item `i` of `parent` starts (checkpoints, then skipping). */
  private itemOffset(parent: Node | null, i: number): number | WalkError {
    let cps: number[];
    if (parent) {
      cps = this.checkpointsOf(parent);
    } else {
      cps = this.topCheckpoints;
      if (cps.length === 0) return 0;
    }
    let k = Math.min(Math.floor(i / CHECKPOINT), cps.length - 1);
    let p = cps[k]!;
    const depth = parent ? parent.depth + 1 : 0;
    for (let j = k * CHECKPOINT; j < i; j++) {
      const e = this.cachedEnd(p, depth);
      if (isError(e)) return e;
      p = e;
      if ((j + 1) % CHECKPOINT === 0 && parent && cps.length === (j + 1) / CHECKPOINT) cps.push(p);
    }
    return p;
  }

  private checkpointsOf(parent: Node): number[] {
    let cps = this.itemCheckpoints.get(parent.offset);
    if (!cps) {
      cps = [parent.offset + parent.tok.headerLen];
      this.itemCheckpoints.set(parent.offset, cps);
    }
    return cps;
  }

  private cachedEnd(p: number, depth: number): number | WalkError {
    const known = this.ends.get(p);
    if (known !== undefined) return known;
    const r = skipValue(this.bytes, p, this.length, depth);
    if (!isError(r) && r - p > 4096) this.ends.set(p, r);
    return r;
  }

  /** Where a node ends (for a broken node: just after its error's byte, within the input). */
  endOf(node: Node): number {
    if (node.error) return Math.min(Math.max(node.error.offset + 1, node.offset + 1), this.length);
    if (node.tok.type !== "array" && node.tok.type !== "map") return node.offset + node.tok.headerLen + node.tok.len;
    const r = this.cachedEnd(node.offset, node.depth);
    if (isError(r)) return this.length;
    this.ends.set(node.offset, r); // containers asked for are few (rows shown, a lookup's path)
    return r;
  }

  /** The node's end if finding it is cheap or known, else -1 (rows show containers this way). */
  quickEnd(node: Node): number {
    if (node.error || (node.tok.type !== "array" && node.tok.type !== "map")) return this.endOf(node);
    const known = this.ends.get(node.offset);
    if (known !== undefined) return known;
    if (!node.parent && this.scanning(node.index)) return -1;
    const r = skipWithin(this.bytes, node.offset, this.length, node.depth, QUICK_END_TOKENS);
    if (r === null || isError(r)) return -1;
    this.ends.set(node.offset, r);
    return r;
  }

  /** The path of nodes, outermost first, down to the deepest one whose bytes hold `offset`. */
  pathTo(offset: number): Node[] {
    const path: Node[] = [];
    if (offset < 0 || offset >= this.length) return path;
    // the top-level value: from the checkpoint at or before the offset
    const cps = this.topCheckpoints;
    let lo = 0;
    let hi = cps.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (cps[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    let parent: Node | null = null;
    let index = cps.length ? lo * CHECKPOINT : 0;
    let p = cps.length ? cps[lo]! : 0;
    let count = this.topCount;
    for (;;) {
      let found: Node | null = null;
      const icps = parent ? this.checkpointsOf(parent) : null;
      while (index < count && p < this.length) {
        if (icps && index % CHECKPOINT === 0 && icps.length === index / CHECKPOINT) icps.push(p);
        const node = this.nodeAt(parent, index, p);
        const end = this.endOf(node);
        if (offset < end) {
          found = node;
          break;
        }
        if (node.error) {
          // a byte after the error, in the broken value: the broken value itself
          path.push(node);
          return path;
        }
        p = end;
        index++;
      }
      if (!found) return path;
      path.push(found);
      const items = itemsOf(found.tok);
      if (items === 0 || offset < found.offset + found.tok.headerLen || (found.error && found.error.offset === found.offset)) return path;
      parent = found;
      index = 0;
      p = found.offset + found.tok.headerLen;
      count = items;
      // jump through this container's checkpoints when it has them
      const icp = this.checkpointsOf(found);
      {
        let k = icp.length - 1;
        while (k > 0 && icp[k]! > offset) k--;
        index = k * CHECKPOINT;
        p = icp[k]!;
      }
    }
  }
}
