import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generatedDocs, rows, valuesYaml } from '../../scripts/chart-docs.ts';

const docs = await generatedDocs();

describe('the generated configuration reference', () => {
  it.each(Object.entries(docs))('%s is up to date (run `npm run docs`)', async (file, fresh) => {
    expect(await readFile(file, 'utf8')).toBe(fresh);
  });

  it('refuses a value without a description or without a default', () => {
    const schema = { properties: { a: { type: 'string' } } };
    expect(() => rows(schema, { a: '' })).toThrow('values.schema.json: a has no description');
    const described = { properties: { a: { type: 'string', description: 'A.' } } };
    expect(() => rows(described, {})).toThrow('values.yaml: a has no default');
    expect(rows(described, { a: 'x' })).toEqual([
      { key: 'a', type: 'string', default: 'x', description: 'A.' },
    ]);
  });

  it("writes values.yaml's comments from the schema: each key's description above it", () => {
    const schema = {
      properties: {
        a: {
          type: 'object',
          description: 'Group A.',
          properties: { b: { type: 'string', description: 'B, a string.' } },
        },
        c: { type: 'object', description: 'A map.' },
      },
    };
    expect(valuesYaml(schema, { a: { b: '' }, c: { k: '1' } })).toBe(
      "# Group A.\na:\n  # B, a string.\n  b: ''\n\n# A map.\nc:\n  k: '1'\n",
    );
  });
});
