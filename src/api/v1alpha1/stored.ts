/**
 * An MCPServer as the API server stores it, and the names of the objects that belong to it:
 * what the controller, discovery and the commands all address a server by.
 */

import { createHash } from 'node:crypto';
import { API_GROUP, KIND, PLURAL } from '../names.ts';
import { VERSION, type MCPServer } from './mcpserver.ts';

/** An MCPServer as read from the API server: name, namespace and uid are always set. */
export type StoredMCPServer = MCPServer & {
  metadata: { name: string; namespace: string; uid: string };
};

/** The MCPServer resource (the shape of src/kube/resources.ts's ResourceType). */
export const MCP_SERVER = {
  group: API_GROUP,
  version: VERSION,
  kind: KIND,
  plural: PLURAL,
  namespaced: true,
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
    /** Created by the controller, not render: it holds a random token (src/controller/discovery-token.ts). */
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

/** The key of the discovery token in the `discoverySecret`. */
export const DISCOVERY_TOKEN_KEY = 'token';
