/**
 * A byte pipe under an Endpoint. The endpoint calls start() once, then write() with whole messages
 * (one or more, never part of one) and close() when it ends. The transport hands over the bytes
 * it receives, split anywhere, through onData, and calls onClose once when the pipe ends:
 * without a cause for a clean end of input (EOF), with the error otherwise. After onClose it
 * calls neither again.
 */
export interface Transport {
  start(onData: (chunk: Uint8Array) => void, onClose: (cause?: unknown) => void): void;
  write(bytes: Uint8Array): void;
  close(): void;
}

/**
 * The once-only end of a transport: `finish(cause)` tells the listener given to `listen` (onClose)
 * the first time only; `close()` (the endpoint closing it) ends it without telling anyone. `done`
 * says whether either happened, after which no more data is handed over.
 */
interface CloseLatch {
  readonly done: boolean;
  listen(onClose: (cause?: unknown) => void): void;
  finish(cause?: unknown): void;
  close(): void;
}

function closeOnce(): CloseLatch {
  let done = false;
  let listener: ((cause?: unknown) => void) | undefined;
  return {
    get done() {
      return done;
    },
    listen(onClose) {
      listener = onClose;
    },
    finish(cause) {
      if (done) return;
      done = true;
      listener?.(cause);
    },
    close() {
      done = true;
    },
  };
}

/**
 * A transport over a pair of web streams (a WebTransport stream, a `{readable, writable}` from
 * anywhere, Deno's connections). close() closes the writable side and cancels the reader.
 */
export function webStreamTransport(pair: { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> }): Transport {
  const writer = pair.writable.getWriter();
  const reader = pair.readable.getReader();
  const latch = closeOnce();
  return {
    start(onData, onClose) {
      latch.listen(onClose);
      void (async () => {
        try {
          for (;;) {
            const { done: end, value } = await reader.read();
            if (end || latch.done) break;
            onData(value);
          }
          latch.finish();
        } catch (e) {
          latch.finish(e);
        }
      })();
    },
    write(bytes) {
      writer.write(bytes).catch((e: unknown) => latch.finish(e));
    },
    close() {
      latch.close();
      writer.close().catch(() => undefined);
      reader.cancel().catch(() => undefined);
    },
  };
}

/** What webSocketTransport needs of a WebSocket (the browser's, or a compatible one). */
export interface WebSocketLike {
  binaryType: string;
  readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
}

/**
 * A transport over a WebSocket, one binary frame per write (each frame holds whole messages). Text
 * frames end the connection with an error: their characters are not the bytes that were sent.
 * Writes made before the socket opens wait for it. Pass an open socket or one still connecting.
 */
export function webSocketTransport(ws: WebSocketLike): Transport {
  ws.binaryType = "arraybuffer";
  let waiting: Uint8Array[] | undefined = ws.readyState === 0 ? [] : undefined;
  const latch = closeOnce();
  return {
    start(onData, onClose) {
      latch.listen(onClose);
      ws.addEventListener("open", () => {
        const queued = waiting ?? [];
        waiting = undefined;
        for (const b of queued) ws.send(b);
      });
      ws.addEventListener("message", (event: { data: unknown }) => {
        if (latch.done) return;
        if (event.data instanceof ArrayBuffer) onData(new Uint8Array(event.data));
        else {
          latch.finish(new TypeError("the WebSocket peer sent a text frame; MessagePack-RPC needs binary frames"));
          // browsers let a page send only 1000 or 3000-4999: 4000 is a private-use code
          ws.close(4000, "MessagePack-RPC needs binary frames");
        }
      });
      ws.addEventListener("error", () => latch.finish(new Error("WebSocket error")));
      ws.addEventListener("close", (event: { code: number; reason: string; wasClean: boolean }) =>
        latch.finish(event.code === 1000 || event.code === 1005 ? undefined : new Error(`WebSocket closed with code ${event.code}${event.reason ? `: ${event.reason}` : ""}`)),
      );
    },
    write(bytes) {
      if (waiting) waiting.push(bytes);
      else ws.send(bytes);
    },
    close() {
      latch.close();
      ws.close(1000);
    },
  };
}
