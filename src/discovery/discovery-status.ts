/**
 * The discovery part of MCPServer status — `status.discovery`, `status.drift` and the
 * `Discovered` and `Drifted` conditions — as a pure function of the latest discovery result
 * (in memory), the status as it is, the resolved baseline and the time. The reconcile pass
 * merges it into the status it writes once (one status writer, docs/adr/0023).
 *
 * Two rules keep a run that finds nothing new from writing anything:
 * - the times in status.discovery move only with another change, or once they are older than
 *   the heartbeat, max(1h, 10 × interval); Prometheus has the exact times;
 * - everything else is deterministic: same tools, same baseline, same status.
 *
 * Without a result in memory (the operator just started) status keeps what it has.
 */

import { isDeepStrictEqual } from 'node:util';
import { metaTime, type Condition } from '../api/core-v1.ts';
import {
  ConditionStatus,
  ConditionType,
  ConformantReason,
  DiscoveredReason,
  DriftedReason,
  findCondition,
  nextCondition,
} from '../api/v1alpha1/conditions.ts';
import type {
  DiscoveryStatus,
  DriftStatus,
  MCPServerSpec,
  MCPServerStatus,
} from '../api/v1alpha1/mcpserver.ts';
import { discoveryEnabled, intervalMs } from '../api/v1alpha1/spec.ts';
import type { Baseline } from '../tools/baseline.ts';
import { type Drift, driftStatus, isDrifted } from '../tools/drift.ts';
import type { ServerResult, Success } from './results.ts';
import { type DriftInputs, driftBasis, driftFrom, driftInputs } from './drift-basis.ts';
import { count, driftMessage } from './status-messages.ts';
import { catalogDriftStatus } from '../tools/catalog.ts';
import { MESSAGE_MAX, clip } from '../tools/text.ts';

export interface DiscoveryStatusInput {
  server: {
    metadata: { name: string; namespace: string; generation?: number };
    spec: MCPServerSpec;
  };
  /** Status as read (the cache). */
  previous: MCPServerStatus | undefined;
  /** The latest discovery result; undefined before the first run of this operator process. */
  result: ServerResult | undefined;
  baseline: Baseline;
  now: Date;
}

/** What the reconcile pass merges into the status it writes. */
export interface DiscoveryStatusPart {
  /** Discovered, Drifted, then Conformant. */
  conditions: [Condition, Condition, Condition];
  discovery?: DiscoveryStatus;
  drift?: DriftStatus;
}

const HOUR_MS = 3_600_000;
const HEARTBEAT_INTERVALS = 10;

/** How old status.discovery's times may get before a run refreshes them without other news. */
export function heartbeatMs(spec: MCPServerSpec): number {
  return Math.max(HOUR_MS, HEARTBEAT_INTERVALS * intervalMs(spec));
}

export function discoveryStatus(input: DiscoveryStatusInput): DiscoveryStatusPart {
  if (!discoveryEnabled(input.server.spec)) return disabled(input);
  const discovered = discoveredPart(input);
  const drifted = driftedPart(input);
  return {
    conditions: [discovered.condition, drifted.condition, conformantCondition(input)],
    ...(discovered.discovery === undefined ? {} : { discovery: discovered.discovery }),
    ...(drifted.drift === undefined ? {} : { drift: drifted.drift }),
  };
}

/** `status` with the discovery part merged in, its conditions after the caller's own. */
export function withDiscovery<T extends { conditions: Condition[] }>(
  status: T,
  part: DiscoveryStatusPart,
): T & Pick<DiscoveryStatusPart, 'discovery' | 'drift'> {
  return {
    ...status,
    conditions: [...status.conditions, ...part.conditions],
    ...(part.discovery === undefined ? {} : { discovery: part.discovery }),
    ...(part.drift === undefined ? {} : { drift: part.drift }),
  };
}

/** Whether `next` changes status.discovery or status.drift (conditions are compared with the rest). */
export function discoveryDiffers(
  current: MCPServerStatus | undefined,
  next: Pick<DiscoveryStatusPart, 'discovery' | 'drift'>,
): boolean {
  return (
    !isDeepStrictEqual(current?.discovery, next.discovery) ||
    !isDeepStrictEqual(current?.drift, next.drift)
  );
}

// --- conditions ---------------------------------------------------------------------------

function condition(
  input: DiscoveryStatusInput,
  type: ConditionType,
  status: ConditionStatus,
  reason: string,
  message: string,
  generation = input.server.metadata.generation ?? 0,
): Condition {
  const before = findCondition(input.previous, type);
  return nextCondition(
    before,
    {
      type,
      status,
      observedGeneration: generation,
      reason,
      // Built from shown parts already; the bound makes a refused status write impossible.
      message: clip(message, MESSAGE_MAX),
    },
    input.now,
  );
}

function disabled(input: DiscoveryStatusInput): DiscoveryStatusPart {
  return {
    conditions: [
      condition(
        input,
        ConditionType.Discovered,
        ConditionStatus.False,
        DiscoveredReason.Disabled,
        'spec.discovery.enabled is false: nothing discovers the tools of this server.',
      ),
      // An invalid baseline still matters: under Enforce the bridge then refuses every tool.
      invalidBaseline(input) ??
        condition(
          input,
          ConditionType.Drifted,
          ConditionStatus.Unknown,
          DriftedReason.NotDiscovered,
          'Discovery is disabled, so the tools are not compared with spec.tools.approved.',
        ),
      conformantCondition(input),
    ],
  };
}

function invalidBaseline(input: DiscoveryStatusInput): Condition | undefined {
  if (input.baseline.kind !== 'invalid') return undefined;
  const message = `${input.baseline.message} Drift cannot be checked until the baseline is fixed.`;
  return condition(
    input,
    ConditionType.Drifted,
    ConditionStatus.Unknown,
    DriftedReason.BaselineInvalid,
    message,
  );
}

// --- status.discovery and Discovered --------------------------------------------------------

interface DiscoveredPart {
  condition: Condition;
  discovery: DiscoveryStatus | undefined;
}

function discoveredPart(input: DiscoveryStatusInput): DiscoveredPart {
  const { result, previous } = input;
  const kept = findCondition(previous, ConditionType.Discovered);
  if (result === undefined) {
    if (previous?.discovery !== undefined && kept !== undefined) {
      return { condition: kept, discovery: previous.discovery };
    }
    const pending = condition(
      input,
      ConditionType.Discovered,
      ConditionStatus.Unknown,
      DiscoveredReason.Pending,
      'Waiting for the first discovery run (a deployed server is discovered once it is Ready).',
    );
    return { condition: pending, discovery: undefined };
  }
  return {
    condition: discoveredCondition(input, result),
    discovery: withTimes(input, result, latestDiscovery(result, previous?.discovery)),
  };
}

function discoveredCondition(input: DiscoveryStatusInput, result: ServerResult): Condition {
  const { failure, success, generation } = result;
  const make = (status: ConditionStatus, reason: string, message: string) =>
    condition(input, ConditionType.Discovered, status, reason, message, generation);
  if (failure !== undefined) return make(ConditionStatus.False, failure.reason, failure.message);
  if (success !== undefined && !success.stored.fits) {
    return make(ConditionStatus.False, DiscoveredReason.SnapshotTooLarge, success.stored.message);
  }
  const tools = success?.found.toolCount ?? 0;
  const protocol = success?.found.protocolVersion ?? 'unknown';
  return make(
    ConditionStatus.True,
    DiscoveredReason.Succeeded,
    `Found ${count(tools, 'tool')} at ${success?.url ?? 'the endpoint'} (MCP ${protocol}).`,
  );
}

type Timeless = Omit<DiscoveryStatus, 'lastAttemptTime' | 'lastSuccessTime'>;

/** status.discovery without its times: the last success's snapshot, and the last error. */
function latestDiscovery(result: ServerResult, previous: DiscoveryStatus | undefined): Timeless {
  const found = result.success ? snapshotPart(result.success) : withoutTimes(previous ?? {});
  delete found.lastError;
  return result.failure === undefined ? found : { ...found, lastError: result.failure.message };
}

function snapshotPart(success: Success): Timeless {
  const compact = success.found;
  return success.stored.fits
    ? { ...compact, snapshotConfigMap: success.stored.configMap }
    : compact;
}

/**
 * The run's times when anything else changed; otherwise the previous times, unless they are
 * older than the heartbeat. Either way a status write carries times at most a heartbeat old.
 */
function withTimes(
  input: DiscoveryStatusInput,
  result: ServerResult,
  next: Timeless,
): DiscoveryStatus {
  const previous = input.previous?.discovery;
  const attempt = metaTime(result.attemptAt);
  const success = result.success ? metaTime(result.success.at) : previous?.lastSuccessTime;
  const fresh = { ...next, lastAttemptTime: attempt, ...withSuccess(success) };
  const unchanged =
    previous !== undefined &&
    isDeepStrictEqual(withoutTimes(previous), next) &&
    previous.lastAttemptTime !== undefined;
  if (!unchanged) return fresh;
  const heartbeat = heartbeatMs(input.server.spec);
  const keep = (was: string | undefined, now: string | undefined) =>
    was !== undefined && now !== undefined && Date.parse(now) - Date.parse(was) < heartbeat
      ? was
      : now;
  return {
    ...next,
    lastAttemptTime: keep(previous.lastAttemptTime, attempt)!,
    ...withSuccess(keep(previous.lastSuccessTime, success)),
  };
}

function withSuccess(time: string | undefined): Pick<DiscoveryStatus, 'lastSuccessTime'> {
  return time === undefined ? {} : { lastSuccessTime: time };
}

function withoutTimes(discovery: DiscoveryStatus): Timeless {
  const rest = { ...discovery };
  delete rest.lastAttemptTime;
  delete rest.lastSuccessTime;
  return rest;
}

// --- status.drift and Drifted ---------------------------------------------------------------

interface DriftedPart {
  condition: Condition;
  drift: DriftStatus | undefined;
}

function driftedPart(input: DiscoveryStatusInput): DriftedPart {
  const { baseline, result, previous } = input;
  const make = (status: ConditionStatus, reason: DriftedReason, message: string) =>
    condition(input, ConditionType.Drifted, status, reason, message);
  const invalid = invalidBaseline(input);
  if (invalid !== undefined) return { condition: invalid, drift: undefined };
  const success = result?.success;
  const inputs = driftInputs(baseline, input.server);
  const { approved } = inputs;
  const drift = success === undefined ? undefined : driftOf(success, inputs);
  if (success === undefined || drift === undefined) {
    // After a restart, or before the snapshot could be compared with a changed baseline: the
    // comparison status holds is the best there is until then.
    const kept = findCondition(previous, ConditionType.Drifted);
    if (kept !== undefined && COMPARED.has(kept.reason)) {
      return { condition: kept, drift: previous?.drift };
    }
    const message =
      success === undefined
        ? 'No discovery has succeeded yet: drift is checked after the first one.'
        : 'The baseline changed: drift is checked again after the next discovery run.';
    return {
      condition: make(ConditionStatus.Unknown, DriftedReason.NotDiscovered, message),
      drift: undefined,
    };
  }
  const tools = success.found.toolCount ?? 0;
  if (isDrifted(drift)) {
    return {
      condition: make(
        ConditionStatus.True,
        DriftedReason.ToolsChanged,
        driftMessage(input.server.metadata, drift),
      ),
      drift: compactDrift(drift, since(input)),
    };
  }
  if (approved === undefined) {
    const { name, namespace } = input.server.metadata;
    const message = `spec.tools.approved is not set, so the ${count(tools, 'tool')} cannot be compared with a baseline. \`mcp-operator approve ${name} -n ${namespace}\` prints one from the current snapshot.`;
    return {
      condition: make(ConditionStatus.Unknown, DriftedReason.NoBaseline, message),
      drift: undefined,
    };
  }
  const message = `The tools match the approved baseline (${tools} listed, ${approved.length} approved).`;
  return {
    condition: make(ConditionStatus.False, DriftedReason.ToolsMatch, message),
    drift: undefined,
  };
}

/** The success's drift against `inputs`, if it can be told without reading the snapshot. */
function driftOf(success: Success, inputs: DriftInputs): Drift | undefined {
  if (success.drift?.basis === driftBasis(inputs)) return success.drift.drift;
  return success.listed === undefined ? undefined : driftFrom(success.listed, inputs);
}

/** Drifted reasons that come from comparing a snapshot with the baseline. */
const COMPARED = new Set<string>([
  DriftedReason.ToolsChanged,
  DriftedReason.ToolsMatch,
  DriftedReason.NoBaseline,
]);

/** When the drift began: kept while the server stays drifted, now when it just appeared. */
function since(input: DiscoveryStatusInput): string {
  const before = findCondition(input.previous, ConditionType.Drifted);
  const was = input.previous?.drift?.since;
  return before?.status === ConditionStatus.True && was !== undefined ? was : metaTime(input.now);
}

/** status.drift with empty lists left out, so it stays small and reads well. */
function compactDrift(drift: Drift, since: string): DriftStatus {
  const status = driftStatus(drift);
  return {
    ...(status.added?.length ? { added: status.added } : {}),
    ...(status.removed?.length ? { removed: status.removed } : {}),
    ...(status.changed?.length ? { changed: status.changed } : {}),
    ...(status.renamed?.length ? { renamed: status.renamed } : {}),
    ...(status.missingAllowed?.length ? { missingAllowed: status.missingAllowed } : {}),
    ...(status.invalidNames?.length ? { invalidNames: status.invalidNames } : {}),
    ...catalogDriftStatus(drift.catalog),
    since,
  };
}

// --- Conformant -------------------------------------------------------------------------------

/** Findings a Conformant message names; status.discovery.findings and `diff` have more. */
const MESSAGE_FINDINGS = 3;

/**
 * Whether the tools of the last successful discovery follow the MCP schema. A server that
 * breaks it still answers and is still discovered and compared (src/tools/findings.ts); this
 * condition is where a user sees that its definitions are wrong.
 */
function conformantCondition(input: DiscoveryStatusInput): Condition {
  const make = (status: ConditionStatus, reason: ConformantReason, message: string) =>
    condition(input, ConditionType.Conformant, status, reason, message);
  const enabled = discoveryEnabled(input.server.spec);
  const kept = findCondition(input.previous, ConditionType.Conformant);
  // After a restart: what the last run found is the best there is until a run ends.
  if (enabled && input.result === undefined && kept !== undefined) return kept;
  const success = enabled ? input.result?.success : undefined;
  if (success === undefined) {
    const message = 'No discovery has succeeded, so nothing is known about the tool definitions.';
    return make(ConditionStatus.Unknown, ConformantReason.NotDiscovered, message);
  }
  const { findingCount = 0, findings = [], toolCount = 0 } = success.found;
  if (findingCount === 0) {
    const message = `The ${count(toolCount, 'tool')} listed follow the MCP schema.`;
    return make(ConditionStatus.True, ConformantReason.Conformant, message);
  }
  const first = findings
    .slice(0, MESSAGE_FINDINGS)
    .map(({ item, problem }) => `${item}: ${problem}`)
    .join('; ');
  const more =
    findingCount > MESSAGE_FINDINGS ? `; and ${findingCount - MESSAGE_FINDINGS} more` : '';
  const { name, namespace } = input.server.metadata;
  const message = `${count(findingCount, 'finding')}: the server publishes tools that break the MCP schema, recorded and compared as published (${first}${more}). See \`mcp-operator diff ${name} -n ${namespace}\`.`;
  return make(ConditionStatus.False, ConformantReason.SchemaViolations, message);
}
