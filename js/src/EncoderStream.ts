import { Encoder, type EncoderOptions } from "./Encoder.js";

/** A web TransformStream from values to their MessagePack bytes, one chunk per value. */
export class EncoderStream {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<unknown>;

  constructor(options?: EncoderOptions) {
    const encoder = new Encoder(options);
    const transform = new TransformStream<unknown, Uint8Array>({
      transform(value, controller) {
        controller.enqueue(encoder.encode(value));
      },
    });
    this.readable = transform.readable;
    this.writable = transform.writable;
  }
}
