import { ChunkDecoder } from "./ChunkDecoder.js";
import type { DecoderOptions } from "./limits.js";
import { typeName, type BinaryInput } from "./utils/bytes.js";

/** A source of byte chunks: a web ReadableStream (fetch's body), any async iterable (a Node stream) or an iterable (an array of chunks). */
export type ByteSource = ReadableStream<BinaryInput> | AsyncIterable<BinaryInput> | Iterable<BinaryInput>;

/**
 * Yields the values of a stream of concatenated MessagePack values as they complete; chunks may
 * split values anywhere. An error is thrown as soon as the bytes prove it, after the values before it; input
 * that ends inside a value throws DecodeError("truncated").
 */
export async function* decodeStream(source: ByteSource, options?: DecoderOptions): AsyncGenerator<unknown, void, undefined> {
  const chunks = new ChunkDecoder(options);
  const iterable = chunkSource(source);
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

/**
 * The chunks of `source`. Anything that is neither a ReadableStream nor an iterable is a TypeError
 * naming its type, and so are bytes themselves (iterating them would give numbers, each then
 * refused as a chunk with a message that does not say what went wrong) and strings.
 */
function chunkSource(source: ByteSource): AsyncIterable<BinaryInput> | Iterable<BinaryInput> {
  const s: unknown = source;
  if (typeof s === "object" && s !== null) {
    if (typeof (s as { getReader?: unknown }).getReader === "function") return readChunks(s as ReadableStream<BinaryInput>);
    if (ArrayBuffer.isView(s) || s instanceof ArrayBuffer) {
      throw new TypeError(`decodeStream reads a stream of byte chunks, not ${typeName(s)}: decode bytes held in memory with decode() or decodeMulti()`);
    }
    if (typeof (s as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function" || typeof (s as Iterable<unknown>)[Symbol.iterator] === "function") {
      return s as AsyncIterable<BinaryInput>;
    }
  }
  throw new TypeError(`decodeStream reads a ReadableStream or an (async) iterable of byte chunks, not ${typeName(s)}`);
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
