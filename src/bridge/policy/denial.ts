/**
 * What the bridge policy says when it refuses a request (gate.ts, catalog-gate.ts): a
 * reason, the label of mcp_bridge_policy_denials_total and `data.reason` of the JSON-RPC
 * error, and a message for the caller.
 */

import type { Digest } from '../../tools/digest.ts';

export type DenialReason =
  | 'policy-unavailable'
  | 'invalid-call'
  | 'not-allowed'
  | 'not-approved'
  | 'drifted'
  | 'unknown-tool'
  | 'unverifiable'
  | 'insufficient-scope'
  | 'unlisted'
  | 'no-approved-template';

export interface Denial {
  reason: DenialReason;
  message: string;
}

/**
 * Whether an entry listed with `digest` is the approved one: `approved` is the digest it was
 * approved with, undefined when it was not; `field` is where approvals are written.
 */
export function judgeApproval(
  approved: string | undefined,
  digest: Digest | undefined,
  field: string,
): Denial | undefined {
  if (approved === undefined)
    return { reason: 'not-approved', message: `it is not approved (${field})` };
  if (approved !== digest) {
    return {
      reason: 'drifted',
      message: `its definition changed since it was approved (approved ${approved}, now ${digest ?? 'not canonicalizable'})`,
    };
  }
  return undefined;
}
