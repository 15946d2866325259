/**
 * The one way tests and benches wait for something: poll until a check returns a value.
 */

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Called before every attempt; throw from it to give up at once (the process died). */
  abort?: () => void;
}

/**
 * Polls `check` until it returns a value other than undefined (or false) and returns it.
 * Errors thrown by `check` count as "not yet" (a 404 while an object is being created); the
 * last one is reported if time runs out.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 30_000, intervalMs = 200, abort }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    abort?.();
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      last = 'not yet';
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) {
      throw new Error(`${what}: not done within ${timeoutMs / 1000}s (last attempt: ${last})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Settles with the promise, or fails saying what did not finish within `ms`. */
export async function within<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
