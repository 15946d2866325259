import { describe, expect, it } from 'vitest';
import {
  FAST_KEYS_PER_NORMAL,
  WorkQueue,
  type HandlerResult,
  type QueueOptions,
} from '../../src/kube/queue.ts';

/** A handler whose runs stay open until the test releases them. */
function gatedHandler() {
  const runs: string[] = [];
  const gates: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  const handler = async (key: string): Promise<void> => {
    runs.push(key);
    active += 1;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active -= 1;
  };
  const releaseAll = async () => {
    while (gates.length > 0) gates.splice(0).forEach((open) => open());
    await tick();
  };
  return { runs, gates, handler, releaseAll, maxActive: () => maxActive };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function queue(
  handler: (key: string) => Promise<HandlerResult | void>,
  options: Partial<QueueOptions> = {},
) {
  const errors: { key: string; retryInMs: number }[] = [];
  const q = new WorkQueue({
    concurrency: 2,
    handler,
    onError: (key, _err, retryInMs) => errors.push({ key, retryInMs }),
    ...options,
  });
  return { q, errors };
}

describe('WorkQueue', () => {
  it('runs a key once however many times it was added before a worker took it', async () => {
    const h = gatedHandler();
    const { q } = queue(h.handler);
    q.add('ns/a');
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    expect(q.depth).toEqual({ fast: 0, normal: 2 });
    q.start();
    await h.releaseAll();
    await h.releaseAll();
    expect(h.runs).toEqual(['ns/a', 'ns/b']);
    await q.shutdown();
  });

  it('runs a key added during its processing exactly once more, afterwards', async () => {
    const h = gatedHandler();
    const { q } = queue(h.handler, { concurrency: 4 });
    q.start();
    q.add('ns/a');
    await tick();
    expect(h.runs).toEqual(['ns/a']);
    q.add('ns/a');
    q.add('ns/a');
    await tick();
    // Not in parallel with itself, even with free workers.
    expect(h.runs).toEqual(['ns/a']);
    await h.releaseAll();
    expect(h.runs).toEqual(['ns/a', 'ns/a']);
    await h.releaseAll();
    expect(h.runs).toEqual(['ns/a', 'ns/a']);
    await q.shutdown();
  });

  it('never runs more keys at once than its concurrency', async () => {
    const h = gatedHandler();
    const { q } = queue(h.handler, { concurrency: 3 });
    q.start();
    for (let i = 0; i < 10; i++) q.add(`ns/${i}`);
    await tick();
    expect(h.runs).toHaveLength(3);
    expect(q.depth).toEqual({ fast: 0, normal: 7 });
    while (h.runs.length < 10 || h.gates.length > 0) await h.releaseAll();
    expect(h.maxActive()).toBe(3);
    expect(new Set(h.runs).size).toBe(10);
    await q.shutdown();
  });

  it('retries a failing key with per-key exponential delays, reset by a success', async () => {
    let calls = 0;
    const { q, errors } = queue(
      () => {
        calls += 1;
        return calls <= 3 ? Promise.reject(new Error(`failure ${calls}`)) : Promise.resolve();
      },
      { retryBackoff: { baseMs: 5, maxMs: 1000 } },
    );
    q.start();
    q.add('ns/a');
    await expect.poll(() => calls, { timeout: 2000 }).toBe(4);
    expect(errors.map((e) => e.retryInMs)).toEqual([5, 10, 20]);
    // The success reset the count: the next failure starts from the base delay again.
    calls = 0;
    q.add('ns/a');
    await expect.poll(() => errors.length, { timeout: 2000 }).toBe(4);
    expect(errors[3]!.retryInMs).toBe(5);
    await q.shutdown();
  });

  it('caps the retry delay', async () => {
    const { q, errors } = queue(() => Promise.reject(new Error('always')), {
      retryBackoff: { baseMs: 1, maxMs: 4 },
    });
    q.start();
    q.add('ns/a');
    await expect.poll(() => errors.length, { timeout: 2000 }).toBeGreaterThanOrEqual(5);
    await q.shutdown();
    expect(errors.slice(0, 5).map((e) => e.retryInMs)).toEqual([1, 2, 4, 4, 4]);
  });

  it('requeues a key after the delay its handler asks for', async () => {
    const started = Date.now();
    const times: number[] = [];
    const { q } = queue(() => {
      times.push(Date.now() - started);
      return Promise.resolve(times.length === 1 ? { requeueAfterMs: 50 } : undefined);
    });
    q.start();
    q.add('ns/a');
    await expect.poll(() => times.length, { timeout: 2000 }).toBe(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(45);
    await q.shutdown();
  });

  it('keeps the earlier of two delayed adds of one key', async () => {
    const runs: string[] = [];
    const { q } = queue((key) => {
      runs.push(key);
      return Promise.resolve();
    });
    q.start();
    q.addAfter('ns/a', 10_000);
    q.addAfter('ns/a', 10);
    await expect.poll(() => runs.length, { timeout: 2000 }).toBe(1);
    await q.shutdown();
  });

  it('on shutdown waits for keys in flight, then hands out nothing more', async () => {
    const h = gatedHandler();
    const { q } = queue(h.handler, { concurrency: 1 });
    q.start();
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/f', 'fast');
    q.addAfter('ns/c', 5);
    await tick();
    let stopped = false;
    const stopping = q.shutdown().then(() => (stopped = true));
    await tick();
    expect(stopped).toBe(false);
    await h.releaseAll();
    await stopping;
    q.add('ns/d');
    q.add('ns/e', 'fast');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.runs).toEqual(['ns/a']);
  });
});

/** A handler that finishes at once and records the order of runs. */
function recordingHandler(onRun: (key: string) => void = () => {}) {
  const runs: string[] = [];
  const handler = (key: string): Promise<void> => {
    runs.push(key);
    onRun(key);
    return Promise.resolve();
  };
  return { runs, handler };
}

describe('WorkQueue lanes', () => {
  it('hands out fast keys before normal keys that arrived earlier', async () => {
    const h = recordingHandler();
    const { q } = queue(h.handler, { concurrency: 1 });
    q.add('ns/new-1');
    q.add('ns/new-2');
    q.add('ns/available-1', 'fast');
    q.add('ns/available-2', 'fast');
    expect(q.depth).toEqual({ fast: 2, normal: 2 });
    q.start();
    await tick();
    expect(h.runs).toEqual(['ns/available-1', 'ns/available-2', 'ns/new-1', 'ns/new-2']);
    await q.shutdown();
  });

  it('moves a waiting normal key to the fast lane, and keeps a fast key fast', async () => {
    const h = recordingHandler();
    const { q } = queue(h.handler, { concurrency: 1 });
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/b', 'fast');
    q.add('ns/c', 'fast');
    q.add('ns/c');
    expect(q.depth).toEqual({ fast: 2, normal: 1 });
    q.start();
    await tick();
    expect(h.runs).toEqual(['ns/b', 'ns/c', 'ns/a']);
    await q.shutdown();
  });

  it('serves a normal key within every FAST_KEYS_PER_NORMAL + 1 keys, however many fast keys come', async () => {
    let fresh = 0;
    const storm = recordingHandler(() => {
      // Each run brings a new fast key: without the lane rule the normal keys would never run.
      if (fresh < 5 * FAST_KEYS_PER_NORMAL) q.add(`ns/fast-${fresh++}`, 'fast');
    });
    const { q } = queue(storm.handler, { concurrency: 1 });
    q.add('ns/new-1');
    q.add('ns/new-2');
    q.add(`ns/fast-${fresh++}`, 'fast');
    q.start();
    await tick();
    expect(storm.runs.indexOf('ns/new-1')).toBe(FAST_KEYS_PER_NORMAL);
    expect(storm.runs.indexOf('ns/new-2')).toBe(2 * FAST_KEYS_PER_NORMAL + 1);
    expect(storm.runs).toHaveLength(fresh + 2);
    await q.shutdown();
  });

  it('reruns a key added during its processing once, in the faster lane it was added to', async () => {
    const h = gatedHandler();
    const { q } = queue(h.handler, { concurrency: 1 });
    q.start();
    q.add('ns/a');
    await tick();
    q.add('ns/b');
    q.add('ns/a');
    q.add('ns/a', 'fast');
    q.add('ns/a');
    expect(q.depth).toEqual({ fast: 1, normal: 1 });
    await h.releaseAll();
    expect(h.runs).toEqual(['ns/a', 'ns/a']);
    await h.releaseAll();
    await h.releaseAll();
    expect(h.runs).toEqual(['ns/a', 'ns/a', 'ns/b']);
    await q.shutdown();
  });

  it('puts a delayed add in the normal lane, behind fast keys', async () => {
    const h = recordingHandler();
    const { q } = queue(h.handler, { concurrency: 1 });
    q.addAfter('ns/retried', 5);
    await expect.poll(() => q.depth, { timeout: 2000 }).toEqual({ fast: 0, normal: 1 });
    q.add('ns/available', 'fast');
    q.start();
    await tick();
    expect(h.runs).toEqual(['ns/available', 'ns/retried']);
    await q.shutdown();
  });
});
