/**
 * The metadata cache of Secrets and ConfigMaps keeps only what its readers use: the owner of a
 * discovery token Secret, versions for the pod template checksum, and the hash a snapshot
 * ConfigMap's write is skipped on must read the same from the kept facts as from the object
 * the API server sent.
 */
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_HASH_ANNOTATION } from '../../src/api/names.ts';
import { ownerKey, referenceFacts } from '../../src/controller/caches.ts';
import { objectMeta } from '../../src/controller/render/metadata.ts';
import { controllerOf, type KubeObject } from '../../src/kube/resources.ts';
import { streamableHttp } from './render/fixtures.ts';

const HASH = 'f'.repeat(32);

/** A snapshot ConfigMap's metadata as a metadata-only watch sends it. */
function snapshotMetadata(): KubeObject {
  const meta = objectMeta(streamableHttp(), 'everything-snapshot');
  return {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'PartialObjectMetadata',
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: '6f1d2c7e-5a3b-4e8f-9c0d-1a2b3c4d5e6f',
      resourceVersion: '4711',
      labels: { ...meta.labels, 'mcp-operator.dev/snapshot': 'true' },
      annotations: { [SNAPSHOT_HASH_ANNOTATION]: HASH, 'example.com/note': 'kept elsewhere' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'u-other' },
        ...(meta.ownerReferences ?? []).map((ref) => ({ ...ref })),
      ],
    },
  };
}

describe('referenceFacts', () => {
  it('keeps what readers use: key, version, controller and the snapshot hash', () => {
    const full = snapshotMetadata();
    const facts = referenceFacts(full);
    expect(ownerKey(facts)).toBe('team-a/everything');
    expect(ownerKey(facts)).toBe(ownerKey(full));
    expect(controllerOf(facts)?.uid).toBe(controllerOf(full)?.uid);
    expect(facts.metadata).toMatchObject({
      name: 'everything-snapshot',
      namespace: 'team-a',
      uid: full.metadata.uid,
      resourceVersion: '4711',
      annotations: { [SNAPSHOT_HASH_ANNOTATION]: HASH },
    });
  });

  it('drops labels, other annotations and owner references that are not the controller', () => {
    const facts = referenceFacts(snapshotMetadata());
    expect(facts.metadata.labels).toBeUndefined();
    expect(facts.metadata.annotations).toEqual({ [SNAPSHOT_HASH_ANNOTATION]: HASH });
    expect(facts.metadata.ownerReferences).toHaveLength(1);
  });

  it('keeps an object without owner or annotations without inventing either', () => {
    const facts = referenceFacts({
      metadata: { name: 'tls', namespace: 'team-a', uid: 'u-1', resourceVersion: '9' },
    });
    expect(facts.metadata).toEqual({
      name: 'tls',
      namespace: 'team-a',
      uid: 'u-1',
      resourceVersion: '9',
    });
    expect(ownerKey(facts)).toBeUndefined();
  });
});
