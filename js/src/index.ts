// The public surface of mpk.

// writer
export { encode } from "./encode.js";
export { Encoder } from "./Encoder.js";
export { EncodeError } from "./EncodeError.js";
export type { EncoderOptions } from "./Encoder.js";

// reader
export { decode, decodeMulti } from "./decode.js";
export { Decoder } from "./Decoder.js";
export type { DecoderOptions } from "./Decoder.js";
export { DecodeError } from "./DecodeError.js";
export type { DecodeErrorKind } from "./DecodeError.js";
export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH, DEFAULT_MAX_NUMBER_KEYS } from "./limits.js";
export type { BinaryInput } from "./utils/bytes.js";

// stream
export { decodeStream } from "./decodeStream.js";
export type { ByteSource } from "./decodeStream.js";
export { DecoderStream } from "./DecoderStream.js";
export { EncoderStream } from "./EncoderStream.js";

// ext and timestamp
export { ExtData } from "./ExtData.js";
export { ExtensionCodec } from "./ExtensionCodec.js";
export type { ExtensionDefinition } from "./ExtensionCodec.js";
export { Timestamp, TIMESTAMP_EXT_TYPE } from "./Timestamp.js";

// exact values
export { Float } from "./Float.js";
export { MapPairs } from "./MapPairs.js";
export { RawStr } from "./RawStr.js";
