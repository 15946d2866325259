/**
 * Approval: turning a snapshot into the baseline `spec.tools.approved`, and reading a baseline
 * back from where a user keeps it (a ConfigMap key in YAML or JSON). Pure functions; the
 * `approve` command fetches the snapshot and writes or prints what these return.
 *
 * Two forms (docs/adr/0003-digests-and-drift.md): definitions, reviewable in a pull request
 * and the only form that lets drift classify severity; digests with abbreviated field
 * digests, compact, with which drift still names the fields that changed.
 */

import { Type } from '@sinclair/typebox';
import { dump, load } from 'js-yaml';
import type { ApprovedProvenance, ApprovedTool } from '../api/v1alpha1/mcpserver.ts';
import { DIGEST_PATTERN, FIELD_DIGEST_PATTERN, TOOL_NAME_PATTERN } from '../tool-record.ts';
import { operatorError } from '../errors.ts';
import { type DigestField, DIGEST_FIELDS, digestedPart } from './digest.ts';
import type { BaselineTool } from './drift.ts';
import { checker } from '../mcp/schemas.ts';
import { type SnapshotTool, abbreviate, isToolName } from './snapshot.ts';
import { visible } from './text.ts';
import { type Catalog, approvedCatalog } from './catalog.ts';

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

/**
 * A JSON merge patch (RFC 7396) that makes the snapshot the baseline: its tools and the
 * prompts, resources and resource templates of `catalog`. It clears
 * `configMapRef`: the API allows one of `tools` and `configMapRef`, and a merge patch replaces
 * the `tools` list as a whole, which is what approving means.
 */
export function approvedMergePatch(
  tools: readonly SnapshotTool[],
  form: ApproveForm,
  extras: ApprovalExtras = {},
): object {
  const approved = {
    ...approvedContent(tools, form, extras),
    configMapRef: null,
    // Replaced whole: a provenance of an earlier approval describes other code.
    provenance: extras.provenance ?? null,
  };
  return { spec: { tools: { approved } } };
}

const DIGEST = Type.String({ pattern: DIGEST_PATTERN });
const FIELD_DIGEST = Type.Optional(Type.String({ pattern: FIELD_DIGEST_PATTERN }));
const BaselineSchema = Type.Array(
  Type.Object({
    name: Type.String({ pattern: TOOL_NAME_PATTERN }),
    digest: Type.Optional(DIGEST),
    fields: Type.Optional(
      Type.Object(
        Object.fromEntries(DIGEST_FIELDS.map((field) => [field, FIELD_DIGEST])) as Record<
          DigestField,
          typeof FIELD_DIGEST
        >,
        { additionalProperties: false },
      ),
    ),
    definition: Type.Optional(
      Type.Object({ inputSchema: Type.Object({}) }, { additionalProperties: true }),
    ),
  }),
);
const BASELINE = checker(BaselineSchema);

/**
 * Read a baseline kept in a ConfigMap key: YAML or JSON in the shape of `approved.tools`.
 * The API server validates inline baselines; this one it never sees, so it is checked here
 * with the same rules (a name that follows MCP's rules, exactly one of digest and definition,
 * no name twice).
 */
export function parseApprovedTools(text: string, source: string): BaselineTool[] {
  let value: unknown;
  try {
    value = load(text);
  } catch (error) {
    throw operatorError('MCPOP_BASELINE_INVALID', source, (error as Error).message);
  }
  if (!BASELINE.check(value)) {
    const { path, message } = BASELINE.firstError(value);
    throw operatorError('MCPOP_BASELINE_INVALID', source, `${path || '/'}: ${message}`);
  }
  const names = new Set<string>();
  for (const [i, tool] of value.entries()) {
    if ((tool.digest === undefined) === (tool.definition === undefined)) {
      const problem = 'set exactly one of digest and definition';
      throw operatorError('MCPOP_BASELINE_INVALID', source, `/${i} (${tool.name}): ${problem}`);
    }
    if (tool.fields !== undefined && tool.digest === undefined) {
      const problem = 'fields goes with digest';
      throw operatorError('MCPOP_BASELINE_INVALID', source, `/${i} (${tool.name}): ${problem}`);
    }
    if (names.has(tool.name)) {
      throw operatorError('MCPOP_BASELINE_INVALID', source, `tool ${tool.name} is listed twice`);
    }
    names.add(tool.name);
  }
  return value;
}
