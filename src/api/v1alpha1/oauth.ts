/**
 * `spec.oauth`: the MCP server as an OAuth 2.1 protected resource (MCP 2025-11-25
 * basic/authorization). The bridge validates access tokens from `issuer` that name `resource`
 * as their audience (RFC 8707), and discovery gets its own token with the client-credentials
 * grant.
 */

import { Type } from '@sinclair/typebox';
import { LocalObjectReference } from '../core-v1.ts';
import { Duration, type CelRule } from '../schema.ts';

export const OAUTH_CLIENT_ID_KEY = 'client-id';
export const OAUTH_CLIENT_SECRET_KEY = 'client-secret';
export const OAUTH_DEFAULT_CLOCK_SKEW = '30s';

const Scope = Type.String({
  description: 'One OAuth scope (RFC 6749 section 3.3: no spaces, quotes or backslashes).',
  minLength: 1,
  maxLength: 256,
  pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$',
});

const Scopes = (description: string) =>
  Type.Array(Scope, { description, maxItems: 64, 'x-kubernetes-list-type': 'set' });

/** An absolute http(s) URL without a fragment, as RFC 8707 section 2 and RFC 8414 want. */
const urlRule = (field: string): CelRule => ({
  rule: "isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != '' && !self.contains('#')",
  message: `spec.oauth.${field} must be an absolute http:// or https:// URL without a fragment`,
});

const ClientSecret = (description: string) =>
  Type.Object(
    {
      secretRef: Type.Object(
        { name: LocalObjectReference.properties.name },
        {
          description: `A Secret (same namespace) with the keys ${OAUTH_CLIENT_ID_KEY} and ${OAUTH_CLIENT_SECRET_KEY}.`,
        },
      ),
    },
    { description },
  );

export const OAuth = Type.Object(
  {
    issuer: Type.String({
      description:
        'The authorization server whose access tokens are accepted, as its metadata names it (RFC 8414 issuer). Its keys and endpoints are found by RFC 8414 or OpenID Connect discovery.',
      maxLength: 2048,
      'x-kubernetes-validations': [urlRule('issuer')],
    }),
    resource: Type.String({
      description:
        "The server's canonical resource URI (RFC 8707), the URL clients reach it at, such as https://mcp.example.com/mcp. Tokens must name it as their audience: a token minted for another server is refused.",
      maxLength: 2048,
      'x-kubernetes-validations': [urlRule('resource')],
    }),
    scopes: Type.Optional(
      Scopes('Scopes every request needs; a token without them gets 403 insufficient_scope.'),
    ),
    toolScopes: Type.Optional(
      Type.Unsafe<Record<string, string[]>>({
        type: 'object',
        description:
          'Scopes a caller needs to see and call a tool, by tool name. tools/list shows each caller only the tools its token has the scopes of; a call without them gets 403 insufficient_scope. Needs spec.tools.driftPolicy Enforce: the scopes are part of the policy the bridge enforces.',
        maxProperties: 256,
        additionalProperties: Scopes('Scopes of one tool.'),
      }),
    ),
    clockSkew: Type.Optional(
      Duration({
        path: 'spec.oauth.clockSkew',
        min: '0s',
        max: '5m',
        // Not an API-server default: a url server has no bridge, and a CEL rule refuses the
        // field there. Render applies it (defaults.ts, "defaulted by the renderer").
        description: `Accepted difference between the issuer's clock and the bridge's when checking exp and nbf. Defaults to ${OAUTH_DEFAULT_CLOCK_SKEW}.`,
      }),
    ),
    introspection: Type.Optional(
      ClientSecret(
        'Accept opaque access tokens, checked by RFC 7662 introspection with these client credentials. Without it only JWT access tokens (RFC 9068) are accepted.',
      ),
    ),
    discovery: ClientSecret(
      'The client credentials discovery uses to get its own access token (client-credentials grant, with resource set to spec.oauth.resource). The client must be allowed the scopes in spec.oauth.scopes.',
    ),
  },
  {
    description:
      'OAuth 2.1 protection (MCP authorization, 2025-11-25): the bridge in front of the server accepts only access tokens of the issuer for this resource; discovery of any server uses a client-credentials token. Excludes spec.auth.',
  },
);

/** Rules on the spec as a whole about `oauth`. */
export const oauthRules: CelRule[] = [
  {
    rule: '!has(self.oauth) || !has(self.auth)',
    message:
      'spec.auth and spec.oauth exclude each other: both are presented in the Authorization header',
    fieldPath: '.oauth',
    reason: 'FieldValueForbidden',
  },
  {
    rule: '!has(self.oauth) || !has(self.image) || !has(self.bridge) || !has(self.bridge.enabled) || self.bridge.enabled',
    message:
      'spec.oauth on a deployed server needs the bridge, which validates the tokens: spec.bridge.enabled must not be false',
    fieldPath: '.oauth',
  },
  {
    rule: "!has(self.oauth) || !has(self.oauth.toolScopes) || (has(self.tools) && has(self.tools.driftPolicy) && self.tools.driftPolicy == 'Enforce')",
    message:
      'spec.oauth.toolScopes needs spec.tools.driftPolicy Enforce: the bridge enforces them with the approved tools',
    fieldPath: '.oauth.toolScopes',
  },
  ...(['scopes', 'toolScopes', 'clockSkew', 'introspection'] as const).map((field): CelRule => ({
    rule: `!has(self.url) || !has(self.oauth) || !has(self.oauth.${field})`,
    message: `spec.oauth.${field} does not apply to a url server: only discovery's token is configured for it`,
    fieldPath: `.oauth.${field}`,
    reason: 'FieldValueForbidden',
  })),
];
