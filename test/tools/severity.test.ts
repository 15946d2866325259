import { describe, expect, it } from 'vitest';
import { DRIFT_SEVERITIES } from '../../src/api/v1alpha1/mcpserver.ts';
import { atLeast, highest } from '../../src/tools/severity.ts';

describe('the order of drift severities', () => {
  it('is description-only < compatible < widening < breaking', () => {
    const ascending = ['description-only', 'compatible', 'widening', 'breaking'] as const;
    expect([...DRIFT_SEVERITIES].reverse()).toEqual(ascending);
    for (const [i, lower] of ascending.entries()) {
      for (const [j, higher] of ascending.entries()) {
        expect(atLeast(higher, lower)).toBe(j >= i);
      }
    }
  });

  it('takes the most severe of a list, and nothing of none', () => {
    expect(highest(['compatible', 'widening', 'description-only'])).toBe('widening');
    expect(highest(['widening', 'breaking', 'compatible'])).toBe('breaking');
    expect(highest([])).toBeUndefined();
  });
});
