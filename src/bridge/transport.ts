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
import type { Account } from './budget.ts';
import { encodeLine, JsonRpcLineDecoder, type BadLine } from './framing.ts';
import type { JsonRpcMessage, RequestId } from '../mcp/jsonrpc.ts';

export interface TransportHandlers {
  /**
   * `relatedTo`: the id (as sent) of the request whose answer carried the message, when the
   * channel tells (an HTTP server's response stream does; a pipe does not).
   */
  onMessage: (message: JsonRpcMessage, relatedTo?: RequestId) => void;
  /** A line the child wrote that is not a JSON-RPC message; it has been skipped. */
  onBadLine: (line: BadLine) => void;
  onClose: (reason: string) => void;
}

export interface Transport {
  attach(handlers: TransportHandlers): void;
  /**
   * Sends a message. `account` holds its bytes until the child has taken them; without one they
   * are held elsewhere already: a request's by the upstream until it is answered (budget.ts).
   */
  send(message: JsonRpcMessage, account?: Account): void;
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
  #early: (
    | { kind: 'message'; message: JsonRpcMessage; relatedTo?: RequestId }
    | { kind: 'bad'; line: BadLine }
  )[] = [];
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
      if (event.kind === 'message') handlers.onMessage(event.message, event.relatedTo);
      else handlers.onBadLine(event.line);
    }
    this.#signalClose();
  }

  abstract send(message: JsonRpcMessage, account?: Account): void;
  abstract close(): Promise<void>;

  protected received(message: JsonRpcMessage, relatedTo?: RequestId): void {
    if (this.#handlers) this.#handlers.onMessage(message, relatedTo);
    else this.#early.push({ kind: 'message', message, relatedTo });
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
  #inputClosed = false;
  /**
   * Lines written and not yet taken by the child, oldest first: the account of each, and its
   * size. Two arrays rather than an object per line: this runs for every message.
   */
  readonly #unflushedAccounts: Account[] = [];
  readonly #unflushedSizes: number[] = [];
  /** The callback of every counted write: a stream calls them in write order. */
  readonly #flushed = (): void => {
    if (this.#inputClosed) return; // given back all at once on close
    this.#unflushedAccounts.shift()?.give(this.#unflushedSizes.shift()!);
  };

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
    input.on('close', () => {
      this.#inputClosed = true;
      this.#unflushedSizes.forEach((size, i) => this.#unflushedAccounts[i]!.give(size));
      this.#unflushedAccounts.length = 0;
      this.#unflushedSizes.length = 0;
    });
    output.on('error', () => undefined);
  }

  send(message: JsonRpcMessage, account?: Account): void {
    if (this.isClosed || this.#inputBroken || this.#inputClosed) return;
    const line = encodeLine(message);
    if (!account) {
      this.#input.write(line);
      return;
    }
    // UTF-16 units: what the queued string occupies, within a factor of two.
    account.take(line.length);
    this.#unflushedAccounts.push(account);
    this.#unflushedSizes.push(line.length);
    this.#input.write(line, this.#flushed);
  }

  /** Closing stdin is how MCP asks a stdio server to exit (2025-11-25 basic/lifecycle). */
  protected endInput(): void {
    if (!this.#input.writableEnded) this.#input.end();
  }
}
