import { ChunkDecoder } from "./ChunkDecoder.js";
import type { DecoderOptions } from "./limits.js";
import type { BinaryInput } from "./utils/bytes.js";

/**
 * A web TransformStream from byte chunks to decoded values:
 * `response.body.pipeThrough(new DecoderStream())`.
 *
 * An error ends the readable side as soon as the bytes prove it, after every value before it has
 * been read. Two stages do that: erroring a stream drops the values still queued in it, so the
 * decoding stage passes the error on as an item, and the second stage, which handles an item only
 * when its reader asks for one (nothing queued), turns it back into the stream's error.
 */
export class DecoderStream {
  readonly readable: ReadableStream<unknown>;
  readonly writable: WritableStream<BinaryInput>;

  constructor(options?: DecoderOptions) {
    const chunks = new ChunkDecoder(options);
    const values: unknown[] = [];
    let failed = false;
    const decoding = new TransformStream<BinaryInput, unknown>({
      transform(chunk, controller) {
        if (failed) return;
        try {
          chunks.feed(chunk, values);
        } catch (e) {
          failed = true;
          values.push(new Failure(e));
        }
        for (const value of values) controller.enqueue(value);
        values.length = 0;
      },
      flush(controller) {
        if (failed) return;
        try {
          chunks.finish();
        } catch (e) {
          controller.enqueue(new Failure(e));
        }
      },
    });
    const failing = new TransformStream<unknown, unknown>({
      transform(item, controller) {
        if (item instanceof Failure) throw item.error;
        controller.enqueue(item);
      },
    });
    this.writable = decoding.writable;
    this.readable = decoding.readable.pipeThrough(failing);
  }
}

/** An error travelling through the first stage (no decoded value is one of these). */
class Failure {
  constructor(readonly error: unknown) {}
}
