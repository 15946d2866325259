/**
 * When each server is discovered. It does no I/O itself: it calls the injected
 * `discover(key, signal)` and decides only when, how many at once, and what happens after.
 *
 * - Every key runs at its interval, jittered so that servers added together drift apart.
 * - `trigger(key)` runs it as soon as a slot is free (the server became Ready, its spec
 *   changed); a trigger during a run queues one more run right after it, never two at once.
 * - After a failure the next run comes sooner than the interval and backs off exponentially
 *   up to it, so a server that comes back is seen soon and one that stays down costs little.
 * - At most `concurrency` runs at a time, in the order keys became due.
 * - Each run has a hard timeout: the slot is freed when it expires even if `discover` ignores
 *   its signal, so a hung server never delays the others.
 * - `remove(key)` cancels its timer and aborts its run.
 *
 * Time comes from an injectable clock, randomness from an injectable source (tests drive both).
 */

import {
  DEFAULT_FINDING_LEVEL,
  FINDING_LEVELS,
  type FindingLevel,
  levelAtLeast,
} from '../tools/text-findings.ts';
import type { DriftSeverity } from '../api/v1alpha1/mcpserver.ts';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { OperatorError, operatorError } from '../errors.ts';

export interface Clock {
  now(): number;
  setTimer(callback: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(callback, ms) {
    // Unreferenced: a pending discovery never keeps the process alive on its own.
    return setTimeout(callback, ms).unref();
  },
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** What a run found, for the metrics. */
export interface RunOutcome {
  toolCount: number;
  /** The drift's severity as a whole; undefined when the tools match the baseline. */
  drift: DriftSeverity | undefined;
  /** Findings on the text the model reads, by level; none when absent. */
  textFindings?: Partial<Record<FindingLevel, number>>;
  /** The server's spec.tools.textFindings.alarmLevel: levels at or above it alarm. */
  textFindingAlarm?: FindingLevel;
}

export interface ServerSettings {
  intervalMs: number;
  /** The run's own budget; the scheduler aborts it `graceMs` later. */
  timeoutMs: number;
}

export interface SchedulerOptions {
  /** Discover one server; reject to signal failure (it records the error in status itself). */
  discover: (key: string, signal: AbortSignal) => Promise<RunOutcome>;
  concurrency?: number;
  /** Interval spread: each delay is the interval times 1 ± jitter. */
  jitter?: number;
  /** First retry delay after a failure; doubles per failure up to the interval. */
  retryMs?: number;
  /** How long after its timeout a run is abandoned (its own deadline should fire first). */
  graceMs?: number;
  clock?: Clock;
  random?: () => number;
  registry?: Registry;
  /** Told about every failed run (for logs); never throws into the scheduler. */
  onFailure?: (key: string, error: unknown) => void;
}

export const SCHEDULER_DEFAULTS = {
  concurrency: 10,
  jitter: 0.1,
  retryMs: 10_000,
  graceMs: 2_000,
};

interface Entry {
  key: string;
  settings: ServerSettings;
  timer: unknown;
  queued: boolean;
  run: AbortController | undefined;
  /** A trigger arrived during the run. */
  again: boolean;
  failures: number;
}

export class DiscoveryScheduler {
  readonly #options: Required<Omit<SchedulerOptions, 'registry' | 'onFailure'>> &
    Pick<SchedulerOptions, 'onFailure'>;
  readonly #entries = new Map<string, Entry>();
  /** Entries due, in order; a Set, so that removing one is O(1) with thousands queued. */
  readonly #ready = new Set<Entry>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #metrics: SchedulerMetrics | undefined;

  constructor(options: SchedulerOptions) {
    this.#options = {
      ...SCHEDULER_DEFAULTS,
      clock: systemClock,
      random: Math.random,
      ...definedOnly(options),
      discover: options.discover,
    };
    this.#metrics = options.registry && new SchedulerMetrics(options.registry, this);
  }

  /** Add a server (it runs right away) or change its settings (used from its next run on). */
  upsert(key: string, settings: ServerSettings): void {
    this.#metrics?.configured(key, settings);
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      entry.settings = settings;
      return;
    }
    const added: Entry = {
      key,
      settings,
      timer: undefined,
      queued: false,
      run: undefined,
      again: false,
      failures: 0,
    };
    this.#entries.set(key, added);
    this.#enqueue(added);
  }

  /** Run as soon as a slot is free. */
  trigger(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.queued) return;
    if (entry.run !== undefined) {
      entry.again = true;
      return;
    }
    this.#enqueue(entry);
  }

  remove(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#cancelTimer(entry);
    this.#ready.delete(entry);
    entry.run?.abort(operatorError('MCPOP_DISCOVERY_CANCELLED', key));
    this.#metrics?.forget(key);
  }

  /** Remove every server and wait until no run holds a slot. */
  async stop(): Promise<void> {
    for (const key of [...this.#entries.keys()]) this.remove(key);
    await Promise.all(this.#inFlight);
  }

  get queued(): number {
    return this.#ready.size;
  }

  get running(): number {
    return this.#inFlight.size;
  }

  #enqueue(entry: Entry): void {
    this.#cancelTimer(entry);
    entry.queued = true;
    this.#ready.add(entry);
    this.#pump();
  }

  #pump(): void {
    while (this.#inFlight.size < this.#options.concurrency) {
      const entry = this.#ready.values().next().value;
      if (entry === undefined) return;
      this.#ready.delete(entry);
      entry.queued = false;
      const run = this.#start(entry);
      this.#inFlight.add(run);
      void run.finally(() => {
        this.#inFlight.delete(run);
        this.#pump();
      });
    }
  }

  async #start(entry: Entry): Promise<void> {
    const { clock, graceMs } = this.#options;
    const controller = new AbortController();
    entry.run = controller;
    const started = clock.now();
    const { timeoutMs } = entry.settings;
    const deadline = clock.setTimer(() => {
      controller.abort(operatorError('MCPOP_DISCOVERY_TIMEOUT', entry.key, 'discovery', timeoutMs));
    }, timeoutMs + graceMs);
    let result: { outcome: RunOutcome } | { error: unknown };
    try {
      const outcome = await Promise.race([
        Promise.resolve().then(() => this.#options.discover(entry.key, controller.signal)),
        rejectOnAbort(controller.signal),
      ]);
      result = { outcome };
    } catch (error) {
      result = { error };
    } finally {
      clock.clearTimer(deadline);
    }
    const seconds = (clock.now() - started) / 1000;
    // A removed server's run is abandoned: nothing to record, nothing to schedule.
    if (this.#entries.get(entry.key) !== entry || entry.run !== controller) return;
    entry.run = undefined;
    this.#record(entry, seconds, result);
    this.#scheduleNext(entry);
  }

  #record(entry: Entry, seconds: number, result: { outcome: RunOutcome } | { error: unknown }) {
    if ('outcome' in result) {
      entry.failures = 0;
      this.#metrics?.succeeded(entry.key, seconds, result.outcome);
      return;
    }
    entry.failures++;
    this.#metrics?.failed(seconds, result.error);
    try {
      this.#options.onFailure?.(entry.key, result.error);
    } catch {
      // A broken logging hook must not stop the schedule.
    }
  }

  #scheduleNext(entry: Entry): void {
    if (entry.again) {
      entry.again = false;
      this.#enqueue(entry);
      return;
    }
    entry.timer = this.#options.clock.setTimer(() => {
      entry.timer = undefined;
      if (this.#entries.get(entry.key) === entry) this.#enqueue(entry);
    }, this.#delay(entry));
  }

  /** The jittered interval, or after failures min(retry · 2^(failures-1), interval). */
  #delay(entry: Entry): number {
    const { jitter, random, retryMs } = this.#options;
    const interval = entry.settings.intervalMs;
    const base =
      entry.failures === 0 ? interval : Math.min(retryMs * 2 ** (entry.failures - 1), interval);
    return base * (1 - jitter + 2 * jitter * random());
  }

  #cancelTimer(entry: Entry): void {
    if (entry.timer === undefined) return;
    this.#options.clock.clearTimer(entry.timer);
    entry.timer = undefined;
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/**
 * Discovery metrics (names as in src/controller/metrics.ts: `mcp_operator_` prefix, base units).
 * Per-server series carry the server key (`namespace/name`) as their one label, so there is one
 * series per MCPServer (a drifted one has one more, labelled by one of four severities); tool
 * names are never labels.
 */
class SchedulerMetrics {
  readonly #duration: Histogram<'result'>;
  readonly #errors: Counter<'code'>;
  readonly #tools: Gauge<'server'>;
  readonly #interval: Gauge<'server'>;
  readonly #drift: Gauge<'server' | 'severity'>;
  readonly #textFindings: Gauge<'server' | 'level' | 'alarm'>;
  readonly #drifted = new Map<string, DriftSeverity>();

  constructor(registry: Registry, scheduler: DiscoveryScheduler) {
    const registers = [registry];
    const drifted = this.#drifted;
    this.#duration = new Histogram({
      name: 'mcp_operator_discovery_duration_seconds',
      help: 'Time of one discovery run, by result (success, failure).',
      labelNames: ['result'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.#errors = new Counter({
      name: 'mcp_operator_discovery_errors_total',
      help: 'Failed discovery runs, by error code.',
      labelNames: ['code'],
      registers,
    });
    this.#tools = new Gauge({
      name: 'mcp_operator_server_tools',
      help: 'Tools the server listed at its last successful discovery.',
      labelNames: ['server'],
      registers,
    });
    this.#interval = new Gauge({
      name: 'mcp_operator_discovery_interval_seconds',
      help: "The server's discovery interval (spec.discovery.interval): alerts count missed runs in it.",
      labelNames: ['server'],
      registers,
    });
    this.#drift = new Gauge({
      name: 'mcp_operator_server_drift',
      help: "1 while the server drifts from its approved tools, by the drift's worst severity (breaking, widening, compatible, description-only); absent without drift.",
      labelNames: ['server', 'severity'],
      registers,
    });
    this.#textFindings = new Gauge({
      name: 'mcp_operator_server_text_findings',
      help: 'Findings on the text the model reads (descriptions, titles, names, instructions) at the last successful discovery, by level (critical, warning, info), with alarm="true" for the levels at or above the server\'s spec.tools.textFindings.alarmLevel; absent at a level without findings.',
      labelNames: ['server', 'level', 'alarm'],
      registers,
    });
    new Gauge({
      name: 'mcp_operator_drifted_servers',
      help: 'Servers whose tools differ from their approved baseline.',
      registers,
      collect() {
        this.set(drifted.size);
      },
    });
    new Gauge({
      name: 'mcp_operator_discovery_in_flight',
      help: 'Discovery runs in progress.',
      registers,
      collect() {
        this.set(scheduler.running);
      },
    });
    new Gauge({
      name: 'mcp_operator_discovery_queued',
      help: 'Servers due for discovery, waiting for a free slot.',
      registers,
      collect() {
        this.set(scheduler.queued);
      },
    });
  }

  configured(key: string, settings: ServerSettings): void {
    this.#interval.set({ server: key }, settings.intervalMs / 1000);
  }

  succeeded(key: string, seconds: number, outcome: RunOutcome): void {
    this.#duration.observe({ result: 'success' }, seconds);
    this.#tools.set({ server: key }, outcome.toolCount);
    this.#setDrift(key, outcome.drift);
    this.#setTextFindings(
      key,
      outcome.textFindings ?? {},
      outcome.textFindingAlarm ?? DEFAULT_FINDING_LEVEL,
    );
  }

  /** One series per level found, labelled with whether it alarms; the other label's is removed. */
  #setTextFindings(
    key: string,
    counts: Partial<Record<FindingLevel, number>>,
    alarmLevel: FindingLevel,
  ): void {
    for (const level of FINDING_LEVELS) {
      const count = counts[level] ?? 0;
      const alarm = levelAtLeast(level, alarmLevel);
      this.#textFindings.remove({ server: key, level, alarm: String(!alarm) });
      if (count > 0) this.#textFindings.set({ server: key, level, alarm: String(alarm) }, count);
      else this.#textFindings.remove({ server: key, level, alarm: String(alarm) });
    }
  }

  #setDrift(key: string, severity: DriftSeverity | undefined): void {
    const before = this.#drifted.get(key);
    if (before === severity) return;
    if (before !== undefined) this.#drift.remove({ server: key, severity: before });
    if (severity === undefined) {
      this.#drifted.delete(key);
      return;
    }
    this.#drifted.set(key, severity);
    this.#drift.set({ server: key, severity }, 1);
  }

  failed(seconds: number, error: unknown): void {
    this.#duration.observe({ result: 'failure' }, seconds);
    this.#errors.inc({ code: error instanceof OperatorError ? error.code : 'UNEXPECTED' });
  }

  forget(key: string): void {
    this.#tools.remove({ server: key });
    this.#interval.remove({ server: key });
    this.#setDrift(key, undefined);
    this.#setTextFindings(key, {}, DEFAULT_FINDING_LEVEL);
  }
}
