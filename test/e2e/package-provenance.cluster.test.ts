/**
 * An unpinned `npx -y` or `uvx` that resolves a new release when its pod restarts: the same
 * spec now runs other code, and the operator says so although the server's tools and
 * serverInfo may not tell. Every part is real: the operator in-process against the real control
 * plane, the pod it renders run as local processes (init container, supervisor under busybox,
 * bridge; see local-pod.ts), `npx -y @modelcontextprotocol/server-memory` resolving through a
 * local registry in front of npmjs (test/support/npm-registry.ts), `uvx mcp-server-time` (uv as
 * the project pins it, test/images/uv.ts) through a local index in front of PyPI
 * (test/support/pypi-index.ts); the test moves the release each resolves from one published
 * release to the next, as the package's author publishing does.
 *
 * The only stand-in: discovery (and so the change feed) is reached at 127.0.0.1:<port> instead
 * of the Service, which no kube-proxy routes in a test cluster.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../../src/controller/manager.ts';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import type { PackageLauncher } from '../../src/resolved-package.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';
import { requestDiscovery } from '../discovery/operator.ts';
import { ensureUv } from '../images/uv.ts';
import { startRegistry } from '../support/npm-registry.ts';
import { startIndex } from '../support/pypi-index.ts';
import { freePort } from '../support/ports.ts';
import { type LocalPod, runDeploymentPod } from './local-pod.ts';

/** The launcher installs the server and its dependencies before the child answers. */
const RESOLVE_TIMEOUT_MS = 180_000;

interface Source {
  /** The server container's image (not run: local-pod.ts runs its command here), command, env. */
  image: string;
  command: string[];
  env: { name: string; value: string }[];
  /** Publishes `next`: the launcher resolves it from now on. */
  release(): void;
  close(): Promise<void>;
}

interface Launch {
  launcher: PackageLauncher;
  name: string;
  pkg: string;
  old: string;
  next: string;
  /** What the CodeChanged message names as where the release came from. */
  publisher: string;
  /**
   * The serverInfo each release reports, when they differ: discovery may then see the new
   * serverInfo before the bridge has told the package, and CodeChanged names that instead.
   */
  serverInfo?: { old: string; next: string };
  source(cache: string): Promise<Source>;
}

const LAUNCHES: Launch[] = [
  {
    launcher: 'npx',
    name: 'memory',
    pkg: '@modelcontextprotocol/server-memory',
    old: '2025.8.4',
    next: '2026.8.31',
    publisher: 'the registry',
    async source(cache) {
      const registry = await startRegistry(this.pkg, [this.old, this.next], this.old);
      return {
        image: 'node:24-slim',
        command: ['npx', '-y', this.pkg],
        env: [
          { name: 'npm_config_registry', value: registry.url },
          { name: 'npm_config_cache', value: cache },
          { name: 'npm_config_update_notifier', value: 'false' },
        ],
        release: () => (registry.latest = this.next),
        close: () => registry.close(),
      };
    },
  },
  {
    launcher: 'uvx',
    name: 'time',
    pkg: 'mcp-server-time',
    old: '2026.8.18',
    next: '2026.10.19',
    publisher: 'the package index',
    // 2026.8.18 reports the version of the `mcp` SDK it runs on; no older release starts with
    // today's SDK, so no pair of releases reports the same.
    serverInfo: { old: 'mcp-time 1.30.0', next: 'mcp-time 2026.10.19' },
    async source(cache) {
      const index = await startIndex(this.pkg, [this.old, this.next], this.old);
      const { uvx } = await ensureUv();
      return {
        image: 'ghcr.io/astral-sh/uv:python3.11-bookworm-slim',
        command: ['uvx', this.pkg],
        env: [
          // uvx on PATH as in the uv image; this machine's python3, none downloaded.
          { name: 'PATH', value: `${dirname(uvx)}${delimiter}${process.env.PATH ?? ''}` },
          { name: 'UV_DEFAULT_INDEX', value: index.url },
          { name: 'UV_CACHE_DIR', value: cache },
          { name: 'UV_NO_CONFIG', value: '1' },
          { name: 'UV_PYTHON', value: 'python3' },
          { name: 'UV_PYTHON_DOWNLOADS', value: 'never' },
        ],
        release: () => (index.newest = this.next),
        close: () => index.close(),
      };
    },
  },
];

const kc = kubeConfig();
const ns = useNamespace('package-provenance', kc);
const k = cluster(kc, () => ns.name);
let operator: Manager;

beforeAll(async () => {
  await installCrd(kc);
  operator = await startOperator(ns.name, [], {
    discoveryEndpoint: (server: StoredMCPServer) => `http://127.0.0.1:${server.spec.port}/mcp`,
    changeWatch: { waitSeconds: 5, retryMs: 200 },
  });
});

afterAll(async () => {
  await operator?.stop();
});

describe.each(LAUNCHES)('an unpinned $launcher package', (launch) => {
  const { launcher, name, pkg, old, next } = launch;
  const resolved = (version: string) => ({ launcher, name: pkg, version });
  let source: Source;
  let pod: LocalPod | undefined;
  let cache: string;

  beforeAll(async () => {
    cache = await mkdtemp(join(tmpdir(), `mcp-${launcher}-cache-`));
    source = await launch.source(cache);
  });

  afterAll(async () => {
    await pod?.stop();
    await source?.close();
    await rm(cache, { recursive: true, force: true });
  });

  it(`records the version ${launcher} resolved`, { timeout: 2 * RESOLVE_TIMEOUT_MS }, async () => {
    await k.create(name, {
      image: source.image,
      transport: 'stdio',
      command: source.command,
      env: source.env,
      port: await freePort(),
      discovery: { interval: '1h' },
    });
    await k.waitForReady(name, 'True', 'Available');
    pod = await runDeploymentPod(k, ns.name, name, { readyMs: RESOLVE_TIMEOUT_MS });
    // The first run may have found no local pod yet.
    await requestDiscovery(k, name, 'first');
    const server = await waitFor(
      'the package in status',
      async () => {
        const now = await k.get(name);
        return now.status?.provenance?.packages?.length ? now : undefined;
      },
      { timeoutMs: RESOLVE_TIMEOUT_MS },
    );
    expect(server.status?.provenance?.packages).toEqual([resolved(old)]);
    expect(server.status?.provenance?.codeChanged).toBeUndefined();
  });

  it(
    'flags the new release it resolves when the pod restarts, under the same spec',
    { timeout: 2 * RESOLVE_TIMEOUT_MS },
    async () => {
      const generation = (await k.get(name)).metadata?.generation;
      source.release();
      await pod?.stop();
      pod = undefined;
      const restartedAt = performance.now();
      // Ready once the bridge's probe child has answered: after the release is installed.
      pod = await runDeploymentPod(k, ns.name, name, { readyMs: RESOLVE_TIMEOUT_MS });
      const readyAt = performance.now();

      const server = await waitFor(
        'CodeChanged and the new release in status',
        async () => {
          const now = await k.get(name);
          const { codeChanged, packages } = now.status?.provenance ?? {};
          return codeChanged && packages?.some((p) => p.version === next) ? now : undefined;
        },
        { timeoutMs: RESOLVE_TIMEOUT_MS },
      );
      const seconds = (performance.now() - restartedAt) / 1000;
      const install = (readyAt - restartedAt) / 1000;
      // bench/code-changed.ts reads this line.
      console.log(
        `${launcher}: pod restart → CodeChanged in status: ${seconds.toFixed(1)} s (pod ready, the release installed: ${install.toFixed(1)} s; then the operator: ${(seconds - install).toFixed(1)} s)`,
      );
      const provenance = server.status!.provenance!;
      expect(server.metadata?.generation).toBe(generation);
      const told = [
        `${launcher} now resolves ${pkg} to ${next} (was ${old}) while the spec stayed the same: ${launch.publisher} has a new release, and the command does not pin one.`,
      ];
      if (launch.serverInfo)
        told.push(
          `The server now reports ${launch.serverInfo.next} (was ${launch.serverInfo.old}) while the spec stayed the same: a command that resolves its package at start (npx, uvx) may have found a new release.`,
        );
      expect(told).toContain(provenance.codeChanged!.message);
      expect(provenance.packages).toContainEqual(resolved(next));
      const events = await waitFor('the CodeChanged Event', async () => {
        const found = await k.events(name, 'CodeChanged');
        return found.length > 0 ? found : undefined;
      });
      expect(events.map((e) => e.message)).toEqual([provenance.codeChanged!.message]);
      expect(events[0]!.type).toBe('Warning');
    },
  );
});
