import { describe, expect, it } from 'vitest';
import { openAPIV3Schema } from '../../src/api/crd.ts';
import { withoutCelRules } from '../../bench/status-writes.ts';

describe('withoutCelRules', () => {
  it('drops every CEL rule of the committed schema and keeps the rest of it', () => {
    const schema = openAPIV3Schema();
    const text = JSON.stringify(schema);
    const stripped = JSON.stringify(withoutCelRules(schema));

    expect(text).toContain('x-kubernetes-validations');
    expect(stripped).not.toContain('x-kubernetes-validations');
    // Defaults, enums, bounds and patterns stay: only the CEL rules are measured away.
    for (const keyword of ['"default"', '"enum"', '"maxLength"', '"pattern"', '"required"']) {
      expect(stripped.split(keyword).length).toBe(text.split(keyword).length);
    }
  });

  it('keeps a schema without rules as it is', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'string' } } },
    };
    expect(withoutCelRules(schema)).toEqual(schema);
  });
});
