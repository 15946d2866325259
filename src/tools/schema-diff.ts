/**
 * What changed between two JSON Schemas, keyword by keyword, and in which direction: does the
 * new schema accept fewer values (narrows), more (widens), or different ones (changes)? For a
 * tool's inputSchema narrowing breaks callers; for its outputSchema widening breaks consumers.
 *
 * Why not a library: api-smart-diff classifies a removed property and an added
 * `additionalProperties: false` as non-breaking and a widened type as breaking (it is not
 * direction-aware for plain schemas); json-schema-diff has no enum, const or pattern support
 * and flags every new optional property as a removal. This module covers the keywords tool
 * schemas use (JSON Schema 2020-12 validation and applicator vocabularies) and calls anything
 * else a change, which counts as breaking: unsure means review.
 */

import { isDeepStrictEqual } from 'node:util';
import canonicalize from 'canonicalize';

export type Effect =
  /** Accepts fewer values than before. */
  | 'narrows'
  /** Accepts more values than before. */
  | 'widens'
  /** Accepts different values, or the effect cannot be told. */
  | 'changes'
  /** Only annotations changed (title, description, examples, default …). */
  | 'text'
  /** A property was added to `properties` (it is new, so no old caller sends it). */
  | 'adds-property'
  /** As adds-property, and the new property takes any text (acceptsFreeText). */
  | 'adds-free-text'
  /** A property was removed from `properties` (old callers still send it; consumers read it). */
  | 'removes-property';

export interface SchemaChange {
  /** JSON Pointer into the schema, `''` for its root. */
  path: string;
  effect: Effect;
  detail: string;
}

/** Keywords that describe but do not constrain (JSON Schema 2020-12 meta-data vocabulary). */
const TEXT_KEYWORDS = new Set([
  'title',
  'description',
  'examples',
  'default',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/** Bounds where a larger value accepts fewer instances, and those where a smaller one does. */
const LOWER_BOUNDS = new Set([
  'minimum',
  'exclusiveMinimum',
  'minLength',
  'minItems',
  'minProperties',
  'minContains',
]);
const UPPER_BOUNDS = new Set([
  'maximum',
  'exclusiveMaximum',
  'maxLength',
  'maxItems',
  'maxProperties',
  'maxContains',
]);

/** Subschema keywords where "absent" means "accepts everything" (the schema `true`). */
const SUBSCHEMAS = new Set([
  'additionalProperties',
  'items',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);

/** Validation keywords with no finer model: adding one narrows, removing one widens. */
const CONSTRAINTS = new Set(['pattern', 'format', 'multipleOf', 'uniqueItems', 'contains']);

/** Maps of named subschemas compared name by name. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

type Schema = Record<string, unknown>;
type Out = SchemaChange[];

export function diffSchemas(before: unknown, after: unknown): SchemaChange[] {
  const out: Out = [];
  compare(before, after, '', out);
  return out;
}

function compare(before: unknown, after: unknown, path: string, out: Out): void {
  if (isDeepStrictEqual(before, after)) return;
  const a = asSchema(before);
  const b = asSchema(after);
  if (a === false || b === false) {
    out.push({
      path,
      effect: a === false ? 'widens' : 'narrows',
      detail: `${json(before)} → ${json(after)}`,
    });
    return;
  }
  if (a === undefined || b === undefined) {
    out.push({ path, effect: 'changes', detail: 'not a schema' });
    return;
  }
  const handledValues = compareValues(a, b, path, out);
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (handledValues.has(key) || isDeepStrictEqual(a[key], b[key])) continue;
    compareKeyword(key, a, b, `${path}/${escape(key)}`, out);
  }
}

/** `true` and `{}` accept everything, `false` nothing; anything else is not a schema. */
function asSchema(value: unknown): Schema | false | undefined {
  if (value === true) return {};
  if (value === false) return false;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Schema)
    : undefined;
}

function compareKeyword(key: string, a: Schema, b: Schema, path: string, out: Out): void {
  const before = a[key];
  const after = b[key];
  if (TEXT_KEYWORDS.has(key)) out.push({ path, effect: 'text', detail: `${key} changed` });
  else if (LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key))
    compareBound(key, before, after, path, out);
  else if (key === 'required') compareRequired(before, after, path, out);
  else if (SCHEMA_MAPS.has(key)) compareMap(key, before, after, path, out);
  else if (SUBSCHEMAS.has(key) && !Array.isArray(before) && !Array.isArray(after)) {
    compare(before ?? true, after ?? true, path, out);
  } else if (
    key === 'prefixItems' ||
    (key === 'items' && Array.isArray(before) && Array.isArray(after))
  ) {
    compareTuple(before, after, path, out);
  } else if (key === 'not') compareNegated(before, after, path, out);
  else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') {
    compareBranches(key, before, after, path, out);
  } else if (CONSTRAINTS.has(key) && (before === undefined || after === undefined)) {
    const effect = before === undefined ? 'narrows' : 'widens';
    out.push({ path, effect, detail: `${key} ${before === undefined ? 'added' : 'removed'}` });
  } else if (key === 'contains') compare(before, after, path, out);
  else out.push({ path, effect: 'changes', detail: `${key} changed` });
}

// --- type, enum and const: the set of allowed values -------------------------------------------

/** Compares `type` and the `enum`/`const` value sets; returns the keywords it handled. */
function compareValues(a: Schema, b: Schema, path: string, out: Out): Set<string> {
  const handled = new Set<string>();
  if (!isDeepStrictEqual(a.type, b.type)) {
    const before = typesOf(a.type);
    const after = typesOf(b.type);
    if (before !== null && after !== null) {
      handled.add('type');
      const effect = setEffect(before, after, coversType);
      const detail = `type ${json(a.type) ?? 'any'} → ${json(b.type) ?? 'any'}`;
      if (effect !== undefined) out.push({ path: `${path}/type`, effect, detail });
    }
  }
  if (!isDeepStrictEqual(a.enum, b.enum) || !isDeepStrictEqual(a.const, b.const)) {
    const before = valuesOf(a);
    const after = valuesOf(b);
    if (before !== null && after !== null) {
      handled.add('enum').add('const');
      const effect = setEffect(before, after, (v, set) => set.has(v));
      const at = `${path}/${'const' in a || 'const' in b ? 'const' : 'enum'}`;
      if (effect !== undefined) out.push({ path: at, effect, detail: valuesDetail(before, after) });
    }
  }
  return handled;
}

const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'];

/** The types a `type` keyword allows: undefined for "any", null when it is not understood. */
function typesOf(type: unknown): Set<string> | undefined | null {
  if (type === undefined) return undefined;
  const list = Array.isArray(type) ? type : [type];
  return list.every((t) => typeof t === 'string' && JSON_TYPES.includes(t))
    ? new Set(list as string[])
    : null;
}

/** Every integer is a number, so `number` covers `integer`. */
function coversType(type: string, set: ReadonlySet<string>): boolean {
  return set.has(type) || (type === 'integer' && set.has('number'));
}

/** Allowed values (canonical JSON) by `enum` and `const`; undefined for "any", null if malformed. */
function valuesOf(schema: Schema): Set<string> | undefined | null {
  let values: Set<string> | undefined;
  if (schema.enum !== undefined) {
    if (!Array.isArray(schema.enum)) return null;
    values = new Set(schema.enum.map((v) => canonicalize(v) ?? 'null'));
  }
  if ('const' in schema) {
    const only = canonicalize(schema.const) ?? 'null';
    values = new Set(values === undefined || values.has(only) ? [only] : []);
  }
  return values;
}

/** Compare two sets where undefined means "everything"; undefined when they are equal. */
function setEffect(
  before: ReadonlySet<string> | undefined,
  after: ReadonlySet<string> | undefined,
  covers: (item: string, set: ReadonlySet<string>) => boolean,
): Effect | undefined {
  if (before === undefined) return after === undefined ? undefined : 'narrows';
  if (after === undefined) return 'widens';
  const lost = [...before].some((v) => !covers(v, after));
  const gained = [...after].some((v) => !covers(v, before));
  if (lost) return gained ? 'changes' : 'narrows';
  return gained ? 'widens' : undefined;
}

function valuesDetail(before: Set<string> | undefined, after: Set<string> | undefined): string {
  if (before === undefined) return `values limited to ${[...(after ?? [])].join(', ')}`;
  if (after === undefined) return 'value limit removed';
  const removed = [...before].filter((v) => !after.has(v));
  const added = [...after].filter((v) => !before.has(v));
  return [
    removed.length > 0 ? `removed ${removed.join(', ')}` : '',
    added.length > 0 ? `added ${added.join(', ')}` : '',
  ]
    .filter((part) => part !== '')
    .join('; ');
}

// --- bounds, required, properties ------------------------------------------------------------

function compareBound(key: string, before: unknown, after: unknown, path: string, out: Out): void {
  const lower = LOWER_BOUNDS.has(key);
  let effect: Effect;
  if (before === undefined) effect = 'narrows';
  else if (after === undefined) effect = 'widens';
  else if (typeof before === 'number' && typeof after === 'number') {
    effect = after > before === lower ? 'narrows' : 'widens';
  } else effect = 'changes';
  const detail =
    before === undefined
      ? `${key} ${json(after)} added`
      : after === undefined
        ? `${key} ${json(before)} removed`
        : `${key} ${json(before)} → ${json(after)}`;
  out.push({ path, effect, detail });
}

function compareRequired(before: unknown, after: unknown, path: string, out: Out): void {
  const a = new Set(stringsOf(before));
  const b = new Set(stringsOf(after));
  const added = [...b].filter((name) => !a.has(name));
  const dropped = [...a].filter((name) => !b.has(name));
  if (added.length > 0)
    out.push({ path, effect: 'narrows', detail: `now required: ${added.join(', ')}` });
  if (dropped.length > 0)
    out.push({ path, effect: 'widens', detail: `no longer required: ${dropped.join(', ')}` });
}

function compareMap(key: string, before: unknown, after: unknown, path: string, out: Out): void {
  const a = asSchema(before) || {};
  const b = asSchema(after) || {};
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const at = `${path}/${escape(name)}`;
    if (!(name in b)) {
      // A removed definition may still be referenced; without resolving $ref that cannot be
      // told, so it counts as a change.
      const effect = key === 'properties' ? 'removes-property' : 'changes';
      out.push({
        path: at,
        effect,
        detail: `${key === 'properties' ? 'property' : key} ${name} removed`,
      });
    } else if (!(name in a)) {
      if (key === 'properties') {
        const free = acceptsFreeText(b[name]);
        const effect = free ? 'adds-free-text' : 'adds-property';
        out.push({ path: at, effect, detail: `${free ? 'free-text ' : ''}property ${name} added` });
      } else if (key === 'patternProperties')
        out.push({ path: at, effect: 'changes', detail: `pattern ${name} added` });
    } else compare(a[name], b[name], at, out);
  }
}

/**
 * Whether a schema takes any string: one that allows strings (or any type) and constrains them
 * by no `enum`, `const`, `pattern` or `format`; through `anyOf`/`oneOf`, when a branch does
 * (an optional string is often `anyOf: [{type: string}, {type: null}]`). A length bound does
 * not stop free text.
 */
export function acceptsFreeText(value: unknown): boolean {
  const schema = asSchema(value);
  if (!schema) return false;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) return branches.some(acceptsFreeText);
  }
  const types = typesOf(schema.type);
  if (types === null || (types !== undefined && !types.has('string'))) return false;
  return (
    !('enum' in schema) &&
    !('const' in schema) &&
    !('pattern' in schema) &&
    !('format' in schema) &&
    !('$ref' in schema)
  );
}

// --- composition -----------------------------------------------------------------------------

function compareTuple(before: unknown, after: unknown, path: string, out: Out): void {
  const a = Array.isArray(before) ? before : [];
  const b = Array.isArray(after) ? after : [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i >= a.length)
      out.push({ path: `${path}/${i}`, effect: 'narrows', detail: `item ${i} constrained` });
    else if (i >= b.length)
      out.push({ path: `${path}/${i}`, effect: 'widens', detail: `item ${i} unconstrained` });
    else compare(a[i], b[i], `${path}/${i}`, out);
  }
}

/** Under `not`, accepting more in the subschema means accepting less overall. */
function compareNegated(before: unknown, after: unknown, path: string, out: Out): void {
  const inner: Out = [];
  compare(before ?? false, after ?? false, path, inner);
  for (const change of inner) out.push({ ...change, effect: flip(change.effect) });
}

function flip(effect: Effect): Effect {
  return effect === 'narrows' ? 'widens' : effect === 'widens' ? 'narrows' : effect;
}

/**
 * Branches compared one by one when their number is unchanged; otherwise a pure addition or
 * removal of branches has a known effect (more anyOf/oneOf branches widen, more allOf narrow).
 */
function compareBranches(
  key: string,
  before: unknown,
  after: unknown,
  path: string,
  out: Out,
): void {
  const a = Array.isArray(before) ? before : [];
  const b = Array.isArray(after) ? after : [];
  if (before !== undefined && after !== undefined && a.length === b.length) {
    a.forEach((branch, i) => compare(branch, b[i], `${path}/${i}`, out));
    return;
  }
  const grew =
    before === undefined ||
    (b.length > a.length && a.every((x) => b.some((y) => isDeepStrictEqual(x, y))));
  const shrank =
    after === undefined ||
    (a.length > b.length && b.every((y) => a.some((x) => isDeepStrictEqual(x, y))));
  const widening = key === 'allOf' ? shrank : grew;
  const narrowing = key === 'allOf' ? grew : shrank;
  const effect: Effect = widening ? 'widens' : narrowing ? 'narrows' : 'changes';
  out.push({ path, effect, detail: `${key} branches ${a.length} → ${b.length}` });
}

// --- helpers ---------------------------------------------------------------------------------

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** JSON Pointer escaping (RFC 6901 §3). */
function escape(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function json(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}
