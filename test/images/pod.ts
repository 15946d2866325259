/**
 * A rendered pod run as plain containers through testcontainers, as close to what the kubelet
 * does as Docker allows:
 * - a sandbox container holds the pod's network namespace, on a network of its own with no route
 *   out (`--internal`): the pod reaches nothing beyond itself, as on a node whose pods cannot
 *   reach npm or PyPI, and this machine reaches the pod at its IP;
 * - init containers run to completion first, then the containers start, all in that namespace;
 * - each emptyDir is a host directory bind-mounted where it is mounted, owned by the pod's fsGroup
 *   with the setgid bit (as the kubelet prepares it), and every container gets the fsGroup as a
 *   supplementary group;
 * - each Secret volume is a host directory holding the data the caller passes for it (none:
 *   empty);
 * - runAsUser/runAsGroup, readOnlyRootFilesystem, dropped capabilities and
 *   allowPrivilegeEscalation: false map to their Docker equivalents; `status.podIP` is the
 *   sandbox's IP, and `$(VAR)` in command and args expands as the kubelet expands it.
 */
import { randomUUID } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { get } from '../cluster/probe.ts';
import { waitFor } from '../support/wait.ts';
import { docker, dockerLogs } from './docker.ts';

/** GenericContainer with the two HostConfig settings it has no method for. */
export class PodContainer extends GenericContainer {
  withReadOnlyRootFilesystem(): this {
    this.hostConfig.ReadonlyRootfs = true;
    return this;
  }

  withGroupAdd(...groups: number[]): this {
    this.hostConfig.GroupAdd = groups.map(String);
    return this;
  }
}

export interface RunningPod {
  /** The pod's IP, which this machine reaches. */
  ip: string;
  /** Started containers by name (init containers have already exited and been removed). */
  containers: Map<string, StartedTestContainer>;
  /** Every container's output so far, each under its name. */
  logs(): Promise<string>;
  stop(): Promise<void>;
}

/** The pod-level facts the Downward API exposes that these pods use. */
interface PodFields {
  'status.podIP': string;
}

function envValue(variable: V1EnvVar, fields: PodFields, container: string): string {
  if (variable.valueFrom === undefined) return variable.value ?? '';
  const path = variable.valueFrom.fieldRef?.fieldPath;
  if (path !== undefined && path in fields) return fields[path as keyof PodFields];
  throw new Error(
    `${container}: env ${variable.name}: only fieldRef ${Object.keys(fields).join(', ')}`,
  );
}

/** `$(VAR)` as the kubelet expands it in command and args; `$$(VAR)` stays literal. */
function expand(words: readonly string[], env: Record<string, string>): string[] {
  return words.map((word) =>
    word.replace(/\$\$|\$\((\w+)\)/g, (match, name?: string) =>
      name === undefined ? '$' : (env[name] ?? match),
    ),
  );
}

/** Translates one container of the pod spec; `volumes` maps emptyDir names to host paths. */
export function podContainer(
  spec: V1PodSpec,
  container: V1Container,
  pod: { volumes: ReadonlyMap<string, string>; fields: PodFields; sandbox: string },
): PodContainer {
  if (container.envFrom !== undefined)
    throw new Error(`${container.name}: envFrom is not supported here`);
  const podSecurity = spec.securityContext ?? {};
  const own = container.securityContext ?? {};
  const user = own.runAsUser ?? podSecurity.runAsUser;
  const group = own.runAsGroup ?? podSecurity.runAsGroup;
  const env = Object.fromEntries(
    (container.env ?? []).map((v) => [v.name, envValue(v, pod.fields, container.name)]),
  );
  let result = new PodContainer(container.image!)
    .withNetworkMode(`container:${pod.sandbox}`)
    // Kubernetes' command replaces the image's ENTRYPOINT and args its CMD.
    .withEntrypoint(expand(container.command ?? [], env))
    .withCommand(expand(container.args ?? [], env))
    .withEnvironment(env)
    .withBindMounts(
      (container.volumeMounts ?? []).map((m) => {
        const source = pod.volumes.get(m.name);
        if (source === undefined) {
          throw new Error(`${container.name}: volume ${m.name} is not in the pod`);
        }
        return { source, target: m.mountPath, mode: m.readOnly ? 'ro' : 'rw' };
      }),
    );
  if (user !== undefined) {
    result = result.withUser(group === undefined ? `${user}` : `${user}:${group}`);
  }
  if (podSecurity.fsGroup !== undefined) result = result.withGroupAdd(podSecurity.fsGroup);
  if (own.readOnlyRootFilesystem) result = result.withReadOnlyRootFilesystem();
  const drop = own.capabilities?.drop ?? [];
  if (drop.length > 0) result = result.withDroppedCapabilities(...drop);
  if (own.allowPrivilegeEscalation === false) result = result.withSecurityOpt('no-new-privileges');
  return result;
}

/** Runs a one-shot container to its end; its output, or a rejection (and removal) unless it exits 0. */
export async function runOnce(container: GenericContainer): Promise<string> {
  const started = await container.withWaitStrategy(Wait.forOneShotStartup()).start();
  try {
    return await readLogs(started);
  } finally {
    await started.stop();
  }
}

/** What the container has printed so far (stdout and stderr). */
export function readLogs(container: StartedTestContainer): Promise<string> {
  return dockerLogs(container.getId());
}

/** Waits until each container's HTTP readiness probe answers 2xx at the pod's IP. */
async function ready(spec: V1PodSpec, ip: string): Promise<void> {
  for (const container of spec.containers) {
    const probe = container.readinessProbe?.httpGet;
    if (probe === undefined) continue;
    const port =
      typeof probe.port === 'number'
        ? probe.port
        : container.ports?.find((p) => p.name === probe.port)?.containerPort;
    const url = `http://${ip}:${port}${probe.path ?? '/'}`;
    await waitFor(
      `${container.name} ready (${url})`,
      async () => ((await get(url)).status < 300 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }
}

/**
 * Starts the pod: its network and sandbox, its emptyDirs, its init containers in order, then its
 * containers in order; resolves once their readiness probes pass. `sandboxImage` must hold
 * `sandboxCommand`, a command that waits until stopped.
 */
export async function startPod(
  spec: V1PodSpec,
  sandbox: { image: string; command: string[] },
  secrets: Record<string, Record<string, string>> = {},
): Promise<RunningPod> {
  const root = await mkdtemp(join(tmpdir(), 'mcp-pod-'));
  const network = `mcp-pod-${randomUUID().slice(0, 8)}`;
  const started = new Map<string, StartedTestContainer>();
  let sandboxContainer: StartedTestContainer | undefined;
  let networkCreated = false;
  const logs = async () => {
    const parts = [...started].map(async ([name, c]) => `--- ${name}\n${await readLogs(c)}`);
    return (await Promise.all(parts)).join('\n');
  };
  const stop = async () => {
    for (const container of [...started.values()].reverse())
      await container.stop({ timeout: 5_000 });
    await sandboxContainer?.stop({ timeout: 1_000 });
    if (networkCreated) await docker(['network', 'rm', network]);
    await rm(root, { recursive: true, force: true });
  };
  try {
    await docker(['network', 'create', '--internal', network]);
    networkCreated = true;
    sandboxContainer = await new GenericContainer(sandbox.image)
      .withEntrypoint(sandbox.command)
      .withNetworkMode(network)
      .start();
    const ip = sandboxContainer.getIpAddress(network);
    const volumes = new Map<string, string>();
    for (const volume of spec.volumes ?? []) {
      const path = join(root, volume.name);
      await mkdir(path);
      volumes.set(volume.name, path);
      if (volume.secret !== undefined) {
        // A Secret the test did not provide is mounted empty, as the kubelet mounts an optional
        // Secret that does not exist: the programs must cope with its absence.
        const data = secrets[volume.secret.secretName ?? ''] ?? {};
        for (const [key, value] of Object.entries(data)) {
          await writeFile(join(path, key), value, { mode: 0o444 });
        }
        await chmod(path, 0o755);
        continue;
      }
      if (volume.emptyDir === undefined) {
        throw new Error(`volume ${volume.name}: emptyDir or Secret only`);
      }
      // An emptyDir is world-writable; with fsGroup the kubelet gives it that group and setgid.
      await chmod(path, 0o777);
      if (spec.securityContext?.fsGroup !== undefined) {
        await chown(path, 0, spec.securityContext.fsGroup);
        await chmod(path, 0o2777);
      }
    }
    const pod = { volumes, fields: { 'status.podIP': ip }, sandbox: sandboxContainer.getId() };
    for (const init of spec.initContainers ?? []) await runOnce(podContainer(spec, init, pod));
    for (const container of spec.containers) {
      started.set(container.name, await podContainer(spec, container, pod).start());
    }
    await ready(spec, ip);
    return { ip, containers: started, logs, stop };
  } catch (error) {
    const output = await logs();
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  }
}
