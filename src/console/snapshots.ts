/**
 * The snapshot a server page compares with the baseline: the one status.discovery describes,
 * read from its ConfigMap as the user, digests computed again (readSnapshot), and refused when
 * it is not the snapshot status names (discovery may be replacing it; the watch on snapshot
 * ConfigMaps brings the page back when it has). The last few parsed are kept, by digest, so
 * that reloading a page costs one GET but no parse.
 */

import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { isNotFound, errorText, type KubeClient } from '../kube/client.ts';
import { CONFIG_MAP, objectPath } from '../kube/resources.ts';
import { SNAPSHOT_KEY, readSnapshot } from '../discovery/snapshot-configmap.ts';
import type { Snapshot } from '../tools/snapshot.ts';

export type SnapshotRead = { snapshot: Snapshot } | { problem: string };

/** Parsed snapshots kept: the pages a reviewer moves between. Each can be 1 MiB of JSON. */
const KEPT = 8;

export class Snapshots {
  readonly #client: KubeClient;
  readonly #parsed = new Map<string, Snapshot>();

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async current(server: StoredMCPServer): Promise<SnapshotRead> {
    const { namespace } = server.metadata;
    const discovery = server.status?.discovery;
    if (discovery?.snapshotDigest === undefined) {
      return { problem: 'No discovery has succeeded yet: there is nothing to compare.' };
    }
    if (discovery.snapshotConfigMap === undefined) {
      return {
        problem:
          'The last snapshot did not fit in a ConfigMap (see the Discovered condition): only status is shown.',
      };
    }
    const cacheKey = `${namespace}/${discovery.snapshotDigest}`;
    const known = this.#parsed.get(cacheKey);
    if (known !== undefined) return { snapshot: known };
    let data: string;
    try {
      const configMap = await this.#client.request<{ data?: Record<string, string> }>({
        method: 'GET',
        path: objectPath(CONFIG_MAP, namespace, discovery.snapshotConfigMap),
      });
      data = configMap.data?.[SNAPSHOT_KEY] ?? '';
    } catch (error) {
      if (isNotFound(error))
        return { problem: `ConfigMap ${discovery.snapshotConfigMap} does not exist (yet).` };
      return {
        problem: `Cannot read ConfigMap ${discovery.snapshotConfigMap}: ${errorText(error)}`,
      };
    }
    let snapshot: Snapshot;
    try {
      snapshot = readSnapshot(data, `ConfigMap ${namespace}/${discovery.snapshotConfigMap}`);
    } catch (error) {
      return { problem: errorText(error) };
    }
    if (snapshot.digest !== discovery.snapshotDigest) {
      return {
        problem:
          'Discovery is storing a newer snapshot than status describes; the page reloads when it has.',
      };
    }
    this.#parsed.set(cacheKey, snapshot);
    for (const key of this.#parsed.keys()) {
      if (this.#parsed.size <= KEPT) break;
      this.#parsed.delete(key);
    }
    return { snapshot };
  }
}
