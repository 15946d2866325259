/**
 * The approved baseline of a server, resolved: the tools, prompts, resources and resource
 * templates a human approved, which drift compares what the server lists with and the bridge's
 * policy (driftPolicy Enforce) is made from. Pure: the caller reads the ConfigMap that
 * `spec.tools.approved.configMapRef` names and passes its text in.
 *
 * Each approved entry holds the digest it was approved with, or the definition that digest is
 * computed from (the CRD, and `parseApprovedTools` for a ConfigMap, require exactly one); the
 * digest an entry stands for is computed here alone, so drift, the policy and the bridge can
 * never disagree about what was approved.
 */

import { Type } from '@sinclair/typebox';
import { load } from 'js-yaml';
import type { MCPServerSpec } from '../api/v1alpha1/mcpserver.ts';
import { operatorError } from '../errors.ts';
import { checker } from '../mcp/schemas.ts';
import { DIGEST_PATTERN, FIELD_DIGEST_PATTERN, TOOL_NAME_PATTERN } from '../tool-record.ts';
import { CATALOG, CATALOG_KINDS, type CatalogKind, itemDigest } from './catalog-items.ts';
import { type Digest, type DigestField, DIGEST_FIELDS, toolDigest } from './digest.ts';

/** One entry of `spec.tools.approved.tools`: a digest (optionally with field digests) or a definition. */
export interface BaselineTool {
  name: string;
  digest?: string | undefined;
  /** Field digests as `approve` writes them; full or abbreviated (a prefix is compared). */
  fields?: Partial<Record<DigestField, string>> | undefined;
  /** The definition without its name, as `approve --definitions` writes it. */
  definition?: Record<string, unknown> | undefined;
}

/** One approved prompt, resource or template: its key and either its digest or its definition (without the key). */
export interface CatalogBaselineItem {
  key: string;
  digest?: string | undefined;
  definition?: Record<string, unknown> | undefined;
}

/** The approved items of each kind; a kind left out is not compared. */
export type CatalogBaseline = Partial<Record<CatalogKind, readonly CatalogBaselineItem[]>>;

export type Baseline =
  /** No spec.tools.approved: nothing to compare with. */
  | { kind: 'none' }
  | { kind: 'tools'; tools: readonly BaselineTool[]; catalog?: CatalogBaseline }
  /**
   * A ConfigMap baseline that is missing or does not parse; `message` says which and why. The
   * prompts and resources approved inline beside it still hold.
   */
  | { kind: 'invalid'; message: string; catalog?: CatalogBaseline };

export const NO_BASELINE: Baseline = { kind: 'none' };

/** `spec.tools.approved` as the API holds it. */
export type ApprovedSpec = NonNullable<NonNullable<MCPServerSpec['tools']>['approved']>;

/**
 * The digest an approved entry stands for: its definition's, digested with its key put back
 * as `digestOf` digests what a server lists, or the digest it carries.
 */
function standsFor(
  entry: { digest?: string | undefined; definition?: Record<string, unknown> | undefined },
  digestOf: (definition: Record<string, unknown>) => Digest,
): string {
  return entry.definition === undefined ? (entry.digest ?? '') : digestOf(entry.definition);
}

/** The digest an approved tool stands for. */
export function approvedToolDigest(tool: BaselineTool): string {
  return standsFor(tool, (definition) => toolDigest({ ...definition, name: tool.name }));
}

/** The digest an approved prompt, resource or template stands for. */
export function approvedItemDigest(kind: CatalogKind, entry: CatalogBaselineItem): string {
  const key = CATALOG[kind].key;
  return standsFor(entry, (definition) => itemDigest(kind, { ...definition, [key]: entry.key }));
}

/**
 * The baseline of `spec.tools.approved`: its tools inline or, for a `configMapRef`, `kept`
 * (what `parseApprovedTools` made of the ConfigMap's text, or invalid when it could not be
 * read or parsed), with the prompts, resources and resource templates it approves inline.
 */
export function resolveBaseline(
  approved: ApprovedSpec | undefined,
  kept: Baseline = NO_BASELINE,
): Baseline {
  if (approved === undefined) return NO_BASELINE;
  const tools: Baseline =
    approved.tools === undefined ? kept : { kind: 'tools', tools: approved.tools };
  if (tools.kind === 'none') return tools;
  const catalog = catalogBaseline(approved);
  return Object.keys(catalog).length === 0 ? tools : { ...tools, catalog };
}

/** The approved items of each kind `approved` lists, keyed as catalog-items.ts keys them. */
function catalogBaseline(approved: ApprovedSpec): CatalogBaseline {
  const catalog: { -readonly [K in keyof CatalogBaseline]: CatalogBaseline[K] } = {};
  for (const kind of CATALOG_KINDS) {
    const items = approved[kind] as Record<string, unknown>[] | undefined;
    if (items === undefined) continue;
    const key = CATALOG[kind].key;
    catalog[kind] = items.map(({ [key]: id, digest, definition }) => ({
      key: id as string,
      digest: digest as string | undefined,
      definition: definition as Record<string, unknown> | undefined,
    }));
  }
  return catalog;
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
