// The decode-only entry point (`mpk/decode`): everything needed to read MessagePack, nothing that writes it.

export { decode, decodeMulti } from "./decode.js";
export { Decoder } from "./Decoder.js";
export type { DecoderOptions } from "./Decoder.js";
export { DecodeError } from "./DecodeError.js";
export type { DecodeErrorKind } from "./DecodeError.js";
export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH, DEFAULT_MAX_NUMBER_KEYS } from "./limits.js";
export type { BinaryInput } from "./utils/bytes.js";
export { decodeStream } from "./decodeStream.js";
export type { ByteSource } from "./decodeStream.js";
export { DecoderStream } from "./DecoderStream.js";
export { ExtData } from "./ExtData.js";
export { ExtensionCodec } from "./ExtensionCodec.js";
export { Timestamp } from "./Timestamp.js";
export { Float } from "./Float.js";
export { MapPairs } from "./MapPairs.js";
export { RawStr } from "./RawStr.js";
