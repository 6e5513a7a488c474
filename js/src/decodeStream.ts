import { ChunkDecoder } from "./ChunkDecoder.js";
import { Decoder, type DecoderOptions } from "./Decoder.js";
import type { BinaryInput } from "./utils/bytes.js";

/** A source of byte chunks: a web ReadableStream (fetch's body) or any async iterable (a Node stream). */
export type ByteSource = ReadableStream<BinaryInput> | AsyncIterable<BinaryInput>;

/**
 * Yields the values of a stream of concatenated MessagePack values as they complete; chunks may
 * split values anywhere. Input that ends inside a value throws DecodeError("truncated").
 */
export async function* decodeStream(source: ByteSource, options?: DecoderOptions): AsyncGenerator<unknown, void, undefined> {
  const chunks = new ChunkDecoder(new Decoder(options));
  const iterable = "getReader" in source ? readChunks(source) : source;
  for await (const chunk of iterable) {
    const values = chunks.feed(chunk);
    for (let i = 0; i < values.length; i++) yield values[i];
  }
  chunks.finish();
}

async function* readChunks(source: ReadableStream<BinaryInput>): AsyncGenerator<BinaryInput, void, undefined> {
  // getReader rather than async iteration: not every browser iterates ReadableStreams
  const reader = source.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
