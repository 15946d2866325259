/**
 * The client and reflector against the real API server, through a TCP proxy the test can cut:
 * a dropped connection is resumed from the last resourceVersion without a relist and without
 * losing a change made while it was down; a server that refuses connections for a while is
 * retried with backoff. Also: metadata-only lists and watches carry no data.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connect, type KubeClient } from '../../src/kube/client.ts';
import { loadClientConfig } from '../../src/kube/config.ts';
import { Reflector } from '../../src/kube/reflector.ts';
import { CONFIG_MAP, SECRET, collectionPath, type KubeObject } from '../../src/kube/resources.ts';
import { Store } from '../../src/kube/store.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { CuttableProxy } from '../support/cuttable-proxy.ts';
import { testLogger } from '../support/log.ts';

const kc = kubeConfig();
const ns = useNamespace('reflector', kc);
const core = kc.makeApiClient(CoreV1Api);

let proxy: CuttableProxy;
let client: KubeClient;
const requests: string[] = [];

beforeAll(async () => {
  const direct = await loadClientConfig({ kubeconfig: inject('kubeconfig'), env: {} });
  proxy = new CuttableProxy(new URL(direct.server));
  const port = await proxy.listen();
  // Same credentials and server certificate (it names 127.0.0.1), another port.
  const inner = connect({ ...direct, server: `https://127.0.0.1:${port}` });
  client = {
    request: (req) => {
      requests.push(`${req.method} ${req.path}`);
      return inner.request(req);
    },
    watch: (req, onEvent) => {
      requests.push(`WATCH ${req.path}`);
      return inner.watch(req, onEvent);
    },
    close: () => inner.close(),
  };
});

afterAll(async () => {
  client.close();
  await proxy.close();
});

const configMap = (name: string) =>
  core.createNamespacedConfigMap({
    namespace: ns.name,
    body: { metadata: { name }, data: { v: name } },
  });

function reflect(resource = CONFIG_MAP, metadataOnly = false) {
  const store = new Store<KubeObject & { data?: unknown }>();
  const reflector = new Reflector({
    client,
    resource,
    namespace: ns.name,
    store,
    metadataOnly,
    log: testLogger(),
    backoff: { baseMs: 50, maxMs: 500 },
  });
  reflector.start();
  const names = () => new Set(store.list().map((o) => o.metadata.name));
  return { store, reflector, names };
}

const lists = (resource = CONFIG_MAP) =>
  requests.filter((r) => r === `GET ${collectionPath(resource, ns.name)}`).length;
const watches = () =>
  requests.filter((r) => r === `WATCH ${collectionPath(CONFIG_MAP, ns.name)}`).length;

describe('Reflector on the real API server', () => {
  it('resumes after dropped connections without relisting or losing changes', async () => {
    await configMap('before');
    const listsBefore = lists();
    const { reflector, names, store } = reflect();
    await reflector.waitForSync();
    expect(names().has('before')).toBe(true);
    await waitFor('the watch', () => Promise.resolve(watches() > 0));
    for (let round = 0; round < 3; round++) {
      const before = watches();
      proxy.cut();
      await configMap(`during-${round}`);
      const gone = round === 0 ? 'before' : `during-${round - 1}`;
      await core.deleteNamespacedConfigMap({ name: gone, namespace: ns.name });
      await waitFor('the watch to reconnect', () => Promise.resolve(watches() > before));
    }
    await waitFor('every change', async () => {
      const live = await core.listNamespacedConfigMap({ namespace: ns.name });
      const want = new Set(live.items.map((c) => c.metadata?.name));
      const have = names();
      return want.size === have.size && [...want].every((n) => have.has(n));
    });
    expect(names().has('during-2')).toBe(true);
    expect(names().has('before')).toBe(false);
    expect(lists() - listsBefore).toBe(1);
    expect(watches()).toBeGreaterThanOrEqual(4);
    expect((store.get(`${ns.name}/during-2`)?.data as Record<string, string>)['v']).toBe(
      'during-2',
    );
    await reflector.stop();
  });

  it('retries while the server refuses connections, then catches up', async () => {
    const { reflector, names } = reflect();
    await reflector.waitForSync();
    proxy.refuse(true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Through a second path (not the proxy): the change happens while the reflector is cut off.
    await configMap('while-refused');
    proxy.refuse(false);
    await waitFor('the change made while refused', () =>
      Promise.resolve(names().has('while-refused')),
    );
    await reflector.stop();
  });

  it('caches Secrets as metadata only', async () => {
    await core.createNamespacedSecret({
      namespace: ns.name,
      body: { metadata: { name: 'token' }, stringData: { token: 'do-not-cache' } },
    });
    const { reflector, store } = reflect(SECRET, true);
    await reflector.waitForSync();
    const cached = store.get(`${ns.name}/token`) as Record<string, unknown> | undefined;
    expect(cached?.['metadata']).toBeDefined();
    expect(cached?.['data']).toBeUndefined();
    expect(JSON.stringify(store.list())).not.toContain('do-not-cache');
    await reflector.stop();
  });
});
