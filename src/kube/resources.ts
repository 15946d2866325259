/**
 * The resource types the controller reads and writes, and the REST paths for them. Paths follow
 * the Kubernetes API conventions: core types under `/api/v1`, named groups under
 * `/apis/<group>/<version>`, namespaced objects under `namespaces/<ns>/`.
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-uris
 */

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** The fields of ObjectMeta the controller reads; everything else passes through untouched. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  managedFields?: unknown[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

const core = (kind: string, plural: string, namespaced = true): ResourceType => ({
  group: '',
  version: 'v1',
  kind,
  plural,
  namespaced,
});

export const DEPLOYMENT: ResourceType = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
};
export const SERVICE = core('Service', 'services');
export const SERVICE_ACCOUNT = core('ServiceAccount', 'serviceaccounts');
export const CONFIG_MAP = core('ConfigMap', 'configmaps');
export const SECRET = core('Secret', 'secrets');
export const POD = core('Pod', 'pods');
export const EVENT = core('Event', 'events');
export const NAMESPACE = core('Namespace', 'namespaces', false);
export const LEASE: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

export const apiVersionOf = (type: ResourceType): string =>
  type.group === '' ? type.version : `${type.group}/${type.version}`;

/** `/api/v1/namespaces/ns/pods`, or cluster-wide `/api/v1/pods` when namespace is undefined. */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const root = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const scope =
    type.namespaced && namespace !== undefined
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : '';
  return `${root}${scope}/${type.plural}`;
}

export function objectPath(
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  subresource?: string,
): string {
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource === undefined ? path : `${path}/${subresource}`;
}

/**
 * What a request path addresses, as a metrics label: the resource's plural, with its
 * subresource when there is one (`mcpservers/status`). Bounded by the kinds the operator
 * uses, never a name or namespace.
 */
export function resourceOfPath(path: string): string {
  const segments = path.split('?')[0]!.split('/').filter(Boolean);
  // `/api/<version>/…` or `/apis/<group>/<version>/…`.
  const rest = segments.slice(segments[0] === 'api' ? 2 : 3);
  const scoped = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [plural = '', , subresource] = scoped;
  return subresource === undefined ? plural : `${plural}/${subresource}`;
}

/** `namespace/name`: the work queue key and cache key, as client-go's MetaNamespaceKeyFunc. */
export const objectKey = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

export function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name ?? '');
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The owner reference with `controller: true`, if any (there is at most one). */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}
