import { describe, expect, it } from 'vitest';
import { APPLIED_HASH_ANNOTATION, appliedHash, withHash } from '../../src/kube/apply.ts';
import type { KubeObject } from '../../src/kube/resources.ts';
import { ApplyMemo } from '../../src/controller/apply-memo.ts';

const serviceAccount = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name, namespace: 'ns', labels: { app: name } },
});
const service = (port: number): KubeObject & { spec: unknown } => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'srv', namespace: 'ns' },
  spec: { ports: [{ name: 'mcp', port }], selector: { app: 'srv' } },
});

const hashOf = (obj: KubeObject) => obj.metadata.annotations?.[APPLIED_HASH_ANNOTATION];

describe('ApplyMemo', () => {
  it('annotates each object with exactly its appliedHash, pass after pass', () => {
    const hashes = new ApplyMemo();
    const rendered = () => [serviceAccount('srv'), service(3000)];
    const expected = rendered().map((obj) => withHash(obj, appliedHash(obj)));

    expect(hashes.withHashes('ns/srv', rendered())).toEqual(expected);
    expect(hashes.withHashes('ns/srv', rendered())).toEqual(expected);
  });

  it('gives a changed object its new hash, and an unchanged one its old', () => {
    const hashes = new ApplyMemo();
    const [account, before] = hashes.withHashes('ns/srv', [serviceAccount('srv'), service(3000)]);
    const [accountAfter, after] = hashes.withHashes('ns/srv', [
      serviceAccount('srv'),
      service(4000),
    ]);

    expect(hashOf(after!)).toBe(appliedHash(service(4000)));
    expect(hashOf(after!)).not.toBe(hashOf(before!));
    expect(hashOf(accountAfter!)).toBe(hashOf(account!));
  });

  it('keeps servers apart: the same key is never answered with another server’s hashes', () => {
    const hashes = new ApplyMemo();
    hashes.withHashes('ns/a', [serviceAccount('a')]);
    const [b] = hashes.withHashes('ns/b', [serviceAccount('b')]);

    expect(hashOf(b!)).toBe(appliedHash(serviceAccount('b')));
  });

  it('leaves the rendered objects as they were', () => {
    const rendered = [service(3000)];
    new ApplyMemo().withHashes('ns/srv', rendered);

    expect(rendered).toEqual([service(3000)]);
  });
});

/** `desired` as the API server would store it: with a uid and a resourceVersion. */
const stored = <T extends KubeObject>(desired: T, resourceVersion: string, uid = 'u-1'): T => ({
  ...structuredClone(desired),
  metadata: { ...structuredClone(desired.metadata), uid, resourceVersion },
});

/** A stored Service on which someone else set another port. */
const portEdited = (desired: KubeObject, resourceVersion: string, uid?: string) => ({
  ...stored(desired, resourceVersion, uid),
  spec: { ports: [{ name: 'mcp', port: 9999 }], selector: { app: 'srv' } },
});

/** A memo that found the stored Service (resourceVersion 7) up to date. */
function checkedOnce() {
  const memo = new ApplyMemo();
  const [desired] = memo.withHashes('ns/srv', [service(3000)]);
  expect(memo.needsApply('ns/srv', desired!, stored(desired!, '7'))).toBe(false);
  return { memo, desired: desired! };
}

describe('ApplyMemo.needsApply', () => {
  it('needs no apply for a live object that has what was rendered, pass after pass', () => {
    const memo = new ApplyMemo();
    const [desired] = memo.withHashes('ns/srv', [service(3000)]);
    const live = stored(desired!, '7');

    expect(memo.needsApply('ns/srv', desired!, live)).toBe(false);
    expect(memo.needsApply('ns/srv', desired!, live)).toBe(false);
  });

  it('needs an apply once someone changed a field we set, though our hash is still on it', () => {
    const { memo, desired } = checkedOnce();

    expect(memo.needsApply('ns/srv', desired, portEdited(desired, '8'))).toBe(true);
  });

  it('needs an apply when the rendering changed, and for an object not yet created', () => {
    const memo = new ApplyMemo();
    const [before] = memo.withHashes('ns/srv', [service(3000)]);
    const live = stored(before!, '7');
    expect(memo.needsApply('ns/srv', before!, live)).toBe(false);

    const [after] = memo.withHashes('ns/srv', [service(4000)]);

    expect(memo.needsApply('ns/srv', after!, live)).toBe(true);
    expect(memo.needsApply('ns/srv', after!, undefined)).toBe(true);
  });

  it('does not take a same-named successor at the same resourceVersion for the object it checked', () => {
    const { memo, desired } = checkedOnce();

    expect(memo.needsApply('ns/srv', desired, portEdited(desired, '7', 'u-2'))).toBe(true);
  });
});
