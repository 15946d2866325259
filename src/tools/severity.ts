/**
 * The order of drift severities (docs/judging.md): description-only < compatible < widening <
 * breaking. One order for tools, prompts and resources, and for a server's drift as a whole.
 */

import type { DriftSeverity } from '../api/v1alpha1/mcpserver.ts';
import { DRIFT_SEVERITIES } from '../tool-record.ts';

/** Higher is more severe; DRIFT_SEVERITIES lists them most severe first. */
const RANK = Object.fromEntries(
  DRIFT_SEVERITIES.map((severity, i) => [severity, DRIFT_SEVERITIES.length - i]),
) as Record<DriftSeverity, number>;

/** Whether `severity` is at least as severe as `floor`. */
export function atLeast(severity: DriftSeverity, floor: DriftSeverity): boolean {
  return RANK[severity] >= RANK[floor];
}

/** The most severe of `severities`; undefined for none. */
export function highest(severities: Iterable<DriftSeverity>): DriftSeverity | undefined {
  let top: DriftSeverity | undefined;
  for (const severity of severities) {
    if (top === undefined || RANK[severity] > RANK[top]) top = severity;
  }
  return top;
}
