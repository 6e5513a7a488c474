import { decode } from "../decode.js";
import { encode } from "../encode.js";
import { ExtensionCodec } from "../ExtensionCodec.js";

/**
 * Neovim's handles: ext types whose payload is one packed MessagePack integer (the handle number).
 * The ext type numbers come from `nvim_get_api_info()`'s "types" (0, 1, 2 in every release so far).
 */
export class NvimBuffer {
  constructor(readonly id: number) {}
}
export class NvimWindow {
  constructor(readonly id: number) {}
}
export class NvimTabpage {
  constructor(readonly id: number) {}
}

type HandleClass = new (id: number) => NvimBuffer | NvimWindow | NvimTabpage;

/**
 * An ExtensionCodec for an endpoint talking to Neovim: Buffer (ext 0), Window (ext 1) and Tabpage
 * (ext 2) as NvimBuffer / NvimWindow / NvimTabpage, both ways. Give other type numbers if
 * `nvim_get_api_info()` says so; add your own types to the returned codec.
 */
export function neovimExtensions(types: { Buffer?: number; Window?: number; Tabpage?: number } = {}): ExtensionCodec {
  const codec = new ExtensionCodec();
  const add = (type: number, Class: HandleClass) =>
    codec.register({
      type,
      encode: (value) => (value instanceof Class ? encode(value.id) : null),
      decode: (data) => {
        const id = decode(data);
        if (typeof id !== "number" || !Number.isInteger(id)) throw new TypeError(`a Neovim handle (ext ${type}) holds an integer, not ${typeof id}`);
        return new Class(id);
      },
    });
  add(types.Buffer ?? 0, NvimBuffer);
  add(types.Window ?? 1, NvimWindow);
  add(types.Tabpage ?? 2, NvimTabpage);
  return codec;
}
