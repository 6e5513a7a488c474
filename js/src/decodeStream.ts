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
  for await (const chunk of iterate(source)) {
    yield* chunks.feed(chunk);
  }
  chunks.finish();
}

async function* iterate(source: ByteSource): AsyncGenerator<BinaryInput, void, undefined> {
  if (!("getReader" in source)) {
    yield* source;
    return;
  }
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
