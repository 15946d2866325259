/**
 * The MCPServer CustomResourceDefinition, built from the TypeBox schema. `npm run crds` writes
 * it to crds/; the operator's dev mode installs the same object.
 * https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/
 */

import { dump } from 'js-yaml';
import { API_GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR } from './names.ts';
import { MCPServerSchema, VERSION } from './v1alpha1/mcpserver.ts';
import { ConditionType } from './v1alpha1/conditions.ts';

export const CRD_NAME = `${PLURAL}.${API_GROUP}`;
export const CRD_FILE = `crds/${CRD_NAME}.yaml`;

export type JsonSchema = { [key: string]: unknown };

/**
 * TypeBox keeps its bookkeeping in symbol keys ([Kind], [OptionalKind]), which JSON drops.
 * What remains is plain JSON Schema; the only key the API server would refuse is `$id`.
 */
export function structural(schema: unknown): JsonSchema {
  return JSON.parse(
    JSON.stringify(schema, (key, value: unknown) => (key === '$id' ? undefined : value)),
  ) as JsonSchema;
}

/**
 * `kubectl explain` prints descriptions but not defaults, so a scalar default is stated in the
 * description (object defaults such as `{}` only make the API server fill in nested ones).
 */
function withDefaultsDescribed(node: JsonSchema): JsonSchema {
  const { default: value, description } = node;
  const scalar =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
  const described =
    scalar && typeof description === 'string' && !description.includes('Default')
      ? { ...node, description: `${description} Defaults to ${value}.` }
      : node;
  return Object.fromEntries(
    Object.entries(described).map(([key, value]) => [key, describeChildren(key, value)]),
  );
}

/** Recurse into the keywords that hold schemas: properties, items, additionalProperties. */
function describeChildren(key: string, value: unknown): unknown {
  if (key === 'properties') {
    const properties = value as Record<string, JsonSchema>;
    return Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [name, withDefaultsDescribed(child)]),
    );
  }
  if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object') {
    return withDefaultsDescribed(value as JsonSchema);
  }
  return value;
}

/**
 * The root schema: apiVersion, kind and metadata are filled in by the API server and may not
 * carry constraints beyond `type` (structural schema rules), so they are written bare.
 */
export function openAPIV3Schema(): JsonSchema {
  const root = withDefaultsDescribed(structural(MCPServerSchema));
  const properties = root.properties as Record<string, JsonSchema>;
  properties.apiVersion = { type: 'string', description: 'APIVersion of this object.' };
  properties.kind = { type: 'string', description: 'Kind of this object.' };
  properties.metadata = { type: 'object' };
  root.required = ['spec'];
  return root;
}

const conditionColumn = (name: string, type: string, field: string, description: string) => ({
  name,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].${field}`,
  description,
});

/** `kubectl get mcps`: Ready, Transport, Tools, Drift, Findings, Age (README.md); Endpoint with -o wide. */
const PRINTER_COLUMNS = [
  conditionColumn('Ready', ConditionType.Ready, 'status', 'Whether the server is ready.'),
  {
    name: 'Transport',
    type: 'string',
    jsonPath: '.spec.transport',
    description: 'stdio or streamable-http.',
  },
  {
    name: 'Tools',
    type: 'integer',
    jsonPath: '.status.discovery.toolCount',
    description: 'Tools the server lists.',
  },
  // The reason (ToolsMatch, ToolsChanged, NoBaseline) says more at a glance than True/False.
  conditionColumn(
    'Drift',
    ConditionType.Drifted,
    'reason',
    'How the tools compare with the approved baseline.',
  ),
  // The highest level of the findings on the text the model reads: empty when there are none.
  {
    name: 'Findings',
    type: 'string',
    jsonPath: '.status.discovery.textFindings.level',
    description: 'The highest level of the findings on the text the model reads, if any.',
  },
  {
    name: 'Endpoint',
    type: 'string',
    jsonPath: '.status.endpoint',
    priority: 1,
    description: 'MCP endpoint URL.',
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

export function crd(): JsonSchema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: API_GROUP,
      names: {
        kind: KIND,
        listKind: LIST_KIND,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: [...SHORT_NAMES],
      },
      // No `categories: [all]`: `kubectl delete all --all` would then delete every MCP server
      // too, and `kubectl get all` is expected to show built-in workloads only.
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: openAPIV3Schema() },
          subresources: { status: {} },
          additionalPrinterColumns: PRINTER_COLUMNS,
          // `kubectl get mcps --field-selector spec.transport=stdio`.
          selectableFields: [{ jsonPath: '.spec.transport' }],
        },
      ],
    },
  };
}

const HEADER = `# Generated by \`npm run crds\` from src/api/v1alpha1/mcpserver.ts. DO NOT EDIT.\n`;

export function crdYaml(): string {
  return HEADER + dump(crd(), { lineWidth: -1, noRefs: true });
}
