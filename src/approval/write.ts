/**
 * Writing a planned approval: one JSON merge patch (RFC 7396) of spec.tools.approved,
 * conditioned on the resourceVersion the plan was made from. The API server applies it whole or
 * not at all, and refuses it (409) when the MCPServer changed since — a new discovery, an edit,
 * another approval — so that what a person reviewed is exactly what is approved.
 */

import { KIND } from '../api/names.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { operatorError } from '../errors.ts';
import { type KubeClient, isConflict } from '../kube/client.ts';
import { objectPath } from '../kube/resources.ts';
import { CATALOG_KINDS } from '../tools/catalog-items.ts';
import type { ApprovalPlan } from './plan.ts';

/** The field manager of approvals: a person's change to the spec, not the controller's. */
export const APPROVE_FIELD_MANAGER = 'mcp-operator-approve';

/** Every key of spec.tools.approved, so that the patch leaves none of the old block behind. */
const APPROVED_KEYS = ['tools', 'configMapRef', 'provenance', 'history', ...CATALOG_KINDS];

/**
 * The merge patch that makes spec.tools.approved exactly `plan.approved`: a key it lacks is
 * set to null (removed), and lists are replaced whole, which is what approving means. The
 * resourceVersion makes the API server refuse it on a newer object.
 */
export function approvalPatch(plan: ApprovalPlan): object {
  const approved = Object.fromEntries(
    APPROVED_KEYS.map((key) => [key, plan.approved[key] ?? null]),
  );
  return {
    metadata: { resourceVersion: plan.resourceVersion },
    spec: { tools: { approved } },
  };
}

export interface WriteOptions {
  /** Send it with dryRun=All: validated and admitted as a write would be, nothing stored. */
  dryRun?: boolean;
}

/** Writes the plan; resolves to the MCPServer as written (or as it would be, dry run). */
export async function writeApproval(
  client: KubeClient,
  plan: ApprovalPlan,
  { dryRun = false }: WriteOptions = {},
): Promise<StoredMCPServer> {
  try {
    return await client.request<StoredMCPServer>({
      method: 'PATCH',
      patchType: 'merge',
      path: objectPath(MCP_SERVER, plan.namespace, plan.name),
      query: { fieldManager: APPROVE_FIELD_MANAGER, ...(dryRun ? { dryRun: 'All' } : {}) },
      body: approvalPatch(plan),
    });
  } catch (error) {
    if (!isConflict(error)) throw error;
    throw operatorError('MCPOP_APPROVAL_STALE', `${KIND} ${plan.namespace}/${plan.name}`);
  }
}
