import { describe, expect, it } from 'vitest';
import { summarizeAllocations, type HeapProfile } from '../../bench/allocation-profile.ts';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

/** (root) → reconcile → render, and (root) → watch (client) → JSON parse. */
const profile: HeapProfile = {
  head: {
    id: 1,
    callFrame: frame('(root)'),
    children: [
      {
        id: 2,
        callFrame: frame('reconcile', 'file:///app/dist/controller/reconcile.js'),
        children: [
          {
            id: 3,
            callFrame: frame('render', 'file:///app/dist/controller/render/render.js'),
            children: [],
          },
        ],
      },
      {
        id: 4,
        callFrame: frame('watch', 'file:///app/dist/kube/client.js'),
        children: [{ id: 5, callFrame: frame('parse'), children: [] }],
      },
    ],
  },
  samples: [
    { size: 1000, nodeId: 3 },
    { size: 500, nodeId: 3 },
    { size: 200, nodeId: 2 },
    { size: 4000, nodeId: 5 },
  ],
};

describe('summarizeAllocations', () => {
  const summary = summarizeAllocations(profile);

  it('adds up the sampled bytes, garbage and all, by the category of the nearest frame', () => {
    expect(summary.busy).toBe(5700);
    expect(Object.fromEntries(summary.byCategory)).toEqual({
      render: 1500,
      'reconcile, other': 200,
      'watch: decode and cache': 4000,
    });
  });

  it("tells which of the operator's functions asked for a native allocation", () => {
    expect(Object.fromEntries(summary.byPath.get('watch: decode and cache')!)).toEqual({
      'parse :1 ← watch dist/kube/client.js:1': 4000,
    });
  });
});
