import { readFile } from 'node:fs/promises';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILES } from '../../src/api/artifacts.ts';
import { CRD_FILE, crd, openAPIV3Schema, type JsonSchema } from '../../src/api/crd.ts';

/** Every schema node below `schema` with its path, as `kubectl explain` would name it. */
function* nodes(schema: JsonSchema, path: string): Generator<[string, JsonSchema]> {
  yield [path, schema];
  for (const [name, child] of Object.entries(
    (schema.properties ?? {}) as Record<string, JsonSchema>,
  )) {
    yield* nodes(child, `${path}.${name}`);
  }
  if (schema.items !== undefined) yield* nodes(schema.items as JsonSchema, `${path}[]`);
  if (typeof schema.additionalProperties === 'object') {
    yield* nodes(schema.additionalProperties as JsonSchema, `${path}{}`);
  }
}

const root = openAPIV3Schema();
const userFields = [...nodes(root, 'mcpserver')].filter(
  ([path]) => !/^mcpserver\.(apiVersion|kind|metadata)$/.test(path) && path !== 'mcpserver',
);

describe('generated API artifacts', () => {
  it.each(Object.entries(GENERATED_FILES))(
    '%s is up to date (run `npm run crds`)',
    async (file, generate) => {
      expect(await readFile(file, 'utf8')).toBe(generate());
    },
  );

  it('the committed CRD parses back to the object the generator builds', async () => {
    expect(load(await readFile(CRD_FILE, 'utf8'))).toEqual(crd());
  });
});

describe('the MCPServer schema', () => {
  it('describes every field, for kubectl explain', () => {
    const undescribed = userFields
      .filter(([path]) => !path.endsWith('[]') && !path.endsWith('{}'))
      .filter(([, node]) => typeof node.description !== 'string' || node.description.length < 3)
      .map(([path]) => path);
    expect(undescribed).toEqual([]);
  });

  it('is structural: every node has a type, and nothing TypeBox-specific is left', () => {
    const untyped = userFields
      .filter(([, node]) => node.type === undefined && node['x-kubernetes-int-or-string'] !== true)
      .map(([path]) => path);
    expect(untyped).toEqual([]);
    expect(JSON.stringify(root)).not.toMatch(/"\$id"|"anyOf":\[\{"const"|"patternProperties"/);
  });

  it('gives every CEL rule a message (the only text kubectl apply shows for it)', () => {
    const rules = userFields.flatMap(
      ([, node]) => (node['x-kubernetes-validations'] ?? []) as { message?: string }[],
    );
    expect(rules.length).toBeGreaterThan(20);
    expect(rules.filter((rule) => !rule.message)).toEqual([]);
  });
});
