/**
 * docs/api.md: the field reference, generated from the same structural schema as the CRD so
 * the two cannot disagree. One section per object, a table of its fields, then the rules the
 * API server enforces on it (the CEL messages a user may see).
 */

import type { CelRule } from './schema.ts';
import { openAPIV3Schema, type JsonSchema } from './crd.ts';
import { API_VERSION } from './v1alpha1/mcpserver.ts';
import { KIND, SHORT_NAMES } from './names.ts';

interface Section {
  path: string;
  schema: JsonSchema;
}

const props = (schema: JsonSchema) => (schema.properties ?? {}) as Record<string, JsonSchema>;
const rules = (schema: JsonSchema) => (schema['x-kubernetes-validations'] ?? []) as CelRule[];

/** The object a field leads to, if it gets a section of its own. */
function objectOf(schema: JsonSchema): JsonSchema | undefined {
  const target = schema.type === 'array' ? (schema.items as JsonSchema) : schema;
  return target.properties === undefined ? undefined : target;
}

/** The anchor GitHub gives the heading `## <path>`: lower case, without the dots. */
function anchor(path: string): string {
  return path.toLowerCase().replaceAll(/[^a-z0-9_-]/g, '');
}

function typeOf(schema: JsonSchema, path: string): string {
  if (schema['x-kubernetes-int-or-string'] === true) return 'quantity';
  if (Array.isArray(schema.enum))
    return schema.enum.map((value) => `\`${String(value)}\``).join(' \\| ');
  if (schema.type === 'array') return `[]${typeOf(schema.items as JsonSchema, path)}`;
  if (schema.properties !== undefined) return `[object](#${anchor(path)})`;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return 'any JSON object';
  if (schema.additionalProperties !== undefined) {
    return `map[string]${typeOf(schema.additionalProperties as JsonSchema, path)}`;
  }
  return String(schema.type);
}

/** `1–10`, `at least 1` or `at most 10`, for a pair of schema bounds. */
function bounds(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `${min}–${max}`;
  return min === undefined ? `at most ${max}` : `at least ${min}`;
}

const BOUNDS = [
  ['Range', 'minimum', 'maximum'],
  ['Length', 'minLength', 'maxLength'],
  ['Items', 'minItems', 'maxItems'],
  ['Keys', 'minProperties', 'maxProperties'],
] as const;

/** Required and bounds in words, appended to the description (which states the default). */
function constraints(schema: JsonSchema, required: boolean): string[] {
  const notes: string[] = [];
  if (required) notes.push('Required.');
  for (const [label, min, max] of BOUNDS) {
    const [low, high] = [schema[min], schema[max]] as (number | undefined)[];
    if (low !== undefined || high !== undefined) notes.push(`${label}: ${bounds(low, high)}.`);
  }
  return notes;
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function fieldRow(name: string, schema: JsonSchema, path: string, required: boolean): string {
  const description = [String(schema.description), ...constraints(schema, required)].join(' ');
  return `| \`${name}\` | ${typeOf(schema, path)} | ${cell(description)} |`;
}

/** Rules of the object itself and of its scalar fields (object fields list their own). */
function sectionRules(schema: JsonSchema): string[] {
  const own = rules(schema);
  const ofFields = Object.values(props(schema)).flatMap((field) => {
    const scalar = field.type === 'array' ? (field.items as JsonSchema) : field;
    return objectOf(field) === undefined ? [...rules(field), ...rules(scalar)] : [];
  });
  return [...new Set([...own, ...ofFields].map((rule) => rule.message))];
}

function renderSection({ path, schema }: Section): string {
  if (typeof schema.description !== 'string') throw new Error(`${path} has no description`);
  const required = new Set((schema.required ?? []) as string[]);
  const rows = Object.entries(props(schema)).map(([name, field]) =>
    fieldRow(name, field, `${path}.${name}`, required.has(name)),
  );
  const ruleLines = sectionRules(schema).map((message) => `- ${message}`);
  return [
    `## ${path}`,
    '',
    String(schema.description),
    '',
    '| Field | Type | Description |',
    '|---|---|---|',
    ...rows,
    ...(ruleLines.length > 0 ? ['', 'Rules the API server enforces:', '', ...ruleLines] : []),
    '',
  ].join('\n');
}

/** Every object below `schema`, depth first, so a section follows the one that links to it. */
function sections(path: string, schema: JsonSchema): Section[] {
  const children = Object.entries(props(schema)).flatMap(([name, field]) => {
    const object = objectOf(field);
    if (object === undefined) return [];
    // The items of a list of objects carry no description of their own: the list's describes them.
    const described =
      object.description === undefined ? { ...object, description: field.description } : object;
    return sections(`${path}.${name}`, described);
  });
  return [{ path, schema }, ...children];
}

export function apiDocs(): string {
  const root = openAPIV3Schema();
  const body = Object.entries(props(root))
    .filter(([, field]) => field.properties !== undefined)
    .flatMap(([name, field]) => sections(name, field));
  return [
    `<!-- Generated by \`npm run crds\` from src/api/v1alpha1/mcpserver.ts. DO NOT EDIT. -->`,
    '',
    `# ${KIND} API reference (\`${API_VERSION}\`)`,
    '',
    String(root.description),
    '',
    `Short name: \`${SHORT_NAMES.join('`, `')}\`. Rules the API server enforces:`,
    '',
    ...rules(root).map((rule) => `- ${rule.message}`),
    '',
    ...body.map(renderSection),
  ].join('\n');
}
