/**
 * Provenance on the real node: a tag that moves to other code while the MCPServer's spec stays
 * the same. The filesystem server's image of release 2026.1.14 is tagged `moving-…` in the
 * node's containerd; the server runs; then the tag is moved to release 2026.8.31 (whose tools
 * differ) and the pod restarts, as after a node drain. The kubelet starts the new code under
 * the old tag: the operator reports the new digest, records a CodeChanged event and a status
 * field, and the new release's tools reach status although the discovery interval is an hour
 * (the move asks for a discovery; so do the pod becoming Ready again and the new bridge's
 * change feed, whichever comes first). The real Prometheus, scraping the operator as the chart's
 * ServiceMonitor would and evaluating the chart's rules, fires MCPServerCodeChanged for it.
 *
 * Every part is real: the operator in-process against the real control plane, the pod on the
 * real node (bridge sidecar, supervisor, the server from npm in its image), discovery through
 * the Service's ClusterIP from the host (kube-proxy).
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Manager } from '../../src/controller/manager.ts';
import { installCrd } from '../api/install-crd.ts';
import { Helm } from '../charts/helm.ts';
import { Prometheus } from '../monitoring/prometheus.ts';
import { renderMonitoring } from '../monitoring/promtool.ts';
import { ON_REAL_NODE, normaliseReference } from '../cluster/node.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';

const execFileAsync = promisify(execFile);
const NAME = 'files';
const PORT = 8080;
/** Pods start for real here: an image unpacks, the kubelet reports. */
const POD_TIMEOUT_MS = 180_000;

const kc = kubeConfig();
const ns = useNamespace('provenance', kc);
const k = cluster(kc, () => ns.name);
const images = inject('images');
const socket = inject('containerdSocket');
const release = images.servers.filesystem;
const movingTag = `mcp-operator-test/server-filesystem:moving-${randomBytes(4).toString('hex')}`;
let operator: Manager;
let prometheus: Prometheus;
let clusterIP = '127.0.0.1';

/** Points `target` at the image `source` in the real node's containerd, as a push would. */
async function tag(source: string, target: string): Promise<void> {
  const ctr = ['--address', socket, '--namespace', 'k8s.io', 'images'];
  await execFileAsync('ctr', [
    ...ctr,
    'tag',
    '--force',
    normaliseReference(source),
    normaliseReference(target),
  ]);
}

const events = (reason: string) => k.events(NAME, reason);

beforeAll(async () => {
  await tag(release['2026.1.14'], movingTag);
  await installCrd(kc);
  operator = await startOperator(ns.name, [`--bridge-image=${images.operator}`], {
    discoveryEndpoint: () => `http://${clusterIP}:${PORT}/mcp`,
  });
  const helm = await Helm.create({ binary: inject('helm') });
  // The chart's rules for release `ops` in mcp-system, as its ServiceMonitor labels the operator.
  const { rules } = await renderMonitoring(helm).finally(() => helm.close());
  prometheus = await Prometheus.start({
    jobs: {
      'ops-mcp-operator-metrics': [
        {
          address: new URL(operator.url).host,
          labels: { namespace: 'mcp-system', pod: 'ops-mcp-operator-0' },
        },
      ],
    },
    rules,
  });
});

afterAll(async () => {
  await prometheus?.stop();
  await operator?.stop();
  await execFileAsync('ctr', [
    ...['--address', socket, '--namespace', 'k8s.io', 'images', 'rm'],
    normaliseReference(movingTag),
  ]).catch(() => undefined);
});

describe('the same spec running different code', () => {
  let first: string[];
  let toolsBefore: string;

  it('records the digest the node resolved the tag to', async () => {
    await k.create(NAME, {
      image: movingTag,
      transport: 'stdio',
      command: ['mcp-server-filesystem', '/tmp'],
      port: PORT,
      discovery: { interval: '1h' },
      pod: ON_REAL_NODE,
    });
    const service = await waitFor('the Service', () =>
      k.core.readNamespacedService({ name: NAME, namespace: ns.name }),
    );
    clusterIP = service.spec!.clusterIP!;
    await k.waitForReady(NAME, 'True', 'Available', { timeoutMs: POD_TIMEOUT_MS });
    const server = await waitFor('tools and image digests in status', async () => {
      const now = await k.get(NAME);
      return now.status?.provenance?.imageDigests && now.status.discovery?.snapshotDigest
        ? now
        : undefined;
    });
    first = server.status!.provenance!.imageDigests!;
    expect(first).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
    expect(server.status?.provenance?.image).toBe(movingTag);
    expect(server.status?.provenance?.codeChanged).toBeUndefined();
    toolsBefore = server.status!.discovery!.snapshotDigest!;
    // Scraped since its tools were found, and no code change to alert on yet.
    await waitFor('a scrape with the server in it', async () =>
      (await prometheus.query(`mcp_operator_server_tools{server="${ns.name}/${NAME}"}`)).length > 0
        ? true
        : undefined,
    );
    expect(await prometheus.query('mcp_operator_server_code_changed')).toEqual([]);
  });

  it('flags a tag moved to other code, with an Event and a status field, and shows its tools', async () => {
    const generation = (await k.get(NAME)).metadata?.generation;
    await tag(release['2026.8.31'], movingTag);
    await k.core.deleteCollectionNamespacedPod({
      namespace: ns.name,
      labelSelector: `app.kubernetes.io/instance=${NAME}`,
    });
    const server = await waitFor(
      'the moved tag in status',
      async () => {
        const now = await k.get(NAME);
        // The old pod may still be terminating: wait until only the new code runs.
        const provenance = now.status?.provenance;
        return provenance?.codeChanged && provenance.imageDigests?.length === 1 ? now : undefined;
      },
      { timeoutMs: POD_TIMEOUT_MS, intervalMs: 500 },
    );
    const moved = server.status!.provenance!;
    expect(moved.imageDigests).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
    expect(moved.imageDigests).not.toEqual(first);
    expect(moved.codeChanged?.message).toBe(
      `The image ${movingTag} now runs as ${moved.imageDigests![0]} (was ${first[0]}): the tag moved to other code while the spec stayed the same.`,
    );
    expect(server.metadata?.generation).toBe(generation);
    await waitFor('the CodeChanged event', async () =>
      (await events('CodeChanged')).length === 1 ? true : undefined,
    );
    expect((await events('CodeChanged'))[0]?.type).toBe('Warning');
    // The new release's tools, with the discovery interval an hour away.
    const rediscovered = await waitFor('the new release discovered', async () => {
      const now = await k.get(NAME);
      const digest = now.status?.discovery?.snapshotDigest;
      return digest !== undefined && digest !== toolsBefore ? now : undefined;
    });
    expect(rediscovered.status?.provenance?.codeChanged).toEqual(moved.codeChanged);
    const alert = await waitFor(
      'MCPServerCodeChanged to fire from the scrape',
      async () =>
        (await prometheus.alerts()).find(
          (a) =>
            a.labels.alertname === 'MCPServerCodeChanged' &&
            a.labels.mcpserver === NAME &&
            a.state === 'firing',
        ),
      { timeoutMs: 60_000 },
    );
    expect(alert.labels).toMatchObject({
      namespace: ns.name,
      mcpserver: NAME,
      server: `${ns.name}/${NAME}`,
      severity: 'warning',
    });
  });
});
