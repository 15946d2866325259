import { describe, expect, it } from 'vitest';
import { namespaceSizes, placements } from '../../bench/layout.ts';

describe('namespaceSizes', () => {
  it('fills namespaces of the given size and puts the rest in the last', () => {
    expect(namespaceSizes(250, 100)).toEqual([100, 100, 50]);
  });

  it('lays 5,000 servers out as 50 namespaces of 100', () => {
    const sizes = namespaceSizes(5000, 100);
    expect(sizes).toHaveLength(50);
    expect(new Set(sizes)).toEqual(new Set([100]));
  });

  it('keeps every server in one namespace when it may hold them all', () => {
    expect(namespaceSizes(1000, 1000)).toEqual([1000]);
    expect(namespaceSizes(300, 5000)).toEqual([300]);
  });

  it('refuses a size that is not a positive whole number, naming it', () => {
    expect(() => namespaceSizes(100, 0)).toThrow(/servers per namespace 0/);
    expect(() => namespaceSizes(100, Number.NaN)).toThrow(/servers per namespace NaN/);
    expect(() => namespaceSizes(-1, 10)).toThrow(/server count -1/);
  });
});

describe('placements', () => {
  it('numbers servers from 0 in each namespace, every server once', () => {
    const layout = [
      { namespace: 'a', count: 2 },
      { namespace: 'b', count: 1 },
    ];
    expect(placements(layout)).toEqual([
      { namespace: 'a', index: 0 },
      { namespace: 'a', index: 1 },
      { namespace: 'b', index: 0 },
    ]);
  });
});
