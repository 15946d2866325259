/**
 * Server-Sent Events streams with event ids for resumability (2025-11-25 basic/transports,
 * "Resumability and Redelivery"). Ids are `<stream>-<seq>`: unique across the streams of a
 * session, and they name the stream they belong to, so a `Last-Event-ID` is replayed on that
 * stream only.
 */

import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage } from '../../mcp/jsonrpc.ts';
import type { HeaderList } from '../replies.ts';
import { jsonText } from '../message-text.ts';

/** Events kept per stream for replay; older ones are dropped first. */
const RETAINED_EVENTS = 256;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Keeps reverse proxies such as nginx from buffering the stream (2026-07-28 transports).
  'x-accel-buffering': 'no',
} as const;

/** SSE_HEADERS as a header list (replies.ts). */
export const SSE_HEADER_LIST: HeaderList = Object.entries(SSE_HEADERS).flat();

interface StoredEvent {
  seq: number;
  text: string;
}

export class EventStream {
  readonly id: number;
  #events: StoredEvent[] = [];
  #nextSeq = 0;
  /** Highest seq written to some connection; later events wait for the next one. */
  #flushedSeq = -1;
  #connection: ServerResponse | undefined;
  #complete = false;

  constructor(id: number) {
    this.id = id;
  }

  get connected(): boolean {
    return this.#connection !== undefined;
  }

  get complete(): boolean {
    return this.#complete;
  }

  /** Appends a message; it goes out now if a connection is attached, else on the next one. */
  push(message: JsonRpcMessage): void {
    this.#store(`data: ${jsonText(message)}\n\n`);
  }

  /**
   * Attaches a connection whose headers are written. Sends a priming event (an id with empty
   * data, which the spec says SHOULD come first so the client can resume), then the events
   * after `afterSeq` (a Last-Event-ID) or, for a fresh connection, those not yet sent.
   */
  attach(response: ServerResponse, afterSeq?: number): void {
    this.#connection?.end();
    this.#connection = response;
    response.once('close', () => {
      if (this.#connection === response) this.#connection = undefined;
    });
    const from = afterSeq ?? this.#flushedSeq;
    const replay = this.#events.filter((event) => event.seq > from);
    if (afterSeq === undefined && replay.length === 0) this.#store('data: \n\n');
    for (const event of replay) this.#write(event);
    // A resumed stream that had nothing left to replay stays open (idle) instead of ending:
    // the SDK client resumes again whenever a stream ends without a result, so ending it would
    // start a reconnect loop. The SDK's own server keeps such streams open too.
    if (this.#complete && replay.length > 0) response.end();
  }

  /** The stream carried its response: it ends, but stays replayable. */
  finish(): void {
    this.#complete = true;
    this.#connection?.end();
  }

  /** An SSE comment keeps idle connections from being closed by intermediaries. */
  keepAlive(): void {
    this.#connection?.write(': keep-alive\n\n');
  }

  /** Ends the connection without completing the stream: the client may resume it. */
  detach(): void {
    this.#connection?.end();
    this.#connection = undefined;
  }

  #store(body: string): void {
    const event = { seq: this.#nextSeq++, text: `id: ${this.id}-${this.#nextSeq - 1}\n${body}` };
    this.#events.push(event);
    if (this.#events.length > RETAINED_EVENTS) this.#events.shift();
    this.#write(event);
  }

  #write(event: StoredEvent): void {
    if (!this.#connection) return;
    this.#connection.write(event.text);
    if (event.seq > this.#flushedSeq) this.#flushedSeq = event.seq;
  }
}

/** `<stream>-<seq>` → its parts, or undefined for an id we did not issue. */
export function parseEventId(value: string): { stream: number; seq: number } | undefined {
  const match = /^(\d+)-(\d+)$/.exec(value);
  if (!match) return undefined;
  return { stream: Number(match[1]), seq: Number(match[2]) };
}
