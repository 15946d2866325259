/**
 * Where audit lines go: a file descriptor (the container's stdout) or a file, written without
 * ever blocking a call. sonic-boom (pino's writer) queues lines and writes them from libuv's
 * thread pool; its queue is bounded, and a line that would overflow it is dropped and counted,
 * so a stalled log reader costs events, never the bridge's memory or its event loop. Each write
 * holds whole lines and at most PIPE_BUF bytes (event.ts), so it is atomic on a pipe.
 */

// A CommonJS module: its default export is the class, which names itself as `SonicBoom` too;
// TypeScript sees the latter only, Node's ESM loader no named exports at all.
import sonicBoom from 'sonic-boom';
import { MAX_EVENT_BYTES } from './event.ts';

/** Lines waiting to be written, at most: about a thousand events of the largest size. */
export const AUDIT_BUFFER_BYTES = 4 * 1024 * 1024;

/** How long closing waits for queued lines to be written. */
const CLOSE_WAIT_MS = 2_000;

export interface AuditSink {
  write(line: string): void;
  /** Writes what is queued; the file descriptor of stdout stays open. */
  close(): Promise<void>;
}

export interface SinkOptions {
  /** A file descriptor (1: stdout) or a file to append to. */
  destination: number | string;
  /** Called for each line that could not be queued or written. */
  onDrop: () => void;
  /** Called once for an error of the destination; lines after it are dropped. */
  onError: (error: Error) => void;
  bufferBytes?: number;
}

export function lineSink(options: SinkOptions): AuditSink {
  const { destination } = options;
  const writer = new sonicBoom.SonicBoom({
    ...(typeof destination === 'number' ? { fd: destination } : { dest: destination }),
    sync: false,
    maxLength: options.bufferBytes ?? AUDIT_BUFFER_BYTES,
    maxWrite: MAX_EVENT_BYTES,
    // Busy (EAGAIN) is retried later: the queue bounds what waits meanwhile.
    retryEAGAIN: () => true,
  });
  /** After an error of the destination, or close(): nothing more is written. */
  let broken = false;
  writer.on('drop', options.onDrop);
  let failed = false;
  writer.on('error', (error: Error) => {
    if (!failed) options.onError(error);
    failed = broken = true;
  });
  return {
    write(line) {
      if (broken) return options.onDrop();
      writer.write(line);
    },
    close() {
      if (broken) return Promise.resolve();
      broken = true;
      return new Promise((resolve) => {
        // A reader that never reads again would hold shutdown forever: what waits is lost.
        const stalled = setTimeout(() => {
          writer.destroy();
          resolve();
        }, CLOSE_WAIT_MS);
        const closed = () => {
          clearTimeout(stalled);
          resolve();
        };
        writer.once('close', closed);
        writer.once('error', closed);
        writer.end();
      });
    },
  };
}
