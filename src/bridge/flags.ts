/**
 * The flags of `mcp-operator bridge`, described: its `--help` and the bridge section of
 * docs/configuration.md are generated from this table. The names are BRIDGE_FLAGS's
 * (pod-contract.ts, which the controller renders with); a flag added there without a line here
 * fails the type check.
 */

import type { FlagSpec } from '../flags.ts';
import { LOG_LEVELS } from '../flags.ts';
import { BRIDGE_FLAGS, BRIDGE_TOKEN_ENV } from './pod-contract.ts';

/** Defaults of the settings that have one, as typed. */
export const BRIDGE_DEFAULTS = {
  listen: '127.0.0.1:8080',
  path: '/mcp',
  sessionMode: 'PerSession',
  maxSessions: '64',
  warmPool: '0',
  idleTimeout: '15m',
  requestTimeout: '5m',
  maxMessageBytes: String(4 * 1024 * 1024),
  oauthClockSkew: '30s',
} as const;

const SETTINGS = {
  listen: {
    type: 'host:port',
    meaning: 'Address to serve Streamable HTTP on (a pod uses 0.0.0.0:<port>); port 0 picks one.',
  },
  path: {
    type: 'path',
    meaning: 'The MCP endpoint; /healthz, /readyz and /metrics sit beside it.',
  },
  sessionMode: {
    type: 'PerSession|Shared',
    meaning: 'PerSession: one server process per MCP session; Shared: one for all sessions.',
  },
  maxSessions: {
    type: 'integer',
    meaning:
      'Sessions open at once, open 2026-07-28 listens among them, and the most children for 2026-07-28 clients; more get HTTP 503 with Retry-After and a JSON-RPC error.',
  },
  warmPool: {
    type: 'integer',
    meaning: 'Server processes started ahead of need (PerSession), at most --max-sessions.',
  },
  idleTimeout: {
    type: 'duration',
    meaning: 'A session with nothing in flight and no open stream for this long ends.',
  },
  requestTimeout: {
    type: 'duration',
    meaning: 'A request the server does not answer in time gets JSON-RPC error -32001.',
  },
  authTokenFile: {
    type: 'file',
    meaning: `Bearer token clients must send, re-read when the file changes; without it, $${BRIDGE_TOKEN_ENV}.`,
  },
  policyFile: {
    type: 'file',
    meaning:
      'The enforcement policy (approved tools, allowlist; docs/bridge.md), re-read on change.',
  },
  discoveryTokenFile: {
    type: 'file',
    meaning:
      'The token with which discovery lists tools unfiltered under Enforce, re-read on change.',
  },
  oauthIssuer: {
    type: 'URL',
    meaning:
      'OAuth 2.1: the issuer whose access tokens are accepted (docs/auth.md); with --oauth-resource.',
  },
  oauthResource: {
    type: 'URL',
    meaning: "OAuth 2.1: this server's canonical URI, the audience tokens must name (RFC 8707).",
  },
  oauthScopes: {
    type: 'list',
    meaning: 'OAuth 2.1: scopes every request needs, space- or comma-separated.',
  },
  oauthClockSkew: {
    type: 'duration',
    meaning: 'OAuth 2.1: tolerance for exp and nbf, at most 5m.',
  },
  oauthIntrospectionDir: {
    type: 'directory',
    meaning: 'OAuth 2.1: client-id and client-secret for RFC 7662 introspection of opaque tokens.',
  },
  supervisorDir: {
    type: 'directory',
    meaning: 'Pod mode: the emptyDir shared with supervisor.sh, which starts the server processes.',
  },
  upstream: {
    type: 'URL',
    meaning: 'Proxy mode: the MCP endpoint (http or https) of a server that serves HTTP itself.',
  },
  allowedOrigins: {
    type: 'list',
    meaning: 'Browser origins allowed, comma-separated (others get 403); unset: loopback origins.',
  },
  maxMessageBytes: {
    type: 'integer',
    meaning: 'Largest HTTP body and largest line from a server process, in bytes (at least 1024).',
  },
  replicaAddress: {
    type: 'host:port',
    meaning: 'Where the other replicas reach this bridge; with --peers, sessions are routed.',
  },
  peers: {
    type: 'list',
    meaning: 'host:port of every replica, comma-separated; a name resolves to all its addresses.',
  },
  audit: {
    type: 'on|off',
    meaning: 'Audit events as JSON lines on stdout (docs/audit.md); off: none. Default on.',
  },
  auditArguments: {
    type: 'None|Redacted|Full',
    meaning: 'How much of the arguments of a call audit events carry; default None (a digest).',
  },
  auditServer: {
    type: 'namespace/name',
    meaning: 'The MCPServer served, which every audit event names.',
  },
  otlpEndpoint: {
    type: 'url',
    meaning:
      'OTLP/HTTP endpoint for spans and audit log records (docs/telemetry.md); default $OTEL_EXPORTER_OTLP_ENDPOINT; unset: none.',
  },
  traceSampling: {
    type: 'ratio',
    meaning:
      'Share of new traces recorded, 0 to 1; default $OTEL_TRACES_SAMPLER_ARG, else 1. A caller’s sampled flag decides for its trace.',
  },
} as const satisfies Record<keyof typeof BRIDGE_FLAGS, Omit<FlagSpec, 'flag'>>;

/** Flags for running the bridge by hand: the controller does not render them. */
export const BRIDGE_EXTRA_FLAGS = {
  logLevel: {
    flag: '--log-level',
    type: 'level',
    default: 'info',
    meaning: `One of ${LOG_LEVELS.join(', ')}; logs are JSON lines on stdout.`,
  },
  gracePeriod: {
    flag: '--grace-period',
    type: 'duration',
    default: '5s',
    meaning: "Between closing a server process's stdin, SIGTERM and SIGKILL; also the drain.",
  },
} as const satisfies Record<string, FlagSpec>;

/** Every flag of `mcp-operator bridge`, in the order --help lists them. */
export const BRIDGE_FLAG_SPECS: readonly FlagSpec[] = [
  ...Object.entries(SETTINGS).map(([key, spec]) => ({
    flag: BRIDGE_FLAGS[key as keyof typeof BRIDGE_FLAGS],
    ...spec,
    default: (BRIDGE_DEFAULTS as Record<string, string>)[key],
  })),
  ...Object.values(BRIDGE_EXTRA_FLAGS),
];
