/**
 * MCPServer v1alpha1: the single source of truth for the API. The CRD
 * (crds/mcpservers.mcp-operator.dev.yaml), docs/api.md and the TypeScript types are all
 * derived from the schemas below; edit here and run `npm run crds`.
 *
 * Conventions: https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md
 * Every field has a description (it is what `kubectl explain` prints). Validation that a user
 * can get wrong carries a CEL message naming the field, because that message is all
 * `kubectl apply` shows.
 */

import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import {
  Affinity,
  Condition,
  EnvFromSource,
  EnvVar,
  LocalObjectReference,
  PodSecurityContext,
  ResourceRequirements,
  Toleration,
} from '../core.ts';
import { API_GROUP, KIND, RESERVED_LABELS } from '../names.ts';
import { Duration, FreeForm, StringEnum, StringMap, type CelRule } from '../schema.ts';

export const VERSION = 'v1alpha1';
export const API_VERSION = `${API_GROUP}/${VERSION}`;

export const TRANSPORTS = ['stdio', 'streamable-http'] as const;
export const SESSION_MODES = ['PerSession', 'Shared'] as const;
export const DRIFT_POLICIES = ['Warn', 'Enforce'] as const;
export const DRIFT_SEVERITIES = ['breaking', 'compatible', 'description-only'] as const;

/**
 * The parts of an MCP `Tool` that are digested and compared one by one (MCP 2025-11-25,
 * server/tools, "Tool"). Must equal DIGEST_FIELDS in src/discovery/digest.ts; a test pins it.
 */
export const TOOL_FIELDS = [
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
  'execution',
] as const;

/**
 * Defaults. Fields whose default is the same for every server are defaulted by the API server
 * (they appear in `kubectl get -o yaml`); fields that only apply to some servers (a url server
 * has no port, replicas or bridge) are defaulted by the renderer from these same values, so
 * that a CEL rule can still refuse them where they do not apply.
 */
export const DEFAULTS = {
  port: 8080,
  path: '/mcp',
  replicas: 1,
  readOnlyRootFilesystem: true,
  bridge: {
    sessionMode: 'PerSession',
    maxSessions: 64,
    warmPool: 0,
    idleTimeout: '15m',
    requestTimeout: '5m',
  },
  discovery: { enabled: true, interval: '5m', timeout: '30s' },
  driftPolicy: 'Warn',
  authKey: 'token',
  approvedKey: 'tools.yaml',
} as const;

/** `sha256:` and 64 lowercase hex digits: the digest form of src/discovery/digest.ts. */
export const DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';

/** Tool names, MCP 2025-11-25 server/tools "Tool Names": 1-128 of A-Z a-z 0-9 _ - . */
const TOOL_NAME_MAX = 128;
const TOOL_NAME_CHARS = '^[A-Za-z0-9_.-]*$';
const MAX_TOOLS = 1000;
/** ConfigMap and Secret keys: at most 253 characters (core/v1 validation). */
const CONFIG_KEY_MAX = 253;

function ToolName(description: string) {
  return Type.String({
    description,
    minLength: 1,
    maxLength: TOOL_NAME_MAX,
    'x-kubernetes-validations': [
      {
        rule: `self.matches('${TOOL_NAME_CHARS}')`,
        message:
          "tool names may only contain A-Z, a-z, 0-9, '_', '-' and '.' (MCP specification, Tool Names)",
      },
    ],
  });
}

const ApprovedTool = Type.Object(
  {
    name: ToolName('Name of the approved tool.'),
    digest: Type.Optional(
      Type.String({
        description:
          'SHA-256 of the whole tool definition (RFC 8785 canonical JSON), as `mcp-operator approve` prints it: sha256:<64 hex digits>.',
        maxLength: 71,
        'x-kubernetes-validations': [
          {
            rule: `self.matches('${DIGEST_PATTERN}')`,
            message: 'digest must be sha256: followed by 64 lowercase hex digits',
          },
        ],
      }),
    ),
    definition: Type.Optional(
      Type.Object(
        {
          title: Type.Optional(Type.String({ description: 'Human-readable title of the tool.' })),
          description: Type.Optional(
            Type.String({ description: 'Description of the tool, as the model reads it.' }),
          ),
          inputSchema: FreeForm({ description: 'JSON Schema of the tool arguments.' }),
          outputSchema: Type.Optional(
            FreeForm({ description: 'JSON Schema of the structured result.' }),
          ),
          annotations: Type.Optional(
            FreeForm({ description: 'Tool annotations (hints such as readOnlyHint).' }),
          ),
          execution: Type.Optional(
            FreeForm({ description: 'Execution properties (such as task support).' }),
          ),
        },
        {
          description:
            'The approved tool definition as the server lists it in tools/list; reviewable in a pull request, unlike a digest.',
          'x-kubernetes-preserve-unknown-fields': true,
        },
      ),
    ),
  },
  {
    description: 'One approved tool: its name and either its digest or its full definition.',
    'x-kubernetes-validations': [
      {
        rule: 'has(self.digest) != has(self.definition)',
        message: 'an approved tool sets exactly one of digest or definition',
      },
    ],
  },
);

const Approved = Type.Object(
  {
    tools: Type.Optional(
      Type.Array(ApprovedTool, {
        description: 'The approved tools, inline.',
        maxItems: MAX_TOOLS,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
    configMapRef: Type.Optional(
      Type.Object(
        {
          name: LocalObjectReference.properties.name,
          key: Type.Optional(
            Type.String({
              description: `Key holding the tools list (YAML or JSON, the shape of approved.tools). Defaults to ${DEFAULTS.approvedKey}.`,
              default: DEFAULTS.approvedKey,
              minLength: 1,
              maxLength: CONFIG_KEY_MAX,
            }),
          ),
        },
        {
          description: 'A ConfigMap holding the approved tools, for sets too large to inline.',
        },
      ),
    ),
  },
  {
    description:
      'The approved baseline that discovery compares against: inline tools or a ConfigMap, not both.',
    'x-kubernetes-validations': [
      {
        rule: 'has(self.tools) != has(self.configMapRef)',
        message: 'spec.tools.approved sets exactly one of tools or configMapRef',
      },
    ],
  },
);

const Tools = Type.Object(
  {
    allow: Type.Optional(
      Type.Array(ToolName('A tool name.'), {
        description:
          'Allowlist of tool names agents may see. Tools not listed are hidden under driftPolicy Enforce; listed tools the server no longer has are reported in status.drift.missingAllowed. Empty or unset allows every approved tool.',
        maxItems: MAX_TOOLS,
        'x-kubernetes-list-type': 'set',
      }),
    ),
    approved: Type.Optional(Approved),
    driftPolicy: Type.Optional(
      StringEnum(DRIFT_POLICIES, {
        description:
          'Warn: report drift in status and events only. Enforce: the bridge also hides and refuses tools that are unapproved, drifted or not allowed (stdio servers only).',
        default: DEFAULTS.driftPolicy,
      }),
    ),
  },
  {
    description: 'Which tools are expected and what to do when the server exposes others.',
    default: {},
    'x-kubernetes-validations': [
      {
        rule: "!has(self.driftPolicy) || self.driftPolicy != 'Enforce' || has(self.approved)",
        message:
          'spec.tools.driftPolicy Enforce needs spec.tools.approved: without a baseline every tool would be refused',
        fieldPath: '.approved',
        reason: 'FieldValueRequired',
      },
    ],
  },
);

const Auth = Type.Object(
  {
    secretRef: Type.Object(
      {
        name: LocalObjectReference.properties.name,
        key: Type.Optional(
          Type.String({
            description: `Key of the Secret holding the token. Defaults to ${DEFAULTS.authKey}.`,
            default: DEFAULTS.authKey,
            minLength: 1,
            maxLength: CONFIG_KEY_MAX,
          }),
        ),
      },
      { description: 'The Secret (same namespace) holding the bearer token.' },
    ),
  },
  {
    description:
      'A bearer token that the bridge requires from clients (stdio servers) and that discovery sends (every server). Changing the Secret name or key rolls the pods.',
  },
);

const Discovery = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        description: 'Whether the operator lists the tools of this server periodically.',
        default: DEFAULTS.discovery.enabled,
      }),
    ),
    interval: Type.Optional(
      Duration({
        path: 'spec.discovery.interval',
        min: '30s',
        max: '24h',
        default: DEFAULTS.discovery.interval,
        description:
          'Time between discovery runs (jittered), as a Go duration such as 5m or 1h30m. Discovery also runs when the server becomes Ready or its spec changes.',
      }),
    ),
    timeout: Type.Optional(
      Duration({
        path: 'spec.discovery.timeout',
        min: '1s',
        max: '10m',
        default: DEFAULTS.discovery.timeout,
        description: 'Time limit for one discovery run, all pages included.',
      }),
    ),
  },
  { description: 'Periodic discovery of the tools the server exposes.', default: {} },
);

const Bridge = Type.Object(
  {
    sessionMode: Type.Optional(
      StringEnum(SESSION_MODES, {
        description:
          'PerSession: one server process per MCP session (isolated state). Shared: one process serves every session.',
        default: DEFAULTS.bridge.sessionMode,
      }),
    ),
    maxSessions: Type.Optional(
      Type.Integer({
        description: 'Most MCP sessions served at once per pod; further clients get HTTP 503.',
        minimum: 1,
        maximum: 10000,
        default: DEFAULTS.bridge.maxSessions,
      }),
    ),
    warmPool: Type.Optional(
      Type.Integer({
        description:
          'Server processes started ahead of time so that a new session does not wait for one (PerSession only).',
        minimum: 0,
        maximum: 100,
        default: DEFAULTS.bridge.warmPool,
      }),
    ),
    idleTimeout: Type.Optional(
      Duration({
        path: 'spec.bridge.idleTimeout',
        min: '1s',
        max: '24h',
        default: DEFAULTS.bridge.idleTimeout,
        description: 'A session without requests for this long is closed and its process stopped.',
      }),
    ),
    requestTimeout: Type.Optional(
      Duration({
        path: 'spec.bridge.requestTimeout',
        min: '1s',
        max: '24h',
        default: DEFAULTS.bridge.requestTimeout,
        description: 'How long the bridge waits for the server to answer one request.',
      }),
    ),
  },
  {
    description:
      'The bridge sidecar that serves a stdio server as Streamable HTTP (transport stdio only).',
    'x-kubernetes-validations': [
      {
        rule: '!has(self.warmPool) || !has(self.maxSessions) || self.warmPool <= self.maxSessions',
        message: 'spec.bridge.warmPool must not exceed spec.bridge.maxSessions',
        fieldPath: '.warmPool',
      },
      {
        rule: "!has(self.warmPool) || self.warmPool == 0 || !has(self.sessionMode) || self.sessionMode == 'PerSession'",
        message: 'spec.bridge.warmPool applies only to sessionMode PerSession',
        fieldPath: '.warmPool',
      },
    ],
  },
);

/** Label keys: a qualified name, optionally prefixed by a DNS subdomain (core/v1 validation). */
const LABEL_KEY =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const MAX_LABELS = 64;

const PodLabels = Type.Unsafe<Record<string, string>>({
  description: `Labels added to the pods. The operator's own ${RESERVED_LABELS.join(', ')} cannot be set.`,
  type: 'object',
  maxProperties: MAX_LABELS,
  additionalProperties: { type: 'string', maxLength: 63 },
  'x-kubernetes-validations': [
    {
      rule: `self.all(k, !(k in ${JSON.stringify(RESERVED_LABELS).replaceAll('"', "'")}))`,
      message: `spec.pod.labels must not set ${RESERVED_LABELS.join(', ')}: the operator selects its pods by them`,
    },
    {
      rule: `self.all(k, k.size() <= 316 && k.matches('${LABEL_KEY}') && self[k].matches('${LABEL_VALUE}'))`,
      message:
        'spec.pod.labels keys must be qualified names (prefix/name) and values at most 63 characters of A-Z, a-z, 0-9, -, _ and ., starting and ending alphanumeric',
    },
  ],
});

const Pod = Type.Object(
  {
    serviceAccountName: Type.Optional(
      Type.String({
        description:
          'ServiceAccount the pods run as. Defaults to one the operator creates, named after the MCPServer, whose token is not mounted.',
        minLength: 1,
        maxLength: 253,
      }),
    ),
    nodeSelector: Type.Optional(StringMap({ description: 'Node labels the pods must run on.' })),
    tolerations: Type.Optional(
      Type.Array(Toleration, { description: 'Taints the pods tolerate.' }),
    ),
    affinity: Type.Optional(Affinity),
    imagePullSecrets: Type.Optional(
      Type.Array(LocalObjectReference, {
        description: 'Secrets for pulling the server image from a private registry.',
      }),
    ),
    labels: Type.Optional(PodLabels),
    annotations: Type.Optional(
      StringMap({ description: 'Annotations added to the pods.', maxProperties: MAX_LABELS }),
    ),
    securityContext: Type.Optional(PodSecurityContext),
  },
  { description: 'Overlay on the pods the operator renders (image and url aside).' },
);

const ContainerSecurityContext = Type.Object(
  {
    readOnlyRootFilesystem: Type.Optional(
      Type.Boolean({
        description:
          'Mount the image read-only. Defaults to true; the server still gets a writable /tmp (also its HOME unless env sets HOME). Set false for servers that write elsewhere.',
      }),
    ),
  },
  {
    description:
      'Security settings of the server container. The rest is fixed to the restricted Pod Security Standard: no privilege escalation, all capabilities dropped.',
  },
);

/** Fields that only make sense for a server the operator deploys, refused next to `url`. */
const DEPLOYMENT_FIELDS = [
  'command',
  'args',
  'port',
  'path',
  'env',
  'envFrom',
  'resources',
  'replicas',
  'pod',
  'securityContext',
  'bridge',
] as const;

const notWithUrl = (field: string): CelRule => ({
  rule: `!has(self.url) || !has(self.${field})`,
  message: `spec.${field} does not apply to a url server: nothing is deployed for it`,
  fieldPath: `.${field}`,
  reason: 'FieldValueForbidden',
});

// Rules about what a deployed server needs start with `!has(self.image) ||`: for a url server
// the url rules below say what is wrong, without a second message about the same field.
const specRules: CelRule[] = [
  {
    rule: 'has(self.image) != has(self.url)',
    message: 'exactly one of spec.image or spec.url must be set',
  },
  {
    rule: '!has(self.image) || has(self.transport)',
    message: 'spec.transport is required with spec.image: stdio or streamable-http',
    fieldPath: '.transport',
    reason: 'FieldValueRequired',
  },
  {
    rule: "!has(self.url) || !has(self.transport) || self.transport == 'streamable-http'",
    message: 'spec.transport of a url server can only be streamable-http (or unset)',
    fieldPath: '.transport',
  },
  {
    rule: "!has(self.image) || !has(self.transport) || self.transport != 'stdio' || has(self.command)",
    message: 'spec.command is required for transport stdio: it is the command the bridge runs',
    fieldPath: '.command',
    reason: 'FieldValueRequired',
  },
  {
    rule: "!has(self.image) || !has(self.transport) || self.transport != 'streamable-http' || has(self.port)",
    message: 'spec.port is required for transport streamable-http: the port the server listens on',
    fieldPath: '.port',
    reason: 'FieldValueRequired',
  },
  {
    rule: "!has(self.image) || !has(self.bridge) || (has(self.transport) && self.transport == 'stdio')",
    message: 'spec.bridge applies only to transport stdio',
    fieldPath: '.bridge',
    reason: 'FieldValueForbidden',
  },
  {
    rule: "!has(self.tools) || !has(self.tools.driftPolicy) || self.tools.driftPolicy != 'Enforce' || (has(self.transport) && self.transport == 'stdio')",
    message:
      'spec.tools.driftPolicy Enforce needs transport stdio: the bridge enforces it, and only stdio servers have one',
    fieldPath: '.tools.driftPolicy',
  },
  ...DEPLOYMENT_FIELDS.map(notWithUrl),
];

export const MCPServerSpec = Type.Object(
  {
    image: Type.Optional(
      Type.String({
        description:
          'Container image of the MCP server, deployed by the operator. Exactly one of image or url.',
        minLength: 1,
        maxLength: 1024,
      }),
    ),
    url: Type.Optional(
      Type.String({
        description:
          'Endpoint of an MCP server that runs elsewhere (Streamable HTTP): only discovery and drift, nothing is deployed. Exactly one of image or url.',
        maxLength: 2048,
        'x-kubernetes-validations': [
          {
            rule: "isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",
            message: 'spec.url must be an absolute http:// or https:// URL',
          },
        ],
      }),
    ),
    transport: Type.Optional(
      StringEnum(TRANSPORTS, {
        description:
          'How the server speaks MCP. stdio: over stdin/stdout; the operator adds a bridge sidecar that serves it as Streamable HTTP. streamable-http: the server listens on port itself. Required with image; optional with url, where it can only be streamable-http.',
      }),
    ),
    command: Type.Optional(
      Type.Array(Type.String({ description: 'One argv entry.' }), {
        description:
          'Command that starts the server (replaces the image entrypoint). Required for stdio, where the bridge starts it once per session. Passed as argv, never through a shell.',
        minItems: 1,
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    args: Type.Optional(
      Type.Array(Type.String({ description: 'One argv entry.' }), {
        description: 'Arguments appended to command.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    port: Type.Optional(
      Type.Integer({
        description: `Port of the MCP endpoint: where a streamable-http server listens (required), or where the bridge of a stdio server listens (default ${DEFAULTS.port}). The Service exposes the same port.`,
        minimum: 1,
        maximum: 65535,
      }),
    ),
    path: Type.Optional(
      Type.String({
        description: `HTTP path of the MCP endpoint. Defaults to ${DEFAULTS.path}.`,
        maxLength: 1024,
        'x-kubernetes-validations': [
          { rule: "self.startsWith('/')", message: "spec.path must start with '/'" },
        ],
      }),
    ),
    env: Type.Optional(
      Type.Array(EnvVar, {
        description:
          'Environment variables of the server. Take secrets from a Secret with valueFrom.secretKeyRef.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
    envFrom: Type.Optional(
      Type.Array(EnvFromSource, {
        description: 'ConfigMaps and Secrets whose keys become environment variables.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    resources: Type.Optional(ResourceRequirements),
    replicas: Type.Optional(
      Type.Integer({
        description: `Number of server pods. Defaults to ${DEFAULTS.replicas}.`,
        minimum: 0,
        maximum: 100,
      }),
    ),
    pod: Type.Optional(Pod),
    securityContext: Type.Optional(ContainerSecurityContext),
    bridge: Type.Optional(Bridge),
    auth: Type.Optional(Auth),
    discovery: Type.Optional(Discovery),
    tools: Type.Optional(Tools),
  },
  {
    description: 'Desired state of the MCP server.',
    'x-kubernetes-validations': specRules,
  },
);

const Time = (description: string) => Type.String({ description, format: 'date-time' });

const ToolNames = (description: string) =>
  Type.Array(Type.String({ description: 'A tool name.' }), { description });

/** Status digests: full, or abbreviated to 12 hex digits where only "did it change" matters. */
const StatusDigest = (description: string) =>
  Type.String({ description, pattern: '^sha256:[0-9a-f]{12}([0-9a-f]{52})?$' });

const fieldDigest = (field: string) =>
  Type.Optional(StatusDigest(`Digest of the tool's ${field}; absent when the tool has none.`));

const DiscoveredTool = Type.Object(
  {
    name: Type.String({ description: 'Tool name as the server lists it.' }),
    digest: StatusDigest('SHA-256 of the whole tool (name and every compared field).'),
    fields: Type.Optional(
      Type.Object(
        {
          title: fieldDigest('title'),
          description: fieldDigest('description'),
          inputSchema: fieldDigest('inputSchema'),
          outputSchema: fieldDigest('outputSchema'),
          annotations: fieldDigest('annotations'),
          execution: fieldDigest('execution'),
        },
        {
          description:
            'Per-field digests (may be abbreviated to 12 hex digits; the snapshot ConfigMap has them in full).',
        },
      ),
    ),
  },
  {
    description: 'One discovered tool in compact form; its schemas are in the snapshot ConfigMap.',
  },
);

const DiscoveryStatus = Type.Object(
  {
    lastAttemptTime: Type.Optional(Time('When discovery last ran.')),
    lastSuccessTime: Type.Optional(Time('When discovery last succeeded.')),
    protocolVersion: Type.Optional(
      Type.String({ description: 'MCP protocol version negotiated with the server.' }),
    ),
    serverInfo: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ description: 'Server name it reports.' })),
          version: Type.Optional(Type.String({ description: 'Server version it reports.' })),
        },
        { description: 'What the server says it is (serverInfo of the initialize result).' },
      ),
    ),
    capabilities: Type.Optional(
      Type.Array(Type.String({ description: 'A capability name.' }), {
        description: 'Capabilities the server declares, such as tools, resources, prompts.',
      }),
    ),
    toolCount: Type.Optional(
      Type.Integer({ description: 'Number of tools the server lists.', minimum: 0 }),
    ),
    snapshotDigest: Type.Optional(
      StatusDigest('SHA-256 over the tool digests ordered by name: changes when any tool does.'),
    ),
    tools: Type.Optional(
      Type.Array(DiscoveredTool, { description: 'The tools, in compact form.' }),
    ),
    snapshotConfigMap: Type.Optional(
      Type.String({
        description: 'Name of the ConfigMap holding every tool definition of the last snapshot.',
      }),
    ),
    lastError: Type.Optional(
      Type.String({ description: 'Why the last discovery failed; empty after a success.' }),
    ),
  },
  { description: 'What the last discovery found.' },
);

const ChangedTool = Type.Object(
  {
    name: Type.String({ description: 'Tool name.' }),
    fields: Type.Array(
      StringEnum(TOOL_FIELDS, { description: 'A field of the tool definition.' }),
      { description: 'Fields that differ from the approved definition.' },
    ),
    severity: StringEnum(DRIFT_SEVERITIES, {
      description:
        'breaking: callers built for the approved schema may fail (new required argument, removed property, narrowed type). compatible: a change that keeps old calls valid. description-only: only the text changed, which is how a tool is poisoned; review it.',
    }),
  },
  { description: 'A tool whose definition differs from the approved one.' },
);

const DriftStatus = Type.Object(
  {
    added: Type.Optional(ToolNames('Tools the server lists that are not approved.')),
    removed: Type.Optional(ToolNames('Approved tools the server no longer lists.')),
    changed: Type.Optional(
      Type.Array(ChangedTool, { description: 'Approved tools whose definition changed.' }),
    ),
    missingAllowed: Type.Optional(
      ToolNames('Tools in spec.tools.allow that the server no longer lists.'),
    ),
    since: Type.Optional(Time('When the current drift was first seen.')),
  },
  { description: 'How the discovered tools differ from spec.tools.approved.' },
);

export const MCPServerStatus = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'metadata.generation this status describes.', minimum: 0 }),
    ),
    conditions: Type.Optional(
      Type.Array(Condition, {
        description: 'Ready, Discovered and Drifted, with reasons and messages.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    endpoint: Type.Optional(
      Type.String({ description: 'URL of the MCP endpoint clients in the cluster use.' }),
    ),
    replicas: Type.Optional(Type.Integer({ description: 'Server pods that exist.', minimum: 0 })),
    readyReplicas: Type.Optional(
      Type.Integer({ description: 'Server pods that are ready.', minimum: 0 }),
    ),
    discovery: Type.Optional(DiscoveryStatus),
    drift: Type.Optional(DriftStatus),
  },
  { description: 'Observed state of the MCP server, written by the operator.' },
);

/**
 * The Service, Deployment and labels carry the MCPServer's name, so it must be a DNS-1035
 * label (core/v1 Service name rules), stricter than the DNS subdomain the API server checks
 * for every custom resource.
 */
const NAME_RULE: CelRule = {
  rule: "self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
  message:
    'metadata.name must be at most 63 characters of a-z, 0-9 and -, starting with a letter: it names the Service',
};

export const MCPServerSchema = Type.Object(
  {
    apiVersion: Type.String({ description: `${API_VERSION}` }),
    kind: Type.String({ description: KIND }),
    metadata: Type.Unsafe<V1ObjectMeta>({
      type: 'object',
      description: 'Standard object metadata.',
    }),
    spec: MCPServerSpec,
    status: Type.Optional(MCPServerStatus),
  },
  {
    description:
      'An MCP (Model Context Protocol) server: deployed from an image (stdio servers behind a bridge sidecar) or reached at a url, with its tools discovered and compared with an approved baseline.',
    'x-kubernetes-validations': [NAME_RULE],
  },
);

export type MCPServerSpec = Static<typeof MCPServerSpec>;
export type MCPServerStatus = Static<typeof MCPServerStatus>;
export type MCPServer = Static<typeof MCPServerSchema>;
export type Transport = (typeof TRANSPORTS)[number];
export type SessionMode = (typeof SESSION_MODES)[number];
export type DriftPolicy = (typeof DRIFT_POLICIES)[number];
export type DriftSeverity = (typeof DRIFT_SEVERITIES)[number];
export type ToolField = (typeof TOOL_FIELDS)[number];
export type ApprovedTool = Static<typeof ApprovedTool>;
export type DiscoveredTool = Static<typeof DiscoveredTool>;
export type DiscoveryStatus = Static<typeof DiscoveryStatus>;
export type DriftStatus = Static<typeof DriftStatus>;
export type ChangedTool = Static<typeof ChangedTool>;
