/**
 * Reads the approved baseline's ConfigMap: the list of tools that
 * `spec.tools.approved.configMapRef` names, whose text src/tools/baseline.ts turns into the
 * resolved baseline with the rest of `spec.tools.approved`. Drift compares against it, and
 * under `driftPolicy: Enforce` the bridge's policy is rendered from it.
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
import { type Baseline, parseApprovedTools, resolveBaseline } from '../tools/baseline.ts';
import { sentence } from '../tools/format.ts';

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
  const approved = server.spec.tools?.approved;
  const ref = baselineConfigMap(server);
  if (ref === undefined) return resolveBaseline(approved);
  const read = await readConfigMapBaseline(client, server.metadata.namespace ?? 'default', ref);
  return resolveBaseline(approved, read.baseline);
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
    const approved = server.spec.tools?.approved;
    const ref = baselineConfigMap(server);
    if (ref === undefined) {
      this.#parsed.delete(key);
      return resolveBaseline(approved);
    }
    const { namespace } = server.metadata;
    const version = this.#cachedVersion(namespace, ref.name);
    const known = this.#parsed.get(key);
    if (known?.name === ref.name && known.key === ref.key && known.resourceVersion === version) {
      return resolveBaseline(approved, known.baseline);
    }
    const read = await readConfigMapBaseline(this.#client, namespace, ref);
    this.#parsed.set(key, { ...ref, ...read });
    return resolveBaseline(approved, read.baseline);
  }

  forget(key: string): void {
    this.#parsed.delete(key);
  }
}
