// mpk/rpc: MessagePack-RPC over any byte transport, platform-neutral (no Node built-ins).
// Node's sockets, stdio and child processes are in mpk/rpc/node.
export { Endpoint } from "./Endpoint.js";
export type { CallOptions, EndpointOptions, Handler, HandlerOptions } from "./Endpoint.js";
export { RpcError, RpcConnectionError, RpcTimeoutError, errorMessage, neovimError, codedError, NEOVIM_EXCEPTION, NEOVIM_VALIDATION } from "./RpcError.js";
export type { Transport, WebSocketLike } from "./Transport.js";
export { webStreamTransport, webSocketTransport } from "./Transport.js";
export { NvimBuffer, NvimWindow, NvimTabpage, neovimExtensions } from "./neovim.js";
// what binAsString / utf8: "raw" give for text that is not UTF-8 (Neovim's "\xff")
export { RawStr } from "../RawStr.js";
