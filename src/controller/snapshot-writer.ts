/**
 * The Kubernetes write discovery makes, done here because the controller owns what it writes:
 * the snapshot ConfigMap carries the labels and owner reference of every object the operator
 * makes for a server (render/metadata.ts), and is applied as the operator's field manager.
 */

import type { V1ConfigMap } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/names.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { ConfigMapObject, SnapshotWriter } from '../discovery/runner.ts';
import { applyObject, covers } from '../kube/apply.ts';
import type { KubeClient } from '../kube/client.ts';
import { CONFIG_MAP } from '../kube/resources.ts';
import { objectMeta } from './render/metadata.ts';

/**
 * Applies a snapshot ConfigMap with server-side apply unless the cached one (`cached`, the
 * operator's own ConfigMaps with data) already holds exactly this.
 */
export function snapshotWriter(
  client: KubeClient,
  cached: (namespace: string, name: string) => ConfigMapObject | undefined,
): SnapshotWriter {
  return {
    async write(server: StoredMCPServer, name: string, data: Record<string, string>) {
      const configMap: V1ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: objectMeta(server, name),
        data,
      };
      // client-node's metadata types times as Date; nothing here sets one.
      const desired = configMap as ConfigMapObject;
      const live = cached(server.metadata.namespace, name);
      if (live !== undefined && covers(live, desired)) return false;
      await applyObject(client, CONFIG_MAP, desired, FIELD_MANAGER);
      return true;
    },
  };
}
