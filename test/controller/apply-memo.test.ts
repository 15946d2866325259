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

/** A server's objects, rendered from its port; counts the renders. */
function renderer() {
  const counted = { renders: 0 };
  const render = (name: string, port: number) => () => {
    counted.renders += 1;
    return [serviceAccount(name), service(port)];
  };
  return { counted, render };
}

describe('ApplyMemo', () => {
  it('annotates each object with exactly its appliedHash, pass after pass', () => {
    const memo = new ApplyMemo();
    const { render } = renderer();
    const expected = render('srv', 3000)().map((obj) => withHash(obj, appliedHash(obj)));

    expect(memo.desired('ns/srv', { port: 3000 }, render('srv', 3000))).toEqual(expected);
    expect(memo.desired('ns/srv', { port: 3000 }, render('srv', 3000))).toEqual(expected);
  });

  it('renders again only when the inputs changed, and then with the new hashes', () => {
    const memo = new ApplyMemo();
    const { counted, render } = renderer();
    const [account, before] = memo.desired('ns/srv', { port: 3000 }, render('srv', 3000));
    // Equal inputs in another object, as the next watch event brings them.
    memo.desired('ns/srv', { port: 3000 }, render('srv', 3000));
    expect(counted.renders).toBe(1);

    const [accountAfter, after] = memo.desired('ns/srv', { port: 4000 }, render('srv', 4000));

    expect(counted.renders).toBe(2);
    expect(hashOf(after!)).toBe(appliedHash(service(4000)));
    expect(hashOf(after!)).not.toBe(hashOf(before!));
    expect(hashOf(accountAfter!)).toBe(hashOf(account!));
  });

  it('keeps servers apart: the same inputs under another key are rendered for that server', () => {
    const memo = new ApplyMemo();
    const { render } = renderer();
    memo.desired('ns/a', { port: 3000 }, render('a', 3000));
    const [b] = memo.desired('ns/b', { port: 3000 }, render('b', 3000));

    expect(b).toEqual(withHash(serviceAccount('b'), appliedHash(serviceAccount('b'))));
  });

  it('renders again for a server forgotten and created anew', () => {
    const memo = new ApplyMemo();
    const { counted, render } = renderer();
    memo.desired('ns/srv', { port: 3000 }, render('srv', 3000));
    memo.forget('ns/srv');
    memo.desired('ns/srv', { port: 3000 }, render('srv', 3000));

    expect(counted.renders).toBe(2);
  });

  it('leaves the rendered objects as they were', () => {
    const rendered = [service(3000)];
    new ApplyMemo().desired('ns/srv', { port: 3000 }, () => rendered);

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
  const [desired] = memo.desired('ns/srv', { port: 3000 }, () => [service(3000)]);
  expect(memo.needsApply('ns/srv', desired!, stored(desired!, '7'))).toBe(false);
  return { memo, desired: desired! };
}

describe('ApplyMemo.needsApply', () => {
  it('needs no apply for a live object that has what was rendered, pass after pass', () => {
    const memo = new ApplyMemo();
    const [desired] = memo.desired('ns/srv', { port: 3000 }, () => [service(3000)]);
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
    const [before] = memo.desired('ns/srv', { port: 3000 }, () => [service(3000)]);
    const live = stored(before!, '7');
    expect(memo.needsApply('ns/srv', before!, live)).toBe(false);

    const [after] = memo.desired('ns/srv', { port: 4000 }, () => [service(4000)]);

    expect(memo.needsApply('ns/srv', after!, live)).toBe(true);
    expect(memo.needsApply('ns/srv', after!, undefined)).toBe(true);
  });

  it('does not take a same-named successor at the same resourceVersion for the object it checked', () => {
    const { memo, desired } = checkedOnce();

    expect(memo.needsApply('ns/srv', desired, portEdited(desired, '7', 'u-2'))).toBe(true);
  });
});
