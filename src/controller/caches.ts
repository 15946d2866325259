/**
 * The controller's view of the cluster: one informer per kind it reads, and the mapping of
 * every change to the MCPServer key it concerns (controller-runtime's `Owns` and `Watches`).
 *
 * - MCPServers: the primary kind.
 * - Rendered kinds (ServiceAccount, ConfigMap, Service, Deployment), filtered by our
 *   managed-by label: a change maps to the controller owner reference, so an edited or deleted
 *   object is put back. Not the snapshot ConfigMaps: discovery tells them by their metadata.
 * - Pods of our Deployments (same label), for the kubelet's and scheduler's failure reasons;
 *   mapped by the instance label, since a Pod's owner is a ReplicaSet.
 * - Secrets and ConfigMaps, metadata only: their resourceVersions enter the pod template
 *   checksum of the servers that read them at start, so a changed Secret rolls the pods, and
 *   a changed baseline ConfigMap (spec.tools.approved.configMapRef) is read again. A Secret an
 *   MCPServer controls (its discovery token) maps to it. No Secret value is ever cached.
 *
 * Lanes (queue.ts): a change of a rendered object or a Pod is progress that already happened —
 * above all a Deployment that became available, whose pass writes Ready — and takes the fast
 * lane, so that it does not wait behind the first passes of thousands of new servers. A change
 * of an MCPServer (its spec, or our own status write coming back) and of a referenced Secret or
 * ConfigMap asks for work to be done, and takes the normal lane.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  KIND,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_SNAPSHOT,
  MANAGED_BY,
  SNAPSHOT_HASH_ANNOTATION,
} from '../api/names.ts';
import { API_VERSION } from '../api/v1alpha1/mcpserver.ts';
import { baselineReferences } from '../discovery/baseline.ts';
import type { KubeClient } from '../kube/client.ts';
import { Informer } from '../kube/informer.ts';
import type { Lane } from '../kube/queue.ts';
import type { Change } from '../kube/reflector.ts';
import {
  CONFIG_MAP,
  DEPLOYMENT,
  POD,
  SECRET,
  SERVICE,
  SERVICE_ACCOUNT,
  controllerOf,
  keyOf,
  objectKey,
  type KubeObject,
  type ResourceType,
} from '../kube/resources.ts';
import { MCP_SERVER } from '../api/v1alpha1/stored.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { startupReferences } from './render/pod.ts';
import type { RENDERED_KINDS } from './render/render.ts';

export type RenderedKind = (typeof RENDERED_KINDS)[number];
export type Pod = KubeObject & V1Pod;

export const RENDERED_TYPES: Record<RenderedKind, ResourceType> = {
  ServiceAccount: SERVICE_ACCOUNT,
  ConfigMap: CONFIG_MAP,
  Service: SERVICE,
  Deployment: DEPLOYMENT,
};

/**
 * What reconcile reads of a Pod: its labels (which server), scheduling and container states
 * (readiness.ts), each container's image and the digest it runs (provenance.ts). The rest of a
 * Pod, its spec above all, is most of its size and is not cached.
 */
export function podFacts(pod: Pod): Pod {
  const { name, namespace, uid, resourceVersion, labels } = pod.metadata;
  const containerFacts = (statuses: V1ContainerStatus[] | undefined) =>
    statuses?.map(({ name, image, imageID, state, lastState, restartCount, ready }) => ({
      name,
      image,
      imageID,
      state,
      lastState,
      restartCount,
      ready,
    }));
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: { name, namespace, uid, resourceVersion, labels },
    spec: { containers: (pod.spec?.containers ?? []).map(({ name, image }) => ({ name, image })) },
    status: {
      conditions: pod.status?.conditions,
      initContainerStatuses: containerFacts(pod.status?.initContainerStatuses),
      containerStatuses: containerFacts(pod.status?.containerStatuses),
    },
  };
}

/**
 * What is read of a Secret or ConfigMap's metadata: its key and resourceVersion (the pod
 * template checksum, baselines), its uid and controller (the discovery token Secret's owner)
 * and, of a snapshot ConfigMap, the hash of its data (snapshot-writer.ts). Labels, other
 * annotations and other owner references are not: every server's snapshot ConfigMap carries
 * the operator's labels and annotations, which were two thirds of each cached entry.
 */
export function referenceFacts(object: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, annotations } = object.metadata;
  const controller = controllerOf(object);
  const snapshotHash = annotations?.[SNAPSHOT_HASH_ANNOTATION];
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name,
      namespace,
      uid,
      resourceVersion,
      ...(controller === undefined ? {} : { ownerReferences: [controller] }),
      ...(snapshotHash === undefined
        ? {}
        : { annotations: { [SNAPSHOT_HASH_ANNOTATION]: snapshotHash } }),
    },
  };
}

/** Index names. */
export const BY_OWNER = 'owner';
export const BY_INSTANCE = 'instance';
export const BY_REFERENCE = 'reference';

export interface CachesOptions {
  client: KubeClient;
  namespaces: readonly string[];
  log: Logger;
  enqueue: (key: string, lane: Lane) => void;
}

/** `namespace/name` of the MCPServer that controls `obj`, if one does. */
export function ownerKey(obj: KubeObject): string | undefined {
  const ref = controllerOf(obj);
  return ref?.kind === KIND && ref.apiVersion === API_VERSION
    ? objectKey(obj.metadata.namespace, ref.name)
    : undefined;
}

/** `namespace/Kind/name`, how BY_REFERENCE files a Secret or ConfigMap. */
export const referenceKey = (namespace: string, ref: string): string => `${namespace}/${ref}`;

export class Caches {
  readonly servers: Informer<StoredMCPServer>;
  readonly rendered: Record<RenderedKind, Informer<KubeObject>>;
  readonly pods: Informer<Pod>;
  /** Metadata only, every Secret and ConfigMap in the watched namespaces. */
  readonly references: Record<'Secret' | 'ConfigMap', Informer<KubeObject>>;

  constructor(o: CachesOptions) {
    const common = { client: o.client, namespaces: o.namespaces, log: o.log };
    const managed = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;
    const toOwner = ({ object }: Change<KubeObject>) => {
      const key = ownerKey(object);
      if (key !== undefined) o.enqueue(key, 'fast');
    };
    this.servers = new Informer<StoredMCPServer>({
      ...common,
      resource: MCP_SERVER,
      indexers: {
        [BY_REFERENCE]: (s) =>
          [...startupReferences(s), ...baselineReferences(s)].map((ref) =>
            referenceKey(s.metadata.namespace, ref),
          ),
      },
      onChange: ({ type, object }) => {
        if (type !== 'deleted') o.enqueue(keyOf(object), 'normal');
      },
    });
    const rendered = (kind: RenderedKind) =>
      new Informer<KubeObject>({
        ...common,
        resource: RENDERED_TYPES[kind],
        // Snapshot ConfigMaps are discovery's, up to 1 MiB each: the metadata cache has them.
        labelSelector: kind === 'ConfigMap' ? `${managed},!${LABEL_SNAPSHOT}` : managed,
        indexers: { [BY_OWNER]: (obj) => [controllerOf(obj)?.uid ?? ''] },
        onChange: toOwner,
      });
    this.rendered = {
      ServiceAccount: rendered('ServiceAccount'),
      ConfigMap: rendered('ConfigMap'),
      Service: rendered('Service'),
      Deployment: rendered('Deployment'),
    };
    const instanceOf = (pod: Pod) => pod.metadata.labels?.[LABEL_INSTANCE];
    this.pods = new Informer<Pod>({
      ...common,
      resource: POD,
      labelSelector: managed,
      transform: podFacts,
      indexers: {
        [BY_INSTANCE]: (pod) => [objectKey(pod.metadata.namespace, instanceOf(pod) ?? '')],
      },
      onChange: ({ object }) => {
        const instance = instanceOf(object);
        if (instance !== undefined)
          o.enqueue(objectKey(object.metadata.namespace, instance), 'fast');
      },
    });
    const reference = (resource: ResourceType) =>
      new Informer<KubeObject>({
        ...common,
        resource,
        metadataOnly: true,
        transform: referenceFacts,
        onChange: ({ object }) => {
          // A Secret we own (the discovery token): deleted or edited, it is looked at again.
          const owner = resource === SECRET ? ownerKey(object) : undefined;
          if (owner !== undefined) o.enqueue(owner, 'normal');
          const key = referenceKey(
            object.metadata.namespace ?? '',
            `${resource.kind}/${object.metadata.name}`,
          );
          for (const server of this.servers.store.byIndex(BY_REFERENCE, key))
            o.enqueue(keyOf(server), 'normal');
        },
      });
    this.references = { Secret: reference(SECRET), ConfigMap: reference(CONFIG_MAP) };
  }

  get #all(): Informer<KubeObject>[] {
    return [
      this.servers,
      ...Object.values(this.rendered),
      this.pods,
      ...Object.values(this.references),
    ] as Informer<KubeObject>[];
  }

  get synced(): boolean {
    return this.#all.every((i) => i.synced);
  }

  start(): void {
    for (const informer of this.#all) informer.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.#all.map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#all.map((i) => i.stop()));
  }

  /** Cached objects by kind, for the managed-objects gauge. */
  counts(): Record<string, number> {
    return {
      MCPServer: this.servers.store.size,
      ...Object.fromEntries(Object.entries(this.rendered).map(([kind, i]) => [kind, i.store.size])),
      Pod: this.pods.store.size,
    };
  }
}
