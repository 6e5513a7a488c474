import { ChunkDecoder } from "./ChunkDecoder.js";
import { Decoder, type DecoderOptions } from "./Decoder.js";
import type { BinaryInput } from "./utils/bytes.js";

/**
 * A web TransformStream from byte chunks to decoded values:
 * `response.body.pipeThrough(new DecoderStream())`.
 */
export class DecoderStream {
  readonly readable: ReadableStream<unknown>;
  readonly writable: WritableStream<BinaryInput>;

  constructor(options?: DecoderOptions) {
    const chunks = new ChunkDecoder(new Decoder(options));
    const transform = new TransformStream<BinaryInput, unknown>({
      transform(chunk, controller) {
        for (const value of chunks.feed(chunk)) controller.enqueue(value);
      },
      flush() {
        chunks.finish();
      },
    });
    this.readable = transform.readable;
    this.writable = transform.writable;
  }
}
