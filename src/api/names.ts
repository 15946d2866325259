/**
 * The names users type and tools match on: the API group, kind, short names, labels and
 * annotations. Changing one of these is an API change.
 */

export const API_GROUP = 'mcp-operator.dev';
export const KIND = 'MCPServer';
export const LIST_KIND = 'MCPServerList';
export const PLURAL = 'mcpservers';
export const SINGULAR = 'mcpserver';
export const SHORT_NAMES = ['mcps'] as const;

/** Field manager for every server-side apply the operator makes. */
export const FIELD_MANAGER = 'mcp-operator';

/**
 * Recommended labels, https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
 * `name` is the application (always `mcp-server`), `instance` the MCPServer's name.
 */
export const LABEL_NAME = 'app.kubernetes.io/name';
export const LABEL_INSTANCE = 'app.kubernetes.io/instance';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'mcp-operator';
export const APP_NAME = 'mcp-server';

/**
 * On a snapshot ConfigMap (written by discovery): the label keeps it out of the controller's
 * cache of rendered objects, whose content is cached (a snapshot can be 1 MiB); the annotation
 * is a digest of its data, so that the metadata cache tells whether it already holds a snapshot.
 */
export const LABEL_SNAPSHOT = 'mcp-operator.dev/snapshot';
export const SNAPSHOT_HASH_ANNOTATION = 'mcp-operator.dev/snapshot-hash';

/** Labels the operator owns on everything it renders; users may not override them. */
export const RESERVED_LABELS = [LABEL_NAME, LABEL_INSTANCE, LABEL_MANAGED_BY] as const;

/**
 * Setting or changing this annotation on an MCPServer runs discovery at once, without a spec
 * change (after redeploying a url server, say): `kubectl annotate mcps NAME
 * mcp-operator.dev/discover="$(date +%s)" --overwrite`.
 */
export const DISCOVER_ANNOTATION = 'mcp-operator.dev/discover';
