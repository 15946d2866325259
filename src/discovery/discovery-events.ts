/**
 * The Events that tell the discovery story in `kubectl describe mcps`: a Warning when drift
 * appears or changes (`DriftDetected`), a Normal one when it clears, a Warning per new
 * discovery failure or invalid baseline, a Normal one when discovery succeeds again. A pure
 * function of the status before and after a write: the reconcile pass records them only once
 * that write went out, so each change is told once.
 */

import { isDeepStrictEqual } from 'node:util';
import type { Condition } from '../api/core-v1.ts';
import {
  ConditionStatus,
  ConditionType,
  DiscoveredReason,
  DriftedReason,
} from '../api/v1alpha1/conditions.ts';
import type { MCPServerStatus } from '../api/v1alpha1/mcpserver.ts';
import type { StatusTextFindings } from '../api/v1alpha1/status.ts';
import { DEFAULT_FINDING_LEVEL, type FindingLevel, levelAtLeast } from '../tools/text-findings.ts';
import type { DiscoveryStatusPart } from './discovery-status.ts';

export const DiscoveryEventReason = {
  Discovered: 'Discovered',
  DiscoveryFailed: 'DiscoveryFailed',
  DriftDetected: 'DriftDetected',
  DriftCleared: 'DriftCleared',
  BaselineInvalid: 'BaselineInvalid',
  TextFindings: 'TextFindings',
} as const;

export interface DiscoveryEvent {
  type: 'Normal' | 'Warning';
  reason: (typeof DiscoveryEventReason)[keyof typeof DiscoveryEventReason];
  message: string;
}

/** Discovered states that are not news: nothing ran yet, or nothing is meant to. */
const QUIET = new Set<string>([DiscoveredReason.Pending, DiscoveredReason.Disabled]);

export function discoveryEvents(
  previous: MCPServerStatus | undefined,
  next: DiscoveryStatusPart,
  alarmLevel: FindingLevel = DEFAULT_FINDING_LEVEL,
): DiscoveryEvent[] {
  const [discovered, drifted] = next.conditions;
  const before = (type: string) => previous?.conditions?.find((c) => c.type === type);
  return [
    ...discoveredEvents(before(ConditionType.Discovered), discovered),
    ...driftedEvents(
      before(ConditionType.Drifted),
      drifted,
      !isDeepStrictEqual(previous?.drift, next.drift),
    ),
    ...textFindingEvents(
      previous?.discovery?.textFindings,
      next.discovery?.textFindings,
      alarmLevel,
    ),
  ];
}

/** Findings named in the Event's message; status and `mcp-operator diff` have the rest. */
const EVENT_FINDINGS = 3;

/**
 * A Warning when the findings on model-facing text at or above the alarm level
 * (spec.tools.textFindings.alarmLevel) appear or change (a later run that finds the same ones
 * is not news).
 */
function textFindingEvents(
  before: StatusTextFindings | undefined,
  now: StatusTextFindings | undefined,
  alarmLevel: FindingLevel,
): DiscoveryEvent[] {
  const loud = (findings: StatusTextFindings | undefined) =>
    (findings?.items ?? []).filter((f) => levelAtLeast(f.level, alarmLevel));
  const found = loud(now);
  if (found.length === 0 || isDeepStrictEqual(loud(before), found)) return [];
  const named = found
    .slice(0, EVENT_FINDINGS)
    .map((f) => `${f.item} ${f.field}: ${f.code} (${f.level}), ${f.reason}`)
    .join('; ');
  const more = found.length > EVENT_FINDINGS ? `; and ${found.length - EVENT_FINDINGS} more` : '';
  return [
    {
      type: 'Warning',
      reason: DiscoveryEventReason.TextFindings,
      message: `The text the model reads has ${found.length} ${found.length === 1 ? 'finding' : 'findings'} at or above ${alarmLevel}: ${named}${more}. Review it before approving; mcp-operator diff shows each in full.`,
    },
  ];
}

function discoveredEvents(before: Condition | undefined, now: Condition): DiscoveryEvent[] {
  if (now.status === ConditionStatus.True) {
    return before?.status === ConditionStatus.True
      ? []
      : [{ type: 'Normal', reason: DiscoveryEventReason.Discovered, message: now.message }];
  }
  if (QUIET.has(now.reason) || sameObservation(before, now)) return [];
  return [{ type: 'Warning', reason: DiscoveryEventReason.DiscoveryFailed, message: now.message }];
}

function driftedEvents(
  before: Condition | undefined,
  now: Condition,
  driftChanged: boolean,
): DiscoveryEvent[] {
  if (now.status === ConditionStatus.True) {
    return before?.status === ConditionStatus.True && !driftChanged
      ? []
      : [{ type: 'Warning', reason: DiscoveryEventReason.DriftDetected, message: now.message }];
  }
  if (before?.status === ConditionStatus.True && now.status === ConditionStatus.False) {
    return [{ type: 'Normal', reason: DiscoveryEventReason.DriftCleared, message: now.message }];
  }
  if (now.reason === DriftedReason.BaselineInvalid && !sameObservation(before, now)) {
    return [
      { type: 'Warning', reason: DiscoveryEventReason.BaselineInvalid, message: now.message },
    ];
  }
  return [];
}

function sameObservation(before: Condition | undefined, now: Condition): boolean {
  return (
    before?.status === now.status && before.reason === now.reason && before.message === now.message
  );
}
