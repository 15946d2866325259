/**
 * An unpinned `npx -y` that resolves a new release when its pod restarts: the same spec now
 * runs other code, and the operator says so although the server's tools and serverInfo may not
 * tell. Every part is real: the operator in-process against the real control plane, the pod it
 * renders run as local processes (init container, supervisor under busybox, bridge; see
 * local-pod.ts), `npx -y @modelcontextprotocol/server-memory` resolving through a local
 * registry in front of npmjs whose `latest` the test moves from one published release to the
 * next (test/support/npm-registry.ts), as the package's author publishing does.
 *
 * The only stand-in: discovery (and so the change feed) is reached at 127.0.0.1:<port> instead
 * of the Service, which no kube-proxy routes in a test cluster.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../../src/controller/manager.ts';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';
import { requestDiscovery } from '../discovery/operator.ts';
import { type LocalRegistry, startRegistry } from '../support/npm-registry.ts';
import { freePort } from '../support/ports.ts';
import { type LocalPod, runDeploymentPod } from './local-pod.ts';

const NAME = 'memory';
const PACKAGE = '@modelcontextprotocol/server-memory';
const OLD = '2025.8.4';
const NEW = '2026.8.31';
/** npx installs the server and its dependencies from the registry before the child answers. */
const NPX_TIMEOUT_MS = 180_000;

const kc = kubeConfig();
const ns = useNamespace('npx-provenance', kc);
const k = cluster(kc, () => ns.name);
let operator: Manager;
let registry: LocalRegistry;
let pod: LocalPod | undefined;
let cache: string;

const npx = (version: string) => ({ launcher: 'npx', name: PACKAGE, version });

beforeAll(async () => {
  registry = await startRegistry(PACKAGE, [OLD, NEW], OLD);
  cache = await mkdtemp(join(tmpdir(), 'mcp-npx-cache-'));
  await installCrd(kc);
  operator = await startOperator(ns.name, [], {
    discoveryEndpoint: (server: StoredMCPServer) => `http://127.0.0.1:${server.spec.port}/mcp`,
    changeWatch: { waitSeconds: 5, retryMs: 200 },
  });
});

afterAll(async () => {
  await pod?.stop();
  await operator?.stop();
  await registry?.close();
  await rm(cache, { recursive: true, force: true });
});

describe('an unpinned npx package', () => {
  it('records the version npx resolved', { timeout: 2 * NPX_TIMEOUT_MS }, async () => {
    await k.create(NAME, {
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', PACKAGE],
      env: [
        { name: 'npm_config_registry', value: registry.url },
        { name: 'npm_config_cache', value: cache },
        { name: 'npm_config_update_notifier', value: 'false' },
      ],
      port: await freePort(),
      discovery: { interval: '1h' },
    });
    await k.waitForReady(NAME, 'True', 'Available');
    pod = await runDeploymentPod(k, ns.name, NAME, { readyMs: NPX_TIMEOUT_MS });
    // The first run may have found no local pod yet.
    await requestDiscovery(k, NAME, 'first');
    const server = await waitFor(
      'the package in status',
      async () => {
        const now = await k.get(NAME);
        return now.status?.provenance?.packages?.length ? now : undefined;
      },
      { timeoutMs: NPX_TIMEOUT_MS },
    );
    expect(server.status?.provenance?.packages).toEqual([npx(OLD)]);
    expect(server.status?.provenance?.codeChanged).toBeUndefined();
  });

  it(
    'flags the new release it resolves when the pod restarts, under the same spec',
    { timeout: 2 * NPX_TIMEOUT_MS },
    async () => {
      const generation = (await k.get(NAME)).metadata?.generation;
      registry.latest = NEW;
      await pod?.stop();
      pod = undefined;
      const restartedAt = performance.now();
      // Ready once the bridge's probe child has answered: after npx installed the release.
      pod = await runDeploymentPod(k, ns.name, NAME, { readyMs: NPX_TIMEOUT_MS });

      const server = await waitFor(
        'CodeChanged in status',
        async () => {
          const now = await k.get(NAME);
          return now.status?.provenance?.codeChanged ? now : undefined;
        },
        { timeoutMs: NPX_TIMEOUT_MS },
      );
      const seconds = (performance.now() - restartedAt) / 1000;
      console.log(`pod restart → CodeChanged in status: ${seconds.toFixed(1)} s`);
      const provenance = server.status!.provenance!;
      expect(server.metadata?.generation).toBe(generation);
      expect(provenance.codeChanged!.message).toBe(
        `npx now resolves ${PACKAGE} to ${NEW} (was ${OLD}) while the spec stayed the same: the registry has a new release, and the command does not pin one.`,
      );
      expect(provenance.packages).toContainEqual(npx(NEW));
      const events = await waitFor('the CodeChanged Event', async () => {
        const found = await k.events(NAME, 'CodeChanged');
        return found.length > 0 ? found : undefined;
      });
      expect(events.map((e) => e.message)).toEqual([provenance.codeChanged!.message]);
      expect(events[0]!.type).toBe('Warning');
    },
  );
});
