import { afterEach, describe, expect, it } from 'vitest';
import { Reflector, type Change } from '../../src/kube/reflector.ts';
import { CONFIG_MAP, collectionPath, type KubeObject } from '../../src/kube/resources.ts';
import { Store } from '../../src/kube/store.ts';
import { FakeClient } from '../support/fake-client.ts';
import { testLogger } from '../support/log.ts';

const PATH = collectionPath(CONFIG_MAP, 'ns');
const cm = (name: string, data = ''): KubeObject & { data: { v: string } } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', managedFields: [{ manager: 'x' }] },
  data: { v: data },
});

let reflectors: Reflector<KubeObject>[] = [];
afterEach(async () => {
  await Promise.all(reflectors.map((r) => r.stop()));
  reflectors = [];
});

function reflect(client: FakeClient) {
  const store = new Store<KubeObject>();
  const changes: string[] = [];
  const onChange = (c: Change<KubeObject>) => changes.push(`${c.type} ${c.object.metadata.name}`);
  const reflector = new Reflector({
    client,
    resource: CONFIG_MAP,
    namespace: 'ns',
    store,
    onChange,
    log: testLogger(),
    pageSize: 2,
    backoff: { baseMs: 5, maxMs: 20 },
  });
  reflectors.push(reflector);
  reflector.start();
  const lists = () => client.requests.filter((r) => r === `GET ${PATH}`).length;
  const names = () =>
    store
      .list()
      .map((o) => o.metadata.name)
      .sort();
  return { store, changes, reflector, lists, names };
}

const watching = (client: FakeClient) => expect.poll(() => client.openWatches).toBe(1);

describe('Reflector', () => {
  it('lists every page, then follows the watch', async () => {
    const client = new FakeClient(PATH);
    for (const n of ['a', 'b', 'c', 'd', 'e']) client.create(PATH, cm(n));
    const r = reflect(client);
    await r.reflector.waitForSync();
    expect(r.reflector.synced).toBe(true);
    expect(r.names()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.lists()).toBe(3);
    await watching(client);
    client.create(PATH, cm('f'));
    client.update(PATH, { ...cm('a', 'changed') });
    client.remove(PATH, 'b');
    expect(r.changes.slice(5)).toEqual(['added f', 'updated a', 'deleted b']);
    expect((r.store.get('ns/a') as ReturnType<typeof cm>).data.v).toBe('changed');
  });

  it('caches objects with apiVersion and kind but without managedFields', async () => {
    const client = new FakeClient(PATH);
    client.create(PATH, cm('a'));
    const r = reflect(client);
    await r.reflector.waitForSync();
    const cached = r.store.get('ns/a')!;
    expect(cached.apiVersion).toBe('v1');
    expect(cached.kind).toBe('ConfigMap');
    expect(cached.metadata.managedFields).toBeUndefined();
  });

  it('resumes from the last resourceVersion after a dropped connection, without relisting', async () => {
    const client = new FakeClient(PATH);
    const r = reflect(client);
    await r.reflector.waitForSync();
    await watching(client);
    client.create(PATH, cm('a'));
    client.dropWatches();
    // Changes while no watch is open are replayed when the watch reconnects.
    client.create(PATH, cm('b'));
    client.remove(PATH, 'a');
    await expect.poll(() => r.changes).toEqual(['added a', 'added b', 'deleted a']);
    expect(r.lists()).toBe(1);
  });

  it('reconnects when the server ends the watch', async () => {
    const client = new FakeClient(PATH);
    const r = reflect(client);
    await watching(client);
    client.endWatches();
    client.create(PATH, cm('a'));
    await expect.poll(() => r.names()).toEqual(['a']);
    expect(r.lists()).toBe(1);
  });

  it('relists on 410 Gone and reports objects deleted while it was not watching', async () => {
    const client = new FakeClient(PATH);
    client.create(PATH, cm('a'));
    client.create(PATH, cm('b'));
    const r = reflect(client);
    await watching(client);
    client.dropWatches();
    client.remove(PATH, 'a');
    client.update(PATH, cm('b', 'changed'));
    client.create(PATH, cm('c'));
    client.compact();
    await expect.poll(() => r.names()).toEqual(['b', 'c']);
    expect(r.changes.slice(2).sort()).toEqual(['added c', 'deleted a', 'updated b']);
    expect(r.lists()).toBeGreaterThanOrEqual(2);
  });

  it('relists when the watch stream carries an expired ERROR event', async () => {
    const client = new FakeClient(PATH);
    const r = reflect(client);
    await watching(client);
    const before = r.lists();
    client.expireWatches();
    await expect.poll(() => r.lists()).toBe(before + 1);
    await watching(client);
    client.create(PATH, cm('a'));
    await expect.poll(() => r.names()).toEqual(['a']);
  });

  it('moves its resourceVersion forward on bookmarks', async () => {
    const client = new FakeClient(PATH, collectionPath(CONFIG_MAP, 'other'));
    const r = reflect(client);
    await watching(client);
    // Activity elsewhere moves the server's resourceVersion; a bookmark tells the reflector.
    client.create(collectionPath(CONFIG_MAP, 'other'), cm('x'));
    client.bookmark();
    client.dropWatches();
    client.compact();
    await watching(client);
    expect(r.lists()).toBe(1);
  });

  it('retries a failing list with backoff until it succeeds', async () => {
    const client = new FakeClient(PATH);
    client.create(PATH, cm('a'));
    client.failNext(`GET ${PATH}`, 3);
    const r = reflect(client);
    await r.reflector.waitForSync();
    expect(r.names()).toEqual(['a']);
    expect(r.lists()).toBe(4);
  });

  it('stops promptly, closing its watch', async () => {
    const client = new FakeClient(PATH);
    const r = reflect(client);
    await watching(client);
    await r.reflector.stop();
    expect(client.openWatches).toBe(0);
  });
});
