/**
 * Condition types and reasons of MCPServer status, as named constants (Kubernetes API
 * conventions, "Typical status properties": types are CamelCase adjectives or past-tense
 * verbs, reasons are CamelCase words a program can switch on).
 * https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties
 */

import { metaTime, type Condition } from '../core-v1.ts';

export const ConditionType = {
  /** The server's pods are available (image servers) or its URL answers (url servers). */
  Ready: 'Ready',
  /** The last discovery succeeded and status.discovery describes the tools. */
  Discovered: 'Discovered',
  /** The discovered tools differ from spec.tools.approved. */
  Drifted: 'Drifted',
  /** The last discovered tools follow the MCP schema (status.discovery.findings says where not). */
  Conformant: 'Conformant',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export const ConditionStatus = { True: 'True', False: 'False', Unknown: 'Unknown' } as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

/** Reasons of Ready. */
export const ReadyReason = {
  Available: 'Available',
  Progressing: 'Progressing',
  ImagePullBackOff: 'ImagePullBackOff',
  CrashLoopBackOff: 'CrashLoopBackOff',
  Unschedulable: 'Unschedulable',
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  ScaledToZero: 'ScaledToZero',
  /** A url server: nothing deployed, readiness is what discovery reaches. */
  External: 'External',
  ApplyFailed: 'ApplyFailed',
} as const;
export type ReadyReason = (typeof ReadyReason)[keyof typeof ReadyReason];

/** Reasons of Discovered. */
export const DiscoveredReason = {
  Succeeded: 'Succeeded',
  /** Any other failure; the message says what and what to check. */
  Failed: 'Failed',
  Disabled: 'Disabled',
  Pending: 'Pending',
  SnapshotTooLarge: 'SnapshotTooLarge',
  /** The Secret of spec.auth.secretRef, or its key, does not exist. */
  AuthSecretMissing: 'AuthSecretMissing',
  /** The server refused the bearer token (HTTP 401 or 403). */
  Unauthorized: 'Unauthorized',
  /** Discovery could not get its OAuth access token; the message names issuer, client, audience or scope. */
  OAuthTokenFailed: 'OAuthTokenFailed',
  /** The server did not answer within spec.discovery.timeout. */
  TimedOut: 'TimedOut',
  /** The URL resolves to an address the operator's discovery egress policy denies. */
  EgressDenied: 'EgressDenied',
  /** The server answered, but not with what MCP specifies (not a tools list at all, an error). */
  InvalidAnswer: 'InvalidAnswer',
} as const;
export type DiscoveredReason = (typeof DiscoveredReason)[keyof typeof DiscoveredReason];

/** Reasons of Drifted (issue 5: NoBaseline, ToolsChanged, ToolsMatch). */
export const DriftedReason = {
  NoBaseline: 'NoBaseline',
  ToolsChanged: 'ToolsChanged',
  ToolsMatch: 'ToolsMatch',
  NotDiscovered: 'NotDiscovered',
  BaselineInvalid: 'BaselineInvalid',
} as const;
export type DriftedReason = (typeof DriftedReason)[keyof typeof DriftedReason];

/** Reasons of Conformant. */
export const ConformantReason = {
  /** Every listed tool follows the MCP schema. */
  Conformant: 'Conformant',
  /** Some listed tools break it; they are recorded all the same. */
  SchemaViolations: 'SchemaViolations',
  /** Nothing discovered yet, or discovery is disabled. */
  NotDiscovered: 'NotDiscovered',
} as const;
export type ConformantReason = (typeof ConformantReason)[keyof typeof ConformantReason];

/** The condition of `type` in a status, if it has one. */
export function findCondition(
  status: { conditions?: Condition[] } | undefined,
  type: string,
): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * The condition to write in place of `previous` (metav1.Condition semantics, API conventions
 * above): `lastTransitionTime` moves only when `status` changes, not when reason or message do.
 */
export function nextCondition(
  previous: Condition | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: Date,
): Condition {
  return {
    type: next.type,
    status: next.status,
    observedGeneration: next.observedGeneration,
    lastTransitionTime:
      previous?.status === next.status ? previous.lastTransitionTime : metaTime(now),
    reason: next.reason,
    message: next.message,
  };
}
