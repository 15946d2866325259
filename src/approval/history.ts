/**
 * The approval history kept in spec.tools.approved.history (docs/adr/0015-approval-record.md): newest first,
 * bounded in records and in the changes they list all together, so that an MCPServer stays
 * small however often it is approved.
 */

import {
  APPROVAL_CHANGES_MAX,
  APPROVAL_HISTORY_MAX,
  type ApprovalRecord,
  type MCPServer,
} from '../api/v1alpha1/mcpserver.ts';

/** The approvals of a server, newest first, as recorded. */
export function approvalHistory(server: Pick<MCPServer, 'spec'>): ApprovalRecord[] {
  return server.spec.tools?.approved?.history ?? [];
}

/**
 * `record` before `history`, then as many older records as the bounds leave room for. The new
 * record is always kept: it lists at most APPROVAL_CHANGES_MAX changes (planApproval cuts it).
 */
export function withRecord(
  history: readonly ApprovalRecord[],
  record: ApprovalRecord,
): ApprovalRecord[] {
  const kept = [record];
  let changes = record.changes?.length ?? 0;
  for (const older of history) {
    const more = older.changes?.length ?? 0;
    if (kept.length === APPROVAL_HISTORY_MAX || changes + more > APPROVAL_CHANGES_MAX) break;
    kept.push(older);
    changes += more;
  }
  return kept;
}
