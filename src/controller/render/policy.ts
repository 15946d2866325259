/**
 * The enforcement policy of a stdio server under `driftPolicy: Enforce`: the approved tools by
 * digest, the allowlist, the OAuth scopes of each tool, and the approved prompts, resources and
 * resource templates by digest, in a ConfigMap mounted into the bridge. The kubelet
 * updates a mounted ConfigMap in place, so a new approval reaches running bridges without a
 * restart; that is also why the policy is not part of the pod template checksum.
 */

import type { V1ConfigMap } from '@kubernetes/client-node';
import type { BridgePolicy } from '../../tools/policy.ts';
import { compareNames } from '../../tools/digest.ts';
import {
  approvedItemDigest,
  approvedToolDigest,
  type Baseline,
  NO_BASELINE,
} from '../../tools/baseline.ts';
import { CATALOG, CATALOG_KINDS, type CatalogKind } from '../../tools/catalog-items.ts';
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

/**
 * The policy from the resolved baseline. Nothing resolved means nothing approved: the bridge
 * refuses every tool rather than let an unreviewed one through.
 */
export function bridgePolicy(
  server: StoredMCPServer,
  baseline: Baseline = NO_BASELINE,
): RenderedPolicy {
  const tools = server.spec.tools;
  const approved = (baseline.kind === 'tools' ? baseline.tools : []).map((tool) => ({
    name: tool.name,
    digest: approvedToolDigest(tool),
  }));
  approved.sort((a, b) => compareNames(a.name, b.name));
  const allow = tools?.allow;
  const toolScopes = server.spec.oauth?.toolScopes;
  return {
    approved,
    ...(allow === undefined || allow.length === 0 ? {} : { allow }),
    ...(toolScopes === undefined ? {} : { toolScopes }),
    ...catalogPolicy(baseline),
  };
}

/** The approved items of each kind spec.tools.approved lists, by digest; other kinds unscreened. */
function catalogPolicy(baseline: Baseline): Pick<BridgePolicy, CatalogKind> {
  const catalog = baseline.kind === 'none' ? {} : (baseline.catalog ?? {});
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

export function policyConfigMap(server: StoredMCPServer, baseline?: Baseline): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: objectMeta(server, objectNames(server).policyConfigMap),
    data: { [POLICY_KEY]: `${JSON.stringify(bridgePolicy(server, baseline), null, 2)}\n` },
  };
}
