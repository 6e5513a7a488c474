/// <reference types="node" />
// mpk/rpc/node: Node transports for mpk/rpc (TCP, Unix sockets, stdio, child processes, any Duplex).
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { Endpoint, type EndpointOptions } from "./Endpoint.js";
import type { Transport } from "./Transport.js";

/**
 * A transport over a readable and a writable Node stream (the two sides of a Duplex, or a child's
 * stdout and stdin). The readable must yield bytes (no `encoding`). close() ends the writable
 * side (its buffered bytes are still sent) and stops reading.
 */
export function streamTransport(readable: Readable, writable: Writable, onClose?: () => void): Transport {
  let done = false;
  let dataListener: ((chunk: unknown) => void) | undefined;
  return {
    start(onData, onEnd) {
      const finish = (cause?: unknown) => {
        if (done) return;
        done = true;
        onEnd(cause);
      };
      dataListener = (chunk: unknown) => {
        if (done) return;
        if (typeof chunk === "string") return finish(new TypeError("the stream yields strings (was it opened with an encoding?); MessagePack-RPC needs bytes"));
        onData(chunk as Uint8Array);
      };
      readable.on("data", dataListener);
      readable.on("end", () => finish());
      readable.on("error", (e) => finish(e));
      writable.on("error", (e) => finish(e));
      // a socket destroyed without "end" (reset) or a pipe closed under us
      readable.on("close", () => finish(readable.readableEnded ? undefined : new Error("the stream closed before its end (connection reset?)")));
    },
    write(bytes) {
      writable.write(bytes);
    },
    close() {
      done = true;
      writable.end();
      if (dataListener) readable.off("data", dataListener);
      readable.pause();
      onClose?.();
    },
  };
}

/** A transport over a Duplex (a net.Socket, a TLS socket, a stream pair). */
export function duplexTransport(stream: Readable & Writable): Transport {
  return streamTransport(stream, stream, () => {
    // a socket whose writable side ended still waits for the peer's end: don't keep the process alive for it
    if ("unref" in stream && typeof stream.unref === "function") (stream as unknown as Socket).unref();
  });
}

/** Where to connect or listen: TCP `{ port, host }` or a Unix socket / Windows pipe `{ path }`. */
export type Address = { port: number; host?: string } | { path: string };

/** Connects to a MessagePack-RPC server; resolves with the endpoint once connected. */
export function connect(address: Address, options?: EndpointOptions): Promise<Endpoint> {
  return new Promise((resolve, reject) => {
    const socket = "path" in address ? createConnection(address.path) : createConnection(address.port, address.host ?? "127.0.0.1");
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      socket.setNoDelay?.(true);
      resolve(new Endpoint(duplexTransport(socket), options));
    });
  });
}

/**
 * Listens for MessagePack-RPC connections: each one becomes an Endpoint passed to `onConnection`
 * (register its handlers there; they may call back into the client). Resolves with the listening
 * net.Server once it listens (`server.address()` gives the port of `{ port: 0 }`).
 */
export function listen(address: Address, onConnection: (endpoint: Endpoint, socket: Socket) => void, options?: EndpointOptions): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.setNoDelay?.(true);
      onConnection(new Endpoint(duplexTransport(socket), options), socket);
    });
    server.once("error", reject);
    const ready = () => {
      server.off("error", reject);
      resolve(server);
    };
    if ("path" in address) server.listen(address.path, ready);
    else server.listen(address.port, address.host ?? "127.0.0.1", ready);
  });
}

/** An endpoint on this process's stdin and stdout (a program run by `nvim`'s jobstart({rpc: true}), say). Nothing else may write to stdout. */
export function stdioEndpoint(options?: EndpointOptions): Endpoint {
  return new Endpoint(streamTransport(process.stdin, process.stdout), options);
}

/**
 * Spawns `command` and talks MessagePack-RPC over its stdin and stdout (`nvim --embed`, say).
 * Its stderr is inherited unless `spawnOptions.stdio` says otherwise. close() ends its stdin;
 * the child is not killed (`child.kill()` does that).
 */
export function spawnEndpoint(command: string, args: readonly string[] = [], options?: EndpointOptions, spawnOptions: SpawnOptions = {}): { endpoint: Endpoint; child: ChildProcess } {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], ...spawnOptions });
  const endpoint = new Endpoint(streamTransport(child.stdout!, child.stdin!), options);
  // a command that cannot be started (ENOENT): the endpoint ends with that error as its cause
  child.on("error", (e) => child.stdout?.destroy(e));
  return { endpoint, child };
}

export { Endpoint };
