/**
 * Writing rendered objects on the real API server (writeObject): an absent object is created
 * with POST; a later apply of a rendering that drops a field removes it, which a plain apply
 * after a POST does not (the field stays owned by the POST's `Update` entry); a POST that finds
 * the object falls back to the upgraded apply; another manager's fields survive the upgrade;
 * and an upgrade that meets a write made since its read fails with 409 and changes nothing.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { APPLIED_HASH_ANNOTATION, applyObject, writeObject } from '../../src/kube/apply.ts';
import { isConflict, connect, type KubeClient } from '../../src/kube/client.ts';
import { loadClientConfig } from '../../src/kube/config.ts';
import { writerOf, type ManagedFieldsEntry } from '../../src/kube/managed-fields.ts';
import { CONFIG_MAP, objectPath, type KubeObject } from '../../src/kube/resources.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';

const MANAGER = 'mcp-operator';
const kc = kubeConfig();
const ns = useNamespace('apply', kc);
const core = kc.makeApiClient(CoreV1Api);
let client: KubeClient;

beforeAll(async () => {
  client = connect(await loadClientConfig({ kubeconfig: inject('kubeconfig'), env: {} }));
});

afterAll(() => client.close());

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** A rendering: `labels` and `data` as given, and an applied hash that tells it apart. */
const rendered = (
  name: string,
  labels: Record<string, string>,
  data: Record<string, string>,
): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: ns.name,
    labels,
    annotations: { [APPLIED_HASH_ANNOTATION]: Object.keys(data).join('-') },
  },
  data,
});

const FIRST = { labels: { app: 'srv', tier: 'web' }, data: { kept: '1', dropped: '2' } };
const LATER = { labels: { app: 'srv' }, data: { kept: '1' } };
const first = (name: string) => rendered(name, FIRST.labels, FIRST.data);
const later = (name: string) => rendered(name, LATER.labels, LATER.data);

const read = (name: string) =>
  client.request<ConfigMap>({ method: 'GET', path: objectPath(CONFIG_MAP, ns.name, name) });

/** The object as the operator's caches hold it: who wrote it, without the field sets. */
const cached = (obj: ConfigMap): ConfigMap => ({
  ...obj,
  metadata: {
    ...obj.metadata,
    managedFields: (obj.metadata.managedFields as ManagedFieldsEntry[]).map(writerOf),
  },
});

/** The entries of MANAGER's, as (operation, subresource) pairs. */
const ownEntries = (obj: KubeObject) =>
  (obj.metadata.managedFields as ManagedFieldsEntry[])
    .filter((entry) => entry.manager === MANAGER)
    .map(({ operation, subresource }) => ({ operation, subresource }));

describe('writeObject on the real API server', () => {
  it('creates an absent object with POST: its fields owned by the manager, hash and all', async () => {
    expect(await writeObject(client, CONFIG_MAP, first('created'), undefined, MANAGER)).toBe(
      'created',
    );
    const live = await read('created');
    expect(live.data).toEqual(FIRST.data);
    expect(live.metadata.annotations?.[APPLIED_HASH_ANNOTATION]).toBe('kept-dropped');
    expect(ownEntries(live)).toEqual([{ operation: 'Update', subresource: undefined }]);
  });

  it('without the upgrade, an apply after a POST would keep what the rendering dropped', async () => {
    await writeObject(client, CONFIG_MAP, first('plain'), undefined, MANAGER);
    await applyObject(client, CONFIG_MAP, later('plain'), MANAGER);
    const live = await read('plain');
    expect(live.data).toEqual(FIRST.data);
    expect(live.metadata.labels).toEqual(FIRST.labels);
    expect(
      ownEntries(live)
        .map((entry) => entry.operation)
        .sort(),
    ).toEqual(['Apply', 'Update']);
  });

  it('removes what a later rendering drops, and leaves only the apply entry', async () => {
    await writeObject(client, CONFIG_MAP, first('upgraded'), undefined, MANAGER);
    const before = cached(await read('upgraded'));
    expect(await writeObject(client, CONFIG_MAP, later('upgraded'), before, MANAGER)).toBe(
      'applied',
    );
    const live = await read('upgraded');
    expect(live.data).toEqual(LATER.data);
    expect(live.metadata.labels).toEqual(LATER.labels);
    expect(ownEntries(live)).toEqual([{ operation: 'Apply', subresource: undefined }]);
  });

  it('falls back to the upgraded apply when a POST finds the object (a stale cache)', async () => {
    await writeObject(client, CONFIG_MAP, first('stale'), undefined, MANAGER);
    expect(await writeObject(client, CONFIG_MAP, later('stale'), undefined, MANAGER)).toBe(
      'applied',
    );
    const live = await read('stale');
    expect(live.data).toEqual(LATER.data);
    expect(ownEntries(live)).toEqual([{ operation: 'Apply', subresource: undefined }]);
  });

  it("keeps another manager's fields through the upgrade", async () => {
    await writeObject(client, CONFIG_MAP, first('shared'), undefined, MANAGER);
    await core.patchNamespacedConfigMap(
      {
        name: 'shared',
        namespace: ns.name,
        body: { metadata: { labels: { team: 'a' } }, data: { theirs: '3' } },
        fieldManager: 'someone-else',
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await writeObject(client, CONFIG_MAP, later('shared'), cached(await read('shared')), MANAGER);
    const live = await read('shared');
    expect(live.data).toEqual({ ...LATER.data, theirs: '3' });
    expect(live.metadata.labels).toEqual({ ...LATER.labels, team: 'a' });
  });

  it('fails an upgrade with 409 when the object was written since its read, changing nothing', async () => {
    await writeObject(client, CONFIG_MAP, first('raced'), undefined, MANAGER);
    const stale = cached(await read('raced'));
    // Another writer gets in between the upgrade's read and its patch: a real write, made at
    // the one moment a test cannot otherwise hit.
    let raced = false;
    const racing: KubeClient = {
      watch: (req, onEvent) => client.watch(req, onEvent),
      close: () => undefined,
      request: async <T>(req: Parameters<KubeClient['request']>[0]) => {
        const answer = await client.request<T>(req);
        if (req.method === 'GET' && !raced) {
          raced = true;
          await core.patchNamespacedConfigMap(
            {
              name: 'raced',
              namespace: ns.name,
              body: { data: { theirs: '3' } },
              fieldManager: 'someone-else',
            },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        }
        return answer;
      },
    };
    const failed = await writeObject(racing, CONFIG_MAP, later('raced'), stale, MANAGER).catch(
      (err: unknown) => err,
    );
    expect(isConflict(failed)).toBe(true);
    const live = await read('raced');
    expect(live.data).toEqual({ ...FIRST.data, theirs: '3' });
    expect(ownEntries(live)).toEqual([{ operation: 'Update', subresource: undefined }]);
    // The next try, on a fresh read, goes through.
    await writeObject(client, CONFIG_MAP, later('raced'), cached(live), MANAGER);
    expect((await read('raced')).data).toEqual({ ...LATER.data, theirs: '3' });
  });
});
