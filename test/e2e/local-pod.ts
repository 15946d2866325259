/**
 * A pod the operator rendered, read back from the API server, run as local processes: what the
 * kubelet would run if the test cluster's pods were not kwok's fakes. Init containers run to
 * completion in order, then the containers start. Each volume is a temp dir: an emptyDir starts
 * empty, a ConfigMap or Secret volume holds its items and, like the kubelet, is kept in sync
 * with the object (polled, each file replaced atomically).
 *
 * Arguments are the container's own with three local substitutions: `mcp-operator` is this
 * checkout's CLI, a mount path is its volume's temp dir, and `0.0.0.0:` is loopback. What
 * follows a `--` (the user's command under the supervisor) is passed as is, as in the pod.
 * Containers start in a temp dir of their own, as in an image's WORKDIR, not in this checkout
 * (whose node_modules an `npx` would use).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  AppsV1Api,
  CoreV1Api,
  V1Container,
  V1Deployment,
  V1PodSpec,
  V1Volume,
} from '@kubernetes/client-node';
import { ASSET_DIR_ENV } from '../../src/bridge/install.ts';
import { assetDir } from '../bridge/pod.ts';
import { waitFor } from '../cluster/testing.ts';
import { CLI } from '../support/cli.ts';

const OPERATOR_BINARY = 'mcp-operator';
/** How often volumes follow their ConfigMap or Secret (the kubelet takes up to a minute). */
const SYNC_MS = 300;

export interface LocalPod {
  /** `http://127.0.0.1:<port>` of the first container port. */
  base: string;
  /** Lines the containers wrote to stderr, prefixed with the container name. */
  log: string[];
  stop(): Promise<void>;
}

interface Mounted {
  volume: V1Volume;
  dir: string;
}

/** Runs the pod of Deployment `name` locally, once the Deployment controller saw its spec. */
export async function runDeploymentPod(
  k: { apps: AppsV1Api; core: CoreV1Api },
  namespace: string,
  name: string,
  options: { readyMs?: number } = {},
): Promise<LocalPod> {
  const deployment = await waitFor('the Deployment to be rolled out', async () => {
    const d: V1Deployment = await k.apps.readNamespacedDeployment({ name, namespace });
    return (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) ? d : undefined;
  });
  return runPod(deployment.spec!.template.spec!, { namespace, core: k.core, ...options });
}

/** `readyMs`: how long the bridge may take to be ready (its probe starts a child). */
export async function runPod(
  spec: V1PodSpec,
  options: { namespace: string; core: CoreV1Api; readyMs?: number },
): Promise<LocalPod> {
  const volumes = await Promise.all(
    (spec.volumes ?? []).map(async (volume) => ({
      volume,
      dir: await mkdtemp(join(tmpdir(), `mcp-pod-${volume.name}-`)),
    })),
  );
  const workdir = await mkdtemp(join(tmpdir(), 'mcp-pod-workdir-'));
  const log: string[] = [];
  const children: [string, ChildProcess][] = [];
  const graceSeconds = spec.terminationGracePeriodSeconds ?? 30;
  let syncing = true;
  const sync = async () => {
    for (const mounted of volumes) await project(mounted, options).catch(() => undefined);
  };
  await sync();
  const timer = setInterval(() => void (syncing && sync()), SYNC_MS);
  const stop = async () => {
    syncing = false;
    clearInterval(timer);
    // Last started first: the bridge stops its sessions through the supervisor, then it goes.
    for (const [name, child] of [...children].reverse()) {
      // A second stop finds them gone: their exit has fired already and would never come again.
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      // As the kubelet does: SIGKILL once the grace period is over, and say so.
      const grace = setTimeout(() => {
        const line = `${name}: still running ${graceSeconds} s after SIGTERM; killed`;
        log.push(line);
        console.warn(`local pod: ${line}`);
        child.kill('SIGKILL');
      }, graceSeconds * 1000);
      await exited;
      clearTimeout(grace);
    }
    await Promise.all(
      [workdir, ...volumes.map(({ dir }) => dir)].map((dir) =>
        rm(dir, { recursive: true, force: true }),
      ),
    );
  };
  try {
    const assets = await assetDir();
    for (const init of spec.initContainers ?? []) {
      const child = start(init, { volumes, workdir, log }, { [ASSET_DIR_ENV]: assets });
      const [code] = (await once(child, 'exit')) as [number | null];
      if (code !== 0)
        throw new Error(`init container ${init.name} exited ${code}: ${log.join('\n')}`);
    }
    for (const container of spec.containers)
      children.push([container.name, start(container, { volumes, workdir, log })]);
    const port = spec.containers.flatMap((c) => c.ports ?? [])[0]?.containerPort;
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      'the local pod to serve',
      async () => {
        const response = await fetch(`${base}/readyz`).catch(() => undefined);
        return response?.status === 200;
      },
      { timeoutMs: options.readyMs ?? 30_000 },
    );
    return { base, log, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function start(
  container: V1Container,
  { volumes, workdir, log }: { volumes: Mounted[]; workdir: string; log: string[] },
  extraEnv: Record<string, string> = {},
): ChildProcess {
  const mounts = (container.volumeMounts ?? []).map((mount) => ({
    path: mount.mountPath,
    dir: volumes.find((v) => v.volume.name === mount.name)!.dir,
  }));
  const argv = [...(container.command ?? []), ...(container.args ?? [])];
  const separator = argv.indexOf('--');
  const ours = separator < 0 ? argv : argv.slice(0, separator);
  const local = [
    ...ours.flatMap((arg) =>
      arg === OPERATOR_BINARY ? [process.execPath, CLI] : [localArg(arg, mounts)],
    ),
    ...(separator < 0 ? [] : argv.slice(separator)),
  ];
  const env = Object.fromEntries(
    (container.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])),
  );
  const [program, ...args] = local;
  const child = spawn(program!, args, {
    cwd: workdir,
    stdio: ['ignore', 'ignore', 'pipe'],
    // A short grace: stopping a session should not take the supervisor's default.
    env: { ...process.env, MCP_SUPERVISOR_GRACE_SECONDS: '1', ...env, ...extraEnv },
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) if (line !== '') log.push(`${container.name}: ${line}`);
  });
  return child;
}

function localArg(arg: string, mounts: { path: string; dir: string }[]): string {
  const mount = mounts.find((m) => arg === m.path || arg.startsWith(`${m.path}/`));
  const mapped = mount === undefined ? arg : mount.dir + arg.slice(mount.path.length);
  return mapped.replace(/^0\.0\.0\.0:/, '127.0.0.1:');
}

/** What each projected file holds, so that an unchanged item is not rewritten. */
const written = new Map<string, string>();

/** Writes a ConfigMap or Secret volume's items as the kubelet would, each file atomically. */
async function project(
  { volume, dir }: Mounted,
  o: { namespace: string; core: CoreV1Api },
): Promise<void> {
  let data: Record<string, string> | undefined;
  let items: { key: string; path: string }[] | undefined;
  if (volume.configMap !== undefined) {
    const cm = await o.core.readNamespacedConfigMap({
      name: volume.configMap.name!,
      namespace: o.namespace,
    });
    data = cm.data;
    items = volume.configMap.items;
  } else if (volume.secret !== undefined) {
    const secret = await o.core.readNamespacedSecret({
      name: volume.secret.secretName!,
      namespace: o.namespace,
    });
    data = Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    items = volume.secret.items;
  } else {
    return;
  }
  const files = items ?? Object.keys(data ?? {}).map((key) => ({ key, path: key }));
  for (const { key, path } of files) {
    const value = data?.[key];
    const file = join(dir, path);
    if (value === undefined || written.get(file) === value) continue;
    written.set(file, value);
    const temp = join(dir, `.${path}.tmp`);
    await writeFile(temp, value);
    await rename(temp, file);
  }
}
