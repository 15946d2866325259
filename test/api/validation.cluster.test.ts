/**
 * Every invalid MCPServer we can think of, submitted to a real API server with the committed
 * CRD: each must be refused with the message the user will read. Expectations are the exact
 * `field: message` causes of the API server's answer (what `kubectl apply` prints after
 * `The MCPServer "<name>" is invalid:`); a few go through the real kubectl to pin that text.
 */

import { spawn } from 'node:child_process';
import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, PLURAL } from '../../src/api/names.ts';
import { API_VERSION, VERSION, type MCPServerSpec } from '../../src/api/v1alpha1/mcpserver.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { installCrd } from './install-crd.ts';

const kc = kubeConfig();
const ns = useNamespace('api-validation', kc);
const api = kc.makeApiClient(CustomObjectsApi);

beforeAll(() => installCrd(kc));

const STDIO = { image: 'node:24-slim', transport: 'stdio', command: ['npx', '-y', 'server'] };
const HTTP = { image: 'ghcr.io/example/weather:2', transport: 'streamable-http', port: 3000 };
const URL_SERVER = { url: 'https://mcp.example.com/mcp' };
const DIGEST = `sha256:${'0'.repeat(64)}`;
const OAUTH = {
  issuer: 'https://auth.example.com',
  resource: 'https://mcp.example.com/mcp',
  discovery: { secretRef: { name: 'discovery-client' } },
};
const ENFORCED = {
  driftPolicy: 'Enforce',
  approved: { tools: [{ name: 'echo', digest: DIGEST }] },
};

type Spec = Record<string, unknown>;

/**
 * After a schema error (enum, required, length) the API server skips the CEL rules of that
 * object and says so in a last line of its own.
 */
const NOT_CHECKED =
  '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

const manifest = (name: string, spec: Spec) => ({
  apiVersion: API_VERSION,
  kind: 'MCPServer',
  metadata: { name },
  spec,
});

interface Cause {
  field?: string;
  message?: string;
}

/** Creates the object (dry run: nothing is stored) and returns the causes of the refusal. */
async function causes(spec: Spec, name = 'bad'): Promise<string[]> {
  try {
    await api.createNamespacedCustomObject({
      group: API_GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: PLURAL,
      body: manifest(name, spec),
      dryRun: 'All',
    });
  } catch (error) {
    if (!(error instanceof ApiException) || error.code !== 422) throw error;
    const status = JSON.parse(error.body as string) as { details?: { causes?: Cause[] } };
    return (status.details?.causes ?? []).map((c) => `${c.field ?? '<nil>'}: ${c.message}`).sort();
  }
  return [];
}

const stdio = (extra: Spec) => ({ ...STDIO, ...extra });
const tools = (value: Spec) => stdio({ tools: value });

const CASES: [string, Spec, string[]][] = [
  // oauth
  [
    'oauth beside a bearer token',
    stdio({ auth: { secretRef: { name: 'token' } }, oauth: OAUTH }),
    [
      'spec.oauth: Forbidden: spec.auth and spec.oauth exclude each other: both are presented in the Authorization header',
    ],
  ],
  [
    'oauth on a server without the bridge',
    { ...HTTP, bridge: { enabled: false }, oauth: OAUTH },
    [
      'spec.oauth: Invalid value: spec.oauth on a deployed server needs the bridge, which validates the tokens: spec.bridge.enabled must not be false',
    ],
  ],
  [
    'tool scopes without Enforce',
    stdio({ oauth: { ...OAUTH, toolScopes: { echo: ['echo:use'] } } }),
    [
      'spec.oauth.toolScopes: Invalid value: spec.oauth.toolScopes needs spec.tools.driftPolicy Enforce: the bridge enforces them with the approved tools',
    ],
  ],
  [
    'an issuer that is not an http(s) URL',
    stdio({ oauth: { ...OAUTH, issuer: 'ftp://auth.example.com' } }),
    [
      'spec.oauth.issuer: Invalid value: "ftp://auth.example.com": spec.oauth.issuer must be an absolute http:// or https:// URL without a fragment',
    ],
  ],
  [
    'a resource with a fragment',
    stdio({ oauth: { ...OAUTH, resource: 'https://mcp.example.com/mcp#x' } }),
    [
      'spec.oauth.resource: Invalid value: "https://mcp.example.com/mcp#x": spec.oauth.resource must be an absolute http:// or https:// URL without a fragment',
    ],
  ],
  [
    'a clock skew over 5m',
    stdio({ oauth: { ...OAUTH, clockSkew: '10m' } }),
    [
      'spec.oauth.clockSkew: Invalid value: "10m": spec.oauth.clockSkew must be a duration such as 30s, 5m or 1h30m, from 0s to 5m',
    ],
  ],
  [
    'bridge scopes on a url server',
    { ...URL_SERVER, oauth: { ...OAUTH, scopes: ['mcp:tools'] } },
    [
      "spec.oauth.scopes: Forbidden: spec.oauth.scopes does not apply to a url server: only discovery's token is configured for it",
    ],
  ],
  // image / url / transport
  [
    'neither image nor url',
    {},
    ['spec: Invalid value: exactly one of spec.image or spec.url must be set'],
  ],
  [
    'both image and url',
    { ...STDIO, url: 'https://a.example/mcp' },
    [
      'spec.command: Forbidden: spec.command does not apply to a url server: nothing is deployed for it',
      'spec.transport: Invalid value: spec.transport of a url server can only be streamable-http (or unset)',
      'spec: Invalid value: exactly one of spec.image or spec.url must be set',
    ],
  ],
  [
    'image without transport',
    { image: 'node:24' },
    [
      'spec.transport: Required value: spec.transport is required with spec.image: stdio or streamable-http',
    ],
  ],
  [
    'an unknown transport',
    { image: 'node:24', transport: 'sse' },
    [
      'spec.transport: Unsupported value: "sse": supported values: "stdio", "streamable-http"',
      NOT_CHECKED,
    ],
  ],
  [
    'stdio without command',
    { image: 'node:24', transport: 'stdio' },
    [
      'spec.command: Required value: spec.command is required for transport stdio: it is the command the bridge runs',
    ],
  ],
  [
    'an empty command',
    stdio({ command: [] }),
    ['spec.command: Invalid value: 0: spec.command in body should have at least 1 items'],
  ],
  [
    'streamable-http without port',
    { image: 'node:24', transport: 'streamable-http' },
    [
      'spec.port: Required value: spec.port is required for transport streamable-http: the port the server listens on',
    ],
  ],
  [
    'port 0',
    { ...HTTP, port: 0 },
    ['spec.port: Invalid value: 0: spec.port in body should be greater than or equal to 1'],
  ],
  [
    'port 65536',
    { ...HTTP, port: 65536 },
    ['spec.port: Invalid value: 65536: spec.port in body should be less than or equal to 65535'],
  ],
  [
    'a relative path',
    { ...HTTP, path: 'mcp' },
    ['spec.path: Invalid value: "mcp": spec.path must start with \'/\''],
  ],
  // url servers
  ...(['ftp://a.example/mcp', '/mcp', 'https://', 'not a url'].map((url) => [
    `url ${url}`,
    { url },
    [`spec.url: Invalid value: "${url}": spec.url must be an absolute http:// or https:// URL`],
  ]) as [string, Spec, string[]][]),
  [
    'a url server with stdio transport',
    { ...URL_SERVER, transport: 'stdio' },
    [
      'spec.transport: Invalid value: spec.transport of a url server can only be streamable-http (or unset)',
    ],
  ],
  [
    'a url server with deployment fields',
    {
      ...URL_SERVER,
      port: 80,
      replicas: 2,
      env: [{ name: 'A', value: 'b' }],
      pod: {},
      resources: {},
    },
    ['env', 'pod', 'port', 'replicas', 'resources'].map(
      (f) =>
        `spec.${f}: Forbidden: spec.${f} does not apply to a url server: nothing is deployed for it`,
    ),
  ],
  // bridge
  [
    'a stdio server without its bridge',
    stdio({ bridge: { enabled: false } }),
    [
      'spec.bridge.enabled: Invalid value: spec.bridge.enabled can be false only for transport streamable-http: a stdio server is served by its bridge',
    ],
  ],
  [
    'a bridge port on a stdio server',
    stdio({ bridge: { port: 9000 } }),
    [
      'spec.bridge.port: Forbidden: spec.bridge.port applies only to transport streamable-http: the bridge of a stdio server listens on spec.port',
    ],
  ],
  [
    'a streamable-http server on the port of its bridge',
    { ...HTTP, port: 8099 },
    [
      "spec.port: Invalid value: spec.bridge.port (default 8099) must differ from spec.port: the bridge and the server share the pod's network",
    ],
  ],
  [
    'a streamable-http server and its bridge on one port',
    { ...HTTP, bridge: { port: 3000 } },
    [
      "spec.port: Invalid value: spec.bridge.port (default 8099) must differ from spec.port: the bridge and the server share the pod's network",
    ],
  ],
  [
    'an unknown session mode',
    stdio({ bridge: { sessionMode: 'PerRequest' } }),
    [
      'spec.bridge.sessionMode: Unsupported value: "PerRequest": supported values: "PerSession", "Shared"',
      NOT_CHECKED,
    ],
  ],
  [
    'maxSessions 0',
    stdio({ bridge: { maxSessions: 0 } }),
    [
      'spec.bridge.maxSessions: Invalid value: 0: spec.bridge.maxSessions in body should be greater than or equal to 1',
    ],
  ],
  [
    'a warm pool larger than maxSessions',
    stdio({ bridge: { maxSessions: 2, warmPool: 3 } }),
    [
      'spec.bridge.warmPool: Invalid value: spec.bridge.warmPool must not exceed spec.bridge.maxSessions',
    ],
  ],
  [
    'a warm pool in Shared mode',
    stdio({ bridge: { sessionMode: 'Shared', warmPool: 1 } }),
    [
      'spec.bridge.warmPool: Invalid value: spec.bridge.warmPool applies only to sessionMode PerSession',
    ],
  ],
  // durations
  ...(
    [
      ['discovery', 'interval', '5 minutes', '30s to 24h'],
      ['discovery', 'interval', '10s', '30s to 24h'],
      ['discovery', 'interval', '25h', '30s to 24h'],
      ['discovery', 'timeout', '-5s', '1s to 10m'],
      ['discovery', 'timeout', '300', '1s to 10m'],
      ['bridge', 'idleTimeout', '0s', '1s to 24h'],
      ['bridge', 'requestTimeout', '1d', '1s to 24h'],
    ] as const
  ).map(([parent, field, value, range]): [string, Spec, string[]] => [
    `spec.${parent}.${field} ${value}`,
    stdio({ [parent]: { [field]: value } }),
    [
      `spec.${parent}.${field}: Invalid value: "${value}": spec.${parent}.${field} must be a duration such as 30s, 5m or 1h30m, from ${range}`,
    ],
  ]),
  // tool names (MCP 2025-11-25 server/tools, Tool Names)
  ...['bad name', 'tool/slash', 'ünïcode', 'a,b'].map((name): [string, Spec, string[]] => [
    `tool name ${name}`,
    tools({ allow: [name] }),
    [
      `spec.tools.allow[0]: Invalid value: "${name}": tool names may only contain A-Z, a-z, 0-9, '_', '-' and '.' (MCP specification, Tool Names)`,
    ],
  ]),
  [
    'an empty tool name',
    tools({ allow: [''] }),
    [
      'spec.tools.allow[0]: Invalid value: "": spec.tools.allow[0] in body should be at least 1 chars long',
    ],
  ],
  [
    'a 129-character tool name',
    tools({ allow: ['a'.repeat(129)] }),
    ['spec.tools.allow[0]: Too long: may not be more than 128 bytes', NOT_CHECKED],
  ],
  [
    'a tool allowed twice',
    tools({ allow: ['echo', 'echo'] }),
    ['spec.tools.allow[1]: Duplicate value: "echo"'],
  ],
  // approved baseline
  [
    'approved tools both inline and from a ConfigMap',
    tools({ approved: { tools: [], configMapRef: { name: 'baseline' } } }),
    [
      'spec.tools.approved: Invalid value: spec.tools.approved sets exactly one of tools or configMapRef',
    ],
  ],
  [
    'an empty approved block',
    tools({ approved: {} }),
    [
      'spec.tools.approved: Invalid value: spec.tools.approved sets exactly one of tools or configMapRef',
    ],
  ],
  [
    'an approved tool with neither digest nor definition',
    tools({ approved: { tools: [{ name: 'echo' }] } }),
    [
      'spec.tools.approved.tools[0]: Invalid value: an approved tool sets exactly one of digest or definition',
    ],
  ],
  [
    'an approved tool with both digest and definition',
    tools({
      approved: { tools: [{ name: 'echo', digest: DIGEST, definition: { inputSchema: {} } }] },
    }),
    [
      'spec.tools.approved.tools[0]: Invalid value: an approved tool sets exactly one of digest or definition',
    ],
  ],
  [
    'a malformed digest',
    tools({ approved: { tools: [{ name: 'echo', digest: 'sha256:ABC' }] } }),
    [
      'spec.tools.approved.tools[0].digest: Invalid value: "sha256:ABC": digest must be sha256: followed by 64 lowercase hex digits',
    ],
  ],
  [
    'field digests beside a definition',
    tools({
      approved: {
        tools: [
          {
            name: 'echo',
            fields: { description: 'sha256:0123456789ab' },
            definition: { inputSchema: { type: 'object' } },
          },
        ],
      },
    }),
    [
      'spec.tools.approved.tools[0].fields: Forbidden: fields goes with digest: a definition has its field digests computed from it',
    ],
  ],
  [
    'a malformed field digest',
    tools({
      approved: { tools: [{ name: 'echo', digest: DIGEST, fields: { title: 'sha256:abc' } }] },
    }),
    [
      'spec.tools.approved.tools[0].fields.title: Invalid value: "sha256:abc": a field digest is sha256: followed by 12 or 64 lowercase hex digits',
    ],
  ],
  [
    'a definition without inputSchema',
    tools({ approved: { tools: [{ name: 'echo', definition: { description: 'x' } }] } }),
    ['spec.tools.approved.tools[0].definition.inputSchema: Required value', NOT_CHECKED],
  ],
  [
    'a tool approved twice',
    tools({
      approved: {
        tools: [
          { name: 'echo', digest: DIGEST },
          { name: 'echo', digest: DIGEST },
        ],
      },
    }),
    [`spec.tools.approved.tools[1]: Duplicate value: {"name":"echo"}`],
  ],
  [
    'an approved tool with an invalid name',
    tools({ approved: { tools: [{ name: 'echo it', digest: DIGEST }] } }),
    [
      `spec.tools.approved.tools[0].name: Invalid value: "echo it": tool names may only contain A-Z, a-z, 0-9, '_', '-' and '.' (MCP specification, Tool Names)`,
    ],
  ],
  [
    'Enforce without a baseline',
    tools({ driftPolicy: 'Enforce' }),
    [
      'spec.tools.approved: Required value: spec.tools.driftPolicy Enforce needs spec.tools.approved: without a baseline every tool would be refused',
    ],
  ],
  [
    'Enforce on a url server (no bridge in front of it)',
    { ...URL_SERVER, tools: { driftPolicy: 'Enforce', approved: { tools: [] } } },
    [
      'spec.tools.driftPolicy: Invalid value: spec.tools.driftPolicy Enforce needs the bridge, which enforces it: a deployed server (spec.image) whose spec.bridge.enabled is not false',
    ],
  ],
  [
    'Enforce on a server whose bridge is opted out',
    {
      ...HTTP,
      bridge: { enabled: false },
      tools: { driftPolicy: 'Enforce', approved: { tools: [] } },
    },
    [
      'spec.tools.driftPolicy: Invalid value: spec.tools.driftPolicy Enforce needs the bridge, which enforces it: a deployed server (spec.image) whose spec.bridge.enabled is not false',
    ],
  ],
  [
    'an unknown drift policy',
    tools({ driftPolicy: 'Block' }),
    [
      'spec.tools.driftPolicy: Unsupported value: "Block": supported values: "Warn", "Enforce"',
      NOT_CHECKED,
    ],
  ],
  // environment
  [
    'an env var with value and valueFrom',
    stdio({
      env: [{ name: 'A', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
    }),
    ['spec.env[0]: Invalid value: an environment variable sets value or valueFrom, not both'],
  ],
  [
    'valueFrom with two sources',
    stdio({
      env: [
        {
          name: 'A',
          valueFrom: {
            secretKeyRef: { name: 's', key: 'k' },
            configMapKeyRef: { name: 'c', key: 'k' },
          },
        },
      ],
    }),
    [
      'spec.env[0].valueFrom: Invalid value: valueFrom must set exactly one of secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef',
    ],
  ],
  [
    'a secretKeyRef without key',
    stdio({ env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's' } } }] }),
    ['spec.env[0].valueFrom.secretKeyRef.key: Required value', NOT_CHECKED],
  ],
  [
    'an env var set twice',
    stdio({
      env: [
        { name: 'A', value: '1' },
        { name: 'A', value: '2' },
      ],
    }),
    ['spec.env[1]: Duplicate value: {"name":"A"}'],
  ],
  [
    'envFrom with both a ConfigMap and a Secret',
    stdio({ envFrom: [{ configMapRef: { name: 'c' }, secretRef: { name: 's' } }] }),
    ['spec.envFrom[0]: Invalid value: envFrom must set exactly one of configMapRef, secretRef'],
  ],
  // resources, replicas, auth
  [
    'a resource quantity that does not parse',
    stdio({ resources: { limits: { memory: 'lots' } } }),
    [
      'spec.resources.limits.memory: Invalid value: "lots": spec.resources.limits.memory in body should match \'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$\'',
    ],
  ],
  [
    'negative replicas',
    stdio({ replicas: -1 }),
    [
      'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    ],
  ],
  [
    'auth without a Secret',
    stdio({ auth: {} }),
    ['spec.auth.secretRef: Required value', NOT_CHECKED],
  ],
  [
    'an auth Secret without a name',
    stdio({ auth: { secretRef: {} } }),
    ['spec.auth.secretRef.name: Required value', NOT_CHECKED],
  ],
  // pod overlay
  [
    'a pod label the operator selects by',
    stdio({ pod: { labels: { 'app.kubernetes.io/instance': 'other' } } }),
    [
      'spec.pod.labels: Invalid value: spec.pod.labels must not set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/managed-by: the operator selects its pods by them',
    ],
  ],
  [
    'a pod label that is not a valid label',
    stdio({ pod: { labels: { team: 'search team' } } }),
    [
      'spec.pod.labels: Invalid value: spec.pod.labels keys must be qualified names (prefix/name) and values at most 63 characters of A-Z, a-z, 0-9, -, _ and ., starting and ending alphanumeric',
    ],
  ],
  [
    'a toleration with an unknown operator',
    stdio({ pod: { tolerations: [{ key: 'a', operator: 'Matches' }] } }),
    [
      'spec.pod.tolerations[0].operator: Unsupported value: "Matches": supported values: "Exists", "Equal"',
      NOT_CHECKED,
    ],
  ],
  [
    'running as root by UID -1',
    stdio({ pod: { securityContext: { runAsUser: -1 } } }),
    [
      'spec.pod.securityContext.runAsUser: Invalid value: -1: spec.pod.securityContext.runAsUser in body should be greater than or equal to 0',
    ],
  ],
];

describe('the API server refuses invalid MCPServers with a message naming the field', () => {
  it.each(CASES)('%s', async (_, spec, expected) => {
    expect(await causes(spec)).toEqual([...expected].sort());
  });

  it.each([
    ['my.server', 'a dot'],
    ['a'.repeat(64), '64 characters'],
    ['9lives', 'a leading digit'],
  ])('refuses the name %s (%s): it must be a Service name', async (name) => {
    expect(await causes(STDIO, name)).toEqual([
      '<nil>: Invalid value: metadata.name must be at most 63 characters of a-z, 0-9 and -, starting with a letter: it names the Service',
    ]);
  });
});

describe('the API server accepts valid MCPServers', () => {
  const valid: [string, Spec][] = [
    ['a minimal stdio server', STDIO],
    ['a minimal streamable-http server', HTTP],
    [
      'a streamable-http server under Enforce, behind its bridge with settings',
      {
        ...HTTP,
        bridge: { port: 9000, maxSessions: 4, sessionMode: 'Shared' },
        tools: { driftPolicy: 'Enforce', approved: { tools: [] } },
      },
    ],
    [
      'a streamable-http server without a bridge, on the default bridge port',
      { ...HTTP, port: 8099, bridge: { enabled: false } },
    ],
    ['a minimal url server', URL_SERVER],
    [
      'an enforced stdio server with OAuth and tool scopes',
      stdio({
        oauth: { ...OAUTH, scopes: ['mcp:tools'], toolScopes: { echo: ['echo:use'] } },
        tools: ENFORCED,
      }),
    ],
    ['a url server behind OAuth', { ...URL_SERVER, oauth: OAUTH }],
    ['a streamable-http server behind the bridge with OAuth', { ...HTTP, oauth: OAUTH }],
    // Both session modes scale out: a session stays on its pod, the bridges route to it.
    ['a stdio server with three replicas', stdio({ replicas: 3 })],
    [
      'a Shared stdio server with three replicas',
      stdio({ replicas: 3, bridge: { sessionMode: 'Shared' } }),
    ],
    [
      'a url server that says streamable-http',
      { ...URL_SERVER, transport: 'streamable-http', auth: { secretRef: { name: 't' } } },
    ],
    [
      'a stdio server with every field',
      stdio({
        args: ['--stdio'],
        port: 9000,
        path: '/v1/mcp',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'k', optional: true } } },
          { name: 'C', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          {
            name: 'D',
            valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } },
          },
        ],
        envFrom: [
          { prefix: 'X_', configMapRef: { name: 'c' } },
          { secretRef: { name: 's', optional: true } },
        ],
        resources: { requests: { cpu: '100m', memory: 128974848 }, limits: { memory: '1Gi' } },
        replicas: 2,
        pod: {
          serviceAccountName: 'reader',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [
            { key: 'dedicated', operator: 'Equal', value: 'mcp', effect: 'NoSchedule' },
          ],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
                ],
              },
            },
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 10, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } },
              ],
            },
          },
          imagePullSecrets: [{ name: 'registry' }],
          labels: { 'example.com/team': 'search', tier: 'tools' },
          annotations: { note: 'anything goes here' },
          securityContext: {
            runAsUser: 1000,
            runAsGroup: 1000,
            fsGroup: 1000,
            supplementalGroups: [5],
          },
        },
        securityContext: { readOnlyRootFilesystem: false },
        bridge: {
          sessionMode: 'PerSession',
          maxSessions: 10,
          warmPool: 2,
          idleTimeout: '1h30m',
          requestTimeout: '90s',
        },
        auth: { secretRef: { name: 'clients', key: 'bearer' } },
        discovery: { enabled: true, interval: '10m', timeout: '45s' },
        tools: {
          allow: ['echo', 'DATA_EXPORT_v2', 'admin.tools.list'],
          approved: {
            tools: [
              { name: 'echo', digest: DIGEST },
              {
                name: 'search',
                digest: DIGEST,
                fields: { description: 'sha256:0123456789ab', inputSchema: DIGEST },
              },
              {
                name: 'add',
                definition: {
                  description: 'Adds',
                  inputSchema: { type: 'object' },
                  annotations: { readOnlyHint: true },
                },
              },
            ],
          },
          driftPolicy: 'Enforce',
        },
      }),
    ],
  ];

  it.each(valid)('%s', async (_, spec) => {
    expect(await causes(spec, 'good')).toEqual([]);
  });
});

interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real kubectl with the harness kubeconfig; resolves to what it printed. */
function kubectl(args: string[], stdin = ''): Promise<Printed> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', args, {
      env: { ...process.env, KUBECONFIG: inject('kubeconfig') },
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, ...out }));
    child.stdin.end(stdin);
  });
}

const kubectlApply = (yaml: string, namespace: string) =>
  kubectl(['apply', '-n', namespace, '-f', '-'], yaml);

describe('what kubectl apply prints', () => {
  it('names the field and the rule for a single error', async () => {
    const result = await kubectlApply(
      dump(manifest('weather', { image: 'x', transport: 'streamable-http' })),
      ns.name,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'The MCPServer "weather" is invalid: spec.port: Required value: spec.port is required for transport streamable-http: the port the server listens on\n',
    );
  });

  it('lists every error at once', async () => {
    const spec: MCPServerSpec = { url: 'ftp://mcp.example.com', replicas: 2 };
    const result = await kubectlApply(dump(manifest('remote', spec)), ns.name);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'The MCPServer "remote" is invalid: ',
        '* spec.replicas: Forbidden: spec.replicas does not apply to a url server: nothing is deployed for it',
        '* spec.url: Invalid value: "ftp://mcp.example.com": spec.url must be an absolute http:// or https:// URL',
        '',
      ].join('\n'),
    );
  });
});

describe('kubectl explain', () => {
  // The API server publishes a new CRD's OpenAPI a moment after it is Established.
  const explain = (field: string) =>
    waitFor(`kubectl explain ${field}`, async () => {
      const printed = await kubectl(['explain', field]);
      return printed.code === 0 ? printed.stdout.replaceAll(/\s+/g, ' ') : undefined;
    });

  it('describes the spec and lists its fields with their descriptions', async () => {
    const text = await explain('mcps.spec');
    expect(text).toContain('DESCRIPTION: Desired state of the MCP server.');
    expect(text).toContain(
      'transport <string> enum: stdio, streamable-http How the server speaks MCP.',
    );
  });

  it('shows enum values and the default of a field', async () => {
    const text = await explain('mcpservers.spec.bridge.sessionMode');
    expect(text).toContain('ENUM: PerSession Shared');
    expect(text).toContain(
      'Shared: one process per pod serves every session on that pod (with replicas > 1, each pod has its own). Defaults to PerSession.',
    );
  });
});
