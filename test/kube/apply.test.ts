import { createHash } from 'node:crypto';
import type { V1Deployment } from '@kubernetes/client-node';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import {
  APPLIED_HASH_ANNOTATION,
  covers,
  needsApply,
  quantityValue,
  appliedHash,
  withHash,
} from '../../src/kube/apply.ts';
import type { KubeObject } from '../../src/kube/resources.ts';

type Deployment = KubeObject & Omit<V1Deployment, 'metadata'>;

/** `desired` as the reconciler applies it: with its applied hash. */
const withAppliedHash = <T extends KubeObject>(desired: T): T =>
  withHash(desired, appliedHash(desired));

const deployment = (image: string): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'srv', namespace: 'ns', labels: { app: 'srv' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'srv' } },
    template: {
      spec: {
        automountServiceAccountToken: false,
        containers: [
          {
            name: 'server',
            image,
            args: ['--port', '8080'],
            resources: { requests: { cpu: '0.5', memory: '64Mi' } },
            volumeMounts: [
              { name: 'work', mountPath: '/a' },
              { name: 'work', mountPath: '/b', readOnly: false },
            ],
          },
        ],
      },
    },
  },
});

/** What the API server hands back: defaults added, zero values dropped, quantities normalized. */
function asStored(desired: Deployment): Deployment {
  const stored = structuredClone(desired);
  stored.metadata = { ...stored.metadata, uid: 'u1', resourceVersion: '7' };
  const container = stored.spec!.template.spec!.containers[0]!;
  container.resources!.requests!['cpu'] = '500m';
  container.terminationMessagePath = '/dev/termination-log';
  delete container.volumeMounts![1]!.readOnly;
  container.volumeMounts!.reverse();
  stored.spec!.strategy = { type: 'RollingUpdate' };
  return stored;
}

describe('needsApply', () => {
  it('skips an object we applied that nobody changed since', () => {
    const desired = withAppliedHash(deployment('img:1'));
    expect(needsApply(desired, asStored(desired))).toBe(false);
  });

  it('applies what does not exist yet', () => {
    expect(needsApply(withAppliedHash(deployment('img:1')), undefined)).toBe(true);
  });

  it('applies when the rendering changed', () => {
    const live = asStored(withAppliedHash(deployment('img:1')));
    expect(needsApply(withAppliedHash(deployment('img:2')), live)).toBe(true);
  });

  it('applies when someone edited a field we set, or removed our label or annotation', () => {
    const desired = withAppliedHash(deployment('img:1'));
    const edited = asStored(desired);
    edited.spec!.replicas = 5;
    expect(needsApply(desired, edited)).toBe(true);
    const unlabelled = asStored(desired);
    delete unlabelled.metadata.labels;
    expect(needsApply(desired, unlabelled)).toBe(true);
    const unannotated = asStored(desired);
    delete unannotated.metadata.annotations?.[APPLIED_HASH_ANNOTATION];
    expect(needsApply(desired, unannotated)).toBe(true);
  });

  it('hashes deterministically, whatever the key order', () => {
    const a = withAppliedHash<KubeObject>({ metadata: { name: 'x', labels: { a: '1', b: '2' } } });
    const b = withAppliedHash<KubeObject>({ metadata: { labels: { b: '2', a: '1' }, name: 'x' } });
    expect(a.metadata.annotations).toEqual(b.metadata.annotations);
  });

  it('keeps the hash objects were applied with before, so an upgrade applies nothing again', () => {
    // The hash of the RFC 8785 canonical JSON, as earlier releases computed it.
    const earlier = (obj: KubeObject) =>
      createHash('sha256')
        .update(canonicalize(obj) ?? '')
        .digest('hex')
        .slice(0, 32);
    const obj = deployment('example.com/mcp/é:1 "quoted" \u2028');
    expect(withAppliedHash(obj).metadata.annotations?.[APPLIED_HASH_ANNOTATION]).toBe(earlier(obj));
  });
});

describe('covers', () => {
  it('treats atomic lists as a whole, in order', () => {
    expect(covers({ args: ['a', 'b'] }, { args: ['a', 'b'] })).toBe(true);
    expect(covers({ args: ['b', 'a'] }, { args: ['a', 'b'] })).toBe(false);
    expect(covers({ args: ['a', 'b', 'c'] }, { args: ['a', 'b'] })).toBe(false);
  });

  it('matches list-map elements by key and ignores elements another manager added', () => {
    const desired = { env: [{ name: 'A', value: '1' }] };
    expect(
      covers(
        {
          env: [
            { name: 'Z', value: 'x' },
            { name: 'A', value: '1' },
          ],
        },
        desired,
      ),
    ).toBe(true);
    expect(covers({ env: [{ name: 'A', value: '2' }] }, desired)).toBe(false);
    expect(covers({ env: [] }, desired)).toBe(false);
  });

  it('keys container ports by containerPort and Service ports by port', () => {
    expect(
      covers({ ports: [{ port: 9000 }, { port: 80, protocol: 'TCP' }] }, { ports: [{ port: 80 }] }),
    ).toBe(true);
    expect(covers({ ports: [{ containerPort: 81 }] }, { ports: [{ containerPort: 80 }] })).toBe(
      false,
    );
  });

  it('compares quantities by value, only where quantities live', () => {
    expect(covers({ cpu: '500m' }, { cpu: '0.5' })).toBe(true);
    expect(covers({ memory: '1Gi' }, { memory: '1024Mi' })).toBe(true);
    expect(covers({ memory: '1G' }, { memory: '1Gi' })).toBe(false);
    expect(covers({ value: '500m' }, { value: '0.5' })).toBe(false);
  });

  it('accepts an omitted zero value, not an omitted real one', () => {
    expect(covers({}, { readOnly: false, labels: {}, items: [] })).toBe(true);
    expect(covers({}, { readOnly: true })).toBe(false);
  });
});

describe('quantityValue', () => {
  it('reads decimal, binary and exponent forms', () => {
    expect(quantityValue('100m')).toBeCloseTo(0.1);
    expect(quantityValue('2Ki')).toBe(2048);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue('12')).toBe(12);
    expect(quantityValue('abc')).toBeUndefined();
  });
});
