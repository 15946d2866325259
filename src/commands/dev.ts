/**
 * `mcp-operator dev` (what `npm start` runs): the controller against the current kube context,
 * or, when no cluster answers there, a local cluster that it starts and shows working:
 *
 * - with a real node (the harness starts one when run as root): the README's quick start runs
 *   there (`cluster deploy`: the images, `helm install` of the chart, the examples); the operator
 *   runs in its pod, the servers in theirs; it waits until their tools are discovered, prints
 *   them, and the next steps (approve, then watch for drift);
 * - without one (kwok's fake nodes only): the controller in this process, the CRD and the
 *   examples applied; nothing runs in the pods, so nothing can be discovered, and it says so.
 *
 * The local cluster is the test harness's, reached through one seam (test-harness.ts).
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { FIELD_MANAGER } from '../api/names.ts';
import { operatorError } from '../errors.ts';
import { configOrExit, runManager } from '../controller/command.ts';
import { ConditionType } from '../api/v1alpha1/conditions.ts';
import type { MCPServer } from '../api/v1alpha1/mcpserver.ts';
import { MCP_SERVER } from '../api/v1alpha1/stored.ts';
import { connect } from '../kube/client.ts';
import { loadClientConfig, type ClientConfig } from '../kube/config.ts';
import { collectionPath } from '../kube/resources.ts';
import { type NextSteps, reviewSteps, watchSteps, writeCommands } from './next-steps.ts';
import { REPO, type LocalCluster, testHarness } from './test-harness.ts';

const CRD_DIR = join(REPO, 'crds');
const EXAMPLES_DIR = join(REPO, 'examples');

/** Dev defaults, below the user's own environment and flags. */
const DEV_ENV = {
  MCP_OPERATOR_LEADER_ELECT: 'false',
  MCP_OPERATOR_METRICS_ADDRESS: '127.0.0.1:8080',
};

/** The configured cluster, if one is configured and answers. */
async function reachableCluster(kubeconfig: string | undefined): Promise<ClientConfig | undefined> {
  let clientConfig: ClientConfig;
  try {
    clientConfig = await loadClientConfig({ kubeconfig, env: process.env });
  } catch {
    return undefined;
  }
  const client = connect(clientConfig, { requestTimeoutMs: 3000 });
  try {
    await client.request({ method: 'GET', path: '/version' });
    return clientConfig;
  } catch {
    return undefined;
  } finally {
    client.close();
  }
}

async function localControlPlane(tried: string): Promise<LocalCluster> {
  if (!testHarness.available()) {
    throw operatorError(
      'MCPOP_DEV_NO_CLUSTER',
      tried,
      'the local control plane comes with a clone of the repository only',
    );
  }
  const local = await testHarness.cluster();
  if (local === undefined) {
    throw operatorError('MCPOP_DEV_NO_CLUSTER', tried, 'the local control plane did not start');
  }
  return local;
}

/** What the printed next steps need to run as printed (next-steps.ts). */
async function stepsFor(kubeconfig: string | undefined, kubectl?: string): Promise<NextSteps> {
  const bin = await writeCommands({
    dir: join(REPO, 'node_modules', '.cache', 'mcp-operator', 'bin'),
    node: process.execPath,
    cli: join(REPO, 'src', 'cli.ts'),
    plugin: join(REPO, 'src', 'kubectl-mcp.ts'),
    kubectl,
    path: process.env['PATH'] ?? '',
  });
  return { kubeconfig, bin };
}

async function yamlObjects(dir: string): Promise<KubernetesObject[]> {
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  // loadAllYaml builds client-node's typed models: its serializer drops keys of a plain
  // object that its model lacks (a CRD's `x-kubernetes-validations`, say).
  const docs = await Promise.all(
    files.map(async (f) => {
      const parsed: unknown[] = loadAllYaml(await readFile(join(dir, f), 'utf8'));
      return parsed;
    }),
  );
  return docs
    .flat()
    .filter((doc): doc is KubernetesObject => typeof doc === 'object' && doc !== null);
}

/**
 * Server-side applies each object in order. KubernetesObjectApi finds each kind's path by API
 * discovery, and puts namespaced objects without a namespace into `default`.
 */
async function applyAll(kc: KubeConfig, objects: KubernetesObject[], log: Logger): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const obj of objects) {
    await api.patch(obj, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    log.info({ kind: obj.kind, name: obj.metadata?.name }, 'applied');
  }
}

type Crd = KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } };

/** Waits until the API server serves each CRD (condition Established). */
async function waitForCrds(kc: KubeConfig, crds: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const { apiVersion, kind, metadata } of crds) {
    const header = { apiVersion, kind, metadata: { name: metadata?.name ?? '' } };
    for (let attempt = 0; ; attempt++) {
      const live: Crd = await api.read<Crd>(header);
      const conditions = live.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (attempt > 100) throw new Error(`CRD ${metadata?.name} is not established`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const STORY_TIMEOUT_MS = 5 * 60_000;

function conditionOf(server: MCPServer, type: string) {
  return server.status?.conditions?.find((c) => c.type === type);
}

/** `kubectl get mcps`, as the printer columns show it. */
function table(servers: MCPServer[]): string {
  const rows = [['NAME', 'READY', 'TRANSPORT', 'TOOLS', 'DRIFT']].concat(
    servers.map((s) => [
      s.metadata?.name ?? '',
      conditionOf(s, ConditionType.Ready)?.status ?? '',
      s.spec.url === undefined ? (s.spec.transport ?? '') : '',
      String(s.status?.discovery?.toolCount ?? ''),
      conditionOf(s, ConditionType.Drifted)?.reason ?? '',
    ]),
  );
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('   ')).join('\n');
}

/**
 * The quick start on the local real node: the harness deploys it, then this waits until every
 * deployed server's tools are discovered, prints the servers and the next steps, and keeps the
 * cluster until Ctrl-C. An example whose discovery needs something outside is left as it is: a
 * `url` server, and a server behind OAuth, whose issuer no local cluster has.
 */
function discoverableHere(server: MCPServer): boolean {
  return server.spec.url === undefined && server.spec.oauth === undefined;
}

async function runStory(local: LocalCluster, clientConfig: ClientConfig): Promise<number> {
  // With a listener, Ctrl-C no longer ends Node on the spot: it ends the story, and
  // devCommand's `finally` stops the cluster it started, whenever Ctrl-C comes.
  const interrupted = new AbortController();
  const interrupt = () => interrupted.abort();
  process.once('SIGINT', interrupt);
  try {
    return await tellStory(local, clientConfig, interrupted.signal);
  } finally {
    process.off('SIGINT', interrupt);
  }
}

async function tellStory(
  local: LocalCluster,
  clientConfig: ClientConfig,
  interrupted: AbortSignal,
): Promise<number> {
  const deployed = await testHarness.deploy();
  if (interrupted.aborted) return 130;
  if (deployed.code !== 0) return deployed.code;
  const client = connect(clientConfig);
  const path = collectionPath(MCP_SERVER);
  const deadline = Date.now() + STORY_TIMEOUT_MS;
  let servers: MCPServer[];
  try {
    process.stderr.write('\nWaiting for the servers to run and their tools to be discovered…\n');
    for (;;) {
      servers = (await client.request<{ items: MCPServer[] }>({ method: 'GET', path })).items;
      const pending = servers.filter(
        (s) => discoverableHere(s) && conditionOf(s, ConditionType.Discovered)?.status !== 'True',
      );
      if (pending.length === 0 || Date.now() > deadline) break;
      await sleep(2000, undefined, { signal: interrupted }).catch(() => undefined);
      if (interrupted.aborted) return 130;
    }
  } finally {
    client.close();
  }
  const name = servers.find(discoverableHere)?.metadata?.name ?? 'everything';
  process.stderr.write(
    `\n${table(servers)}\n\n` +
      'The operator runs in its pod (namespace mcp-system), the servers in theirs, on the local\n' +
      'real node. In another terminal:\n' +
      `${reviewSteps(await stepsFor(local.kubeconfig, deployed.kubectl), name)}\n\n` +
      'Ctrl-C stops the local cluster.\n',
  );
  // A pending signal listener does not keep Node running; the timer does, until Ctrl-C.
  const keepAlive = setInterval(() => {}, 60_000);
  await new Promise((resolve) => interrupted.addEventListener('abort', resolve, { once: true }));
  clearInterval(keepAlive);
  return 0;
}

export async function devCommand(argv: string[]): Promise<number> {
  const config = configOrExit('dev', argv, { ...DEV_ENV, ...process.env });
  if (typeof config === 'number') return config;
  const log = pino({ level: config.logLevel });
  let clientConfig = await reachableCluster(config.kubeconfig);
  let local: LocalCluster | undefined;
  try {
    if (clientConfig === undefined) {
      const tried = config.kubeconfig ?? process.env['KUBECONFIG'] ?? '~/.kube/config';
      process.stderr.write(`No Kubernetes cluster answers for ${tried}.\n`);
      local = await localControlPlane(tried);
      config.kubeconfig = local.kubeconfig;
      clientConfig = await loadClientConfig({ kubeconfig: local.kubeconfig, env: process.env });
      if (local.realNode) return await runStory(local, clientConfig);
      process.stderr.write(
        'The local cluster has no real node (it needs root), so no server runs and nothing can\n' +
          'be discovered: the operator below only reconciles the examples onto fake nodes.\n',
      );
    }
    // client-node for applying arbitrary YAML (it resolves kinds by API discovery).
    const kc = new KubeConfig();
    if (config.kubeconfig === undefined) kc.loadFromDefault();
    else kc.loadFromFile(config.kubeconfig);
    const crds = await yamlObjects(CRD_DIR);
    await applyAll(kc, crds, log);
    await waitForCrds(kc, crds);
    if (local !== undefined) await applyAll(kc, await yamlObjects(EXAMPLES_DIR), log);
    process.stderr.write(
      `\nThe operator runs against ${clientConfig.server}. In another terminal:\n` +
        `${watchSteps(await stepsFor(local?.kubeconfig))}\n\n`,
    );
    return await runManager(config, clientConfig, log);
  } catch (err) {
    log.error({ err }, 'dev failed');
    return 1;
  } finally {
    if (local?.ours) await testHarness.stop();
  }
}
