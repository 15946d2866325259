/**
 * An in-memory transport pair: the bridge's side is a `Transport`, the other side speaks the
 * MCP SDK's transport contract (start/send/close and the three callbacks), so an SDK `Server`
 * can be connected to it directly. Fast tests of the routing run on it without processes.
 * Messages are delivered on a later microtask, as real I/O would, never re-entrantly.
 */

import { BaseTransport, type Launcher, type Transport } from './transport.ts';
import type { JsonRpcMessage } from '../mcp/jsonrpc.ts';

/** The SDK's Transport interface, structurally (so this file does not import the SDK). */
export interface PeerTransport {
  start(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
}

class BridgeSide extends BaseTransport {
  readonly label: string;
  peer!: ServerSide;

  constructor(label: string) {
    super();
    this.label = label;
  }

  /** In memory nothing waits: the peer takes every message on the next microtask. */
  send(message: JsonRpcMessage): void {
    if (this.isClosed) return;
    // A copy, so neither side can change what the other holds.
    const copy = structuredClone(message);
    queueMicrotask(() => this.peer.onmessage?.(copy));
  }

  receive(message: JsonRpcMessage): void {
    this.received(message);
  }

  end(reason: string): void {
    this.closed(reason);
  }

  async close(): Promise<void> {
    await this.peer.close();
  }
}

class ServerSide implements PeerTransport {
  readonly #bridge: BridgeSide;
  #closed = false;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(bridge: BridgeSide) {
    this.#bridge = bridge;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('transport closed'));
    const copy = structuredClone(message);
    queueMicrotask(() => this.#bridge.receive(copy));
    return Promise.resolve();
  }

  /** The server side ending: for the bridge, like a child that exited. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    queueMicrotask(() => {
      this.#bridge.end('closed');
      this.onclose?.();
    });
    return Promise.resolve();
  }
}

let nextPair = 0;

export function memoryPair(): [Transport, PeerTransport] {
  const bridge = new BridgeSide(`memory ${nextPair++}`);
  const server = new ServerSide(bridge);
  bridge.peer = server;
  return [bridge, server];
}

/** A launcher whose children are in-process servers, connected by `connect` per launch. */
export class MemoryLauncher implements Launcher {
  readonly #connect: (transport: PeerTransport) => Promise<void>;

  constructor(connect: (transport: PeerTransport) => Promise<void>) {
    this.#connect = connect;
  }

  async launch(): Promise<Transport> {
    const [bridge, server] = memoryPair();
    await this.#connect(server);
    return bridge;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
