import { setImmediate as turn } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { OperatorError } from '../../src/errors.ts';
import { operatorError } from '../../src/errors.ts';
import {
  type Clock,
  type RunOutcome,
  type SchedulerOptions,
  DiscoveryScheduler,
} from '../../src/discovery/scheduler.ts';

/** Time is the scheduler's input: the test owns it. */
class FakeClock implements Clock {
  time = 0;
  #timers = new Map<number, { at: number; callback: () => void }>();
  #ids = 0;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, ms: number): number {
    this.#timers.set(++this.#ids, { at: this.time + ms, callback });
    return this.#ids;
  }

  clearTimer(timer: unknown): void {
    this.#timers.delete(timer as number);
  }

  /** Move time forward, firing due timers in order and letting promises settle in between. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await settle();
      const due = [...this.#timers.entries()]
        .filter(([, t]) => t.at <= end)
        .sort(([, a], [, b]) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = end;
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await turn();
}

type Behaviour = 'ok' | 'fail' | 'hang' | 'slow';

/** A discover function whose behaviour per key the test sets, recording every call. */
function harness(options: Partial<SchedulerOptions> = {}) {
  const clock = new FakeClock();
  const behaviour = new Map<string, Behaviour>();
  const calls: { key: string; at: number; signal: AbortSignal }[] = [];
  const registry = new Registry();
  const scheduler = new DiscoveryScheduler({
    clock,
    random: () => 0.5,
    registry,
    discover(key, signal): Promise<RunOutcome> {
      calls.push({ key, at: clock.now(), signal });
      switch (behaviour.get(key) ?? 'ok') {
        case 'ok':
          return Promise.resolve({
            toolCount: 3,
            drift: key.includes('drifted') ? 'description-only' : undefined,
          });
        case 'fail':
          return Promise.reject(operatorError('MCPOP_DISCOVERY_UNREACHABLE', key, 'ECONNREFUSED'));
        case 'hang':
          return new Promise(() => undefined);
        case 'slow':
          return new Promise((resolve) =>
            clock.setTimer(() => resolve({ toolCount: 1, drift: undefined }), 1000),
          );
      }
    },
    ...options,
  });
  const runsOf = (key: string) => calls.filter((c) => c.key === key).map((c) => c.at);
  return { clock, behaviour, calls, registry, scheduler, runsOf };
}

const MIN = 60_000;
const settings = { intervalMs: 5 * MIN, timeoutMs: 30_000 };

describe('DiscoveryScheduler', () => {
  it('runs a new server at once, then every interval with jitter', async () => {
    const { clock, scheduler, runsOf } = harness({ random: () => 1 });
    scheduler.upsert('a', settings);
    await clock.advance(0);
    expect(runsOf('a')).toEqual([0]);
    await clock.advance(12 * MIN);
    // random() = 1 → the interval plus 10 %: 5.5 min between runs.
    expect(runsOf('a')).toEqual([0, 5.5 * MIN, 11 * MIN]);
    await scheduler.stop();
  });

  it('spreads servers with jitter', async () => {
    const { clock, scheduler, runsOf } = harness({ random: () => 0 });
    scheduler.upsert('a', settings);
    await clock.advance(5 * MIN);
    expect(runsOf('a')).toEqual([0, 4.5 * MIN]);
    await scheduler.stop();
  });

  it('never runs more than the concurrency limit at once, and serves keys in order', async () => {
    const { clock, behaviour, scheduler, calls } = harness({ concurrency: 2 });
    for (const key of ['a', 'b', 'c', 'd']) {
      behaviour.set(key, 'slow');
      scheduler.upsert(key, settings);
    }
    await clock.advance(0);
    expect(calls.map((c) => c.key)).toEqual(['a', 'b']);
    expect(scheduler.running).toBe(2);
    expect(scheduler.queued).toBe(2);
    await clock.advance(1000);
    expect(calls.map((c) => `${c.key}@${c.at}`)).toEqual(['a@0', 'b@0', 'c@1000', 'd@1000']);
    await scheduler.stop();
  });

  it('runs a triggered server right away instead of waiting for its interval', async () => {
    const { clock, scheduler, runsOf } = harness();
    scheduler.upsert('a', settings);
    await clock.advance(MIN);
    scheduler.trigger('a');
    await clock.advance(0);
    expect(runsOf('a')).toEqual([0, MIN]);
    await clock.advance(5 * MIN);
    expect(runsOf('a')).toEqual([0, MIN, 6 * MIN]);
    await scheduler.stop();
  });

  it('turns triggers during a run into one more run after it, never two at once', async () => {
    const { clock, behaviour, scheduler, runsOf } = harness();
    behaviour.set('a', 'slow');
    scheduler.upsert('a', settings);
    await clock.advance(100);
    scheduler.trigger('a');
    scheduler.trigger('a');
    await clock.advance(900);
    expect(runsOf('a')).toEqual([0, 1000]);
    expect(scheduler.running).toBe(1);
    await clock.advance(1000);
    expect(runsOf('a')).toEqual([0, 1000]);
    await scheduler.stop();
  });

  it('retries a failing server with exponential backoff up to the interval, and recovers', async () => {
    const { clock, behaviour, scheduler, runsOf } = harness({ retryMs: 10_000 });
    behaviour.set('a', 'fail');
    scheduler.upsert('a', settings);
    await clock.advance(16 * MIN);
    const runs = runsOf('a');
    const gaps = runs.slice(1).map((at, i) => at - (runs[i] ?? 0));
    expect(gaps).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 5 * MIN, 5 * MIN]);
    behaviour.set('a', 'ok');
    scheduler.trigger('a');
    await clock.advance(5 * MIN);
    const last = runsOf('a').slice(-2);
    expect(last[1]! - last[0]!).toBe(5 * MIN);
    await scheduler.stop();
  });

  it('frees the slot of a hung server at its timeout, so the others go on', async () => {
    const failures: unknown[] = [];
    const { clock, behaviour, scheduler, calls, runsOf } = harness({
      concurrency: 1,
      graceMs: 2000,
      onFailure: (_key, error) => failures.push(error),
    });
    behaviour.set('hung', 'hang');
    scheduler.upsert('hung', settings);
    scheduler.upsert('fine', settings);
    await clock.advance(31_000);
    expect(runsOf('fine')).toEqual([]);
    await clock.advance(1000);
    expect(runsOf('fine')).toEqual([32_000]);
    const signal = calls[0]!.signal;
    expect(signal.aborted).toBe(true);
    expect(failures).toHaveLength(1);
    expect((failures[0] as OperatorError).code).toBe('MCPOP_DISCOVERY_TIMEOUT');
    await scheduler.stop();
  });

  it('on removal cancels the timer and aborts the run in progress', async () => {
    const { clock, behaviour, scheduler, calls, runsOf } = harness({ concurrency: 1 });
    behaviour.set('a', 'hang');
    scheduler.upsert('a', settings);
    scheduler.upsert('queued', settings);
    scheduler.upsert('b', settings);
    await clock.advance(0);
    scheduler.remove('queued');
    scheduler.remove('a');
    expect(calls[0]!.signal.reason).toMatchObject({ code: 'MCPOP_DISCOVERY_CANCELLED' });
    await clock.advance(20 * MIN);
    expect(runsOf('a')).toEqual([0]);
    expect(runsOf('queued')).toEqual([]);
    expect(runsOf('b')[0]).toBe(0);
    scheduler.remove('b');
    const before = calls.length;
    await clock.advance(20 * MIN);
    expect(calls.length).toBe(before);
    await scheduler.stop();
  });

  it('uses changed settings from the next run on', async () => {
    const { clock, scheduler, runsOf } = harness();
    scheduler.upsert('a', settings);
    await clock.advance(0);
    scheduler.upsert('a', { ...settings, intervalMs: MIN });
    await clock.advance(5 * MIN);
    await clock.advance(2 * MIN);
    expect(runsOf('a')).toEqual([0, 5 * MIN, 6 * MIN, 7 * MIN]);
    await scheduler.stop();
  });

  it('stops even with a run that ignores its signal', async () => {
    const { clock, behaviour, scheduler } = harness();
    behaviour.set('a', 'hang');
    scheduler.upsert('a', settings);
    await clock.advance(0);
    await scheduler.stop();
    expect(scheduler.running).toBe(0);
  });

  it('exports duration, errors by code, and per server its tools, interval and drift', async () => {
    const { clock, behaviour, scheduler, registry } = harness();
    behaviour.set('down', 'fail');
    scheduler.upsert('ns/drifted-one', settings);
    scheduler.upsert('ns/clean', settings);
    scheduler.upsert('down', settings);
    await clock.advance(0);
    const text = await registry.metrics();
    expect(text).toContain('mcp_operator_discovery_duration_seconds_count{result="success"} 2');
    expect(text).toContain('mcp_operator_discovery_duration_seconds_count{result="failure"} 1');
    expect(text).toContain(
      'mcp_operator_discovery_errors_total{code="MCPOP_DISCOVERY_UNREACHABLE"} 1',
    );
    expect(text).toContain('mcp_operator_server_tools{server="ns/clean"} 3');
    expect(text).toContain('mcp_operator_drifted_servers 1');
    expect(text).toContain('mcp_operator_discovery_interval_seconds{server="ns/clean"} 300');
    expect(text).toContain(
      'mcp_operator_server_drift{server="ns/drifted-one",severity="description-only"} 1',
    );
    expect(text).not.toContain('mcp_operator_server_drift{server="ns/clean"');
    scheduler.remove('ns/drifted-one');
    const after = await registry.metrics();
    expect(after).not.toContain('server="ns/drifted-one"');
    expect(after).toContain('mcp_operator_drifted_servers 0');
    await scheduler.stop();
  });

  it('keeps one drift series per server, moving it when the severity changes', async () => {
    const severities: RunOutcome['drift'][] = ['description-only', 'breaking', undefined];
    const registry = new Registry();
    const clock = new FakeClock();
    const scheduler = new DiscoveryScheduler({
      clock,
      random: () => 0.5,
      registry,
      discover: () => Promise.resolve({ toolCount: 1, drift: severities.shift() }),
    });
    const driftLines = async () =>
      (await registry.metrics())
        .split('\n')
        .filter((l) => l.startsWith('mcp_operator_server_drift{'));
    scheduler.upsert('ns/a', settings);
    await clock.advance(0);
    expect(await driftLines()).toEqual([
      'mcp_operator_server_drift{server="ns/a",severity="description-only"} 1',
    ]);
    await clock.advance(settings.intervalMs);
    expect(await driftLines()).toEqual([
      'mcp_operator_server_drift{server="ns/a",severity="breaking"} 1',
    ]);
    await clock.advance(settings.intervalMs);
    expect(await driftLines()).toEqual([]);
    await scheduler.stop();
  });

  it('labels text findings with whether their level alarms on the server, moving the label when the alarm level does', async () => {
    const outcomes: RunOutcome[] = [
      { toolCount: 1, drift: undefined, textFindings: { warning: 2, info: 1 } },
      {
        toolCount: 1,
        drift: undefined,
        textFindings: { warning: 2, info: 1 },
        textFindingAlarm: 'critical',
      },
      { toolCount: 1, drift: undefined, textFindings: {}, textFindingAlarm: 'info' },
    ];
    const registry = new Registry();
    const clock = new FakeClock();
    const scheduler = new DiscoveryScheduler({
      clock,
      random: () => 0.5,
      registry,
      discover: () => Promise.resolve(outcomes.shift()!),
    });
    const findingLines = async () =>
      (await registry.metrics())
        .split('\n')
        .filter((l) => l.startsWith('mcp_operator_server_text_findings{'))
        .sort();
    scheduler.upsert('ns/a', settings);
    await clock.advance(0);
    // The default alarm level is warning.
    expect(await findingLines()).toEqual([
      'mcp_operator_server_text_findings{server="ns/a",level="info",alarm="false"} 1',
      'mcp_operator_server_text_findings{server="ns/a",level="warning",alarm="true"} 2',
    ]);
    await clock.advance(settings.intervalMs);
    expect(await findingLines()).toEqual([
      'mcp_operator_server_text_findings{server="ns/a",level="info",alarm="false"} 1',
      'mcp_operator_server_text_findings{server="ns/a",level="warning",alarm="false"} 2',
    ]);
    await clock.advance(settings.intervalMs);
    expect(await findingLines()).toEqual([]);
    await scheduler.stop();
  });
});
