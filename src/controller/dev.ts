/**
 * `mcp-operator dev` (what `npm start` runs): the controller against the current kube context,
 * or, when no cluster answers there, against a local control plane that it starts, with the
 * CRD installed and `examples/` applied. It prints how to point kubectl at the cluster.
 *
 * The local control plane is the test harness's (`test/cluster/cli.ts`), run as a child
 * process rather than imported, so that nothing in src/ depends on test/; it exists only in a
 * clone of the repository, which is where `npm start` runs.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
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
import { configOrExit, runManager } from './command.ts';
import { connect } from '../kube/client.ts';
import { loadClientConfig, type ClientConfig } from '../kube/config.ts';

const REPO = join(import.meta.dirname, '..', '..');
const CLUSTER_CLI = join(REPO, 'test', 'cluster', 'cli.ts');
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

/** Runs `test/cluster/cli.ts <command>`, relaying its output; returns its exit code and last line. */
function clusterCli(command: string): Promise<{ code: number; last: string }> {
  const child = spawn(process.execPath, [CLUSTER_CLI, command], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let last = '';
  createInterface({ input: child.stdout }).on('line', (line) => {
    process.stderr.write(`  ${line}\n`);
    last = line;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, last }));
  });
}

interface LocalCluster {
  kubeconfig: string;
  /** Whether we started it, and so stop it on the way out. */
  ours: boolean;
}

async function localControlPlane(tried: string): Promise<LocalCluster> {
  if (!existsSync(CLUSTER_CLI)) {
    throw operatorError(
      'MCPOP_DEV_NO_CLUSTER',
      tried,
      'the local control plane comes with a clone of the repository only',
    );
  }
  const running = await clusterCli('status');
  const ours = running.code !== 0;
  process.stderr.write(ours ? 'Starting a local control plane…\n' : '');
  const { code, last } = ours ? await clusterCli('up') : running;
  if (code !== 0 || !last.startsWith('KUBECONFIG=')) {
    throw operatorError('MCPOP_DEV_NO_CLUSTER', tried, 'the local control plane did not start');
  }
  return { kubeconfig: last.slice('KUBECONFIG='.length), ours };
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
        (local ? `  export KUBECONFIG=${local.kubeconfig}\n` : '') +
        '  kubectl get mcpservers -A\n\n',
    );
    return await runManager(config, clientConfig, log);
  } catch (err) {
    log.error({ err }, 'dev failed');
    return 1;
  } finally {
    if (local?.ours) await clusterCli('down');
  }
}
