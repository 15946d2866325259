/**
 * MCPServer v1alpha1: the single source of truth for the API. The CRD
 * (crds/mcpservers.mcp-operator.dev.yaml), docs/api.md and the TypeScript types are all
 * derived from the schemas here and in the files beside this one; edit them and run
 * `npm run crds`.
 *
 * Conventions: https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md
 * Every field has a description (it is what `kubectl explain` prints). Validation that a user
 * can get wrong carries a CEL message naming the field, because that message is all
 * `kubectl apply` shows.
 */

import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import { EnvFromSource, EnvVar, LocalObjectReference, ResourceRequirements } from '../core-v1.ts';
import { API_GROUP, KIND } from '../names.ts';
import { Duration, StringEnum, type CelRule } from '../schema.ts';
import { DEFAULTS } from './defaults.ts';
import { ContainerSecurityContext, Pod } from './pod.ts';
import { MCPServerStatus } from './status.ts';
import { OAuth, oauthRules } from './oauth.ts';
import { CONFIG_KEY_MAX, Tools } from './tools.ts';

// One import for users of the API: the parts live in their own files.
export * from './defaults.ts';
export * from './status.ts';
export * from './tools.ts';
export * from './oauth.ts';

export const VERSION = 'v1alpha1';
export const API_VERSION = `${API_GROUP}/${VERSION}`;

export const TRANSPORTS = ['stdio', 'streamable-http'] as const;
export const SESSION_MODES = ['PerSession', 'Shared'] as const;

/** What of a call's arguments the bridge's audit events carry (docs/audit.md). */
export const AUDIT_ARGUMENT_MODES = ['None', 'Redacted', 'Full'] as const;

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
      'A bearer token that the bridge requires from clients and that discovery sends (every server). The bridge never passes it on to the server. Changing the Secret name or key rolls the pods.',
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
          'Time between discovery runs (jittered), as a Go duration such as 5m or 1h30m. Discovery also runs when the server becomes Ready, when its spec changes, and when the annotation mcp-operator.dev/discover is set or changed.',
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
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false: no bridge in front of a streamable-http server; the Service targets the server itself, and nothing checks clients, limits requests or enforces the approved tools (driftPolicy Enforce is refused). Defaults to true; a stdio server always has its bridge.',
      }),
    ),
    port: Type.Optional(
      Type.Integer({
        description: `Port the bridge listens on in front of a streamable-http server (default ${DEFAULTS.bridge.proxyPort}); it must differ from spec.port, where the server listens. The Service keeps spec.port. A stdio server's bridge listens on spec.port.`,
        minimum: 1,
        maximum: 65535,
      }),
    ),
    sessionMode: Type.Optional(
      StringEnum(SESSION_MODES, {
        description:
          'PerSession: one server process per MCP session (isolated state). Shared: one process per pod serves every session on that pod (with replicas > 1, each pod has its own).',
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
    audit: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(
            Type.Boolean({
              description: 'false: the bridge writes no audit events.',
              default: true,
            }),
          ),
          arguments: Type.Optional(
            StringEnum(AUDIT_ARGUMENT_MODES, {
              description:
                'What of the arguments each event carries: None (their SHA-256 digest only), Redacted (values under secret-looking keys replaced) or Full.',
              default: DEFAULTS.bridge.auditArguments,
            }),
          ),
        },
        {
          description:
            'Audit events: one JSON line on the bridge container stdout per call and per refused request, each naming the caller and the approved digest (docs/audit.md).',
        },
      ),
    ),
  },
  {
    description:
      'The bridge sidecar: it serves a stdio server as Streamable HTTP, and fronts a streamable-http server (proxy mode: one session with the server per client session) unless enabled is false. Either way it checks Origin and the client token, bounds sessions and requests, enforces the approved tools and serves 2026-07-28 clients.',
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
    rule: "!has(self.bridge) || !has(self.bridge.enabled) || self.bridge.enabled || (has(self.transport) && self.transport == 'streamable-http')",
    message:
      'spec.bridge.enabled can be false only for transport streamable-http: a stdio server is served by its bridge',
    fieldPath: '.bridge.enabled',
  },
  {
    rule: "!has(self.bridge) || !has(self.bridge.port) || (has(self.transport) && self.transport == 'streamable-http')",
    message:
      'spec.bridge.port applies only to transport streamable-http: the bridge of a stdio server listens on spec.port',
    fieldPath: '.bridge.port',
    reason: 'FieldValueForbidden',
  },
  {
    rule: `!has(self.port) || !has(self.transport) || self.transport != 'streamable-http' || (has(self.bridge) && has(self.bridge.enabled) && !self.bridge.enabled) || (has(self.bridge) && has(self.bridge.port) ? self.bridge.port : ${DEFAULTS.bridge.proxyPort}) != self.port`,
    message: `spec.bridge.port (default ${DEFAULTS.bridge.proxyPort}) must differ from spec.port: the bridge and the server share the pod's network`,
    fieldPath: '.port',
  },
  {
    rule: "!has(self.tools) || !has(self.tools.driftPolicy) || self.tools.driftPolicy != 'Enforce' || (has(self.image) && (!has(self.bridge) || !has(self.bridge.enabled) || self.bridge.enabled))",
    message:
      'spec.tools.driftPolicy Enforce needs the bridge, which enforces it: a deployed server (spec.image) whose spec.bridge.enabled is not false',
    fieldPath: '.tools.driftPolicy',
  },
  ...DEPLOYMENT_FIELDS.map(notWithUrl),
  ...oauthRules,
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
          'How the server speaks MCP. stdio: over stdin/stdout; the operator adds a bridge sidecar that serves it as Streamable HTTP. streamable-http: the server listens on port itself, behind the bridge sidecar (see bridge.enabled). Required with image; optional with url, where it can only be streamable-http.',
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
        description: `Number of server pods. Defaults to ${DEFAULTS.replicas}. A stdio server scales out as it is: each session lives on the pod that opened it, and a request that the Service sends to another pod is forwarded there by its bridge, so clients need no session affinity.`,
        minimum: 0,
        maximum: 100,
      }),
    ),
    pod: Type.Optional(Pod),
    securityContext: Type.Optional(ContainerSecurityContext),
    bridge: Type.Optional(Bridge),
    auth: Type.Optional(Auth),
    oauth: Type.Optional(OAuth),
    discovery: Type.Optional(Discovery),
    tools: Type.Optional(Tools),
  },
  {
    description: 'Desired state of the MCP server.',
    'x-kubernetes-validations': specRules,
  },
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
export type MCPServer = Static<typeof MCPServerSchema>;
export type Transport = (typeof TRANSPORTS)[number];
export type SessionMode = (typeof SESSION_MODES)[number];
