/**
 * bench:api-cost's requests on the MCPServer itself: its status written the three ways the API
 * offers, and the user's create and a status write against copies of the CRD with less
 * validation, so that what the custom resource costs the API server splits into the request kind
 * and the schema.
 *
 * Status, as the operator writes it: a first write (Progressing, the first rollout) and a change
 * (Available), each on fresh servers per kind of write:
 * - the operator's own write (`statusWrite`): a JSON Patch that tests the uid, then sets status;
 * - server-side apply, as the operator did before (field manager, force);
 * - a JSON merge patch of the status subresource (RFC 7386);
 * - an update (PUT) of the status subresource with the resourceVersion last read, which the API
 *   server refuses with 409 Conflict when the object changed since (optimistic concurrency).
 *
 * CRD copies, under their own groups (the CRD's name is `<plural>.<group>`), in the bench only:
 * the committed schema without its CEL rules (`x-kubernetes-validations`), and no schema at all
 * (spec and status preserve unknown fields). The committed CRD is never weakened.
 */
import { API_GROUP, KIND, PLURAL } from '../src/api/names.ts';
import { crd, type JsonSchema } from '../src/api/crd.ts';
import { MCP_SERVER, type StoredMCPServer } from '../src/api/v1alpha1/stored.ts';
import { VERSION, type MCPServerStatus } from '../src/api/v1alpha1/mcpserver.ts';
import { ConditionStatus } from '../src/api/v1alpha1/conditions.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { collectionPath, objectPath, type ResourceType } from '../src/kube/resources.ts';
import { statusWrite } from '../src/controller/reconcile.ts';
import { CRD, DEPLOYED_SPEC, installCrd, pool } from './harness.ts';

type Request = Parameters<KubeClient['request']>[0];

/**
 * A measured kind of request: its label, the request of the i-th of a round, and what must be
 * read before (not measured), such as the resourceVersions an update sends.
 */
export type Measured = [
  label: string,
  requestOf: (i: number) => Request,
  prepare?: () => Promise<void>,
];

const CONCURRENCY = 32;

const CEL_RULES = 'x-kubernetes-validations';

/** `schema` without any CEL rule, at any depth. */
export function withoutCelRules(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutCelRules);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== CEL_RULES)
      .map(([key, value]) => [key, withoutCelRules(value)]),
  );
}

const OPEN_OBJECT = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
/** Only what the CRD's selectable field needs (`.spec.transport`) is declared. */
const SCHEMALESS = {
  type: 'object',
  properties: {
    spec: { ...OPEN_OBJECT, properties: { transport: { type: 'string' } } },
    status: OPEN_OBJECT,
  },
};

/** A variant of the MCPServer CRD served under `<prefix>.<group>`, with `schemaOf` applied. */
interface CrdVariant {
  prefix: string;
  label: string;
  schemaOf: (schema: unknown) => unknown;
}

export const CRD_VARIANTS: CrdVariant[] = [
  { prefix: 'nocel', label: 'MCPServer without CEL rules', schemaOf: withoutCelRules },
  { prefix: 'noschema', label: 'MCPServer without a schema', schemaOf: () => SCHEMALESS },
];

const groupOf = (variant: CrdVariant) => `${variant.prefix}.bench.${API_GROUP}`;

function variantResource(variant: CrdVariant): ResourceType {
  return { ...MCP_SERVER, group: groupOf(variant) };
}

function variantCrd(variant: CrdVariant): JsonSchema & { metadata: { name: string } } {
  const base = crd() as {
    spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } & JsonSchema;
  } & JsonSchema;
  const group = groupOf(variant);
  return {
    ...base,
    metadata: { name: `${PLURAL}.${group}` },
    spec: {
      ...base.spec,
      group,
      names: { ...(base.spec['names'] as JsonSchema), shortNames: [] },
      versions: base.spec.versions.map((version) => ({
        ...version,
        schema: { openAPIV3Schema: variant.schemaOf(version.schema.openAPIV3Schema) },
      })),
    },
  };
}

export async function installCrdVariants(client: KubeClient): Promise<void> {
  for (const variant of CRD_VARIANTS) await installCrd(client, variantCrd(variant));
}

export async function removeCrdVariants(client: KubeClient): Promise<void> {
  for (const variant of CRD_VARIANTS) {
    await client.request({
      method: 'DELETE',
      path: objectPath(CRD, undefined, variantCrd(variant).metadata.name),
    });
  }
}

/** The status the operator writes for a deployed server: Progressing first, then Available. */
function statusOf(namespace: string, name: string, available: boolean): MCPServerStatus {
  return {
    observedGeneration: 1,
    conditions: [
      {
        type: 'Ready',
        status: available ? ConditionStatus.True : ConditionStatus.False,
        reason: available ? 'Available' : 'Progressing',
        message: available ? 'Deployment available' : 'Waiting for the rollout to start',
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        observedGeneration: 1,
      },
    ],
    endpoint: `http://${name}.${namespace}.svc.cluster.local:3000/mcp`,
    replicas: 1,
    readyReplicas: available ? 1 : 0,
  };
}

const serverBody = (resource: ResourceType, name: string) => ({
  apiVersion: `${resource.group}/${VERSION}`,
  kind: KIND,
  metadata: { name },
  spec: DEPLOYED_SPEC,
});

/** Creates the `names` servers of `resource`, unmeasured. */
export function createUnmeasured(
  client: KubeClient,
  namespace: string,
  resource: ResourceType,
  names: string[],
): Promise<void> {
  return pool(names, CONCURRENCY, (name) =>
    client.request({
      method: 'POST',
      path: collectionPath(resource, namespace),
      body: serverBody(resource, name),
    }),
  );
}

/** Status written on the servers `nameOf(i)`: first write, then a change; one way of writing. */
function statusRequests(
  client: KubeClient,
  namespace: string,
  way: 'apply' | 'merge patch' | 'update' | 'uid-tested JSON patch',
  nameOf: (i: number) => string,
  resource: ResourceType = MCP_SERVER,
  what = 'MCPServer',
): Measured[] {
  const resourceVersions = new Map<string, string>();
  const uids = new Map<string, string>();
  const apiVersion = `${resource.group}/${VERSION}`;
  const readVersions = async () => {
    const list = await client.request<{ items: StoredMCPServer[] }>({
      method: 'GET',
      path: collectionPath(resource, namespace),
    });
    for (const s of list.items) {
      resourceVersions.set(s.metadata.name, s.metadata.resourceVersion!);
      uids.set(s.metadata.name, s.metadata.uid);
    }
  };
  const write =
    (available: boolean) =>
    (i: number): Request => {
      const name = nameOf(i);
      const path = objectPath(resource, namespace, name, 'status');
      const status = statusOf(namespace, name, available);
      if (way === 'apply') {
        return {
          method: 'PATCH',
          patchType: 'apply',
          path,
          query: { fieldManager: 'mcp-operator', force: true },
          body: { apiVersion, kind: KIND, metadata: { name, namespace }, status },
        };
      }
      if (way === 'uid-tested JSON patch') {
        return statusWrite({ name, namespace, uid: uids.get(name) ?? '' }, status);
      }
      if (way === 'merge patch') {
        return {
          method: 'PATCH',
          patchType: 'merge',
          path,
          query: { fieldManager: 'mcp-operator' },
          body: { status },
        };
      }
      return {
        method: 'PUT',
        path,
        query: { fieldManager: 'mcp-operator' },
        body: {
          apiVersion,
          kind: KIND,
          metadata: { name, namespace, resourceVersion: resourceVersions.get(name) },
          spec: DEPLOYED_SPEC,
          status,
        },
      };
    };
  const prepare = way === 'update' || way === 'uid-tested JSON patch' ? readVersions : undefined;
  return [
    [`${what}: status ${way}, first`, write(false), prepare],
    [`${what}: status ${way}, change`, write(true), prepare],
  ];
}

/**
 * The status writes of the round `tag`: apply on the servers the user's POST created
 * (`applyNameOf`), merge patch and update on servers of their own, created when prepared.
 */
export function statusWriteRequests(
  client: KubeClient,
  namespace: string,
  n: number,
  tag: string,
  applyNameOf: (i: number) => string,
): Measured[] {
  const setOf = (set: string) => (i: number) => `${set}${tag}-${i}`;
  const names = (set: string) => Array.from({ length: n }, (_, i) => setOf(set)(i));
  const created = (set: string, measured: Measured[]): Measured[] => {
    const [[label, requestOf, prepare], ...rest] = measured as [Measured, ...Measured[]];
    const create = async () => {
      await createUnmeasured(client, namespace, MCP_SERVER, names(set));
      await prepare?.();
    };
    return [[label, requestOf, create], ...rest];
  };
  return [
    ...statusRequests(client, namespace, 'apply', applyNameOf),
    ...created('sm', statusRequests(client, namespace, 'merge patch', setOf('sm'))),
    ...created('su', statusRequests(client, namespace, 'update', setOf('su'))),
    ...created('sj', statusRequests(client, namespace, 'uid-tested JSON patch', setOf('sj'))),
  ];
}

/** The user's POST and the first status apply against each CRD variant. */
export function crdVariantRequests(client: KubeClient, namespace: string, tag: string): Measured[] {
  return CRD_VARIANTS.flatMap((variant) => {
    const resource = variantResource(variant);
    const nameOf = (i: number) => `v${tag}-${i}`;
    const [firstApply] = statusRequests(
      client,
      namespace,
      'apply',
      nameOf,
      resource,
      variant.label,
    );
    const post = (i: number): Request => ({
      method: 'POST',
      path: collectionPath(resource, namespace),
      body: serverBody(resource, nameOf(i)),
    });
    return [[`${variant.label}: POST`, post], firstApply!];
  });
}
