import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/kube/client.ts';
import { LEASE, collectionPath, type KubeObject } from '../../src/kube/resources.ts';
import {
  LeaderElector,
  microTime,
  type AttemptTrace,
  type ElectionEnd,
  type LeaseSpec,
} from '../../src/kube/leader.ts';
import { FakeClient } from '../support/fake-client.ts';
import { testLogger } from '../support/log.ts';

const LEASES = collectionPath(LEASE, 'ns');
const TIMING = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

interface Candidate {
  elector: LeaderElector;
  stop: () => void;
  ended: Promise<ElectionEnd>;
  led: () => boolean;
}

const running: Candidate[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) {
    c.stop();
    await c.ended;
  }
});

function candidate(
  client: KubeClient,
  identity: string,
  stopWork: () => Promise<void> = () => Promise.resolve(),
  log: Logger = testLogger(),
  timing = TIMING,
): Candidate {
  const elector = new LeaderElector({
    client,
    namespace: 'ns',
    name: 'mcp-operator',
    identity,
    log,
    ...timing,
  });
  const abort = new AbortController();
  let led = false;
  const ended = elector.run(abort.signal, {
    start: () => (led = true),
    stop: stopWork,
  });
  const c = { elector, stop: () => abort.abort(), ended, led: () => led };
  running.push(c);
  return c;
}

/** A client that can be cut off from the API server, as a partitioned node would be. */
function partitionable(inner: KubeClient) {
  let cut = false;
  const client: KubeClient = {
    request: (req) => (cut ? Promise.reject(new Error('network unreachable')) : inner.request(req)),
    watch: (req, onEvent) => inner.watch(req, onEvent),
    close: () => inner.close(),
  };
  return { client, cut: () => (cut = true) };
}

type AttemptLine = AttemptTrace & { msg: string; identity: string };

const summary = (line: AttemptLine | undefined) => ({
  outcome: line?.outcome,
  holder: line?.holder,
  newRecord: line?.newRecord,
  wrote: line?.writeMs !== undefined,
});

const leaseSpec = (client: FakeClient): LeaseSpec | undefined => {
  const lease: (KubeObject & { spec?: LeaseSpec }) | undefined = client.objects
    .get(LEASES)
    ?.get('mcp-operator');
  return lease?.spec;
};

describe('LeaderElector', () => {
  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe('2026-01-02T03:04:05.678000Z');
  });

  it('creates the Lease, leads, and keeps a second candidate waiting while it renews', async () => {
    const client = new FakeClient(LEASES);
    const a = candidate(client, 'a');
    await expect.poll(() => a.led()).toBe(true);
    const b = candidate(client, 'b');
    await new Promise((resolve) => setTimeout(resolve, TIMING.leaseDurationMs * 2));
    expect(b.led()).toBe(false);
    expect(a.elector.isLeader).toBe(true);
    expect(leaseSpec(client)).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1 });
    expect(leaseSpec(client)?.leaseTransitions).toBe(0);
  });

  it('lets exactly one of two simultaneous candidates lead', async () => {
    const client = new FakeClient(LEASES);
    const a = candidate(client, 'a');
    const b = candidate(client, 'b');
    await expect.poll(() => a.led() || b.led()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(a.elector.isLeader !== b.elector.isLeader).toBe(true);
  });

  it('releases on shutdown so that a standby takes over without waiting for expiry', async () => {
    const client = new FakeClient(LEASES);
    const a = candidate(client, 'a');
    await expect.poll(() => a.led()).toBe(true);
    const b = candidate(client, 'b');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const released = Date.now();
    a.stop();
    expect(await a.ended).toBe('stopped');
    expect(a.elector.isLeader).toBe(false);
    await expect.poll(() => b.led()).toBe(true);
    expect(Date.now() - released).toBeLessThan(TIMING.leaseDurationMs);
    expect(leaseSpec(client)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('logs every attempt at debug level: what it saw, and how long its requests took', async () => {
    const lines: AttemptLine[] = [];
    const capture = (identity: string) =>
      pino(
        { level: 'debug' },
        { write: (line: string) => lines.push(JSON.parse(line) as AttemptLine) },
      ).child({ identity });
    const attempts = (identity: string) =>
      lines.filter((l) => l.msg === 'lease attempt' && l.identity === identity);
    const client = new FakeClient(LEASES);
    const a = candidate(client, 'a', undefined, capture('a'));
    await expect.poll(() => a.led()).toBe(true);
    const b = candidate(client, 'b', undefined, capture('b'));
    await expect.poll(() => attempts('b').length).toBeGreaterThan(1);
    a.stop();
    await expect.poll(() => b.led()).toBe(true);
    const [acquired, renewed] = attempts('a');
    const held = attempts('b')[0];
    // a released the Lease: b's watch saw the release first, and its next attempt took it.
    const taken = attempts('b').find((l) => l.outcome === 'acquired');
    expect([acquired, renewed, held, taken].map(summary)).toEqual([
      { outcome: 'acquired', holder: undefined, newRecord: undefined, wrote: true },
      // Its own last write is the record it reads back.
      { outcome: 'renewed', holder: 'a', newRecord: false, wrote: true },
      { outcome: 'held', holder: 'a', newRecord: true, wrote: false },
      { outcome: 'acquired', holder: '', newRecord: false, wrote: true },
    ]);
    for (const line of [acquired, renewed, held, taken]) {
      expect(Math.abs(line!.at - Date.now())).toBeLessThan(10_000);
      expect(line!.getMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('steps down when it cannot renew, and a standby takes over after the lease expires', async () => {
    const client = new FakeClient(LEASES);
    const cutOff = partitionable(client);
    const a = candidate(cutOff.client, 'a');
    await expect.poll(() => a.led()).toBe(true);
    const b = candidate(client, 'b');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const cut = Date.now();
    cutOff.cut();
    expect(await a.ended).toBe('lost');
    const steppedDown = Date.now() - cut;
    // The last renewal happened up to one retry period before the cut.
    expect(steppedDown).toBeGreaterThanOrEqual(TIMING.renewDeadlineMs - TIMING.retryPeriodMs);
    await expect.poll(() => b.led(), { timeout: 3000 }).toBe(true);
    // The old leader gave up before the new one could start: never two leaders at once.
    expect(Date.now() - cut).toBeGreaterThan(steppedDown);
    expect(Date.now() - cut).toBeGreaterThanOrEqual(TIMING.leaseDurationMs - TIMING.retryPeriodMs);
  });

  it('when it loses the Lease, ends at once and leaves the work in flight to be cut off', async () => {
    // The leader's passes in flight never finish (an API server that answers them slowly):
    // waiting for them would keep it writing after a standby took over.
    let stopCalled = false;
    const client = new FakeClient(LEASES);
    const cutOff = partitionable(client);
    const a = candidate(cutOff.client, 'a', () => {
      stopCalled = true;
      return new Promise<void>(() => undefined);
    });
    await expect.poll(() => a.led()).toBe(true);
    const cut = Date.now();
    cutOff.cut();
    expect(await a.ended).toBe('lost');
    expect(stopCalled).toBe(true);
    expect(Date.now() - cut).toBeLessThan(TIMING.leaseDurationMs);
  });

  describe('a standby that polls seldom', () => {
    // Polls every 3 to 6.6 s, against a 1 s lease: without its watch, it would see the last
    // renewal and the release seconds late.
    const SLOW_POLLS = { ...TIMING, retryPeriodMs: 3000 };

    it('takes over a lease duration after the last renewal it watched', async () => {
      const client = new FakeClient(LEASES);
      const cutOff = partitionable(client);
      const a = candidate(cutOff.client, 'a');
      await expect.poll(() => a.led()).toBe(true);
      const b = candidate(client, 'b', undefined, undefined, SLOW_POLLS);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cut = Date.now();
      cutOff.cut();
      await expect.poll(() => b.led(), { timeout: 5000 }).toBe(true);
      // The last renewal came at most one of a's retry periods before the cut.
      expect(Date.now() - cut).toBeGreaterThanOrEqual(
        TIMING.leaseDurationMs - TIMING.retryPeriodMs,
      );
      expect(Date.now() - cut).toBeLessThan(TIMING.leaseDurationMs + 1000);
      expect(await a.ended).toBe('lost');
    });

    it('takes over as soon as the leader releases the Lease', async () => {
      const client = new FakeClient(LEASES);
      const a = candidate(client, 'a');
      await expect.poll(() => a.led()).toBe(true);
      const b = candidate(client, 'b', undefined, undefined, SLOW_POLLS);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const released = Date.now();
      a.stop();
      expect(await a.ended).toBe('stopped');
      await expect.poll(() => b.led(), { timeout: 5000 }).toBe(true);
      expect(Date.now() - released).toBeLessThan(1000);
    });

    it('still takes over by polling when it may not watch', async () => {
      const client = new FakeClient(LEASES);
      const refused: KubeClient = {
        request: (req) => client.request(req),
        watch: () => Promise.reject(new Error('leases is forbidden: cannot watch')),
        close: () => client.close(),
      };
      const a = candidate(client, 'a');
      await expect.poll(() => a.led()).toBe(true);
      const b = candidate(refused, 'b');
      a.stop();
      await expect.poll(() => b.led(), { timeout: 5000 }).toBe(true);
    });
  });
});
