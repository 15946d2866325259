/** The timing helpers' contracts that shutdown and retries rely on. */
import { describe, expect, it } from 'vitest';
import { backoffDelay, settlesWithin } from '../../src/kube/backoff.ts';

describe('backoffDelay', () => {
  it('doubles from the base on each attempt and stops at the cap', () => {
    const backoff = { baseMs: 200, maxMs: 1_000 };
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, backoff))).toEqual([
      200, 400, 800, 1_000,
    ]);
  });
});

describe('settlesWithin', () => {
  it('is true for work that ends in time, whether it succeeds or fails', async () => {
    expect(await settlesWithin(Promise.resolve(), 1_000)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('failed')), 1_000)).toBe(true);
  });

  it('is false when the time runs out first, without waiting for the work', async () => {
    const never = new Promise(() => undefined);
    const started = performance.now();
    expect(await settlesWithin(never, 50)).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
