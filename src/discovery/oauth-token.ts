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
  let answer: Record<string, unknown>;
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
    answer = parseAnswer(await boundedText(response, TOKEN_ANSWER_BYTES));
  } catch (error) {
    const problem = `its token endpoint ${endpoint} failed: ${failureText(error)}`;
    throw operatorError('MCPOP_DISCOVERY_OAUTH', 'issuer', problem);
  }
  if (response.ok && typeof answer.access_token === 'string') {
    const expiresIn = answer.expires_in;
    return {
      accessToken: answer.access_token,
      ...(typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
        ? { expiresInSeconds: expiresIn }
        : {}),
    };
  }
  throw tokenError(response.status, answer, request);
}

function parseAnswer(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('the answer is not a JSON object');
  return value as Record<string, unknown>;
}

/** The issuer's refusal, with its error code and description (never the request's secret). */
function tokenError(status: number, answer: Record<string, unknown>, request: TokenRequest) {
  const code = typeof answer.error === 'string' ? answer.error : undefined;
  const description =
    typeof answer.error_description === 'string' ? `: ${answer.error_description}` : '';
  const said = `HTTP ${status}${code === undefined ? '' : ` ${code}`}${description}`;
  const part =
    (code === undefined ? undefined : PART_OF_ERROR[code]) ??
    (status === 401 ? 'client' : 'issuer');
  const subject = {
    client: `client ${request.credentials.clientId} was refused`,
    audience: `no token for the resource ${request.resource}`,
    scope: `the scopes ${JSON.stringify(request.scopes.join(' '))} were refused`,
    issuer: 'the token endpoint answered without an access token',
  }[part];
  return operatorError('MCPOP_DISCOVERY_OAUTH', part, `${subject} (${said})`);
}
