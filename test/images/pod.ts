/**
 * A rendered pod run as plain containers through testcontainers, as close to what the kubelet
 * does as Docker allows: init containers run to completion first, then the containers start;
 * each emptyDir is a host directory bind-mounted into the containers that mount it, owned by the
 * pod's fsGroup with the setgid bit (as the kubelet prepares it), and every container gets the
 * fsGroup as a supplementary group; runAsUser/runAsGroup, readOnlyRootFilesystem, dropped
 * capabilities and allowPrivilegeEscalation: false map to their Docker equivalents. Containers
 * do not share a network namespace: the bridge and the supervisor talk over FIFOs only.
 */
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { dockerLogs } from './docker.ts';

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
  /** Started containers by name (init containers have already exited and been removed). */
  containers: Map<string, StartedTestContainer>;
  /** `http://host:port` of a container's port, as mapped on this machine. */
  url(container: string, port: number): string;
  stop(): Promise<void>;
}

function unsupported(container: V1Container): string | undefined {
  if (container.env?.some((e) => e.valueFrom !== undefined)) return 'env valueFrom';
  if (container.envFrom !== undefined) return 'envFrom';
  return undefined;
}

/** Translates one container of the pod spec; `volumes` maps emptyDir names to host paths. */
export function podContainer(
  spec: V1PodSpec,
  container: V1Container,
  volumes: ReadonlyMap<string, string>,
): PodContainer {
  const reason = unsupported(container);
  if (reason !== undefined) throw new Error(`${container.name}: ${reason} is not supported here`);
  const pod = spec.securityContext ?? {};
  const own = container.securityContext ?? {};
  const user = own.runAsUser ?? pod.runAsUser;
  const group = own.runAsGroup ?? pod.runAsGroup;
  let result = new PodContainer(container.image!)
    // Kubernetes' command replaces the image's ENTRYPOINT and args its CMD.
    .withEntrypoint(container.command ?? [])
    .withCommand(container.args ?? [])
    .withEnvironment(Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? ''])))
    .withBindMounts(
      (container.volumeMounts ?? []).map((m) => {
        const source = volumes.get(m.name);
        if (source === undefined)
          throw new Error(`${container.name}: volume ${m.name} is not an emptyDir`);
        return { source, target: m.mountPath, mode: m.readOnly ? 'ro' : 'rw' };
      }),
    );
  if (user !== undefined)
    result = result.withUser(group === undefined ? `${user}` : `${user}:${group}`);
  if (pod.fsGroup !== undefined) result = result.withGroupAdd(pod.fsGroup);
  if (own.readOnlyRootFilesystem) result = result.withReadOnlyRootFilesystem();
  const drop = own.capabilities?.drop ?? [];
  if (drop.length > 0) result = result.withDroppedCapabilities(...drop);
  if (own.allowPrivilegeEscalation === false) result = result.withSecurityOpt('no-new-privileges');
  for (const port of container.ports ?? []) result = result.withExposedPorts(port.containerPort);
  const probe = container.readinessProbe?.httpGet;
  const port = container.ports?.find(
    (p) => p.name === probe?.port || p.containerPort === probe?.port,
  );
  return probe !== undefined && port !== undefined
    ? result.withWaitStrategy(Wait.forHttp(probe.path ?? '/', port.containerPort))
    : result;
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

/**
 * Starts the pod: its emptyDirs, its init containers in order, then its containers in order.
 * Containers named in `offline` get no network.
 */
export async function startPod(
  spec: V1PodSpec,
  options: { offline?: readonly string[] } = {},
): Promise<RunningPod> {
  const root = await mkdtemp(join(tmpdir(), 'mcp-pod-'));
  const volumes = new Map<string, string>();
  const started = new Map<string, StartedTestContainer>();
  const stop = async () => {
    for (const container of [...started.values()].reverse()) await container.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    for (const volume of spec.volumes ?? []) {
      if (volume.emptyDir === undefined) throw new Error(`volume ${volume.name}: emptyDir only`);
      const path = join(root, volume.name);
      await mkdir(path);
      volumes.set(volume.name, path);
      // An emptyDir is world-writable; with fsGroup the kubelet gives it that group and setgid.
      await chmod(path, 0o777);
      if (spec.securityContext?.fsGroup !== undefined) {
        await chown(path, 0, spec.securityContext.fsGroup);
        await chmod(path, 0o2777);
      }
    }
    for (const init of spec.initContainers ?? []) {
      await runOnce(podContainer(spec, init, volumes));
    }
    for (const container of spec.containers) {
      const translated = podContainer(spec, container, volumes);
      // No network at all: whatever such a container runs must come from its image.
      if (options.offline?.includes(container.name)) translated.withNetworkMode('none');
      started.set(container.name, await translated.start());
    }
    return {
      containers: started,
      url: (name, port) => {
        const container = started.get(name);
        if (container === undefined) throw new Error(`no container ${name}`);
        return `http://${container.getHost()}:${container.getMappedPort(port)}`;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
