/**
 * Prompts, resources and resource templates as a server lists them: model-facing text as much
 * as tool descriptions (a prompt's description and arguments, a resource's name, description and
 * MIME type reach the model the same way), so discovery records them, digested per field (RFC
 * 8785 canonical JSON, digest.ts) like tools. Pure functions, deterministic output (keys in
 * RFC 8785 order).
 *
 * Sources: MCP 2025-11-25 server/prompts (`Prompt`, `PromptArgument`), server/resources
 * (`Resource`, `ResourceTemplate`); the same in 2026-07-28.
 */

import { type Digest, compareNames, digestOf } from './digest.ts';

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
