import { ChunkDecoder } from "../ChunkDecoder.js";
import { Encoder, type EncoderOptions } from "../Encoder.js";
import type { ExtensionCodec } from "../ExtensionCodec.js";
import type { DecoderOptions } from "../limits.js";
import { RawStr } from "../RawStr.js";
import { NEOVIM_EXCEPTION, NEOVIM_VALIDATION, RpcConnectionError, RpcError, RpcTimeoutError } from "./RpcError.js";
import type { Transport } from "./Transport.js";

const REQUEST = 0;
const RESPONSE = 1;
const NOTIFICATION = 2;
const MSGID_LIMIT = 2 ** 32;

/** A handler: gets the params as arguments; its return value (or what its promise resolves to) is the result. */
export type Handler = (...params: any[]) => unknown;

export interface HandlerOptions {
  /** When set, a request or notification with another number of params is refused (Neovim's "Wrong number of arguments"). */
  arity?: number;
}

export interface CallOptions {
  /** Aborting drops the pending call: its promise rejects with the signal's reason; a late reply is discarded. */
  signal?: AbortSignal;
  /** Milliseconds to wait for the reply before rejecting with RpcTimeoutError (the call is dropped as on abort). */
  timeout?: number;
}

export interface EndpointOptions {
  /**
   * Decoder options for incoming messages (utf8, map, int64, limits...). Neovim sends invalid UTF-8 in
   * strs: `utf8: "raw"` keeps those bytes as RawStr (which encodes back to the same bytes).
   * The endpoint sets tighter defaults for a peer it does not trust: maxStrLength, maxBinLength and
   * maxExtLength 64 MiB, maxArrayLength and maxMapLength 2^24, as the stream buffers one incomplete message.
   */
  decoder?: DecoderOptions;
  /** Encoder options for outgoing messages. */
  encoder?: EncoderOptions;
  /** The ext types of this endpoint, for both directions (e.g. `neovimExtensions()`). */
  extensions?: ExtensionCodec;
  /**
   * Read every bin in incoming params, results and errors as a string (UTF-8; invalid UTF-8 as
   * RawStr when `decoder.utf8` is "raw", else with U+FFFD). Neovim sends Vim strings as bin.
   */
  binAsString?: boolean;
  /** Called for a notification no handler is registered for (default: ignored). */
  onUnhandledNotification?: (method: string, params: unknown[]) => void;
  /** Called with an error a notification handler threw (default: ignored, as notifications have no reply). */
  onNotificationError?: (error: unknown, method: string) => void;
  /**
   * Called with a msgid-0 error response: the peer saying what it found wrong in something this
   * endpoint sent (mpk's endpoints and Neovim answer a malformed message so). The RpcError has
   * `msgid` 0, `method` "" and the peer's error `value`. Default: ignored (still counted in
   * `discardedResponses`). Its text is also kept and named by the RpcConnectionError of calls
   * pending if the connection then ends.
   */
  onPeerError?: (error: RpcError) => void;
  /**
   * The first msgid this endpoint uses (default 1); ids then count up, wrapping from 2^32-1 to 1.
   * 0 is never used: it is left for the msgid-0 answers peers give to messages they found invalid.
   */
  firstMsgid?: number;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** undoes the timer and the abort listener */
  cleanup?: () => void;
}

/**
 * One MessagePack-RPC connection, symmetric: either side calls, notifies and serves. Built on any
 * Transport (a byte pipe); see `mpk/rpc/node` for sockets, stdio and child processes, and
 * webSocketTransport / webStreamTransport for browsers.
 */
export class Endpoint {
  private readonly transport: Transport;
  private readonly encoder: Encoder;
  private readonly chunks: ChunkDecoder;
  private readonly handlers = new Map<string, { fn: Handler; arity: number | undefined }>();
  private readonly pending = new Map<number, Pending>();
  /**
   * msgids of calls dropped by a timeout or an abort whose reply has not come yet: kept reserved
   * (allocateMsgid skips them) until the late reply arrives or the connection ends, so a late reply
   * can never settle a newer call that reused the id.
   */
  private readonly abandoned = new Set<number>();
  /** the message of the last msgid-0 error response the peer sent */
  private peerError: string | undefined;
  private readonly options: EndpointOptions;
  private readonly utf8Raw: boolean;
  private nextMsgid: number;
  /** messages encoded this turn, written together at its end */
  private outbox: Uint8Array[] = [];
  private flushQueued = false;
  /** notification handlers run one after another, in arrival order */
  private notificationQueue: Array<{ fn: Handler; method: string; params: unknown[] }> = [];
  private notificationRunning = false;
  private closedWith: { cause: unknown; reason: string } | undefined;
  private resolveClosed!: (cause: unknown) => void;
  /**
   * Resolves when the connection has ended, with the cause: undefined after close() or a clean
   * EOF, else the error (a DecodeError, a socket error). Never rejects.
   */
  readonly closed: Promise<unknown>;
  /** Responses whose msgid matched no pending call (late replies after a timeout or abort, or bogus ones); discarded. */
  discardedResponses = 0;

  constructor(transport: Transport, options: EndpointOptions = {}) {
    this.transport = transport;
    this.options = options;
    const extensions = options.extensions;
    this.encoder = new Encoder({ ...options.encoder, ...(extensions ? { extensions } : {}) });
    const big = 64 * 1024 * 1024;
    this.chunks = new ChunkDecoder({
      maxStrLength: big,
      maxBinLength: big,
      maxExtLength: big,
      maxArrayLength: 1 << 24,
      maxMapLength: 1 << 24,
      ...options.decoder,
      ...(extensions ? { extensions } : {}),
    });
    this.utf8Raw = options.decoder?.utf8 === "raw";
    const first = options.firstMsgid ?? 1;
    if (!Number.isInteger(first) || first < 0 || first >= MSGID_LIMIT) throw new RangeError("firstMsgid must be a u32");
    this.nextMsgid = first;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    transport.start(
      (chunk) => this.receive(chunk),
      (cause) => this.transportEnded(cause),
    );
  }

  /** Serves `method` (requests and notifications). Replaces a handler of the same name. */
  register(method: string, fn: Handler, options: HandlerOptions = {}): this {
    this.handlers.set(method, { fn, arity: options.arity });
    return this;
  }

  /** Removes the handler of `method`. */
  unregister(method: string): this {
    this.handlers.delete(method);
    return this;
  }

  /** Number of calls waiting for their reply. */
  get pendingCalls(): number {
    return this.pending.size;
  }

  /** Whether the connection has ended (close(), EOF, an error). */
  get isClosed(): boolean {
    return this.closedWith !== undefined;
  }

  /**
   * Calls `method` with `params`; resolves with the result, rejects with RpcError (the peer's
   * error value), RpcTimeoutError, the signal's reason, or RpcConnectionError (the connection ended first).
   */
  call(method: string, ...params: unknown[]): Promise<unknown> {
    return this.callWith(method, params);
  }

  /** call() with options: `endpoint.callWith("m", [1, 2], { timeout: 100, signal })`. */
  callWith(method: string, params: unknown[], options: CallOptions = {}): Promise<unknown> {
    if (this.closedWith) return Promise.reject(new RpcConnectionError(`${method}: ${this.closedWith.reason}`, method, -1, this.closedWith.cause));
    const { signal, timeout } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const msgid = this.allocateMsgid();
    let bytes: Uint8Array;
    try {
      bytes = this.encoder.encode([REQUEST, msgid, method, params]);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      const entry: Pending = { method, resolve, reject };
      this.pending.set(msgid, entry);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const drop = (error: unknown) => {
        if (this.pending.get(msgid) !== entry) return;
        this.pending.delete(msgid);
        this.abandoned.add(msgid);
        entry.cleanup?.();
        reject(error);
      };
      const onAbort = () => drop(signal!.reason);
      if (timeout !== undefined) timer = setTimeout(() => drop(new RpcTimeoutError(method, msgid, timeout)), timeout);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timer !== undefined || signal) {
        entry.cleanup = () => {
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        };
      }
      this.send(bytes);
    });
  }

  /** Sends a notification (no reply). Throws EncodeError for params with no MessagePack form, RpcConnectionError once closed. */
  notify(method: string, ...params: unknown[]): void {
    if (this.closedWith) throw new RpcConnectionError(`${method}: ${this.closedWith.reason}`, method, -1, this.closedWith.cause);
    this.send(this.encoder.encode([NOTIFICATION, method, params]));
  }

  /**
   * Ends the connection: every pending call rejects with RpcConnectionError ("closed by close()"),
   * messages already sent (calls, notifications, replies) are flushed, then the transport is closed.
   * Replies of handlers still running are dropped. Returns `closed`.
   */
  close(): Promise<unknown> {
    if (!this.closedWith) {
      this.flush();
      this.ended("the endpoint was closed by close()", undefined);
    }
    return this.closed;
  }

  // ---- sending

  private allocateMsgid(): number {
    // u32 ids, wrapping before 2^32; an id still waiting for its reply is skipped (with 2^32 calls
    // pending there would be none left, which memory rules out long before), and so is 0: a peer
    // answers a message it found invalid with msgid 0 (as mpk's endpoints and Neovim do), and that
    // answer must not settle a call of ours; ids of dropped calls whose late reply may still come
    // are skipped too
    let id = this.nextMsgid;
    while (id === 0 || this.pending.has(id) || this.abandoned.has(id)) id = (id + 1) % MSGID_LIMIT;
    this.nextMsgid = (id + 1) % MSGID_LIMIT;
    return id;
  }

  private send(bytes: Uint8Array): void {
    if (this.closedWith) return;
    this.outbox.push(bytes);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  /** Writes the messages of this turn in one write: whole messages only, in order. */
  private flush(): void {
    this.flushQueued = false;
    const out = this.outbox;
    if (out.length === 0 || this.closedWith) return;
    this.outbox = [];
    let bytes: Uint8Array;
    if (out.length === 1) bytes = out[0]!;
    else {
      let size = 0;
      for (const b of out) size += b.length;
      bytes = new Uint8Array(size);
      let at = 0;
      for (const b of out) {
        bytes.set(b, at);
        at += b.length;
      }
    }
    try {
      this.transport.write(bytes);
    } catch (e) {
      this.ended(`writing failed: ${errorText(e)}`, e);
    }
  }

  private respond(msgid: number, error: unknown, result: unknown): void {
    if (this.closedWith) return;
    let bytes: Uint8Array;
    try {
      bytes = this.encoder.encode([RESPONSE, msgid, error, result]);
    } catch (e) {
      // a result with no MessagePack form: the caller still gets an answer, naming the problem
      bytes = this.encoder.encode([RESPONSE, msgid, [NEOVIM_EXCEPTION, `the result could not be encoded: ${errorText(e)}`], null]);
    }
    this.send(bytes);
  }

  // ---- receiving

  private receive(chunk: Uint8Array): void {
    if (this.closedWith) return;
    const messages: unknown[] = [];
    let failure: unknown;
    try {
      this.chunks.feed(chunk, messages);
    } catch (e) {
      failure = e;
    }
    for (const message of messages) {
      if (this.closedWith) return;
      try {
        this.dispatch(message);
      } catch (e) {
        // only binAsString's walk or a user hook can throw here (binAsString on a value nested
        // deeper than the stack allows, with maxDepth raised far above its default)
        this.ended(`a message could not be handled: ${errorText(e)}`, e);
        return;
      }
    }
    if (failure !== undefined) {
      // the stream cannot be resynchronised after a decode error: say so with msgid 0, then end;
      // type 0 (Exception) as Neovim 0.7.2 answers bytes that are not MessagePack
      this.respond(0, [NEOVIM_EXCEPTION, `invalid MessagePack from the peer: ${errorText(failure)}`], null);
      this.flush();
      this.ended(`the peer sent bytes that are not MessagePack: ${errorText(failure)}`, failure);
    }
  }

  private dispatch(message: unknown): void {
    if (!Array.isArray(message) || message.length < 3 || message.length > 4) return this.violation("a message must be an array of 3 or 4 elements");
    const type = message[0];
    if (type === REQUEST && message.length === 4) {
      const [, msgid, method, params] = message as [number, unknown, unknown, unknown];
      if (!isMsgid(msgid)) return this.violation("the msgid of a request must be an integer 0..2^32-1");
      if (typeof method !== "string" || !Array.isArray(params)) {
        return this.respond(msgid, [NEOVIM_VALIDATION, "a request is [0, msgid, method (str), params (array)]"], null);
      }
      return this.serveRequest(msgid, method, this.convert(params) as unknown[]);
    }
    if (type === RESPONSE && message.length === 4) {
      const [, msgid, error, result] = message as [number, unknown, unknown, unknown];
      // a response is never answered (that would be a response nobody asked for): a bad one is dropped
      const entry = isMsgid(msgid) ? this.pending.get(msgid) : undefined;
      if (!entry) {
        this.discardedResponses++;
        // a late reply frees its id; a msgid-0 error is the peer's complaint about something we sent
        if (isMsgid(msgid) && !this.abandoned.delete(msgid) && msgid === 0 && error !== null && error !== undefined) {
          const complaint = new RpcError(this.convert(error), "", 0);
          this.peerError = complaint.message;
          this.options.onPeerError?.(complaint);
        }
        return;
      }
      this.pending.delete(msgid as number);
      entry.cleanup?.();
      if (error === null || error === undefined) entry.resolve(this.convert(result));
      else entry.reject(new RpcError(this.convert(error), entry.method, msgid as number));
      return;
    }
    if (type === NOTIFICATION && message.length === 3) {
      const [, method, params] = message as [number, unknown, unknown];
      if (typeof method !== "string" || !Array.isArray(params)) return this.violation("a notification is [2, method (str), params (array)]");
      return this.serveNotification(method, this.convert(params) as unknown[]);
    }
    this.violation("a message is [0, msgid, method, params], [1, msgid, error, result] or [2, method, params]");
  }

  /** A well-formed MessagePack value that is no message: answered with msgid 0 and type 1 (Validation, as Neovim 0.7.2 does); the connection stays usable. */
  private violation(what: string): void {
    this.respond(0, [NEOVIM_VALIDATION, `invalid message: ${what}`], null);
  }

  private serveRequest(msgid: number, method: string, params: unknown[]): void {
    const handler = this.handlers.get(method);
    if (!handler) return this.respond(msgid, [NEOVIM_EXCEPTION, `Invalid method: ${method}`], null);
    if (handler.arity !== undefined && params.length !== handler.arity) {
      return this.respond(msgid, [NEOVIM_EXCEPTION, `Wrong number of arguments: expecting ${handler.arity} but got ${params.length}`], null);
    }
    let result: unknown;
    try {
      result = handler.fn(...params);
    } catch (e) {
      return this.respond(msgid, errorValue(e), null);
    }
    if (isThenable(result)) {
      result.then(
        (value) => this.respond(msgid, null, value),
        (e: unknown) => this.respond(msgid, errorValue(e), null),
      );
    } else this.respond(msgid, null, result);
  }

  private serveNotification(method: string, params: unknown[]): void {
    const handler = this.handlers.get(method);
    if (!handler || (handler.arity !== undefined && params.length !== handler.arity)) {
      // notifications have no reply: an unknown one goes to the hook
      this.options.onUnhandledNotification?.(method, params);
      return;
    }
    this.notificationQueue.push({ fn: handler.fn, method, params });
    if (!this.notificationRunning) this.runNotifications();
  }

  /**
   * Runs queued notification handlers in arrival order. A handler that returns at once runs
   * synchronously, before the messages after its notification are dispatched (so a reply that
   * follows a notification on the wire settles after the handler ran); an async handler holds the
   * queue until its promise settles.
   */
  private runNotifications(): void {
    this.notificationRunning = true;
    for (let job = this.notificationQueue.shift(); job; job = this.notificationQueue.shift()) {
      const { fn, method, params } = job;
      let result: unknown;
      try {
        result = fn(...params);
      } catch (e) {
        this.options.onNotificationError?.(e, method);
        continue;
      }
      if (isThenable(result)) {
        result.then(
          () => this.runNotifications(),
          (e: unknown) => {
            try {
              this.options.onNotificationError?.(e, method);
            } catch (hookError) {
              // as in receive(): a throwing hook ends the connection rather than escaping
              this.ended(`a message could not be handled: ${errorText(hookError)}`, hookError);
              return;
            }
            this.runNotifications();
          },
        );
        return;
      }
    }
    this.notificationRunning = false;
  }

  private convert(value: unknown): unknown {
    return this.options.binAsString ? binToString(value, this.utf8Raw) : value;
  }

  private transportEnded(cause: unknown): void {
    if (this.closedWith) return;
    if (cause !== undefined) return this.ended(`the connection failed: ${errorText(cause)}`, cause);
    try {
      this.chunks.finish();
    } catch (e) {
      // EOF inside a message: the DecodeError (truncated) says where
      return this.ended(`the peer closed the connection inside a message: ${errorText(e)}`, e);
    }
    this.ended("the peer closed the connection (EOF)", undefined);
  }

  private ended(reason: string, cause: unknown): void {
    if (this.closedWith) return;
    if (this.peerError !== undefined) reason += ` (the peer's last msgid-0 error: ${this.peerError})`;
    this.closedWith = { cause, reason };
    this.outbox = [];
    const pending = [...this.pending];
    this.pending.clear();
    this.abandoned.clear();
    for (const [msgid, entry] of pending) {
      entry.cleanup?.();
      entry.reject(new RpcConnectionError(`${entry.method} (msgid ${msgid}) got no reply: ${reason}`, entry.method, msgid, cause));
    }
    try {
      this.transport.close();
    } catch {
      // already gone
    }
    this.resolveClosed(cause);
  }
}

function isMsgid(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v < MSGID_LIMIT;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === "object" || typeof v === "function") && typeof (v as { then?: unknown }).then === "function";
}

/** What a handler's exception is sent as: an RpcError's own value, else Neovim's [Exception, message]. */
function errorValue(e: unknown): unknown {
  if (e instanceof RpcError) return e.value;
  return [NEOVIM_EXCEPTION, errorText(e)];
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });
const utf8Replace = new TextDecoder();

function binToString(v: unknown, raw: boolean): unknown {
  if (v instanceof Uint8Array) {
    if (!raw) return utf8Replace.decode(v);
    try {
      return utf8Strict.decode(v);
    } catch {
      return new RawStr(v);
    }
  }
  // recursive like the decoder, whose maxDepth bounds the nesting (receive() catches a stack overflow)
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = binToString(v[i], raw);
    return v;
  }
  if (v instanceof Map) {
    const out = new Map();
    for (const [k, x] of v) out.set(binToString(k, raw), binToString(x, raw));
    return out;
  }
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = binToString(o[k], raw);
    return v;
  }
  return v;
}
