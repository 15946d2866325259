/**
 * Findings on the text a server shows the model: tool, prompt and resource names, titles and
 * descriptions, argument and property descriptions, and the server's `instructions`. Each
 * finding has a code, the span of the text it is about, a reason and a level
 * (docs/judging.md, "Findings"). Pure and offline; time linear in the text listed: a schema is
 * walked once, iteratively (no recursion, so 1,000 levels of nesting cost no stack), and each
 * text gets the checks of text-scan.ts once.
 *
 * Distinct from findings.ts, which says how a listing breaks the MCP schema: these say that a
 * well-formed listing reads like an attack on the model (tool poisoning, shadowing).
 */

import { DEFAULT_FINDING_ALARM_LEVEL } from '../tool-record.ts';
import { CATALOG, CATALOG_KINDS, type CatalogKind, type ListedItem } from './catalog-items.ts';
import { compareNames } from './digest.ts';
import { shown, visible } from './text.ts';
import {
  FINDING_LEVELS,
  type FindingLevel,
  type Hit,
  normalise,
  scanName,
  scanText,
} from './text-scan.ts';

export { FINDING_LEVELS, TEXT_FINDING_CODES } from './text-scan.ts';
export type { FindingLevel, TextFindingCode } from './text-scan.ts';

/** A piece of text the model reads, and where it is. */
export interface ModelText {
  /** `tool read_file`, `prompt summarize`, `resource file:///a`, `instructions`. */
  item: string;
  /** `description`, `inputSchema/properties/path/description`, `arguments/0/description`. */
  field: string;
  text: string;
}

export interface TextFinding extends Hit {
  item: string;
  field: string;
  /** The start of the span's text, for `mcp-operator diff`; not kept in status. */
  excerpt: string;
}

/** Characters of a span `diff` prints. */
const EXCERPT_MAX = 100;

const excerpt = (text: string, hit: Hit) =>
  text.slice(hit.start, Math.min(hit.end, hit.start + EXCERPT_MAX));

/** What a listing holds of model-facing text; the shape of a snapshot, without its digests. */
export interface Listing {
  instructions?: string | undefined;
  tools: readonly Record<string, unknown>[];
  catalog?: Partial<Record<CatalogKind, readonly ListedItem[]>> | undefined;
}

/**
 * The default level at and above which a finding raises the alarm (Event, alert):
 * spec.tools.textFindings.alarmLevel when unset.
 */
export const DEFAULT_FINDING_LEVEL: FindingLevel = DEFAULT_FINDING_ALARM_LEVEL;

/** The alarm level a server's spec sets, or the default. */
export function alarmLevelOf(spec: {
  tools?: { textFindings?: { alarmLevel?: FindingLevel | undefined } | undefined } | undefined;
}): FindingLevel {
  return spec.tools?.textFindings?.alarmLevel ?? DEFAULT_FINDING_LEVEL;
}

/** Whether `level` is at least `floor`. */
export function levelAtLeast(level: FindingLevel, floor: FindingLevel): boolean {
  return FINDING_LEVELS.indexOf(level) <= FINDING_LEVELS.indexOf(floor);
}

/** The highest level of `findings`; undefined for none. */
export function highestLevel(
  findings: readonly { level: FindingLevel }[],
): FindingLevel | undefined {
  let top: FindingLevel | undefined;
  for (const { level } of findings) if (top === undefined || levelAtLeast(level, top)) top = level;
  return top;
}

/** Schema keys whose values are text the model reads. */
const SCHEMA_TEXT_KEYS = new Set(['description', 'title']);

/** Every model-facing text of a listing, in a stable order (tools by name, then the catalog). */
export function modelTexts(listing: Listing): ModelText[] {
  const texts: ModelText[] = [];
  const push = (item: string, field: string, value: unknown) => {
    if (typeof value === 'string' && value.length > 0) texts.push({ item, field, text: value });
  };
  push('instructions', 'instructions', listing.instructions);
  const tools = [...listing.tools].sort((a, b) => compareNames(String(a.name), String(b.name)));
  for (const tool of tools) {
    const item = `tool ${String(tool.name)}`;
    push(item, 'name', tool.name);
    push(item, 'title', tool.title);
    push(item, 'description', tool.description);
    push(item, 'annotations/title', record(tool.annotations).title);
    schemaTexts(item, 'inputSchema', tool.inputSchema, texts);
    schemaTexts(item, 'outputSchema', tool.outputSchema, texts);
  }
  for (const kind of CATALOG_KINDS) {
    const noun = CATALOG[kind].noun;
    for (const entry of listing.catalog?.[kind] ?? []) {
      const item = `${noun} ${String(entry[CATALOG[kind].key])}`;
      push(item, 'name', entry.name);
      push(item, 'title', entry.title);
      push(item, 'description', entry.description);
      const args = Array.isArray(entry.arguments) ? (entry.arguments as unknown[]) : [];
      args.forEach((arg, i) => {
        push(item, `arguments/${i}/name`, record(arg).name);
        push(item, `arguments/${i}/title`, record(arg).title);
        push(item, `arguments/${i}/description`, record(arg).description);
      });
    }
  }
  return texts;
}

/**
 * The titles, descriptions and property names of a JSON Schema, depth first with an explicit
 * stack: a schema 1,000 levels deep costs what 1,000 siblings cost.
 */
function schemaTexts(item: string, root: string, schema: unknown, texts: ModelText[]): void {
  const stack: { path: string; node: unknown }[] = [{ path: root, node: schema }];
  while (stack.length > 0) {
    const { path, node } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    const entries: (readonly [string, unknown])[] = Array.isArray(node)
      ? (node as unknown[]).map((value, i) => [String(i), value] as const)
      : Object.entries(node as Record<string, unknown>);
    const properties = path.endsWith('/properties');
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, value] = entries[i]!;
      const at = `${path}/${key}`;
      if (properties) texts.push({ item, field: `${at} (name)`, text: key });
      if (SCHEMA_TEXT_KEYS.has(key) && typeof value === 'string' && !properties) {
        texts.push({ item, field: at, text: value });
      } else if (typeof value === 'object' && value !== null) {
        stack.push({ path: at, node: value });
      }
    }
  }
}

/** A text this many times longer than the server's usual description stands out… */
const OUTLIER_RATIO = 10;
/** …once it is longer than this: a long manual is not hidden, a wall of padding may be. */
const OUTLIER_MIN = 3000;
/** Descriptions a server needs before its usual length means anything. */
const OUTLIER_PEERS = 3;

/**
 * Every finding on a listing, in the order of modelTexts. `otherServers` maps the tool names of
 * the namespace's other MCPServers to their server, for shadowing.
 */
export function judgeListing(
  listing: Listing,
  otherServers: ReadonlyMap<string, string> = new Map(),
): TextFinding[] {
  const texts = modelTexts(listing);
  const findings: TextFinding[] = [];
  const usual = usualLength(texts);
  const own = new Set(listing.tools.map((tool) => String(tool.name).toLowerCase()));
  for (const { item, field, text } of texts) {
    const name = field === 'name' || field.endsWith('(name)') || field.endsWith('/name');
    for (const hit of name ? scanName(text) : scanText(text)) {
      findings.push({ item, field, ...hit, excerpt: excerpt(text, hit) });
    }
    if (usual !== undefined && isDescription(field) && text.length >= OUTLIER_MIN) {
      if (text.length >= OUTLIER_RATIO * usual) {
        findings.push({
          item,
          field,
          code: 'long-text',
          level: 'warning',
          start: 0,
          end: text.length,
          reason: `${text.length} characters, where this server's descriptions usually have ${usual}`,
          excerpt: text.slice(0, EXCERPT_MAX),
        });
      }
    }
    if (otherServers.size > 0 && !name) {
      const shadow = namedTool(text, otherServers, own);
      if (shadow !== undefined)
        findings.push({ item, field, ...shadow, excerpt: excerpt(text, shadow) });
    }
  }
  return findings;
}

function isDescription(field: string): boolean {
  return field === 'description' || field.endsWith('/description');
}

/** The median length of the descriptions, when there are enough to say. */
function usualLength(texts: readonly ModelText[]): number | undefined {
  const lengths = texts
    .filter(({ field }) => isDescription(field))
    .map(({ text }) => text.length)
    .sort((a, b) => a - b);
  if (lengths.length < OUTLIER_PEERS + 1) return undefined;
  return Math.max(1, lengths[Math.floor(lengths.length / 2)]!);
}

/** Identifier-like words: what a tool name looks like in prose. */
const IDENTIFIER = /[a-z0-9][a-z0-9_.-]{2,127}/g;

/**
 * The first tool of another server that `text` names. A name with a separator (`send_email`,
 * `get-file`) counts wherever it stands; a plain word (`search`) only as `the search tool`,
 * since it is also just a word.
 */
function namedTool(
  text: string,
  others: ReadonlyMap<string, string>,
  own: ReadonlySet<string>,
): Hit | undefined {
  const normal = normalise(text, true);
  const lowered = normal.text;
  for (const m of lowered.matchAll(IDENTIFIER)) {
    const word = m[0].replace(/[.-]+$/, '');
    const server = others.get(word);
    if (server === undefined || own.has(word)) continue;
    const separated = /[_.-]/.test(word);
    const followed = lowered.startsWith(' tool', m.index + m[0].length);
    if (!separated && !followed) continue;
    const start = normal.offsets?.[m.index] ?? m.index;
    const end = normal.offsets?.[m.index + word.length] ?? m.index + word.length;
    return {
      code: 'shadowing-name',
      level: 'warning',
      start,
      end,
      reason: `names ${word}, a tool of MCPServer ${server}`,
    };
  }
  return undefined;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** How many findings there are at each level, for the metric. */
export function countByLevel(
  findings: readonly TextFinding[],
): Partial<Record<FindingLevel, number>> {
  const counts: Partial<Record<FindingLevel, number>> = {};
  for (const { level } of findings) counts[level] = (counts[level] ?? 0) + 1;
  return counts;
}

/**
 * Findings as `mcp-operator diff` prints them, most severe first, each with its span as written
 * (control characters made visible, cut); empty without findings.
 */
export function formatTextFindings(findings: readonly TextFinding[]): string {
  if (findings.length === 0) return '';
  const ordered = FINDING_LEVELS.flatMap((level) => findings.filter((f) => f.level === level));
  const lines = [
    `Text findings: ${findings.length} on the text the model reads (docs/judging.md explains each code):`,
    ...ordered.map(
      (f) =>
        `${f.level.toUpperCase()}  ${f.code}  ${f.item}  ${f.field} [${f.start}, ${f.end}): ${f.reason}: "${shown(f.excerpt, EXCERPT_MAX * 2)}"`,
    ),
  ];
  return `${lines.map((line) => visible(line)).join('\n')}\n`;
}
