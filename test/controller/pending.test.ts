import { describe, expect, it } from 'vitest';
import { PendingWrites } from '../../src/controller/pending.ts';

describe('PendingWrites', () => {
  it('holds back a repeat of a write the cache has not caught up with', () => {
    const pending = new PendingWrites(10_000);
    pending.record('Deployment/ns/a', 'h1');
    const wait = pending.waitMs('Deployment/ns/a', 'h1', false);
    expect(wait).toBeGreaterThan(9_000);
    expect(wait).toBeLessThanOrEqual(10_000);
  });

  it('lets the write go once the cache caught up, for a new digest, or for another key', () => {
    const pending = new PendingWrites(10_000);
    pending.record('k', 'h1');
    expect(pending.waitMs('k', 'h2', false)).toBeUndefined();
    pending.record('k', 'h1');
    expect(pending.waitMs('k', 'h1', true)).toBeUndefined();
    // Caught up once is enough: a later edit by someone else is not held back.
    expect(pending.waitMs('k', 'h1', false)).toBeUndefined();
    expect(pending.waitMs('other', 'h1', false)).toBeUndefined();
  });

  it('gives up waiting after its time to live', async () => {
    const pending = new PendingWrites(20);
    pending.record('k', 'h1');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(pending.waitMs('k', 'h1', false)).toBeUndefined();
  });
});
