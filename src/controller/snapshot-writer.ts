/**
 * The Kubernetes write discovery makes, done here because the controller owns what it writes:
 * the snapshot ConfigMap carries the labels and owner reference of every object the operator
 * makes for a server (render/metadata.ts), and is applied as the operator's field manager.
 */

import type { V1ConfigMap } from '@kubernetes/client-node';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { ConfigMapObject, SnapshotWriter } from '../discovery/runner.ts';
import { createHash } from 'node:crypto';
import { FIELD_MANAGER, LABEL_SNAPSHOT, SNAPSHOT_HASH_ANNOTATION } from '../api/names.ts';
import { applyObject } from '../kube/apply.ts';
import type { KubeClient } from '../kube/client.ts';
import { CONFIG_MAP, type KubeObject } from '../kube/resources.ts';
import { objectMeta } from './render/metadata.ts';

/**
 * The first 32 hex digits of the SHA-256 of `data` as RFC 8785 canonical JSON, fed to the hash
 * line by line. A snapshot's text is 100 KiB and more: building its canonical JSON to hash it
 * made two more strings of that size on every discovery run, changed or not: nearly all the
 * operator allocated in V8's large-object space (bench/allocation-sampler.ts, 1,000 servers of
 * 100 tools). JSON escapes a string one character at a time, and a newline as `\n`: the text's
 * lines, escaped and joined by `\n`, are the escaped text.
 */
export function dataHash(data: Readonly<Record<string, string>>): string {
  const hash = createHash('sha256').update('{');
  Object.keys(data)
    .sort()
    .forEach((key, i) => {
      hash.update(`${i === 0 ? '' : ','}${JSON.stringify(key)}:"`);
      data[key]!.split('\n').forEach((line, j) => {
        hash.update(`${j === 0 ? '' : '\\n'}${JSON.stringify(line).slice(1, -1)}`);
      });
      hash.update('"');
    });
  return hash.update('}').digest('hex').slice(0, 32);
}

/**
 * Applies a snapshot ConfigMap with server-side apply unless the cached one (`cached`, from the
 * metadata-only cache of ConfigMaps) carries the digest of exactly this data.
 */
export function snapshotWriter(
  client: KubeClient,
  cached: (namespace: string, name: string) => KubeObject | undefined,
): SnapshotWriter {
  return {
    async write(server: StoredMCPServer, name: string, data: Record<string, string>) {
      const hash = dataHash(data);
      const live = cached(server.metadata.namespace, name);
      if (live?.metadata.annotations?.[SNAPSHOT_HASH_ANNOTATION] === hash) return false;
      const meta = objectMeta(server, name);
      const configMap: V1ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          ...meta,
          labels: { ...meta.labels, [LABEL_SNAPSHOT]: 'true' },
          annotations: { ...meta.annotations, [SNAPSHOT_HASH_ANNOTATION]: hash },
        },
        data,
      };
      // client-node's metadata types times as Date; nothing here sets one.
      await applyObject(client, CONFIG_MAP, configMap as ConfigMapObject, FIELD_MANAGER);
      return true;
    },
  };
}
