/**
 * What the operator's configuration contributes to rendering. Render reads nothing else: no
 * environment, no clock, no API calls. The `controller` command builds this from its flags.
 */

import type { V1ResourceRequirements } from '@kubernetes/client-node';
import type { Baseline } from '../../tools/baseline.ts';

export interface RenderOptions {
  /** The operator's own image: init container (busybox + supervisor) and bridge sidecar. */
  image: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Resources of the server container when the MCPServer sets none. */
  serverResources?: V1ResourceRequirements;
  /** Resources of the bridge sidecar. */
  bridgeResources?: V1ResourceRequirements;
}

/**
 * What the caller read from other objects for this MCPServer. Render stays pure: it never
 * reads them itself.
 */
export interface Resolved {
  /**
   * Versions (resourceVersion or a content hash) of the Secrets and ConfigMaps the pods read
   * only at start (see `startupReferences`), keyed `Secret/<name>` or `ConfigMap/<name>`. They
   * enter the pod template checksum, so a changed value rolls the pods. A missing entry does
   * not contribute.
   */
  referenceVersions?: Readonly<Record<string, string>>;
  /**
   * The approved baseline, resolved from spec.tools.approved and the ConfigMap it may name:
   * what the bridge's policy is made from under driftPolicy Enforce. Absent: nothing approved.
   */
  baseline?: Baseline;
}

/** Defaults: a small MCP server process; the limit stops a leaking child from starving the node. */
export const DEFAULT_SERVER_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { memory: '512Mi' },
};

/** The bridge is one Node.js process moving JSON lines; it needs little. */
export const DEFAULT_BRIDGE_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '20m', memory: '64Mi' },
  limits: { memory: '256Mi' },
};

/** The init container copies two files. */
export const INIT_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '10m', memory: '16Mi' },
  limits: { memory: '64Mi' },
};
