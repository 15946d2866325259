/**
 * The enforcement policy of a stdio server under `driftPolicy: Enforce`: the approved tools by
 * digest, the allowlist, the OAuth scopes of each tool, and the approved prompts, resources and
 * resource templates by digest, in a ConfigMap mounted into the bridge. The kubelet
 * updates a mounted ConfigMap in place, so a new approval reaches running bridges without a
 * restart; that is also why the policy is not part of the pod template checksum.
 */

import type { V1ConfigMap } from '@kubernetes/client-node';
import type { BridgePolicy } from '../../tools/policy.ts';
import { toolDigest, type Digest } from '../../tools/digest.ts';
import type { BaselineTool } from '../../tools/drift.ts';
import { compareNames } from '../../tools/digest.ts';
import {
  CATALOG,
  CATALOG_KINDS,
  type CatalogKind,
  approvedDigest as approvedItemDigest,
} from '../../tools/catalog.ts';
import { approvedCatalog } from '../../discovery/baseline.ts';
import { objectMeta } from './metadata.ts';
import { objectNames, type StoredMCPServer } from '../../api/v1alpha1/stored.ts';

export const POLICY_KEY = 'policy.json';
export const POLICY_MOUNT_PATH = '/etc/mcp-operator/policy';
export const POLICY_FILE = `${POLICY_MOUNT_PATH}/${POLICY_KEY}`;

/**
 * The bridge's policy file as render writes it: always with `approved` (the bridge reads a
 * policy without it as "no digest check", which the operator never wants).
 */
export type RenderedPolicy = BridgePolicy & Required<Pick<BridgePolicy, 'approved'>>;

/** An approved entry carries its digest, or the definition the digest is computed from. */
function approvedDigest(tool: BaselineTool): Digest {
  return (tool.digest as Digest | undefined) ?? toolDigest({ ...tool.definition, name: tool.name });
}

/**
 * The policy from the inline approved tools, or from the ones the caller read from the
 * referenced ConfigMap. Nothing resolved means nothing approved: the bridge refuses every tool
 * rather than let an unreviewed one through.
 */
export function bridgePolicy(
  server: StoredMCPServer,
  approvedTools: readonly BaselineTool[] = [],
): RenderedPolicy {
  const tools = server.spec.tools;
  const approved = (tools?.approved?.tools ?? approvedTools).map((tool) => ({
    name: tool.name,
    digest: approvedDigest(tool),
  }));
  approved.sort((a, b) => compareNames(a.name, b.name));
  const allow = tools?.allow;
  const toolScopes = server.spec.oauth?.toolScopes;
  return {
    approved,
    ...(allow === undefined || allow.length === 0 ? {} : { allow }),
    ...(toolScopes === undefined ? {} : { toolScopes }),
    ...catalogPolicy(server),
  };
}

/** The approved items of each kind spec.tools.approved lists, by digest; other kinds unscreened. */
function catalogPolicy(server: StoredMCPServer): Pick<BridgePolicy, CatalogKind> {
  const catalog = approvedCatalog(server);
  const policy: Pick<BridgePolicy, CatalogKind> = {};
  for (const kind of CATALOG_KINDS) {
    const items = catalog[kind];
    if (items === undefined) continue;
    const key = CATALOG[kind].key;
    policy[kind] = items
      .map((item) => ({ [key]: item.key, digest: approvedItemDigest(kind, item) }))
      .sort((a, b) => compareNames(a[key]!, b[key]!));
  }
  return policy;
}

export function policyConfigMap(
  server: StoredMCPServer,
  approvedTools?: readonly BaselineTool[],
): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: objectMeta(server, objectNames(server).policyConfigMap),
    data: { [POLICY_KEY]: `${JSON.stringify(bridgePolicy(server, approvedTools), null, 2)}\n` },
  };
}
