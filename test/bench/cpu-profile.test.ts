import { describe, expect, it } from 'vitest';
import { callPath, summarize, type CpuProfile } from '../../bench/cpu-profile.ts';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

/**
 * root → reconcile → withAppliedHash → sortedKeys, and root → watch (client) → JSON parse; plus
 * the idle and garbage collector nodes V8 reports at the root.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 5, 7, 8] },
    {
      id: 2,
      callFrame: frame('reconcile', 'file:///app/dist/controller/reconcile.js'),
      children: [3],
    },
    { id: 3, callFrame: frame('withAppliedHash', 'file:///app/dist/kube/apply.js'), children: [4] },
    { id: 4, callFrame: frame('sortedKeys', 'file:///app/dist/kube/apply.js') },
    { id: 5, callFrame: frame('watch', 'file:///app/dist/kube/client.js'), children: [6] },
    { id: 6, callFrame: frame('parse') },
    { id: 7, callFrame: frame('(idle)') },
    { id: 8, callFrame: frame('(garbage collector)') },
  ],
  samples: [4, 4, 2, 6, 7, 7, 7, 8],
  timeDeltas: [100, 100, 50, 300, 1000, 1000, 1000, 400],
};

describe('summarize', () => {
  const summary = summarize(profile);

  it('counts busy time only: idle samples are left out', () => {
    expect(summary.busy).toBe(100 + 100 + 50 + 300 + 400);
  });

  it('puts a sample in the category of the nearest frame that has one', () => {
    expect(Object.fromEntries(summary.byCategory)).toEqual({
      // sortedKeys, called by the hash, is the hash's time, not reconcile's.
      'applied hash': 200,
      'reconcile, other': 50,
      // A native parse under the watch loop is the watch's decoding.
      'watch: decode and cache': 300,
      'garbage collection': 400,
    });
  });

  it('names the functions that spent the time, by their own (self) samples', () => {
    expect([...summary.byFunction.get('applied hash')!.keys()]).toEqual([
      'sortedKeys dist/kube/apply.js:1',
    ]);
  });
});

describe('callPath', () => {
  it("names the function, then the operator's own nearest callers, skipping libraries and Node", () => {
    const stack = [
      frame('stringify'),
      frame('write', 'node:internal/streams/writable'),
      frame('#writeStatus', 'file:///app/dist/controller/reconcile.js'),
      frame('info', 'file:///app/node_modules/pino/lib/proto.js'),
      frame('reconcile', 'file:///app/dist/controller/reconcile.js'),
      frame('#process', 'file:///app/dist/kube/queue.js'),
      frame('handler', 'file:///app/dist/controller/manager.js'),
    ];
    expect(callPath(stack)).toBe(
      'stringify :1 ← #writeStatus dist/controller/reconcile.js:1 ← reconcile dist/controller/reconcile.js:1 ← #process dist/kube/queue.js:1',
    );
  });
});
