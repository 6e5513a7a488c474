// protobufjs with static code: the module pbjs generates from bench/workloads/*.proto (mk/js.mk,
// `pbjs -t static-module`, into build/js-bench; nothing generated is committed). A workload's
// message type ("seed.Test4", "mpkbench.Product") is looked up in its root.
//
// protobufjs returns `bytes` fields as views into the input (Reader#raw is a subarray). Beside
// that, decodeCopying reads through a Reader whose raw copies: protobufjs's own decoder with bins
// of their own, to set beside the copying MessagePack decoders (mpk's default, msgpackr's
// copyBuffers) on the workloads holding bins. Reader: protobufjs/minimal's, the one the static
// code checks `instanceof` against.
export function protobufCodec(root, Reader = null) {
  const CopyingReader = Reader && class extends Reader {
    raw(start, end) {
      return Uint8Array.prototype.slice.call(this.buf, start, end);
    }
  };
  return {
    label: "protobufjs (static)",
    copyingLabel: "protobufjs (static, copied bins)",
    codec(type) {
      let t = root;
      for (const part of type.split(".")) t = t?.[part];
      if (!t || typeof t.decode !== "function") return null;
      return {
        decode: (bytes) => t.decode(bytes),
        decodeCopying: CopyingReader && ((bytes) => t.decode(new CopyingReader(bytes))),
        encode: (message) => t.encode(message).finish(),
      };
    },
  };
}
