/**
 * The chart's life on a cluster of its own: before it, the CLI (as built and installed) says
 * that the MCPServer CRD is not installed and how to install it; `helm install` on a fresh
 * cluster creates the CRD, `helm upgrade` with a changed CRD changes it on the API server
 * (which a CRD in crds/ would never get), and `helm uninstall` keeps it and the MCPServers;
 * then the CLI, asked for a server that is not there, names the namespace it searched. The
 * tests run in order on the one cluster: only a cluster of its own is sure to lack the CRD.
 *
 * A control plane of its own, because a changed CRD makes the API server reinitialize the
 * storage of its objects: for a moment every MCPServer request answers 429, which the test
 * files sharing the global control plane would see.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CRD_NAME } from '../../src/api/crd.ts';
import { API_GROUP, PLURAL } from '../../src/api/names.ts';
import { VERSION, type MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { ensureBinaries } from '../cluster/build.ts';
import { ControlPlane } from '../cluster/control-plane.ts';
import { createNamespace, waitFor } from '../cluster/testing.ts';
import { EXAMPLES_DIR, kubectl, loadExamples } from '../examples/examples.ts';
import { builtCli } from '../support/build.ts';
import { CHART_DIR, Helm } from './helm.ts';

const RELEASE = 'mcp-operator';
let plane: ControlPlane;
let helm: Helm;
let kc: KubeConfig;
let tmp: string;
let plugin: string;

beforeAll(async () => {
  ({ plugin } = await builtCli());
  const binaries = await ensureBinaries();
  plane = await ControlPlane.start({ binaries, nodes: 1 });
  kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  helm = await Helm.create({ binary: binaries.helm, kubeconfig: plane.kubeconfigPath });
  tmp = await mkdtemp(join(tmpdir(), 'mcp-operator-upgrade-'));
}, 600_000);

afterAll(async () => {
  await helm?.close();
  await plane?.stop();
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
}, 60_000);

/** `kubectl mcp <args>` as installed (dist/kubectl-mcp.js) against this file's cluster. */
function kubectlMcp(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [plugin, ...args],
      { env: { ...process.env, KUBECONFIG: plane.kubeconfigPath }, timeout: 60_000 },
      (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code), stderr }),
    );
  });
}

it('before the chart: the CLI says the MCPServer CRD is not installed, and how to install it', async () => {
  for (const args of [['status', 'everything'], ['outdated'], ['export', '-A']]) {
    const result = await kubectlMcp(args);
    expect(result.stderr).toMatch(
      new RegExp(
        `^kubectl mcp ${args[0]}: the MCPServer CRD is not installed in the cluster at https://127\\.0\\.0\\.1:\\d+: install the operator \\(helm install mcp-operator charts/mcp-operator\\), or the CRD alone \\(kubectl apply -f crds/\\)\n$`,
      ),
    );
    expect(result.code).toBe(2);
  }
});

/** The chart with one more printer column in its CRD: what a new chart version might bring. */
async function chartWithNewColumn(): Promise<string> {
  const chart = join(tmp, 'chart');
  await cp(CHART_DIR, chart, { recursive: true });
  const file = join(chart, 'files', 'crds', `${CRD_NAME}.yaml`);
  const crd = load(await readFile(file, 'utf8')) as V1CustomResourceDefinition;
  crd.spec.versions[0]!.additionalPrinterColumns!.push({
    name: 'Image',
    type: 'string',
    jsonPath: '.spec.image',
    priority: 1,
    description: 'Container image of the server.',
  });
  await writeFile(file, dump(crd));
  return chart;
}

it('helm upgrade applies a changed CRD; uninstall keeps it and every MCPServer', async () => {
  const ns = await createNamespace(kc, 'chart-upgrade');
  const examples = await loadExamples();
  const sh = async (args: string[]) => {
    const result = await kubectl(plane.kubeconfigPath, args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const names = async () =>
    (
      (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: API_GROUP,
        version: VERSION,
        namespace: ns,
        plural: PLURAL,
      })) as { items: MCPServer[] }
    ).items
      .map((s) => s.metadata.name!)
      .sort();
  const extensions = kc.makeApiClient(ApiextensionsV1Api);

  await helm.ok(['install', RELEASE, CHART_DIR, '-n', ns, '--wait', '--timeout', '120s']);
  const installed = await extensions.readCustomResourceDefinition({ name: CRD_NAME });
  expect(installed.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
  await sh(['apply', '-n', ns, '-f', EXAMPLES_DIR]);
  const before = await names();
  expect(before).toEqual(examples.map((e) => e.server.metadata.name!).sort());

  await helm.ok(['upgrade', RELEASE, await chartWithNewColumn(), '-n', ns, '--wait']);
  const upgraded = await extensions.readCustomResourceDefinition({ name: CRD_NAME });
  expect(upgraded.spec.versions[0]!.additionalPrinterColumns!.map((c) => c.name)).toContain(
    'Image',
  );
  // The API server reinitializes MCPServer storage after the change; retry through it.
  const wide = await waitFor('kubectl get mcps -o wide', () =>
    sh(['get', 'mcps', 'everything', '-n', ns, '-o', 'wide']),
  );
  expect(wide.split('\n')[0]).toMatch(/\bIMAGE\b/);
  expect(wide).toContain('node:24-bookworm-slim');
  expect(await waitFor('the MCPServers listed', names)).toEqual(before);

  await helm.ok(['uninstall', RELEASE, '-n', ns, '--wait']);
  const kept = await extensions.readCustomResourceDefinition({ name: CRD_NAME });
  expect(kept.spec.versions[0]!.additionalPrinterColumns!.map((c) => c.name)).toContain('Image');
  expect(await names()).toEqual(before);
});

it('after it: a server that is not there is named with the namespace searched', async () => {
  const ns = await createNamespace(kc, 'no-server');
  const searched: { args: string[]; namespace: string }[] = [
    ...['status', 'diff', 'approve', 'export'].map((command) => ({
      args: [command, 'absent', '-n', ns],
      namespace: ns,
    })),
    // Without -n: the kubeconfig context's namespace, else default.
    { args: ['status', 'absent'], namespace: 'default' },
  ];
  for (const { args, namespace } of searched) {
    const result = await kubectlMcp(args);
    expect(result.stderr).toBe(
      `kubectl mcp ${args[0]!}: no MCPServer absent in namespace ${namespace}; \`kubectl get mcps -A\` lists them all (choose the namespace with -n)\n`,
    );
    expect(result.code).toBe(2);
  }
});
