/**
 * Names, labels and owner references shared by every object rendered for an MCPServer.
 */

import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import {
  APP_NAME,
  KIND,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  MANAGED_BY,
} from '../../api/names.ts';
import { API_VERSION } from '../../api/v1alpha1/mcpserver.ts';
import type { StoredMCPServer } from '../../api/v1alpha1/stored.ts';

/** The labels that select a server's pods; stable for the life of the MCPServer. */
export function selectorLabels(server: StoredMCPServer): Record<string, string> {
  return { [LABEL_NAME]: APP_NAME, [LABEL_INSTANCE]: server.metadata.name };
}

/** Recommended labels on every rendered object. */
export function standardLabels(server: StoredMCPServer): Record<string, string> {
  return { ...selectorLabels(server), [LABEL_MANAGED_BY]: MANAGED_BY };
}

/**
 * The MCPServer as controller owner: the garbage collector deletes the object with it, and
 * blockOwnerDeletion keeps foreground deletion of the MCPServer waiting for it.
 * https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/
 */
export function ownerReference(server: StoredMCPServer): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: server.metadata.name,
    uid: server.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function objectMeta(server: StoredMCPServer, name: string): V1ObjectMeta {
  return {
    name,
    namespace: server.metadata.namespace,
    labels: standardLabels(server),
    ownerReferences: [ownerReference(server)],
  };
}
