/**
 * A call that the peer answered with an error. The error of a MessagePack-RPC response is any
 * MessagePack value: `value` holds it as decoded; `method` and `msgid` say which call it answered.
 * The helpers below read the common shapes: a string, Neovim's `[type, message]`, `{code, message}`.
 *
 * A handler may also throw an RpcError (`new RpcError(value)`) to answer with exactly that value.
 */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    /** The error value of the response, as decoded. */
    readonly value: unknown,
    /** The method of the call it answers ("" when made by a handler). */
    readonly method = "",
    /** The msgid of the call it answers (-1 when made by a handler). */
    readonly msgid = -1,
  ) {
    super(method === "" ? describeError(value) : `${method} (msgid ${msgid}) failed: ${describeError(value)}`);
  }

  /** The error's message in any of the common shapes, else undefined. */
  get errorMessage(): string | undefined {
    return errorMessage(this.value);
  }
  /** Neovim's `[type, message]` (0 Exception, 1 Validation), else undefined. */
  get neovim(): { type: number; message: string } | undefined {
    return neovimError(this.value);
  }
  /** `{code, message}` (JSON-RPC style), else undefined. */
  get coded(): { code: unknown; message: string } | undefined {
    return codedError(this.value);
  }
}

/** Neovim's error types (the first element of its `[type, message]` errors). */
export const NEOVIM_EXCEPTION = 0;
export const NEOVIM_VALIDATION = 1;

/** Neovim's `[type, message]`: an array of an integer and a string. */
export function neovimError(value: unknown): { type: number; message: string } | undefined {
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "number" && Number.isInteger(value[0])) {
    const message = text(value[1]);
    if (message !== undefined) return { type: value[0], message };
  }
  return undefined;
}

/** `{code, message}`: a map (object or Map) with a string (or bin) `message` and a `code` key. */
export function codedError(value: unknown): { code: unknown; message: string } | undefined {
  let code: unknown;
  let message: unknown;
  if (value instanceof Map) {
    code = value.get("code");
    message = value.get("message");
    if (!value.has("code")) return undefined;
  } else if (value !== null && typeof value === "object" && !Array.isArray(value) && "code" in value) {
    ({ code, message } = value as { code: unknown; message: unknown });
  } else return undefined;
  const m = text(message);
  return m === undefined ? undefined : { code, message: m };
}

/** The message of an error value: a string itself, Neovim's `[type, message]`, `{code, message}`. */
export function errorMessage(value: unknown): string | undefined {
  return text(value) ?? neovimError(value)?.message ?? codedError(value)?.message;
}

function describeError(value: unknown): string {
  const m = errorMessage(value);
  if (m !== undefined) return m;
  try {
    return `error value ${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}`;
  } catch {
    return "an error value";
  }
}

// a str, or a bin holding text (Neovim sends Vim strings as bin)
function text(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return undefined;
}

/** A call that got no answer: the connection ended, the endpoint was closed, or the call timed out. */
export class RpcConnectionError extends Error {
  override name = "RpcConnectionError";
  constructor(
    message: string,
    readonly method: string,
    readonly msgid: number,
    /** What ended the connection: a DecodeError, a socket error, undefined for EOF or close(). */
    readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** A call whose `timeout` passed before its reply came. The pending entry is dropped; a late reply is discarded. */
export class RpcTimeoutError extends Error {
  override name = "TimeoutError";
  constructor(
    readonly method: string,
    readonly msgid: number,
    readonly timeout: number,
  ) {
    super(`${method} (msgid ${msgid}) timed out after ${timeout} ms`);
  }
}
