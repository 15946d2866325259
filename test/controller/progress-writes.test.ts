import { describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/core-v1.ts';
import {
  isFirstRollout,
  isProgressOnly,
  ProgressWrites,
} from '../../src/controller/progress-writes.ts';

const ready = (status: Condition['status'], reason: string, message: string): Condition => ({
  type: 'Ready',
  status,
  reason,
  message,
  observedGeneration: 1,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});
const discovered: Condition = {
  type: 'Discovered',
  status: 'False',
  reason: 'Disabled',
  message: 'Discovery is disabled.',
  observedGeneration: 1,
  lastTransitionTime: '2026-01-01T00:00:00Z',
};
const rollingOut = (message: string, others: Condition[] = [discovered]) => ({
  observedGeneration: 1,
  conditions: [ready('False', 'Progressing', message), ...others],
});

describe('isProgressOnly', () => {
  it('is a Progressing status that only moves on within the same generation', () => {
    const current = rollingOut(
      'Waiting for the Deployment controller to act on the latest change.',
    );
    expect(
      isProgressOnly(current, rollingOut('Rolling out: 1/1 pods updated, 0/1 available.')),
    ).toBe(true);
  });

  it('is not the first word on a server or a generation, Ready, a failure, or other news', () => {
    const next = rollingOut('Rolling out: 1/1 pods updated, 0/1 available.');
    expect(isProgressOnly(undefined, next)).toBe(false);
    expect(isProgressOnly({ ...next, observedGeneration: 0 }, next)).toBe(false);
    const available = { observedGeneration: 1, conditions: [ready('True', 'Available', '1/1')] };
    expect(isProgressOnly(available, next)).toBe(false);
    expect(isProgressOnly(next, available)).toBe(false);
    const crashing = {
      observedGeneration: 1,
      conditions: [ready('False', 'CrashLoopBackOff', 'keeps crashing'), discovered],
    };
    expect(isProgressOnly(next, crashing)).toBe(false);
    const discoveredNews = rollingOut('Rolling out.', [{ ...discovered, status: 'True' }]);
    expect(isProgressOnly(next, discoveredNews)).toBe(false);
  });
});

describe('isFirstRollout', () => {
  it("is a new server's first status while its first rollout is under way, and nothing later", () => {
    const next = rollingOut('Waiting for the Deployment controller to act on the latest change.');
    expect(isFirstRollout(undefined, next)).toBe(true);
    expect(isFirstRollout({}, next)).toBe(true);
    expect(isFirstRollout(next, next)).toBe(false);
    const available = { observedGeneration: 1, conditions: [ready('True', 'Available', '1/1')] };
    expect(isFirstRollout(undefined, available)).toBe(false);
    const crashing = { observedGeneration: 1, conditions: [ready('False', 'ApplyFailed', 'no')] };
    expect(isFirstRollout(undefined, crashing)).toBe(false);
  });
});

describe('ProgressWrites', () => {
  it("holds a new server's first status for the interval from the first time it is asked", () => {
    const writes = new ProgressWrites(5_000);
    expect(writes.firstHoldMs('ns/a', 1_000)).toBe(5_000);
    expect(writes.firstHoldMs('ns/a', 4_000)).toBe(2_000);
    expect(writes.firstHoldMs('ns/a', 6_500)).toBe(0);
    writes.written('ns/a', true, 6_500);
    // Written: a server asked again (its status not in the cache yet) starts afresh.
    expect(writes.firstHoldMs('ns/a', 7_000)).toBe(5_000);
    writes.forget('ns/a');
    expect(writes.firstHoldMs('ns/a', 8_000)).toBe(5_000);
  });

  it('holds a server for the interval after a Progressing write, not after another one', () => {
    const writes = new ProgressWrites(5_000);
    expect(writes.holdMs('ns/a', 1_000)).toBe(0);
    writes.written('ns/a', true, 1_000);
    expect(writes.holdMs('ns/a', 2_000)).toBe(4_000);
    expect(writes.holdMs('ns/b', 2_000)).toBe(0);
    expect(writes.holdMs('ns/a', 6_000)).toBe(0);
    writes.written('ns/a', false, 6_500);
    expect(writes.holdMs('ns/a', 7_000)).toBe(0);
  });

  it('forgets a server that is gone', () => {
    const writes = new ProgressWrites(5_000);
    writes.written('ns/a', true, 1_000);
    writes.forget('ns/a');
    expect(writes.holdMs('ns/a', 1_500)).toBe(0);
  });
});
