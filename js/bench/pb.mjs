// protobufjs with static code: the module pbjs generates from bench/workloads/*.proto (mk/js.mk,
// `pbjs -t static-module`, into build/js-bench; nothing generated is committed). A workload's
// message type ("seed.Test4", "mpkbench.Product") is looked up in its root.
export function protobufCodec(root) {
  return {
    label: "protobufjs (static)",
    codec(type) {
      let t = root;
      for (const part of type.split(".")) t = t?.[part];
      if (!t || typeof t.decode !== "function") return null;
      return { decode: (bytes) => t.decode(bytes), encode: (message) => t.encode(message).finish() };
    },
  };
}
