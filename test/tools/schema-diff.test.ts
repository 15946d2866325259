import { describe, expect, it } from 'vitest';
import { type Effect, diffSchemas } from '../../src/tools/schema-diff.ts';

/** The effects found, in order, for a change from `before` to `after`. */
const effects = (before: unknown, after: unknown): Effect[] =>
  diffSchemas(before, after).map((change) => change.effect);

describe('diffSchemas', () => {
  it('finds nothing in equal schemas, whatever their key order', () => {
    expect(diffSchemas({ type: 'string', maxLength: 3 }, { maxLength: 3, type: 'string' })).toEqual(
      [],
    );
  });

  it.each<[string, unknown, unknown, Effect[]]>([
    ['true to false', true, false, ['narrows']],
    ['false to a schema', false, { type: 'string' }, ['widens']],
    ['true to a type', true, { type: 'string' }, ['narrows']],
    ['a type list that gains a type', { type: 'string' }, { type: ['string', 'null'] }, ['widens']],
    ['a type swapped for another', { type: 'string' }, { type: 'boolean' }, ['changes']],
    ['const replaced', { const: 'a' }, { const: 'b' }, ['changes']],
    ['enum narrowed to a const', { enum: ['a', 'b'] }, { const: 'a' }, ['narrows']],
    ['an enum reordered', { enum: ['a', 'b'] }, { enum: ['b', 'a'] }, []],
    [
      'an enum of objects, same values in another key order',
      { enum: [{ a: 1, b: 2 }] },
      { enum: [{ b: 2, a: 1 }] },
      [],
    ],
    ['a not that is dropped', { not: { type: 'null' } }, {}, ['widens']],
    [
      'a not that widens (so the schema narrows)',
      { not: { const: 'x' } },
      { not: { enum: ['x', 'y'] } },
      ['narrows'],
    ],
    [
      'a oneOf branch removed',
      { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      { oneOf: [{ type: 'string' }] },
      ['narrows'],
    ],
    [
      'an allOf branch added',
      { allOf: [{ type: 'string' }] },
      { allOf: [{ type: 'string' }, { minLength: 1 }] },
      ['narrows'],
    ],
    [
      'prefixItems grown',
      { prefixItems: [{ type: 'string' }] },
      { prefixItems: [{ type: 'string' }, { type: 'integer' }] },
      ['narrows'],
    ],
    [
      'additionalProperties from false to a schema',
      { additionalProperties: false },
      { additionalProperties: { type: 'string' } },
      ['widens'],
    ],
    ['a non-numeric bound', { maximum: 3 }, { maximum: '3' }, ['changes']],
    ['a removed $defs entry', { $defs: { a: {} } }, { $defs: {} }, ['changes']],
    ['a changed if', { if: { type: 'string' } }, { if: { type: 'number' } }, ['changes']],
  ])('%s', (_name, before, after, expected) => {
    expect(effects(before, after)).toEqual(expected);
  });

  it('points at the changed keyword with JSON Pointer escaping', () => {
    const before = { properties: { 'a/b': { properties: { '~x': { maxLength: 3 } } } } };
    const after = { properties: { 'a/b': { properties: { '~x': { maxLength: 2 } } } } };
    expect(diffSchemas(before, after)).toEqual([
      {
        path: '/properties/a~1b/properties/~0x/maxLength',
        effect: 'narrows',
        detail: 'maxLength 3 → 2',
      },
    ]);
  });
});
