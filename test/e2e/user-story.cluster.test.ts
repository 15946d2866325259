/**
 * The user's story, on the real node: every part is the real thing. The image is built from our
 * Dockerfile, the chart is installed with helm, the operator runs in its pod as the chart's
 * ServiceAccount (leader election on), the examples are applied with kubectl, their pods run the
 * bridge sidecar over FIFOs under the supervisor, discovery reaches them through Service DNS, and
 * an SDK client reaches them through their Service's ClusterIP (kube-proxy).
 *
 * 1. helm install → the operator pod is Ready on the real node.
 * 2. kubectl apply a stdio and a streamable-http example → both Ready, tools discovered;
 *    `kubectl get mcps` shows TOOLS and DRIFT.
 * 3. the official SDK client lists and calls a tool through the Service.
 * 4. approve → upgrade the filesystem server 2026.1.14 → 2026.8.31 → Drifted names exactly what
 *    the release changed; Prometheus, scraping the operator's pod as the chart's ServiceMonitor
 *    does and evaluating the chart's rules, fires MCPServerToolsDrifted; under Enforce the client
 *    sees none of the drifted tools; approve again, and the alert resolves.
 * 5. `mcp-operator import` from the real MCP registry (its Go module, on PostgreSQL): the
 *    filesystem server pinned at 2026.1.14 runs and is approved; `outdated` names 2026.8.31
 *    once it is published; importing it moves the pin, and drift names what it changed.
 * 6. the server container dies repeatedly → Ready False (CrashLoopBackOff) → recovers.
 * 7. helm upgrade rolls the operator without losing status; helm uninstall keeps the MCPServers.
 *
 * Where this differs from the README's quick start: the base images are local stand-ins (no
 * registry is reachable here), the pods carry a toleration and node selector for the real node
 * (the kwok nodes run nothing), and the chart is installed with `crds.install=false` because the
 * shared test cluster already has the CRD, which other test files install (the chart's own CRD
 * handling is tested by test/charts/install.cluster.test.ts).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { installCrd } from '../api/install-crd.ts';
import { ON_REAL_NODE } from '../cluster/node.ts';
import { createNamespace, deleteNamespace, kubeConfig, waitFor } from '../cluster/testing.ts';
import { CHART_DIR, Helm } from '../charts/helm.ts';
import { EXAMPLES_DIR, kubectl } from '../examples/examples.ts';
import { Prometheus, type Alert } from '../monitoring/prometheus.ts';
import { renderMonitoring } from '../monitoring/promtool.ts';
import { FILESYSTEM_VERSIONS } from '../images/images.ts';
import { NAMESPACE as REGISTRY_NAMESPACE, filesystemEntry } from '../registry/entries.ts';
import { RegistryServer } from '../registry/registry-server.ts';

const execFileAsync = promisify(execFile);
const CLI = join(import.meta.dirname, '..', '..', 'src', 'cli.ts');
const RELEASE = 'mcp-operator';
/** Pods start for real here: an image unpacks, npx starts, the kubelet reports. */
const POD_TIMEOUT_MS = 180_000;

const kc = kubeConfig();
const kubeconfig = inject('kubeconfig');
const images = inject('images');
let helm: Helm;
let prometheus: Prometheus | undefined;
let opsNs: string;
let appsNs: string;

/** `kubectl patch mcps NAME --type=merge` of `spec`, as a user changes a server. */
const patchSpec = (name: string, spec: object) =>
  sh(['-n', appsNs, 'patch', 'mcps', name, '--type=merge', '-p', JSON.stringify({ spec })]);

async function sh(args: readonly string[], stdin?: string): Promise<string> {
  const result = await kubectl(kubeconfig, args, stdin);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function getServer(name: string): Promise<MCPServer> {
  return JSON.parse(await sh(['-n', appsNs, 'get', 'mcps', name, '-o', 'json'])) as MCPServer;
}

function condition(server: MCPServer, type: string) {
  return server.status?.conditions?.find((c) => c.type === type);
}

async function waitForCondition(
  name: string,
  type: string,
  status: string,
  reason?: string,
  timeoutMs = POD_TIMEOUT_MS,
): Promise<MCPServer> {
  let last = '';
  try {
    return await waitFor(
      `${name} ${type}=${status}${reason ? ` (${reason})` : ''}`,
      async () => {
        const server = await getServer(name);
        const found = condition(server, type);
        last = JSON.stringify(server.status?.conditions ?? []);
        return found?.status === status && (reason === undefined || found.reason === reason)
          ? server
          : undefined;
      },
      { timeoutMs, intervalMs: 1000 },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nlast conditions: ${last}`, { cause: error });
  }
}

/** An example as a user applies it, placed on the real node (the only change). */
async function applyExample(file: string, overrides: (server: MCPServer) => void = () => {}) {
  const server = load(await readFile(join(EXAMPLES_DIR, file), 'utf8')) as MCPServer;
  server.spec.pod = { ...server.spec.pod, ...ON_REAL_NODE };
  overrides(server);
  await sh(['-n', appsNs, 'apply', '-f', '-'], dump(server));
  return server.metadata.name!;
}

/** An SDK client connected to a server's Service through its ClusterIP, from the host. */
async function clientFor(name: string): Promise<Client> {
  const service = JSON.parse(await sh(['-n', appsNs, 'get', 'service', name, '-o', 'json'])) as {
    spec: { clusterIP: string; ports: { port: number }[] };
  };
  const server = await getServer(name);
  const path = new URL(server.status!.endpoint!).pathname;
  const url = new URL(`http://${service.spec.clusterIP}:${service.spec.ports[0]!.port}${path}`);
  const client = new Client({ name: 'user-story', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

interface OperatorPod {
  metadata: { name: string };
  spec: { nodeName: string; serviceAccountName: string };
  status: { podIP: string };
}

async function operatorPods(): Promise<OperatorPod[]> {
  const selector = 'app.kubernetes.io/name=mcp-operator';
  const list = await sh(['-n', opsNs, 'get', 'pods', '-l', selector, '-o', 'json']);
  return (JSON.parse(list) as { items: OperatorPod[] }).items;
}

/**
 * Prometheus scraping the operator's pod as the chart's ServiceMonitor does (job: the metrics
 * Service's name; the pod's namespace and name as labels), with the chart's alert rules, whose
 * delay is shortened so that the test waits seconds.
 */
async function scrapeOperator(): Promise<Prometheus> {
  const services = JSON.parse(await sh(['-n', opsNs, 'get', 'services', '-o', 'json'])) as {
    items: { metadata: { name: string }; spec: { ports: { port: number }[] } }[];
  };
  const metrics = services.items.find((s) => s.metadata.name.endsWith('-metrics'))!;
  const pod = (await operatorPods())[0]!;
  const { rules } = await renderMonitoring(
    helm,
    { toolsDrifted: { for: '2s' } },
    { release: RELEASE, namespace: opsNs },
  );
  return Prometheus.start({
    jobs: {
      [metrics.metadata.name]: [
        {
          address: `${pod.status.podIP}:${metrics.spec.ports[0]!.port}`,
          labels: { namespace: opsNs, pod: pod.metadata.name },
        },
      ],
    },
    rules,
  });
}

function driftAlert(alerts: Alert[], name: string): Alert | undefined {
  return alerts.find(
    (a) =>
      a.labels.alertname === 'MCPServerToolsDrifted' &&
      a.labels.namespace === appsNs &&
      a.labels.mcpserver === name,
  );
}

/** `mcp-operator <args>`: its stdout, or an error unless it exits with `code`. */
async function mcp(args: readonly string[], code = 0): Promise<string> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [CLI, ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    if (code === 0) return stdout;
    throw new Error(`mcp-operator ${args.join(' ')} exited 0, not ${code}`);
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (failed.code === code && failed.stdout !== undefined) return failed.stdout;
    throw error;
  }
}

async function approve(name: string): Promise<void> {
  await execFileAsync(process.execPath, [CLI, 'approve', name, '-n', appsNs, '--apply', '--yes'], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
  });
}

beforeAll(async () => {
  await installCrd(kc);
  opsNs = await createNamespace(kc, 'mcp-system');
  appsNs = await createNamespace(kc, 'story');
  helm = await Helm.create({ binary: inject('helm'), kubeconfig });
}, POD_TIMEOUT_MS);

afterAll(async () => {
  await prometheus?.stop();
  await helm?.run(['uninstall', RELEASE, '-n', opsNs, '--wait']);
  await helm?.close();
  for (const ns of [appsNs, opsNs]) if (ns) await deleteNamespace(kc, ns);
});

describe('the user story on a real node', () => {
  it(
    'helm install: the operator runs in its pod as the chart ServiceAccount, and leads',
    async () => {
      const [repository, tag] = images.operator.split(':');
      await helm.ok(['install', RELEASE, CHART_DIR, '-n', opsNs, '--wait', '--timeout', '3m'], {
        image: { repository, tag, pullPolicy: 'Never' },
        watchNamespaces: [appsNs],
        crds: { install: false },
        nodeSelector: ON_REAL_NODE.nodeSelector,
        tolerations: ON_REAL_NODE.tolerations,
      });
      const pods = await operatorPods();
      expect(pods).toHaveLength(1);
      expect(pods[0]!.spec.nodeName).toBe('real-node');
      expect(pods[0]!.spec.serviceAccountName).toBe(RELEASE);
      const holder = await waitFor(
        'the operator to hold its Lease',
        async () => {
          const leases = JSON.parse(await sh(['-n', opsNs, 'get', 'leases', '-o', 'json'])) as {
            items: { spec: { holderIdentity?: string } }[];
          };
          return leases.items.find((l) => l.spec.holderIdentity)?.spec.holderIdentity;
        },
        { timeoutMs: 60_000 },
      );
      expect(holder).toContain(pods[0]!.metadata.name);
    },
    POD_TIMEOUT_MS + 60_000,
  );

  it(
    'kubectl apply: a stdio and a streamable-http server become Ready with their tools discovered',
    async () => {
      const stdio = await applyExample('everything-npx.yaml');
      const http = await applyExample('everything-streamable-http.yaml');
      for (const name of [stdio, http]) {
        await waitForCondition(name, 'Ready', 'True');
        const server = await waitForCondition(name, 'Discovered', 'True');
        expect(server.status?.discovery?.tools?.length).toBeGreaterThan(5);
        expect(condition(server, 'Drifted')?.reason).toBe('NoBaseline');
      }
      const table = await sh(['-n', appsNs, 'get', 'mcps']);
      const rows = table.trim().split('\n');
      expect(rows[0]).toMatch(/^NAME\s+READY\s+TRANSPORT\s+TOOLS\s+DRIFT\s+FINDINGS\s+AGE$/);
      expect(rows.find((r) => r.startsWith(`${stdio} `))).toMatch(
        /\sTrue\s+stdio\s+\d+\s+NoBaseline\s/,
      );
      expect(rows.find((r) => r.startsWith(`${http} `))).toMatch(
        /\sTrue\s+streamable-http\s+\d+\s+NoBaseline\s/,
      );
    },
    2 * POD_TIMEOUT_MS,
  );

  it('the SDK client lists and calls a tool through the Service', async () => {
    const client = await clientFor('everything');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      const result = await client.callTool({
        name: 'echo',
        arguments: { message: 'from the host' },
      });
      expect(JSON.stringify(result.content)).toContain('from the host');
    } finally {
      await client.close();
    }
  });

  it(
    'an upgrade that changes tools is drift, named exactly; Enforce hides it; approving clears it',
    async () => {
      const scrape = (prometheus = await scrapeOperator());
      const name = await applyExample('everything-npx.yaml', (server) => {
        server.metadata = { name: 'files' };
        server.spec.image = images.servers.filesystem['2026.1.14'];
        server.spec.command = ['mcp-server-filesystem', '/tmp'];
        delete server.spec.bridge?.warmPool;
      });
      await waitForCondition(name, 'Discovered', 'True');
      await approve(name);
      await waitForCondition(name, 'Drifted', 'False', 'ToolsMatch');
      await patchSpec(name, { tools: { driftPolicy: 'Enforce' } });
      const before = await clientFor(name);
      expect((await before.listTools()).tools).toHaveLength(14);
      await before.close();

      await patchSpec(name, { image: images.servers.filesystem['2026.8.31'] });
      const drifted = await waitForCondition(
        name,
        'Drifted',
        'True',
        'ToolsChanged',
        2 * POD_TIMEOUT_MS,
      );
      const alert = await waitFor(
        'MCPServerToolsDrifted to fire from the scrape',
        async () => {
          const found = driftAlert(await scrape.alerts(), name);
          return found?.state === 'firing' ? found : undefined;
        },
        { timeoutMs: 90_000 },
      );
      expect(alert.labels).toMatchObject({ namespace: appsNs, mcpserver: name });
      const drift = drifted.status!.drift!;
      expect(drift.added ?? []).toEqual([]);
      expect(drift.removed ?? []).toEqual([]);
      expect(drift.changed).toHaveLength(14);
      for (const changed of drift.changed!) {
        const expected =
          changed.name === 'read_media_file'
            ? ['annotations', 'description', 'outputSchema']
            : ['annotations'];
        expect([...changed.fields].sort(), changed.name).toEqual(expected);
      }

      const after = await clientFor(name);
      expect((await after.listTools()).tools).toEqual([]);
      await expect(
        after.callTool({ name: 'list_allowed_directories', arguments: {} }),
      ).rejects.toThrow();
      await after.close();

      await approve(name);
      await waitForCondition(name, 'Drifted', 'False', 'ToolsMatch');
      const approved = await clientFor(name);
      await waitFor(
        'the bridge to serve the approved tools',
        async () => (await approved.listTools()).tools.length === 14,
      );
      await approved.close();
      await waitFor(
        'MCPServerToolsDrifted to resolve',
        async () => driftAlert(await scrape.alerts(), name) === undefined,
        { timeoutMs: 90_000 },
      );
    },
    4 * POD_TIMEOUT_MS,
  );

  it(
    'import from the MCP registry: pinned and approved; outdated names the next release; importing it moves the pin and drift shows what it changed',
    async () => {
      const registry = await RegistryServer.start();
      const server = `${REGISTRY_NAMESPACE}/server-filesystem`;
      const [before, after] = FILESYSTEM_VERSIONS;
      // The image holds the npm package at that version, which npx runs offline (test/images).
      const importAt = (version: (typeof FILESYSTEM_VERSIONS)[number]) =>
        mcp([
          'import',
          `${server}@${version}`,
          '--registry',
          registry.url,
          '-n',
          appsNs,
          '--name',
          'imported',
          '--image',
          images.servers.filesystem[version],
          '--arg',
          'allowed_directory=/tmp',
          '--apply',
        ]);
      try {
        await registry.publish(filesystemEntry(before));
        expect(await importAt(before)).toContain(`${server} ${before}`);
        await patchSpec('imported', { pod: ON_REAL_NODE });
        await waitForCondition('imported', 'Discovered', 'True');
        await approve('imported');
        const approved = await waitForCondition('imported', 'Drifted', 'False', 'ToolsMatch');
        expect(approved.status?.discovery?.toolCount).toBe(14);
        expect(await mcp(['status', 'imported', '-n', appsNs])).toContain(
          `imported: ${server} ${before}`,
        );

        await registry.publish(filesystemEntry(after));
        const outdated = await mcp(['outdated', '-n', appsNs], 1);
        expect(outdated).toMatch(new RegExp(`imported\\s+${server}\\s+${before}\\s+${after}`));

        expect(await importAt(after)).toContain(`(was ${before}`);
        const drifted = await waitForCondition(
          'imported',
          'Drifted',
          'True',
          'ToolsChanged',
          2 * POD_TIMEOUT_MS,
        );
        expect(drifted.spec.command).toEqual([
          'npx',
          '-y',
          `@modelcontextprotocol/server-filesystem@${after}`,
        ]);
        expect(drifted.spec.pod?.nodeSelector).toEqual(ON_REAL_NODE.nodeSelector);
        const drift = drifted.status!.drift!;
        expect(drift.added ?? []).toEqual([]);
        expect(drift.removed ?? []).toEqual([]);
        expect(drift.changed).toHaveLength(14);
        const readMedia = drift.changed!.find((changed) => changed.name === 'read_media_file');
        expect([...readMedia!.fields].sort()).toEqual([
          'annotations',
          'description',
          'outputSchema',
        ]);
        expect(await mcp(['outdated', '-n', appsNs])).toMatch(
          new RegExp(`imported\\s+${server}\\s+${after}\\s+${after}`),
        );
      } finally {
        await sh(['-n', appsNs, 'delete', 'mcps', 'imported', '--ignore-not-found']);
        await registry.stop();
      }
    },
    4 * POD_TIMEOUT_MS,
  );

  it(
    'a server container that keeps dying is CrashLoopBackOff, then recovers',
    async () => {
      const socket = inject('containerdSocket');
      const killServer = async (): Promise<void> => {
        const pods = JSON.parse(
          await sh([
            '-n',
            appsNs,
            'get',
            'pods',
            '-l',
            'app.kubernetes.io/instance=everything',
            '-o',
            'json',
          ]),
        ) as {
          items: {
            status: {
              containerStatuses?: {
                name: string;
                containerID?: string;
                state: { running?: object };
              }[];
            };
          }[];
        };
        for (const pod of pods.items) {
          const server = pod.status.containerStatuses?.find((c) => c.name === 'server');
          if (!server?.containerID || !server.state.running) continue;
          const id = server.containerID.replace(/^containerd:\/\//, '');
          await execFileAsync('ctr', [
            '--address',
            socket,
            '-n',
            'k8s.io',
            'tasks',
            'kill',
            '-s',
            'SIGKILL',
            id,
          ]);
        }
      };
      await waitFor(
        'Ready False (CrashLoopBackOff) while the server keeps dying',
        async () => {
          await killServer();
          const server = await getServer('everything');
          const ready = condition(server, 'Ready');
          return ready?.status === 'False' && ready.reason === 'CrashLoopBackOff'
            ? ready
            : undefined;
        },
        { timeoutMs: POD_TIMEOUT_MS, intervalMs: 2000 },
      );
      await waitForCondition('everything', 'Ready', 'True', undefined, 2 * POD_TIMEOUT_MS);
    },
    4 * POD_TIMEOUT_MS,
  );

  it(
    'helm upgrade rolls the operator without losing status; helm uninstall keeps the servers',
    async () => {
      const before = await getServer('files');
      await helm.ok(
        ['upgrade', RELEASE, CHART_DIR, '-n', opsNs, '--reuse-values', '--wait', '--timeout', '3m'],
        { podAnnotations: { 'mcp-operator.dev/test-roll': randomBytes(4).toString('hex') } },
      );
      const after = await getServer('files');
      expect(after.status?.discovery?.tools).toEqual(before.status?.discovery?.tools);
      expect(condition(after, 'Drifted')?.reason).toBe('ToolsMatch');
      // The new pod reconciles: a spec change is observed.
      await patchSpec('files', { tools: { driftPolicy: 'Warn' } });
      await waitFor(
        'the rolled operator to observe the change',
        async () => {
          const server = await getServer('files');
          return server.status?.observedGeneration === server.metadata?.generation
            ? true
            : undefined;
        },
        { timeoutMs: 60_000 },
      );

      await helm.ok(['uninstall', RELEASE, '-n', opsNs, '--wait']);
      const left = JSON.parse(await sh(['-n', appsNs, 'get', 'mcps', '-o', 'json'])) as {
        items: MCPServer[];
      };
      expect(left.items.map((s) => s.metadata?.name).sort()).toEqual([
        'everything',
        'everything-http',
        'files',
      ]);
    },
    2 * POD_TIMEOUT_MS,
  );
});
