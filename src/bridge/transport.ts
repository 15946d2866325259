/**
 * The narrow seam between the bridge and one MCP server process: a channel of JSON-RPC
 * messages. A spawned child (spawn.ts), a child started by the supervisor over FIFOs
 * (supervised.ts) and an in-memory pair (memory-transport.ts) all implement it; nothing above this file
 * knows which one it talks to.
 *
 * Lifecycle: a transport is open when its launcher hands it out. Messages that arrive before
 * `attach` are kept and delivered, in order, by `attach`; `attach` may be called again to hand
 * the transport to a new owner (the warm pool does). `onClose` fires exactly once, after the
 * last message, whether the child exited or `close()` was called.
 */

import type { Readable, Writable } from 'node:stream';
import { encodeLine, JsonRpcLineDecoder, type BadLine } from './framing.ts';
import type { JsonRpcMessage } from '../mcp/jsonrpc.ts';

export interface TransportHandlers {
  onMessage: (message: JsonRpcMessage) => void;
  /** A line the child wrote that is not a JSON-RPC message; it has been skipped. */
  onBadLine: (line: BadLine) => void;
  onClose: (reason: string) => void;
}

export interface Transport {
  attach(handlers: TransportHandlers): void;
  send(message: JsonRpcMessage): void;
  /** Stops the child (idempotent); resolves once the channel is closed. */
  close(): Promise<void>;
  readonly isClosed: boolean;
  /** Short description for logs (pid or FIFO id); never the command line. */
  readonly label: string;
}

/** Starts children. `close()` stops whatever the launcher itself holds (not handed-out ones). */
export interface Launcher {
  launch(): Promise<Transport>;
  close(): Promise<void>;
}

/**
 * Buffers events until a first owner attaches, so a transport can be created (and its child
 * watched for an early death) before anyone wants its messages.
 */
export abstract class BaseTransport implements Transport {
  abstract readonly label: string;
  #handlers: TransportHandlers | undefined;
  #early: ({ kind: 'message'; message: JsonRpcMessage } | { kind: 'bad'; line: BadLine })[] = [];
  #closedReason: string | undefined;
  #closeSignalled = false;

  get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  attach(handlers: TransportHandlers): void {
    this.#handlers = handlers;
    const early = this.#early;
    this.#early = [];
    for (const event of early) {
      if (event.kind === 'message') handlers.onMessage(event.message);
      else handlers.onBadLine(event.line);
    }
    this.#signalClose();
  }

  abstract send(message: JsonRpcMessage): void;
  abstract close(): Promise<void>;

  protected received(message: JsonRpcMessage): void {
    if (this.#handlers) this.#handlers.onMessage(message);
    else this.#early.push({ kind: 'message', message });
  }

  protected receivedBadLine(line: BadLine): void {
    if (this.#handlers) this.#handlers.onBadLine(line);
    else this.#early.push({ kind: 'bad', line });
  }

  /** Records the end of the channel; the owner hears of it once, now or when it attaches. */
  protected closed(reason: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    this.#signalClose();
  }

  #signalClose(): void {
    if (this.#closedReason === undefined || !this.#handlers || this.#closeSignalled) return;
    this.#closeSignalled = true;
    this.#handlers.onClose(this.#closedReason);
  }
}

/**
 * JSON-RPC lines over a pair of byte streams: the child's stdout/stdin, or the two FIFOs.
 * `stop` ends the child; `whenDone` settles when its output has ended and it is gone.
 */
export abstract class StreamTransport extends BaseTransport {
  readonly #input: Writable;
  #inputBroken = false;

  protected constructor(output: Readable, input: Writable, maxLineBytes: number) {
    super();
    this.#input = input;
    const decoder = new JsonRpcLineDecoder(maxLineBytes, {
      onMessage: (message) => this.received(message),
      onBadLine: (line) => this.receivedBadLine(line),
    });
    output.on('data', (chunk: Buffer) => decoder.push(chunk));
    output.on('end', () => decoder.end());
    // A child that stops reading makes writes fail (EPIPE); its exit is reported separately.
    input.on('error', () => {
      this.#inputBroken = true;
    });
    output.on('error', () => undefined);
  }

  send(message: JsonRpcMessage): void {
    if (this.isClosed || this.#inputBroken) return;
    this.#input.write(encodeLine(message));
  }

  /** Closing stdin is how MCP asks a stdio server to exit (2025-11-25 basic/lifecycle). */
  protected endInput(): void {
    if (!this.#input.writableEnded) this.#input.end();
  }
}
