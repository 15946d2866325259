/**
 * Approving a server's tools: the one implementation behind `mcp-operator approve`,
 * `kubectl mcp approve` and the review console. Four steps, each usable on its own:
 *
 *   const view = await readApprovalView(client, namespace, name); // server, snapshot, baseline
 *   const plan = planApproval(view, {                              // what would change (pure)
 *     form: 'definitions', tools: ['echo'], note: 'reviewed',
 *     approvedBy: await approverName(client), at: new Date(),
 *   });
 *   // show plan.entries; confirm when plan.needsConfirmation
 *   await writeApproval(client, plan);                              // one conditional write
 *
 * and `approvalHistory(server)` reads who approved what, when and why (newest first).
 * A write onto a server that changed since the view was read fails with MCPOP_APPROVAL_STALE
 * and writes nothing. Where the record lives and why: docs/adr/0015-approval-record.md.
 */

export { type ApprovalView, readApprovalView, viewOf, currentSnapshot } from './read.ts';
export {
  type ApprovalPlan,
  type PlannedEntry,
  type PlanOptions,
  approvedProvenance,
  planApproval,
} from './plan.ts';
export { approverName } from './approver.ts';
export { APPROVE_FIELD_MANAGER, type WriteOptions, approvalPatch, writeApproval } from './write.ts';
export { approvalHistory } from './history.ts';
export type { ApprovalRecord, ApprovalChange } from '../api/v1alpha1/mcpserver.ts';
