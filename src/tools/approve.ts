/**
 * Approval: turning a snapshot into the baseline `spec.tools.approved` (baseline.ts reads it
 * back). Pure functions; the `approve` command fetches the snapshot and writes or prints what
 * these return.
 *
 * Two forms (docs/adr/0018-drift-follows-the-baseline-form.md): definitions, reviewable in a pull request
 * and the only form that lets drift classify severity; digests with abbreviated field
 * digests, compact, with which drift still names the fields that changed.
 */

import { dump } from 'js-yaml';
import type { ApprovedProvenance, ApprovedTool } from '../api/v1alpha1/mcpserver.ts';
import { DIGEST_FIELDS, digestedPart } from './digest.ts';
import { type SnapshotTool, abbreviate, isToolName } from './snapshot.ts';
import { visible } from './text.ts';
import { type Catalog, approvedCatalog } from './catalog-items.ts';

export type ApproveForm = 'digests' | 'definitions';

/**
 * The `spec.tools.approved.tools` list for a snapshot, ordered by name as the snapshot is.
 * A tool whose name breaks MCP's tool-name rules is left out: the API refuses such a name, and
 * drift reports the tool (status.drift.invalidNames) for as long as the server lists it.
 */
export function approvedTools(tools: readonly SnapshotTool[], form: ApproveForm): ApprovedTool[] {
  return tools
    .filter((tool) => isToolName(tool.name))
    .map((tool) => {
      if (form === 'digests') return { name: tool.name, digest: tool.digest, fields: fields(tool) };
      // Exactly the digested part, so that the approved definition digests to the tool digest.
      const { name, ...definition } = digestedPart(tool.definition);
      return { name: name as string, definition: definition as ApprovedTool['definition'] };
    });
}

/** Abbreviated field digests: they only attribute a change the whole digest proves (ADR 0003). */
function fields(tool: SnapshotTool): NonNullable<ApprovedTool['fields']> {
  return Object.fromEntries(
    DIGEST_FIELDS.flatMap((field) => {
      const digest = tool.fields[field];
      return digest === undefined ? [] : [[field, abbreviate(digest)]];
    }),
  );
}

/** What an approval holds besides the tools. */
export interface ApprovalExtras {
  /** The prompts, resources and resource templates listed with the tools. */
  catalog?: Catalog;
  /** What ran when they were listed (image digests, serverInfo). */
  provenance?: ApprovedProvenance;
}

/** What `spec.tools.approved` holds for a snapshot; a provenance only when there is one. */
function approvedContent(
  tools: readonly SnapshotTool[],
  form: ApproveForm,
  { catalog = {}, provenance }: ApprovalExtras,
): object {
  return {
    ...(provenance === undefined ? {} : { provenance }),
    tools: approvedTools(tools, form),
    ...approvedCatalog(catalog, form),
  };
}

/** `spec.tools.approved` for a snapshot, from `spec:` down. */
export function approvedBlock(
  tools: readonly SnapshotTool[],
  form: ApproveForm,
  extras: ApprovalExtras = {},
): object {
  return { spec: { tools: { approved: approvedContent(tools, form, extras) } } };
}

/**
 * The block to paste into the MCPServer manifest (GitOps), from `spec:` down so that it can be
 * merged as is. Long lines are not folded: a folded description would not read back the same.
 */
export function approvedYaml(
  tools: readonly SnapshotTool[],
  form: ApproveForm,
  heading: string,
  extras: ApprovalExtras = {},
): string {
  const block = approvedBlock(tools, form, extras);
  // The heading names what the server reported about itself: a terminal gets it as text.
  const comment = heading
    .split('\n')
    .map((line) => `# ${visible(line)}`)
    .join('\n');
  return `${comment}\n${dump(block, { lineWidth: -1, noRefs: true })}`;
}
