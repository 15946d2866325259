/** Timing helpers shared by the reflector, the work queue and leader election. */
import { setTimeout as delay } from 'node:timers/promises';

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/** `baseMs * 2^(attempt-1)`, capped at `maxMs`; attempt 1 is the first retry. */
export function backoffDelay(attempt: number, { baseMs, maxMs }: Backoff): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** `ms` stretched by up to `factor` at random, so that peers do not act in lockstep. */
export function jittered(ms: number, factor: number, random: () => number = Math.random): number {
  return ms * (1 + factor * random());
}

/** Waits `ms`, or less if `signal` aborts first; never rejects. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {
    // Aborted: the caller checks the signal.
  }
}

/** Resolves when `signal` aborts (at once if it has). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** True when `work` settles (either way) within `ms`, false when the time runs out first. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const timeUp = new AbortController();
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, delay(ms, false, { signal: timeUp.signal })]);
  } finally {
    timeUp.abort();
  }
}
