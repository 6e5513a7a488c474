import { DecodeError } from "./DecodeError.js";
import { TRUNCATED, truncatedNeedOf, type Decoder } from "./Decoder.js";
import { toBytes, type BinaryInput } from "./utils/bytes.js";

/**
 * The stream layer under decodeStream and DecoderStream: takes chunks split anywhere and hands out
 * the values they complete. It holds at most one incomplete value (plus the chunk that brought
 * it); errors are reported as soon as bytes show them, truncation only at finish().
 * Offsets in errors count from the start of the stream.
 *
 * An incomplete value is decoded again from its start when enough bytes arrive; "enough" is the
 * length its first missing token declared (a str's payload, an array's minimum size), so a long
 * str or bin arriving in many chunks is decoded once, not once per chunk.
 */
export class ChunkDecoder {
  private pending = new Uint8Array(256);
  private length = 0;
  /** Stream offset of pending[0]. */
  private base = 0;
  /** pending must hold this many bytes before a retry can succeed. */
  private need = 0;

  constructor(private readonly decoder: Decoder) {}

  /** Adds a chunk; returns the values it completed, in order. */
  feed(chunk: BinaryInput): unknown[] {
    const bytes = toBytes(chunk);
    this.append(bytes);
    const values: unknown[] = [];
    if (this.length < this.need) return values;
    const input = this.pending.subarray(0, this.length);
    let at = 0;
    while (at < this.length) {
      let value: unknown;
      let next: number;
      try {
        [value, next] = this.decoder.decodeAt(input, at, true);
      } catch (e) {
        if (e === TRUNCATED) {
          this.need = truncatedNeedOf() - at;
          break;
        }
        if (e instanceof DecodeError) throw new DecodeError(e.kind, this.base + e.offset);
        throw e;
      }
      values.push(value);
      at = next;
      this.need = 0;
    }
    this.consume(at);
    return values;
  }

  /** Ends the stream: bytes left over are a truncated value. */
  finish(): void {
    if (this.length === 0) return;
    try {
      this.decoder.decodeAt(this.pending.subarray(0, this.length), 0);
    } catch (e) {
      if (e instanceof DecodeError) throw new DecodeError(e.kind, this.base + e.offset);
      throw e;
    }
    // feed() decodes whatever is complete, so a value left here cannot be whole
    throw new DecodeError("truncated", this.base);
  }

  private append(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.pending.length) {
      const grown = new Uint8Array(Math.max(this.pending.length * 2, this.length + bytes.length));
      grown.set(this.pending.subarray(0, this.length));
      this.pending = grown;
    }
    this.pending.set(bytes, this.length);
    this.length += bytes.length;
  }

  private consume(n: number): void {
    if (n === 0) return;
    this.pending.copyWithin(0, n, this.length);
    this.length -= n;
    this.base += n;
  }
}
