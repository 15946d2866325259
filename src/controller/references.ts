/**
 * The Secrets and ConfigMaps an MCPServer's pods read at start, and their versions as cached:
 * what render needs (Resolved.referenceVersions) to put them into the pod template checksum.
 */
import type { Informer } from '../kube/informer.ts';
import { objectKey, type KubeObject } from '../kube/resources.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { Resolved } from './render/options.ts';
import { startupReferences } from './render/pod.ts';

/** Versions of the references that exist; a missing one contributes nothing (render's rule). */
export function resolveReferences(
  server: StoredMCPServer,
  caches: Record<'Secret' | 'ConfigMap', Informer<KubeObject>>,
): Resolved {
  const versions: Record<string, string> = {};
  for (const ref of startupReferences(server)) {
    const [kind, name] = ref.split('/') as ['Secret' | 'ConfigMap', string];
    const version = caches[kind].store.get(objectKey(server.metadata.namespace, name))?.metadata
      .resourceVersion;
    if (version !== undefined) versions[ref] = version;
  }
  return { referenceVersions: versions };
}
