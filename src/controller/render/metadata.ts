/**
 * Names, labels and owner references shared by every object rendered for an MCPServer.
 */

import { createHash } from 'node:crypto';
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import {
  APP_NAME,
  KIND,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  MANAGED_BY,
} from '../../api/names.ts';
import { API_VERSION, type MCPServer } from '../../api/v1alpha1/mcpserver.ts';

/** An MCPServer as read from the API server: name, namespace and uid are always set. */
export type StoredMCPServer = MCPServer & {
  metadata: { name: string; namespace: string; uid: string };
};

/** Names of the objects rendered (and, for the snapshot, written by discovery) for a server. */
export function objectNames(server: StoredMCPServer) {
  const { name } = server.metadata;
  return {
    deployment: name,
    service: name,
    /** The headless Service by which the bridges of a stdio server find each other. */
    peerService: dnsLabel(`${name}-peers`, name),
    serviceAccount: name,
    policyConfigMap: `${name}-policy`,
    snapshotConfigMap: `${name}-snapshot`,
    /** Created by the controller, not render: it holds a random token (discovery-token.ts). */
    discoverySecret: `${name}-discovery`,
  };
}

/** Longest Service name: a DNS-1035 label (core/v1 validation). */
const DNS_LABEL_MAX = 63;

/**
 * `wanted` when it is a valid label; otherwise `from` cut short, a digest of it (so that two
 * long names stay apart) and the same suffix.
 */
function dnsLabel(wanted: string, from: string): string {
  if (wanted.length <= DNS_LABEL_MAX) return wanted;
  const suffix = wanted.slice(from.length);
  const digest = createHash('sha256').update(from).digest('hex').slice(0, 8);
  const room = DNS_LABEL_MAX - suffix.length - digest.length - 1;
  return `${from.slice(0, room).replace(/-+$/, '')}-${digest}${suffix}`;
}

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
