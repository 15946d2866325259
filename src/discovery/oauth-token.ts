/**
 * Discovery's own OAuth access token for a protected MCP server: the client-credentials grant
 * (OAuth 2.1 section 4.2) at the issuer's token endpoint, with the `resource` parameter (RFC
 * 8707; MCP 2025-11-25 basic/authorization, "Resource Parameter Implementation") so the token
 * is bound to that one server. The issuer is tenant-given, so every request goes through the
 * discovery egress guard, like the MCP requests themselves. A failure names which of issuer,
 * client, audience or scope is wrong; no secret value ever reaches a message.
 */

import { fetch, type Dispatcher } from 'undici';
import { operatorError } from '../errors.ts';
import { boundedText, failureText, fetchIssuerMetadata } from '../mcp/oauth.ts';
import { shown } from '../tools/text.ts';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

export interface TokenRequest {
  issuer: string;
  resource: string;
  scopes: readonly string[];
  credentials: ClientCredentials;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** RFC 6749 section 5.2 error codes (and RFC 8707's invalid_target) → the part to fix. */
const PART_OF_ERROR: Record<string, 'client' | 'audience' | 'scope'> = {
  invalid_client: 'client',
  unauthorized_client: 'client',
  invalid_grant: 'client',
  invalid_target: 'audience',
  invalid_scope: 'scope',
};

/** RFC 6749 section 5.2 and RFC 8707 section 2 error codes: the only words of a refusal shown. */
const RFC_6749_ERRORS: ReadonlySet<string> = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]);

const TOKEN_ANSWER_BYTES = 64 * 1024;

/** An access token and its lifetime, when the issuer gave one (RFC 6749 section 5.1 `expires_in`). */
export interface GrantedToken {
  accessToken: string;
  expiresInSeconds?: number;
}

export async function clientCredentialsToken(request: TokenRequest): Promise<GrantedToken> {
  const viaEgress = ((url: string, init: RequestInit) =>
    fetch(url, {
      ...(init as Parameters<typeof fetch>[1]),
      dispatcher: request.dispatcher,
    })) as unknown as typeof globalThis.fetch;
  let tokenEndpoint: string | undefined;
  try {
    tokenEndpoint = (await fetchIssuerMetadata(request.issuer, request.timeoutMs, viaEgress))
      .token_endpoint;
  } catch (error) {
    throw operatorError('MCPOP_DISCOVERY_OAUTH', 'issuer', (error as Error).message);
  }
  if (tokenEndpoint === undefined)
    throw operatorError('MCPOP_DISCOVERY_OAUTH', 'issuer', 'its metadata names no token_endpoint');
  return postTokenRequest(tokenEndpoint, request, viaEgress);
}

async function postTokenRequest(
  endpoint: string,
  request: TokenRequest,
  fetchVia: typeof globalThis.fetch,
): Promise<GrantedToken> {
  const { clientId, clientSecret } = request.credentials;
  // RFC 6749 section 2.3.1: each part form-encoded before Basic encoding.
  const basic = Buffer.from(
    `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`,
  ).toString('base64');
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    resource: request.resource,
  });
  if (request.scopes.length > 0) body.set('scope', request.scopes.join(' '));
  let response: Response;
  let text: string;
  try {
    response = await fetchVia(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: body.toString(),
      redirect: 'error',
      signal: AbortSignal.any([
        AbortSignal.timeout(request.timeoutMs),
        ...(request.signal ? [request.signal] : []),
      ]),
    });
    text = await boundedText(response, TOKEN_ANSWER_BYTES);
  } catch (error) {
    const problem = `its token endpoint ${endpoint} failed: ${failureText(error)}`;
    throw operatorError('MCPOP_DISCOVERY_OAUTH', 'issuer', problem);
  }
  const answer = parseAnswer(text);
  if (response.ok && typeof answer?.access_token === 'string') {
    const expiresIn = answer.expires_in;
    return {
      accessToken: answer.access_token,
      ...(typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
        ? { expiresInSeconds: expiresIn }
        : {}),
    };
  }
  throw tokenError(response, text, answer, request);
}

/** The answer as a JSON object; undefined when it is not one. */
function parseAnswer(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // Not JSON: JSON.parse's own message quotes the text, so only its size is told.
  }
  return undefined;
}

/**
 * The issuer's refusal: its status, media type and size, and its error code when that is one
 * of RFC 6749 section 5.2 (or RFC 8707's), a word from a fixed list. Never `error_description`
 * nor any other text of the body: the token endpoint comes from the tenant's issuer metadata
 * and may be an internal service, whose answer must not reach status (as for `spec.url`).
 * Never the request's secret either.
 */
function tokenError(
  response: Response,
  text: string,
  answer: Record<string, unknown> | undefined,
  request: TokenRequest,
) {
  const code =
    typeof answer?.error === 'string' && RFC_6749_ERRORS.has(answer.error)
      ? answer.error
      : undefined;
  const type = shown(
    (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase(),
    64,
  );
  const size = Buffer.byteLength(text);
  const body = size === 0 ? 'empty body' : `${type === '' ? '' : `${type} `}body of ${size} bytes`;
  const said = `HTTP ${response.status}${code === undefined ? '' : ` ${code}`}, ${body}, not shown`;
  const part =
    (code === undefined ? undefined : PART_OF_ERROR[code]) ??
    (response.status === 401 ? 'client' : 'issuer');
  const subject = {
    client: `client ${request.credentials.clientId} was refused`,
    audience: `no token for the resource ${request.resource}`,
    scope: `the scopes ${JSON.stringify(request.scopes.join(' '))} were refused`,
    issuer: 'the token endpoint answered without an access token',
  }[part];
  return operatorError('MCPOP_DISCOVERY_OAUTH', part, `${subject} (${said})`);
}
