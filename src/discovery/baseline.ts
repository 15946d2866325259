/**
 * The approved baseline of an MCPServer, resolved: `spec.tools.approved.tools` as written, or
 * the list kept in the ConfigMap that `spec.tools.approved.configMapRef` names, parsed with
 * `parseApprovedTools`. Drift compares against it, and under `driftPolicy: Enforce` the bridge's
 * policy is made from it.
 *
 * A ConfigMap baseline costs a GET only when the ConfigMap changed: the operator passes the
 * resourceVersion its metadata cache holds, and a parse is reused while that stays the same,
 * so a steady-state reconcile sends no request for it.
 */

import { DEFAULTS } from '../api/v1alpha1/defaults.ts';
import type { MCPServer } from '../api/v1alpha1/mcpserver.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { CONFIG_MAP, objectPath } from '../kube/resources.ts';
import { OperatorError } from '../errors.ts';
import { parseApprovedTools } from '../tools/approve.ts';
import type { BaselineTool } from '../tools/drift.ts';
import { CATALOG, CATALOG_KINDS, type CatalogBaseline } from '../tools/catalog.ts';
import { sentence } from '../tools/format.ts';

export type Baseline =
  /** No spec.tools.approved: nothing to compare with. */
  | { kind: 'none' }
  | { kind: 'tools'; tools: readonly BaselineTool[]; catalog?: CatalogBaseline }
  /** A ConfigMap baseline that is missing or does not parse; `message` says which and why. */
  | { kind: 'invalid'; message: string };

export const NO_BASELINE: Baseline = { kind: 'none' };

type Server = Pick<MCPServer, 'spec'> & { metadata: { namespace?: string } };

/** The ConfigMap a server's baseline is kept in, if it is kept in one. */
export function baselineConfigMap(server: Server): { name: string; key: string } | undefined {
  const ref = server.spec.tools?.approved?.configMapRef;
  return ref === undefined ? undefined : { name: ref.name, key: ref.key ?? DEFAULTS.approvedKey };
}

/** `ConfigMap/<name>` of the baseline ConfigMap, in the form the controller's reference index uses. */
export function baselineReferences(server: Server): string[] {
  const ref = baselineConfigMap(server);
  return ref === undefined ? [] : [`ConfigMap/${ref.name}`];
}

/** Inline tools as drift reads them; a ConfigMap baseline is `resolveFromConfigMap`'s. */
function inlineBaseline(server: Server): Baseline | undefined {
  const approved = server.spec.tools?.approved;
  if (approved === undefined) return NO_BASELINE;
  return approved.tools === undefined
    ? undefined
    : withCatalog(server, { kind: 'tools', tools: approved.tools });
}

/**
 * The approved prompts, resources and resource templates (always inline, beside the tools
 * wherever those are kept), keyed as src/tools/catalog.ts keys them; a kind not approved is
 * left out.
 */
export function approvedCatalog(server: Pick<MCPServer, 'spec'>): CatalogBaseline {
  const approved = server.spec.tools?.approved;
  const catalog: { -readonly [K in keyof CatalogBaseline]: CatalogBaseline[K] } = {};
  for (const kind of CATALOG_KINDS) {
    const items = approved?.[kind] as Record<string, unknown>[] | undefined;
    if (items === undefined) continue;
    const key = CATALOG[kind].key;
    catalog[kind] = items.map(({ [key]: id, digest, definition }) => ({
      key: id as string,
      digest: digest as string | undefined,
      definition: definition as Record<string, unknown> | undefined,
    }));
  }
  return catalog;
}

function withCatalog(server: Server, baseline: Baseline): Baseline {
  if (baseline.kind !== 'tools' || server.spec.tools?.approved === undefined) return baseline;
  const catalog = approvedCatalog(server);
  return Object.keys(catalog).length === 0 ? baseline : { ...baseline, catalog };
}

interface ConfigMapBody {
  metadata: { resourceVersion?: string };
  data?: Record<string, string>;
}

/** Reads and parses a baseline ConfigMap. A missing ConfigMap or key is invalid; API errors throw. */
async function readConfigMapBaseline(
  client: KubeClient,
  namespace: string,
  ref: { name: string; key: string },
): Promise<{ baseline: Baseline; resourceVersion: string | undefined }> {
  const source = `ConfigMap ${namespace}/${ref.name}`;
  let body: ConfigMapBody;
  try {
    body = await client.request<ConfigMapBody>({
      method: 'GET',
      path: objectPath(CONFIG_MAP, namespace, ref.name),
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const message = `${source} (spec.tools.approved.configMapRef) does not exist.`;
    return { baseline: { kind: 'invalid', message }, resourceVersion: undefined };
  }
  const resourceVersion = body.metadata.resourceVersion;
  const text = body.data?.[ref.key];
  if (text === undefined) {
    const message = `${source} (spec.tools.approved.configMapRef) has no key ${ref.key}.`;
    return { baseline: { kind: 'invalid', message }, resourceVersion };
  }
  try {
    const tools = parseApprovedTools(text, `${source} key ${ref.key}`);
    return { baseline: { kind: 'tools', tools }, resourceVersion };
  } catch (err) {
    if (!(err instanceof OperatorError)) throw err;
    return { baseline: { kind: 'invalid', message: sentence(err.message) }, resourceVersion };
  }
}

/** The baseline with a fresh read of any ConfigMap: for the `diff` command. */
export async function readBaseline(client: KubeClient, server: Server): Promise<Baseline> {
  const inline = inlineBaseline(server);
  if (inline !== undefined) return inline;
  const ref = baselineConfigMap(server)!;
  const read = await readConfigMapBaseline(client, server.metadata.namespace ?? 'default', ref);
  return withCatalog(server, read.baseline);
}

interface Parsed {
  name: string;
  key: string;
  resourceVersion: string | undefined;
  baseline: Baseline;
}

/**
 * Resolves baselines for the operator, reading a ConfigMap again only when the version its
 * cache reports differs from the one last parsed (undefined: the cache has no such ConfigMap).
 */
export class BaselineResolver {
  readonly #client: KubeClient;
  readonly #cachedVersion: (namespace: string, name: string) => string | undefined;
  readonly #parsed = new Map<string, Parsed>();

  constructor(
    client: KubeClient,
    cachedVersion: (namespace: string, name: string) => string | undefined,
  ) {
    this.#client = client;
    this.#cachedVersion = cachedVersion;
  }

  async resolve(key: string, server: Server & { metadata: { namespace: string } }) {
    const inline = inlineBaseline(server);
    if (inline !== undefined) {
      this.#parsed.delete(key);
      return inline;
    }
    const ref = baselineConfigMap(server)!;
    const { namespace } = server.metadata;
    const version = this.#cachedVersion(namespace, ref.name);
    const known = this.#parsed.get(key);
    if (known?.name === ref.name && known.key === ref.key && known.resourceVersion === version) {
      return withCatalog(server, known.baseline);
    }
    const read = await readConfigMapBaseline(this.#client, namespace, ref);
    this.#parsed.set(key, { ...ref, ...read });
    return withCatalog(server, read.baseline);
  }

  forget(key: string): void {
    this.#parsed.delete(key);
  }
}
