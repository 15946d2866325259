/**
 * The live stream: every change the console's watches see, as server-sent events
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html), one JSON message per event.
 * The page applies fleet rows as they come and reloads a server page when it is touched.
 *
 * Bounded: a number of streams at once, and per stream the bytes waiting on a slow reader.
 * A reader that falls that far behind is cut off; its EventSource reconnects and the page
 * reloads what it shows, which is cheaper than holding every change for it.
 */

import type { ServerResponse } from 'node:http';
import type { StreamMessage } from './web/api-types.ts';

/** Streams open at once: a few tabs, not a crowd; the console serves one person. */
export const MAX_STREAMS = 32;
/** Bytes a stream may have waiting before it is cut off (a thousand fleet rows fit). */
export const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;
/** A comment line this often keeps proxies and the browser from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

export class Streams {
  readonly #open = new Set<ServerResponse>();
  readonly #heartbeat: NodeJS.Timeout;

  constructor() {
    this.#heartbeat = setInterval(() => this.#write(': heartbeat\n\n'), HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  get size(): number {
    return this.#open.size;
  }

  /** Takes over a response as a stream; false when too many are open. */
  open(res: ServerResponse, headers: Record<string, string>): boolean {
    if (this.#open.size >= MAX_STREAMS) return false;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    // The first line tells the page it is connected; it reloads what it shows on every (re)connect.
    res.write('event: hello\ndata: {}\n\n');
    this.#open.add(res);
    res.on('close', () => this.#open.delete(res));
    return true;
  }

  send(message: StreamMessage): void {
    this.#write(`data: ${JSON.stringify(message)}\n\n`);
  }

  #write(text: string): void {
    for (const res of this.#open) {
      if (res.writableLength > MAX_BACKLOG_BYTES) {
        res.destroy();
        continue;
      }
      res.write(text);
    }
  }

  close(): void {
    clearInterval(this.#heartbeat);
    for (const res of this.#open) res.end();
    this.#open.clear();
  }
}
