/**
 * Tool digests: SHA-256 over RFC 8785 (JSON Canonicalization Scheme) canonical JSON, written
 * `sha256:<64 lowercase hex>`. ONE definition, shared by discovery (what a server advertises),
 * approval (what a human accepted) and the bridge's policy filter (what agents may call), so
 * the three can never disagree about whether a tool changed. See
 * docs/adr/0003-digests-and-drift.md for what the digests cover and why.
 */

import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { DIGEST_PATTERN, TOOL_FIELDS, type ToolField } from '../tool-record.ts';
import { operatorError } from '../errors.ts';

export type Digest = `sha256:${string}`;

/**
 * The parts of a tool definition (MCP 2025-11-25 / 2026-07-28 schema, `Tool`) that make up its
 * contract with the model and the caller, each digested on its own. `name` is the identity and
 * is covered only by the whole digest. `_meta` and `icons` are left out: `_meta` is reserved
 * for implementation metadata that may vary per response, and icons are presentation that
 * neither the model nor the caller depends on. The list itself is TOOL_FIELDS
 * (src/tool-record.ts), which the API declares and status.drift names fields from.
 */
export const DIGEST_FIELDS = TOOL_FIELDS;

export type DigestField = ToolField;

/** Anything shaped like an MCP `Tool`; other keys are ignored. */
export type ToolLike = { readonly name: string } & { readonly [F in DigestField]?: unknown };

/** Per-field digests; a field the tool does not have has no entry. */
export type FieldDigests = { [F in DigestField]?: Digest };

const DIGEST = new RegExp(DIGEST_PATTERN);

export function isDigest(value: unknown): value is Digest {
  return typeof value === 'string' && DIGEST.test(value);
}

/** RFC 8785 canonical JSON of any JSON value; throws MCPOP_NOT_CANONICAL as digestOf does. */
function canonicalText(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (cause) {
    throw operatorError('MCPOP_NOT_CANONICAL', (cause as Error).message);
  }
  if (text === undefined) throw operatorError('MCPOP_NOT_CANONICAL', 'value is undefined');
  return text;
}

const sha256 = (text: string): Digest =>
  `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

/**
 * Digest of any JSON value. Throws MCPOP_NOT_CANONICAL for values RFC 8785 cannot represent
 * (lone surrogates in strings, non-finite numbers, cycles): a server can send a lone
 * surrogate in valid JSON, and that must be an error, not a crash.
 */
export function digestOf(value: unknown): Digest {
  return sha256(canonicalText(value));
}

/** The part of a tool that its whole digest covers: its name and the DIGEST_FIELDS it has. */
export function digestedPart(tool: ToolLike): Record<string, unknown> {
  const part: Record<string, unknown> = { name: tool.name };
  for (const field of DIGEST_FIELDS) {
    if (tool[field] !== undefined) part[field] = tool[field];
  }
  return part;
}

/** UTF-16 code unit order, the order RFC 8785 sorts keys in (and snapshotDigest uses). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The canonical text of each digested field the tool has, in DIGEST_FIELDS order. */
function canonicalFields(tool: ToolLike): [DigestField, string][] {
  return DIGEST_FIELDS.filter((field) => tool[field] !== undefined).map((field) => [
    field,
    canonicalText(tool[field]),
  ]);
}

/**
 * The canonical text of the tool's digested part, made from its fields' texts: an object's
 * canonical JSON is its members' texts under its keys in sorted order, so that each field is
 * canonicalised once for both digests. Discovery digests every tool of every run, and
 * canonicalising each tool twice was most of what the operator allocated
 * (bench/allocation-sampler.ts, 1,000 servers of 100 tools).
 */
function canonicalWhole(tool: ToolLike, fields: readonly [DigestField, string][]): string {
  const members = [['name', canonicalText(tool.name)] as const, ...fields]
    .sort(([a], [b]) => compareNames(a, b))
    .map(([key, text]) => `${JSON.stringify(key)}:${text}`);
  return `{${members.join(',')}}`;
}

/** Digest of the whole tool: name plus every digested field. Any change to those changes it. */
export function toolDigest(tool: ToolLike): Digest {
  return sha256(canonicalWhole(tool, canonicalFields(tool)));
}

const digestsOf = (fields: readonly [DigestField, string][]): FieldDigests =>
  Object.fromEntries(fields.map(([field, text]) => [field, sha256(text)]));

/** Digest of each field the tool has, so a change can be attributed to the field(s) that moved. */
export function fieldDigests(tool: ToolLike): FieldDigests {
  return digestsOf(canonicalFields(tool));
}

/** The whole digest and the per-field digests of a tool, canonicalising each field once. */
export function toolDigests(tool: ToolLike): { digest: Digest; fields: FieldDigests } {
  const fields = canonicalFields(tool);
  return { digest: sha256(canonicalWhole(tool, fields)), fields: digestsOf(fields) };
}

/**
 * Digest of a whole tool set: over the tool digests ordered by name (UTF-16 code units, the
 * order RFC 8785 uses for keys). It depends on nothing but the per-tool digests, so anyone can
 * recompute it from `status.discovery.tools`, and the order the server listed tools in does
 * not matter.
 */
export function snapshotDigest(tools: readonly { name: string; digest: Digest }[]): Digest {
  const ordered = [...tools].sort((a, b) => compareNames(a.name, b.name));
  return digestOf(ordered.map((tool) => tool.digest));
}
