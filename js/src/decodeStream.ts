import { ChunkDecoder } from "./ChunkDecoder.js";
import type { DecoderOptions } from "./limits.js";
import type { BinaryInput } from "./utils/bytes.js";

/** A source of byte chunks: a web ReadableStream (fetch's body) or any async iterable (a Node stream). */
export type ByteSource = ReadableStream<BinaryInput> | AsyncIterable<BinaryInput>;

/**
 * Yields the values of a stream of concatenated MessagePack values as they complete; chunks may
 * split values anywhere. An error is thrown as soon as the bytes prove it, after the values before it; input
 * that ends inside a value throws DecodeError("truncated").
 */
export async function* decodeStream(source: ByteSource, options?: DecoderOptions): AsyncGenerator<unknown, void, undefined> {
  const chunks = new ChunkDecoder(options);
  const iterable = "getReader" in source ? readChunks(source) : source;
  const values: unknown[] = [];
  for await (const chunk of iterable) {
    let failure: unknown;
    try {
      chunks.feed(chunk, values);
    } catch (e) {
      failure = e;
    }
    // the values completed before an error come first; the error ends the stream without
    // waiting for more input
    for (let i = 0; i < values.length; i++) yield values[i];
    values.length = 0;
    if (failure !== undefined) throw failure;
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
