import { DecodeError } from "./DecodeError.js";
import { Decoder, TRUNCATED } from "./Decoder.js";
import { DECODER_OPTIONS, type DecoderOptions } from "./limits.js";
import { checkOptions } from "./utils/options.js";
import { toBytes, type BinaryInput } from "./utils/bytes.js";
import { ValueScanner } from "./ValueScanner.js";

/**
 * The stream layer under decodeStream and DecoderStream: takes chunks split anywhere and hands out
 * the values they complete. It holds at most one incomplete value (plus the chunk that brought
 * it). Offsets in errors count from the start of the stream.
 *
 * Values that a chunk holds whole are decoded straight from it. When one is cut off, a
 * ValueScanner walks its bytes as they arrive: it reports an error as soon as the bytes prove
 * it, and says where the value ends, so that the value is decoded once it is all there (each
 * byte is scanned once and decoded at most twice, whatever the chunking). Truncation is reported
 * only by finish(), at the offset one-shot decoding of the incomplete value gives.
 */
export class ChunkDecoder {
  private readonly decoder: Decoder;
  private readonly scanner: ValueScanner;
  private pending = new Uint8Array(256);
  private length = 0;
  /** Stream offset of pending[0]. */
  private base = 0;
  /** pending holds the start of a value that did not fit; the scanner is walking it. */
  private scanning = false;
  /** The error the stream ended with (a DecodeError, or the TypeError of a chunk that is not bytes); later calls throw it again. */
  private failure: Error | undefined;

  constructor(options?: DecoderOptions) {
    // checked as given (zeroCopy too, which the copy below replaces)
    if (options !== undefined) checkOptions(options, DECODER_OPTIONS, "decoder");
    // its values are decoded from `pending`, which later chunks overwrite: payloads must be copies
    this.decoder = new Decoder({ ...options, zeroCopy: false });
    this.scanner = new ValueScanner(options);
  }

  /**
   * Adds a chunk and appends the values it completed to `out`, in order. An error the bytes prove
   * is thrown after that: the values before it are in `out`.
   */
  feed(chunk: BinaryInput, out: unknown[]): void {
    if (this.failure) throw this.failure;
    try {
      // a chunk that is not bytes (a string from a stream opened with an encoding) ends the
      // stream: its characters are not the bytes sent, and nothing after it can be trusted
      this.append(toBytes(chunk));
      this.decodeAvailable(out);
    } catch (e) {
      if (e instanceof DecodeError || e instanceof TypeError) this.failure = e;
      throw e;
    }
  }

  /** Ends the stream: bytes left over are a truncated value. */
  finish(): void {
    if (this.failure) throw this.failure;
    if (this.length === 0) return;
    const input = this.pending.subarray(0, this.length);
    try {
      this.decoder.decodeAt(input, 0);
    } catch (e) {
      throw this.rebased(e, input);
    }
    // feed() decodes whatever is complete, so a value left here cannot be whole
    throw new DecodeError("truncated", this.base, input[0]);
  }

  private decodeAvailable(out: unknown[]): void {
    let input = this.pending.subarray(0, this.length);
    if (this.scanning) {
      let size: number;
      try {
        size = this.scanner.scan(input, this.length);
      } catch (e) {
        throw this.rebased(e, input);
      }
      if (size < 0) return;
      this.scanning = false;
      try {
        out.push(this.decoder.decodeAt(input.subarray(0, size), 0)[0]);
      } catch (e) {
        throw this.rebased(e, input);
      }
      this.consume(size);
      input = this.pending.subarray(0, this.length);
    }
    let at = 0;
    while (at < input.length) {
      let value: unknown;
      let next: number;
      try {
        [value, next] = this.decoder.decodeAt(input, at, true);
      } catch (e) {
        if (e !== TRUNCATED) {
          // e.offset counts from input[0], which is at this.base: rebase before consuming
          const error = this.rebased(e, input);
          this.consume(at);
          throw error;
        }
        // cut off: scan what is there (it may already prove an error) and wait for the rest
        this.consume(at);
        this.scanning = true;
        this.scanner.reset();
        return this.decodeAvailable(out);
      }
      out.push(value);
      at = next;
    }
    this.consume(at);
  }

  /** A DecodeError from decoding `input` (pending[0...]), with its offset counted from the stream start. */
  private rebased(e: unknown, input: Uint8Array): unknown {
    if (!(e instanceof DecodeError)) return e;
    return new DecodeError(e.kind, this.base + e.offset, input[e.offset]);
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
