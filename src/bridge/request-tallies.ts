/**
 * The bridge's request count and request duration, kept as plain numbers per request and
 * handed to prom-client only when /metrics is scraped. prom-client's `inc` and `observe` hash
 * and validate their labels on every call, some 400 bytes per request; a request here is two
 * map look-ups and a few additions. The scraped text is the one prom-client's own Counter and
 * Histogram would give for the same requests (test/bridge/request-tallies.test.ts holds both
 * side by side).
 */

import { Counter, type Metric, type Registry } from 'prom-client';

interface CounterHelp {
  name: string;
  help: string;
}

interface HistogramHelp extends CounterHelp {
  /** Upper bounds of the buckets, ascending, as prom-client's `buckets`. */
  buckets: readonly number[];
}

/** One (method, outcome) pair's count, in the order the pairs were first seen. */
interface OutcomeTally {
  readonly method: string;
  readonly outcome: string;
  count: number;
}

/** One method's durations. */
interface DurationTally {
  readonly method: string;
  /** Requests per bucket, not cumulative; one above every bound is counted in none. */
  readonly perBucket: number[];
  sum: number;
  count: number;
}

export class RequestTallies {
  readonly #outcomes = new Map<string, Map<string, OutcomeTally>>();
  /** First seen first, as prom-client lists label sets. */
  readonly #outcomeOrder: OutcomeTally[] = [];
  readonly #durations = new Map<string, DurationTally>();
  readonly #bounds: readonly number[];

  constructor(registry: Registry, requests: CounterHelp, duration: HistogramHelp) {
    this.#bounds = duration.buckets;
    const outcomeOrder = this.#outcomeOrder;
    new Counter({
      ...requests,
      labelNames: ['method', 'outcome'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { method, outcome, count } of outcomeOrder) this.inc({ method, outcome }, count);
      },
    });
    // prom-client has no way to set a histogram's buckets but one observation at a time, so
    // the histogram is a metric of our own that answers `get` as prom-client's Histogram does.
    // The cast: `registerMetric` is typed for prom-client's own classes, but the registry
    // reads only `name` and `get` (and `reset` for `resetMetrics`); scripts/metrics-docs.ts
    // reads `type` and `labelNames` as well.
    registry.registerMetric(this.#histogram(duration) as unknown as Metric);
  }

  record(method: string, outcome: string, seconds: number): void {
    this.#countOutcome(method, outcome);
    this.#addDuration(method, seconds);
  }

  #countOutcome(method: string, outcome: string): void {
    let byOutcome = this.#outcomes.get(method);
    if (byOutcome === undefined)
      this.#outcomes.set(method, (byOutcome = new Map<string, OutcomeTally>()));
    const tally = byOutcome.get(outcome);
    if (tally !== undefined) {
      tally.count++;
      return;
    }
    const first = { method, outcome, count: 1 };
    byOutcome.set(outcome, first);
    this.#outcomeOrder.push(first);
  }

  #addDuration(method: string, seconds: number): void {
    let tally = this.#durations.get(method);
    if (tally === undefined) {
      tally = { method, perBucket: this.#bounds.map(() => 0), sum: 0, count: 0 };
      this.#durations.set(method, tally);
    }
    const bucket = firstBoundAtLeast(this.#bounds, seconds);
    if (bucket !== -1) tally.perBucket[bucket]!++;
    tally.sum += seconds;
    tally.count++;
  }

  #histogram({ name, help }: HistogramHelp) {
    const about = { name, help, type: 'histogram', aggregator: 'sum' } as const;
    return {
      ...about,
      labelNames: ['method'],
      get: () => {
        const values = [...this.#durations.values()].flatMap((tally) =>
          histogramLines(name, this.#bounds, tally),
        );
        return Promise.resolve({ ...about, values });
      },
      // Registry.resetMetrics resets every metric, the counter included, which then refills
      // from these tallies at the next scrape: so this clears both.
      reset: () => {
        this.#outcomes.clear();
        this.#outcomeOrder.length = 0;
        this.#durations.clear();
      },
    };
  }
}

/** The index of the first bound at or above `value`, -1 if none: prom-client's `le` rule. */
function firstBoundAtLeast(bounds: readonly number[], value: number): number {
  for (let i = 0; i < bounds.length; i++) if (value <= bounds[i]!) return i;
  return -1;
}

/** The lines of one label set, in prom-client's order: buckets, +Inf, _sum, _count. */
function histogramLines(name: string, bounds: readonly number[], tally: DurationTally) {
  const method = tally.method;
  let below = 0;
  const lines = bounds.map((le, i) => {
    below += tally.perBucket[i]!;
    return { metricName: `${name}_bucket`, labels: { le, method }, value: below };
  });
  return [
    ...lines,
    { metricName: `${name}_bucket`, labels: { le: '+Inf', method }, value: tally.count },
    { metricName: `${name}_sum`, labels: { method }, value: tally.sum },
    { metricName: `${name}_count`, labels: { method }, value: tally.count },
  ];
}
