/**
 * The Node.js process metrics (prom-client's defaults) that the operator and the bridge both
 * export, under their own prefix.
 */
import { type Registry, collectDefaultMetrics } from 'prom-client';

/**
 * prom-client also exports `nodejs_active_{handles,requests,resources}_total`: gauges with a
 * counter's suffix, which rate() and the naming guide would take for counters. Each is the sum
 * of the gauge of the same name without `_total` (by `type`), so dropping them loses nothing:
 * `sum(<prefix>nodejs_active_handles)` is the total.
 */
const MISNAMED = ['active_handles_total', 'active_requests_total', 'active_resources_total'];

export function collectProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix });
  for (const name of MISNAMED) registry.removeSingleMetric(`${prefix}nodejs_${name}`);
}
