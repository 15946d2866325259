/**
 * Approving from the console: the steps of `mcp-operator approve --apply` (src/approval), run
 * as the user. A preview plans from the MCPServer as the API server has it now and says which
 * resourceVersion that was; an approval sends that resourceVersion back, is refused when the
 * server changed since (the reviewer saw something else), and is written as one patch
 * conditioned on it, so that nothing is half-written and nothing unreviewed is approved.
 */

import { KIND } from '../api/names.ts';
import { APPROVAL_CHANGES_MAX, APPROVAL_NOTE_MAX } from '../api/v1alpha1/mcpserver.ts';
import {
  type ApprovalPlan,
  type ApprovalView,
  approvalHistory,
  approverName,
  planApproval,
  readApprovalView,
  writeApproval,
} from '../approval/index.ts';
import { operatorError } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { TOOL_NAME_MAX } from '../tool-record.ts';
import type {
  ApprovalPreview,
  ApprovalRequest,
  ApprovalResult,
  PreviewRequest,
} from './web/api-types.ts';

/** Request bodies, checked by fastify before a handler runs (a 400 names what is wrong). */
const choice = {
  tools: {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: TOOL_NAME_MAX },
    maxItems: APPROVAL_CHANGES_MAX,
    uniqueItems: true,
  },
  note: { type: 'string', maxLength: APPROVAL_NOTE_MAX },
} as const;

export const PREVIEW_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: choice,
} as const;

export const APPROVAL_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['resourceVersion', 'confirmed'],
  properties: {
    ...choice,
    resourceVersion: { type: 'string', minLength: 1, maxLength: 64 },
    confirmed: { type: 'boolean' },
  },
} as const;

/** The approval was not confirmed although it replaces or removes approved entries. */
export class UnconfirmedApproval extends Error {
  readonly code = 'CONSOLE_CONFIRM';
  constructor() {
    super(
      'This approval replaces or removes entries approved before: confirm that you reviewed them.',
    );
  }
}

interface Planned {
  view: ApprovalView;
  plan: ApprovalPlan;
  /** Every tool the whole approval would add, change or remove: those that can be chosen. */
  choosable: string[];
}

async function plan(
  client: KubeClient,
  namespace: string,
  name: string,
  request: PreviewRequest,
): Promise<Planned> {
  const [view, approvedBy] = await Promise.all([
    readApprovalView(client, namespace, name),
    approverName(client),
  ]);
  const options = { form: 'definitions' as const, approvedBy, at: new Date(), note: request.note };
  const whole = planApproval(view, options);
  const choosable = whole.entries.filter((e) => e.kind === 'tool').map((e) => e.name);
  const chosen =
    request.tools === undefined ? whole : planApproval(view, { ...options, tools: request.tools });
  return { view, plan: chosen, choosable };
}

/** What approving would write, planned from the server as it is now; nothing is written. */
export async function previewApproval(
  client: KubeClient,
  namespace: string,
  name: string,
  request: PreviewRequest,
): Promise<ApprovalPreview> {
  const { view, plan: p, choosable } = await plan(client, namespace, name, request);
  return {
    namespace,
    name,
    resourceVersion: p.resourceVersion,
    snapshotDigest: p.snapshotDigest,
    approvedBy: p.record.approvedBy,
    entries: p.entries,
    choosable,
    needsConfirmation: p.needsConfirmation,
    leftOut: p.leftOut,
    approved: p.approved,
    changesSpec: p.changesSpec,
    history: approvalHistory(view.server),
  };
}

/**
 * Writes the approval the user previewed: refused, with nothing written, when the server is
 * no longer at the previewed resourceVersion (here, or by the API server if it moves between
 * this read and the write), and when it replaces approved entries without confirmation.
 */
export async function applyApproval(
  client: KubeClient,
  namespace: string,
  name: string,
  request: ApprovalRequest,
): Promise<ApprovalResult> {
  const { plan: p } = await plan(client, namespace, name, request);
  if (p.resourceVersion !== request.resourceVersion) {
    throw operatorError('MCPOP_APPROVAL_STALE', `${KIND} ${namespace}/${name}`);
  }
  if (p.needsConfirmation && !request.confirmed) throw new UnconfirmedApproval();
  const written = await writeApproval(client, p);
  return { resourceVersion: written.metadata.resourceVersion ?? '', record: p.record };
}
