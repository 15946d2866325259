/**
 * A small file the bridge re-reads while it runs: the bearer token (a mounted Secret) and the
 * policy (a mounted ConfigMap). Kubernetes updates such volumes by swapping a symlink, which
 * file watchers miss, so the content is polled. A change that does not parse is refused and
 * logged; then the last good value stays in force, or, for a file that `failsClosed` (a token:
 * deleting or emptying it is how it is revoked), no value is.
 */

import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';

export interface WatchedFileOptions<T> {
  path: string;
  parse: (text: string) => T;
  logger: Logger;
  /** What the file is, for logs: "policy", "token". */
  what: string;
  intervalMs?: number;
  onChange?: (value: T) => void;
  /** A file that cannot be read or parsed leaves no value in force, not the last good one. */
  failsClosed?: boolean;
}

export class WatchedFile<T> {
  readonly #options: WatchedFileOptions<T>;
  #text: string | undefined;
  #value: T | undefined;
  #error: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: WatchedFileOptions<T>) {
    this.#options = options;
  }

  /** The last value that parsed, if any. */
  get value(): T | undefined {
    return this.#value;
  }

  /** Why the current content is not in force, if it is not. */
  get error(): string | undefined {
    return this.#error;
  }

  /** Reads the file now, then keeps polling it. */
  async start(): Promise<void> {
    await this.reload();
    // A poll runs on a timer, outside any request: what it throws (a parser, the `onChange` of
    // its owner) fails that poll alone, as an entry point must (entry-guard.ts).
    this.#timer = setInterval(() => {
      this.reload().catch((error: unknown) => {
        this.#fail(`reloading failed: ${(error as Error).message}`);
      });
    }, this.#options.intervalMs ?? 2_000);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async reload(): Promise<void> {
    const { path, parse, logger, what } = this.#options;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      this.#fail(`cannot read ${path}: ${(error as Error).message}`);
      return;
    }
    if (text === this.#text) return;
    this.#text = text;
    let value: T;
    try {
      value = parse(text);
      // What its owner does with the value is part of loading it: a throw there leaves the
      // previous value in force, as content that does not parse does.
      this.#options.onChange?.(value);
    } catch (error) {
      this.#fail((error as Error).message);
      return;
    }
    this.#value = value;
    this.#error = undefined;
    logger.info({ file: path }, `${what} loaded`);
  }

  #fail(reason: string): void {
    if (this.#options.failsClosed) {
      this.#value = undefined;
      // The same content, once it is back, must load again.
      this.#text = undefined;
    }
    if (reason !== this.#error) {
      const kept = this.#value === undefined ? 'none in force' : 'keeping the previous one';
      this.#options.logger.error(
        { file: this.#options.path, reason },
        `${this.#options.what} not loaded; ${kept}`,
      );
    }
    this.#error = reason;
  }
}
