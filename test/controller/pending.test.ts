import { describe, expect, it } from 'vitest';
import { PendingWrites } from '../../src/controller/pending.ts';

describe('PendingWrites', () => {
  it('holds back a repeat of a write the cache has not seen yet', () => {
    const pending = new PendingWrites(10_000);
    pending.record('Deployment/ns/a', 'h1', '42');
    const wait = pending.waitMs('Deployment/ns/a', 'h1', '41');
    expect(wait).toBeGreaterThan(9_000);
    expect(wait).toBeLessThanOrEqual(10_000);
  });

  it('lets the write go once the cache caught up, for a new digest, or for another key', () => {
    const pending = new PendingWrites(10_000);
    pending.record('k', 'h1', '42');
    expect(pending.waitMs('k', 'h2', '41')).toBeUndefined();
    pending.record('k', 'h1', '42');
    expect(pending.waitMs('k', 'h1', '42')).toBeUndefined();
    // Caught up once is enough: a later edit (new resourceVersion) is not held back.
    expect(pending.waitMs('k', 'h1', '43')).toBeUndefined();
    expect(pending.waitMs('other', 'h1', '1')).toBeUndefined();
  });

  it('gives up waiting after its time to live', async () => {
    const pending = new PendingWrites(20);
    pending.record('k', 'h1', '42');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(pending.waitMs('k', 'h1', '41')).toBeUndefined();
  });
});
