/**
 * The quick start of the README, run against the local cluster's real node: build the images
 * (stand-in bases, our image, the servers' images), load them into the node, `helm install` the
 * chart with our image, and `kubectl apply` the examples. The cluster CLI's `deploy` command runs
 * it; `npm start` uses that on the embedded default, so a new user sees servers running, their
 * tools discovered and drift reported.
 *
 * The only additions to what a user types: the pods are placed on the real node (it is tainted so
 * that the kwok nodes keep every other pod), and images are never pulled (there is no registry).
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { ensureDocker } from '../images/docker.ts';
import { ensureImages, type Images } from '../images/images.ts';
import { ensureBinaries, type Log } from './build.ts';
import { ON_REAL_NODE, loadImages } from './node.ts';
import { runWithInput } from './processes.ts';

const REPO = join(import.meta.dirname, '..', '..');
export const OPERATOR_NAMESPACE = 'mcp-system';
export const RELEASE = 'mcp-operator';

export interface DeployOptions {
  kubeconfig: string;
  containerdSocket: string;
  log: Log;
}

/** Every image name in `images`, to load into the node. */
export function everyImage(images: Images): string[] {
  const names = (value: unknown): string[] =>
    typeof value === 'string' ? [value] : Object.values(value as object).flatMap(names);
  return names(images);
}

/** Builds and loads the images, installs the chart, applies the examples; returns the server names. */
export async function deploy({
  kubeconfig,
  containerdSocket,
  log,
}: DeployOptions): Promise<string[]> {
  const docker = await ensureDocker({ log });
  try {
    const images = await ensureImages(log);
    await loadImages(containerdSocket, everyImage(images), log);
    await installChart(kubeconfig, images.operator, log);
  } finally {
    await docker.stop();
  }
  return applyExamples(kubeconfig, log);
}

export async function installChart(kubeconfig: string, image: string, log: Log): Promise<void> {
  const { helm } = await ensureBinaries(['helm']);
  const [repository, tag] = image.split(':');
  const values = {
    image: { repository, tag, pullPolicy: 'Never' },
    nodeSelector: ON_REAL_NODE.nodeSelector,
    tolerations: ON_REAL_NODE.tolerations,
  };
  log(
    `helm upgrade --install ${RELEASE} charts/mcp-operator -n ${OPERATOR_NAMESPACE} (image ${image})`,
  );
  await runWithInput(
    helm,
    [
      'upgrade',
      '--install',
      RELEASE,
      join(REPO, 'charts', 'mcp-operator'),
      '--namespace',
      OPERATOR_NAMESPACE,
      '--create-namespace',
      '--wait',
      '--timeout',
      '3m',
      '--values',
      '-',
    ],
    // JSON is YAML: helm reads it as a values file.
    JSON.stringify(values),
    { ...process.env, KUBECONFIG: kubeconfig },
  );
}

async function applyExamples(kubeconfig: string, log: Log): Promise<string[]> {
  const { kubectl } = await ensureBinaries(['kubectl']);
  const dir = join(REPO, 'examples');
  const names: string[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    const server = load(await readFile(join(dir, file), 'utf8')) as {
      metadata: { name: string };
      spec: { url?: string; pod?: object };
    };
    if (server.spec.url === undefined) server.spec.pod = { ...server.spec.pod, ...ON_REAL_NODE };
    log(`kubectl apply -f examples/${file}`);
    await runWithInput(kubectl, ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], dump(server));
    names.push(server.metadata.name);
  }
  return names;
}
