/**
 * The audit event: one JSON line per gated request and per refused one, schema v1
 * (docs/audit.md, docs/audit.schema.json). Pure: the trail (trail.ts) gathers the facts, this
 * file shapes, bounds and escapes them.
 */

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { clip } from '../../tools/text.ts';
import { argumentsDigest, redacted } from './arguments.ts';

/** The marker field of every event, and its schema version as its value. */
export const AUDIT_MARKER = 'mcpAudit';
export const AUDIT_VERSION = 'v1';

/**
 * The most bytes an event's line takes, newline included: PIPE_BUF on Linux, so that each line
 * reaches a pipe (the container's stdout) in one atomic write and never interleaves with the
 * bridge's log lines written to the same pipe (pipe(7)). Raw arguments are left out of an event
 * that would be longer; the rest is bounded field by field below.
 */
export const MAX_EVENT_BYTES = 4096;
/** A target (tool or prompt name, URI), a reason, a caller's sub or client_id. */
const TEXT_MAX = 512;
/** Scopes listed per caller, and the length of each. */
const SCOPES_MAX = 16;
const SCOPE_MAX = 64;

/** How much of a request's arguments an event carries (spec.audit.arguments). */
export const ARGUMENT_MODES = ['None', 'Redacted', 'Full'] as const;
export type ArgumentMode = (typeof ARGUMENT_MODES)[number];

/** The methods that use what a server offers: each gets an event (both protocol eras). */
export const AUDITED_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'resources/subscribe',
  'completion/complete',
]);

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Text = (description: string) => Type.String({ maxLength: TEXT_MAX, description });
const DigestText = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' });
const Literals = <const T extends readonly string[]>(values: T, description: string) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description },
  );

const OUTCOMES = [
  'ok',
  'error',
  'tool_error',
  'timeout',
  'cancelled',
  'child_exit',
  'refused',
] as const;

const CallerSchema = Type.Union(
  [
    Type.Object(
      {
        kind: Type.Literal('oauth'),
        sub: Nullable(Text("The access token's sub claim.")),
        clientId: Nullable(Text("The access token's client_id claim.")),
        scopes: Type.Array(Type.String({ maxLength: SCOPE_MAX }), {
          maxItems: SCOPES_MAX,
          description: 'The scopes the token grants (the first 16).',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { kind: Type.Literal('token') },
      { additionalProperties: false, description: 'A client with the static bearer token.' },
    ),
    Type.Object(
      { kind: Type.Literal('anonymous') },
      { additionalProperties: false, description: 'The bridge asks for no credentials.' },
    ),
  ],
  { description: 'Who sent the request.' },
);

/** Schema v1 of an audit event: docs/audit.schema.json is generated from it. */
export const AuditEventSchema = Type.Object(
  {
    [AUDIT_MARKER]: Type.Literal(AUDIT_VERSION, {
      description: 'Marks the line as an audit event and gives its schema version.',
    }),
    time: Type.String({ format: 'date-time', description: 'When the request ended (UTC).' }),
    server: Nullable(
      Type.Object(
        { namespace: Type.String(), name: Type.String() },
        { additionalProperties: false, description: 'The MCPServer; null outside Kubernetes.' },
      ),
    ),
    pod: Nullable(Type.String({ description: "The bridge's pod (its host name)." })),
    protocolVersion: Nullable(Text('The MCP revision of the request, as the client named it.')),
    session: Nullable(
      Type.String({
        pattern: '^[0-9a-f]{32}$',
        description:
          'SHA-256 of the Mcp-Session-Id, cut to 32 hex digits: tells sessions apart without the id, which lets anyone act in the session. Null for 2026-07-28 requests (no sessions) and before a session.',
      }),
    ),
    caller: CallerSchema,
    source: Nullable(Type.String({ description: "The client's address (TCP peer)." })),
    method: Nullable(Text('The JSON-RPC method; null when the request was refused unread.')),
    target: Nullable(Text('The tool or prompt name, or the resource URI (bounded, escaped).')),
    digest: Type.Object(
      {
        current: Nullable(DigestText),
        approved: Nullable(DigestText),
        match: Nullable(Type.Boolean()),
      },
      {
        additionalProperties: false,
        description:
          "The digest of the target's definition as the server lists it now, the approved one, and whether they match; null where the bridge has no policy to compare with.",
      },
    ),
    decision: Literals(['allowed', 'denied'] as const, 'Whether the bridge passed the request on.'),
    reason: Nullable(Text('Why it was denied (docs/audit.md, "Reasons"); null when allowed.')),
    outcome: Literals(OUTCOMES, 'How the request ended.'),
    errorCode: Nullable(Type.Integer({ description: 'The JSON-RPC error code of the answer.' })),
    httpStatus: Nullable(
      Type.Integer({ description: 'The HTTP status of a refusal at the front.' }),
    ),
    durationMs: Nullable(Type.Number({ minimum: 0 })),
    requestBytes: Nullable(Type.Integer({ minimum: 0 })),
    responseBytes: Nullable(Type.Integer({ minimum: 0 })),
    argumentsDigest: Nullable(DigestText),
    arguments: Type.Optional(
      Type.Unknown({ description: 'With spec.bridge.audit.arguments Redacted or Full.' }),
    ),
    argumentsOmitted: Type.Optional(
      Type.Literal('size', { description: 'The arguments would make the event too long.' }),
    ),
  },
  { additionalProperties: false },
);

export type AuditEvent = Static<typeof AuditEventSchema>;
export type CallerRecord = Static<typeof CallerSchema>;
export type OutcomeRecord = (typeof OUTCOMES)[number];

/** The facts of one event, before they are bounded; the trail fills them. */
export type AuditFacts = Omit<
  AuditEvent,
  | typeof AUDIT_MARKER
  | 'arguments'
  | 'argumentsOmitted'
  | 'argumentsDigest'
  | 'target'
  | 'reason'
  | 'caller'
> & {
  target: string | undefined;
  reason: string | undefined;
  caller: CallerRecord;
  /** The request's arguments, undefined when it has none. */
  rawArguments: unknown;
};

/** Who called, as an event names them, bounded. */
export function oauthCaller(
  scopes: ReadonlySet<string>,
  subject: string | undefined,
  clientId: string | undefined,
): CallerRecord {
  return {
    kind: 'oauth',
    sub: subject === undefined ? null : clip(subject, TEXT_MAX),
    clientId: clientId === undefined ? null : clip(clientId, TEXT_MAX),
    scopes: [...scopes].slice(0, SCOPES_MAX).map((scope) => clip(scope, SCOPE_MAX)),
  };
}

/**
 * Characters a terminal or a log viewer acts on, which JSON.stringify leaves as they are: DEL,
 * the C1 controls, bidi and other invisible formatting characters (CVE-2021-42574). Written as
 * JSON escapes they mean the same to a JSON reader and nothing to a terminal.
 */
const UNSAFE =
  /[\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const jsonEscape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** The event's line, newline included, at most MAX_EVENT_BYTES long. */
export function auditLine(facts: AuditFacts, mode: ArgumentMode): string {
  const { rawArguments, ...rest } = facts;
  const event: AuditEvent = {
    [AUDIT_MARKER]: AUDIT_VERSION,
    ...rest,
    target: facts.target === undefined ? null : clip(facts.target, TEXT_MAX),
    reason: facts.reason === undefined ? null : clip(facts.reason, TEXT_MAX),
    argumentsDigest: argumentsDigest(rawArguments),
  };
  if (mode !== 'None' && rawArguments !== undefined) {
    event.arguments = mode === 'Full' ? rawArguments : redacted(rawArguments);
    const line = serialize(event);
    if (fits(line)) return line;
    delete event.arguments;
    event.argumentsOmitted = 'size';
  }
  const line = serialize(event);
  if (fits(line)) return line;
  // Only an unusual caller can get here (long scopes, sub and client_id at once): its scopes go.
  if (event.caller.kind === 'oauth') event.caller = { ...event.caller, scopes: [] };
  return serialize(event);
}

function serialize(event: AuditEvent): string {
  return `${JSON.stringify(event).replace(UNSAFE, jsonEscape)}\n`;
}

function fits(line: string): boolean {
  // A UTF-16 unit takes at most 3 bytes in UTF-8: short lines need no count.
  return line.length * 3 <= MAX_EVENT_BYTES || Buffer.byteLength(line) <= MAX_EVENT_BYTES;
}
