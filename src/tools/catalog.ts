/**
 * Prompts, resources and resource templates: model-facing text as much as tool descriptions
 * (a prompt's description and arguments, a resource's name, description and MIME type reach
 * the model the same way), so discovery records them and drift compares them with the
 * approved baseline like tools: digested per field (RFC 8785 canonical JSON, digest.ts), with
 * the same severities. Pure functions, deterministic output (keys in RFC 8785 order).
 *
 * Sources: MCP 2025-11-25 server/prompts (`Prompt`, `PromptArgument`), server/resources
 * (`Resource`, `ResourceTemplate`); the same in 2026-07-28.
 */

import { isDeepStrictEqual } from 'node:util';
import type { DriftSeverity, DriftStatus } from '../api/v1alpha1/mcpserver.ts';
import { CATALOG_DRIFT_MAX, CATALOG_KEY_MAX } from '../tool-record.ts';
import { type Digest, compareNames, digestOf } from './digest.ts';
import { highest } from './severity.ts';
import { shown } from './text.ts';

export const CATALOG_KINDS = ['prompts', 'resources', 'resourceTemplates'] as const;
export type CatalogKind = (typeof CATALOG_KINDS)[number];

interface KindSpec {
  method: 'prompts/list' | 'resources/list' | 'resources/templates/list';
  /** The capability a server declares to offer the list (2025-11-25 basic/lifecycle). */
  capability: 'prompts' | 'resources';
  /** The field that identifies an item: names for prompts, URIs for resources. */
  key: 'name' | 'uri' | 'uriTemplate';
  /**
   * The digested fields, each compared on its own. `_meta` and `icons` are left out for the
   * reason digest.ts gives for tools; so is a resource's `size`, which follows its content.
   */
  fields: readonly string[];
  /** What a singular item is called in messages. */
  noun: string;
}

export const CATALOG: Record<CatalogKind, KindSpec> = {
  prompts: {
    method: 'prompts/list',
    capability: 'prompts',
    key: 'name',
    fields: ['title', 'description', 'arguments'],
    noun: 'prompt',
  },
  resources: {
    method: 'resources/list',
    capability: 'resources',
    key: 'uri',
    fields: ['name', 'title', 'description', 'mimeType', 'annotations'],
    noun: 'resource',
  },
  resourceTemplates: {
    method: 'resources/templates/list',
    capability: 'resources',
    key: 'uriTemplate',
    fields: ['name', 'title', 'description', 'mimeType', 'annotations'],
    noun: 'resource template',
  },
};

/** An item as listed: an object with its key field a string; other keys as the server sent them. */
export type ListedItem = Record<string, unknown>;

/** One item of a snapshot: its key, its digests in full and its definition as listed. */
export interface CatalogItem {
  key: string;
  digest: Digest;
  fields: Record<string, Digest>;
  definition: ListedItem;
}

/** The items of each kind the server declares a capability for; a kind it does not is absent. */
export type Catalog = Partial<Record<CatalogKind, CatalogItem[]>>;

/** Whether a listed entry can be recorded: an object whose key field is a string. */
export function isKeyed(kind: CatalogKind, entry: unknown): entry is ListedItem {
  return (
    typeof entry === 'object' &&
    entry !== null &&
    !Array.isArray(entry) &&
    typeof (entry as ListedItem)[CATALOG[kind].key] === 'string'
  );
}

/** The part of an item its whole digest covers: its key and the digested fields it has. */
function digestedPart(kind: CatalogKind, item: ListedItem): ListedItem {
  const { key, fields } = CATALOG[kind];
  const part: ListedItem = { [key]: item[key] };
  for (const field of fields) if (item[field] !== undefined) part[field] = item[field];
  return part;
}

/**
 * The whole digest of a listed item, as discovery records it and the bridge's policy compares
 * it (one definition for both). Throws MCPOP_NOT_CANONICAL as digestOf does.
 */
export function itemDigest(kind: CatalogKind, item: ListedItem): Digest {
  return digestOf(digestedPart(kind, item));
}

/** Digests every item, ordered by key. Throws MCPOP_NOT_CANONICAL as digestOf does. */
export function catalogItems(kind: CatalogKind, listed: readonly ListedItem[]): CatalogItem[] {
  const { key, fields } = CATALOG[kind];
  return listed
    .map((definition) => ({
      key: definition[key] as string,
      digest: itemDigest(kind, definition),
      fields: Object.fromEntries(
        fields.filter((f) => definition[f] !== undefined).map((f) => [f, digestOf(definition[f])]),
      ),
      definition,
    }))
    .sort((a, b) => compareNames(a.key, b.key));
}

/** Digest of a kind's items: over their digests ordered by key, as snapshotDigest for tools. */
export function catalogDigest(items: readonly CatalogItem[]): Digest {
  return digestOf(items.map((item) => item.digest));
}

// --- baseline and drift ------------------------------------------------------------------------

/** One approved item: its key and either its digest or its definition (without the key). */
export interface CatalogBaselineItem {
  key: string;
  digest?: string | undefined;
  definition?: ListedItem | undefined;
}

/** The approved items of each kind; a kind left out is not compared. */
export type CatalogBaseline = Partial<Record<CatalogKind, readonly CatalogBaselineItem[]>>;

/**
 * The digest an approved item stands for: the one it carries, or its definition's (the CRD
 * requires exactly one of the two).
 */
export function approvedDigest(kind: CatalogKind, entry: CatalogBaselineItem): string {
  return entry.definition === undefined
    ? (entry.digest ?? '')
    : itemDigest(kind, { ...entry.definition, [CATALOG[kind].key]: entry.key });
}

export interface CatalogChange {
  key: string;
  fields: string[];
  severity: DriftSeverity;
  /** One line per finding, e.g. `arguments: city now required`. */
  details: string[];
}

export interface CatalogDrift {
  added: string[];
  removed: string[];
  changed: CatalogChange[];
}

export type CatalogDrifts = Partial<Record<CatalogKind, CatalogDrift>>;

/**
 * Drift of every kind the baseline approves. A kind the server does not offer counts as
 * empty: approved prompts that are no longer listed are removed.
 */
export function catalogDrift(catalog: Catalog, baseline: CatalogBaseline): CatalogDrifts {
  const drifts: CatalogDrifts = {};
  for (const kind of CATALOG_KINDS) {
    const approved = baseline[kind];
    if (approved === undefined) continue;
    const drift = kindDrift(kind, catalog[kind] ?? [], approved);
    if (drift.added.length + drift.removed.length + drift.changed.length > 0) drifts[kind] = drift;
  }
  return drifts;
}

function kindDrift(
  kind: CatalogKind,
  items: readonly CatalogItem[],
  approved: readonly CatalogBaselineItem[],
): CatalogDrift {
  const listed = new Map<string, CatalogItem>();
  for (const item of items) if (!listed.has(item.key)) listed.set(item.key, item);
  const known = new Map(approved.map((entry) => [entry.key, entry]));
  const changed: CatalogChange[] = [];
  for (const entry of known.values()) {
    const current = listed.get(entry.key);
    const change = current === undefined ? undefined : compareItem(kind, entry, current);
    if (change !== undefined) changed.push(change);
  }
  return {
    added: sorted([...listed.keys()].filter((key) => !known.has(key))),
    removed: sorted([...known.keys()].filter((key) => !listed.has(key))),
    changed: changed.sort((a, b) => compareNames(a.key, b.key)),
  };
}

function compareItem(
  kind: CatalogKind,
  entry: CatalogBaselineItem,
  current: CatalogItem,
): CatalogChange | undefined {
  if (entry.definition === undefined) {
    if (entry.digest === current.digest) return undefined;
    const details = [
      'the baseline has only a digest: approve with definitions to see what changed',
    ];
    return { key: entry.key, fields: [], severity: 'breaking', details };
  }
  const before = { ...entry.definition, [CATALOG[kind].key]: entry.key };
  if (approvedDigest(kind, entry) === current.digest) return undefined;
  const fields = CATALOG[kind].fields.filter(
    (field) => !isDeepStrictEqual(before[field], current.definition[field]),
  );
  const verdicts = fields.map((field) => judge(field, before[field], current.definition[field]));
  return {
    key: entry.key,
    fields,
    severity: worst(verdicts.map((v) => v.severity)),
    details: verdicts.flatMap((v) => v.details),
  };
}

interface Verdict {
  severity: DriftSeverity;
  details: string[];
}

/**
 * Text the model reads is description-only, as for tools; annotations are hints (compatible);
 * a changed MIME type changes what a reader gets (breaking); prompt arguments are judged one
 * by one, as a tool's inputSchema is.
 */
function judge(field: string, before: unknown, after: unknown): Verdict {
  switch (field) {
    case 'name':
    case 'title':
    case 'description':
      return { severity: 'description-only', details: [`${field} changed`] };
    case 'annotations':
      return { severity: 'compatible', details: ['annotations changed'] };
    case 'arguments':
      return judgeArguments(before, after);
    default:
      return {
        severity: 'breaking',
        details: [
          `${field}: ${JSON.stringify(before) ?? 'unset'} → ${JSON.stringify(after) ?? 'unset'}`,
        ],
      };
  }
}

interface Argument {
  name: string;
  required: boolean;
  text: unknown[];
}

/**
 * A prompt's arguments (2025-11-25 `PromptArgument`): a removed argument or a new required one
 * breaks a caller that fills the old ones; a new optional one does not; a changed description
 * or title is text the model reads.
 */
function judgeArguments(before: unknown, after: unknown): Verdict {
  const was = argumentsOf(before);
  const now = argumentsOf(after);
  if (was === undefined || now === undefined) {
    return { severity: 'breaking', details: ['arguments are not a list of named arguments'] };
  }
  const verdicts: Verdict[] = [];
  for (const [name, arg] of was) {
    const next = now.get(name);
    if (next === undefined) verdicts.push(verdict('breaking', `argument ${name} removed`));
    else if (next.required !== arg.required) {
      verdicts.push(
        next.required
          ? verdict('breaking', `argument ${name} now required`)
          : verdict('compatible', `argument ${name} no longer required`),
      );
    }
    if (next !== undefined && !isDeepStrictEqual(next.text, arg.text)) {
      verdicts.push(verdict('description-only', `argument ${name}: text changed`));
    }
  }
  for (const [name, arg] of now) {
    if (was.has(name)) continue;
    verdicts.push(
      arg.required
        ? verdict('breaking', `required argument ${name} added`)
        : verdict('compatible', `optional argument ${name} added`),
    );
  }
  return {
    severity: worst(verdicts.map((v) => v.severity)),
    details: verdicts.flatMap((v) => v.details),
  };
}

function verdict(severity: DriftSeverity, detail: string): Verdict {
  return { severity, details: [detail] };
}

function argumentsOf(value: unknown): Map<string, Argument> | undefined {
  if (value === undefined) return new Map();
  if (!Array.isArray(value)) return undefined;
  const args = new Map<string, Argument>();
  for (const arg of value as unknown[]) {
    const { name, required, title, description } = (arg ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string') return undefined;
    args.set(name, { name, required: required === true, text: [title, description] });
  }
  return args;
}

/** The worst severity; a change nothing explains (only the key's digest moved) is breaking. */
function worst(severities: readonly DriftSeverity[]): DriftSeverity {
  return highest(severities) ?? 'breaking';
}

function sorted(keys: string[]): string[] {
  return [...new Set(keys)].sort(compareNames);
}

/**
 * status.drift's part for prompts and resources: keys made visible and cut, each list bounded,
 * empty lists left out (`mcp-operator diff` shows everything).
 */
export function catalogDriftStatus(drifts: CatalogDrifts): Pick<DriftStatus, CatalogKind> {
  const status: Pick<DriftStatus, CatalogKind> = {};
  for (const kind of CATALOG_KINDS) {
    const drift = drifts[kind];
    if (drift === undefined) continue;
    const keys = (list: string[]) => list.slice(0, CATALOG_DRIFT_MAX).map(shownKey);
    status[kind] = {
      ...(drift.added.length > 0 ? { added: keys(drift.added) } : {}),
      ...(drift.removed.length > 0 ? { removed: keys(drift.removed) } : {}),
      ...(drift.changed.length > 0
        ? {
            changed: drift.changed
              .slice(0, CATALOG_DRIFT_MAX)
              .map(({ key, fields, severity }) => ({ key: shownKey(key), fields, severity })),
          }
        : {}),
    };
  }
  return status;
}

/** A prompt name or resource URI as status and messages show it. */
export function shownKey(key: string): string {
  return shown(key, CATALOG_KEY_MAX);
}

/**
 * The approved items of each kind the snapshot has, as `spec.tools.approved` holds them:
 * `{<key>: …, definition}` (exactly the digested part, so that it digests to the item's
 * digest) or `{<key>: …, digest}`.
 */
export function approvedCatalog(
  catalog: Catalog,
  form: 'digests' | 'definitions',
): Partial<Record<CatalogKind, Record<string, unknown>[]>> {
  const approved: Partial<Record<CatalogKind, Record<string, unknown>[]>> = {};
  for (const kind of CATALOG_KINDS) {
    const items = catalog[kind];
    if (items === undefined) continue;
    const key = CATALOG[kind].key;
    approved[kind] = items.map((item) => {
      if (form === 'digests') return { [key]: item.key, digest: item.digest };
      const definition = digestedPart(kind, item.definition);
      delete definition[key];
      return { [key]: item.key, definition };
    });
  }
  return approved;
}
