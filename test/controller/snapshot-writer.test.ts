/**
 * The snapshot ConfigMap's data hash is fed to SHA-256 line by line, yet must stay the hash of
 * the data's canonical JSON that earlier releases annotated: a changed hash would rewrite every
 * server's snapshot ConfigMap once after an upgrade, though nothing changed.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { dataHash } from '../../src/controller/snapshot-writer.ts';
import { snapshotConfigMap } from '../../src/discovery/snapshot-configmap.ts';
import { takeSnapshot } from '../../src/tools/snapshot.ts';

const canonicalHash = (data: Record<string, string>) =>
  createHash('sha256').update(canonicalize(data)!).digest('hex').slice(0, 32);

describe('dataHash', () => {
  it('is the hash of the canonical JSON of a real snapshot ConfigMap', () => {
    const snapshot = takeSnapshot({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'search "fast"', version: '1.0' },
      capabilities: { tools: {} },
      instructions: 'Line one\nline two\twith a tab and a \\ backslash',
      tools: Array.from({ length: 100 }, (_, i) => ({
        name: `tool_${i}`,
        description: `Looks things up in index ${i}: "quoted", ünïcödé, 😀, \u0001 control.\nSecond line.`,
        inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
      })),
    });
    const built = snapshotConfigMap(snapshot);
    if (!built.fits) throw new Error('the snapshot should fit a ConfigMap');
    expect(built.bytes).toBeGreaterThan(10_000);
    expect(dataHash(built.data)).toBe(canonicalHash(built.data));
  });

  it.each([
    ['no keys', {}],
    ['an empty value', { a: '' }],
    ['only newlines', { a: '\n\n\n' }],
    ['escapes of every kind', { a: '"\\/\b\f\n\r\t\u0000\u001f\u007f\u2028\u2029' }],
    ['a surrogate pair split by nothing', { a: 'x😀\n😀y' }],
    ['several keys, out of order', { 'z.json': 'last\n', 'a.json': 'first', 'M-key': 'caps' }],
  ])('is the hash of the canonical JSON with %s', (_, data: Record<string, string>) => {
    expect(dataHash(data)).toBe(canonicalHash(data));
  });

  it('changes with any character of the data', () => {
    expect(dataHash({ a: 'x\ny' })).not.toBe(dataHash({ a: 'x\nz' }));
    expect(dataHash({ a: 'x\ny' })).not.toBe(dataHash({ a: 'x\\ny' }));
    expect(dataHash({ a: 'xy' })).not.toBe(dataHash({ b: 'xy' }));
  });
});
