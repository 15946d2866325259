/**
 * The OAuth resource server of a running bridge, from its --oauth-* flags: the token checks
 * (oauth.ts), the introspection credentials read from a mounted Secret, and the RFC 9728
 * metadata routes (unauthenticated: a client reads them before it has a token).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { RESOURCE_METADATA_PREFIX, resourceMetadataUrl } from '../../mcp/oauth.ts';
import { resourceMetadata } from './oauth-challenge.ts';
import { ResourceServer } from './oauth.ts';
import { replyText } from '../replies.ts';
import type { BridgePolicy } from '../../tools/policy.ts';
import { WatchedFile } from '../watched-file.ts';

export interface OAuthOptions {
  issuer: string;
  resource: string;
  scopes: string[];
  clockSkewSeconds: number;
  /** Directory holding `client-id` and `client-secret` for introspection. */
  introspectionDir?: string;
  /** Bound on each request to the issuer; 5 s unless a test needs less. */
  timeoutMs?: number;
  /** Least time between key set fetches prompted by an unknown `kid`; 30 s by default. */
  jwksCooldownMs?: number;
}

const secretValue = (text: string): string => {
  const value = text.trim();
  if (value === '') throw new Error('the file is empty');
  return value;
};

async function watchSecretFile(dir: string, key: string, logger: Logger) {
  const watched = new WatchedFile({
    path: join(dir, key),
    parse: secretValue,
    logger,
    what: `introspection ${key}`,
    failsClosed: true,
  });
  await watched.start();
  return watched;
}

export async function startResourceServer(
  options: OAuthOptions,
  logger: Logger,
): Promise<{ server: ResourceServer; stop(): void }> {
  const dir = options.introspectionDir;
  const files =
    dir === undefined
      ? undefined
      : await Promise.all([
          watchSecretFile(dir, 'client-id', logger),
          watchSecretFile(dir, 'client-secret', logger),
        ]);
  const introspection =
    files &&
    (() => {
      const [clientId, clientSecret] = files.map((file) => file.value);
      return clientId === undefined || clientSecret === undefined
        ? undefined
        : { clientId, clientSecret };
    });
  const server = new ResourceServer({
    issuer: options.issuer,
    resource: options.resource,
    scopes: options.scopes,
    clockSkewSeconds: options.clockSkewSeconds,
    timeoutMs: options.timeoutMs ?? 5_000,
    jwksCooldownMs: options.jwksCooldownMs ?? 30_000,
    ...(introspection === undefined ? {} : { introspection }),
    logger,
  });
  return { server, stop: () => files?.forEach((file) => file.stop()) };
}

/**
 * CORS for the metadata: a browser MCP client reads it from another origin before it has a
 * token. The document is public and the requests carry no credentials, so any origin may read
 * it (the Fetch standard's `*`); the SDK clients send MCP-Protocol-Version with the request,
 * which takes a preflight. The MCP endpoint itself keeps its Origin validation.
 */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'mcp-protocol-version',
};

/**
 * The metadata document at the root well-known path and at the one with the resource's path
 * inserted (RFC 9728 section 3.1), which is what `resource_metadata` in challenges names.
 */
export function metadataRoutes(
  server: ResourceServer,
  policy: () => BridgePolicy | undefined,
): Record<string, (req: IncomingMessage, res: ServerResponse) => void> {
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    if (req.method === 'OPTIONS') return replyText(res, 204, '');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return replyText(res, 405, 'method not allowed\n');
    const toolScopes = Object.values(policy()?.toolScopes ?? {}).flat();
    const document = resourceMetadata(server.options, toolScopes);
    replyText(res, 200, JSON.stringify(document), 'application/json');
  };
  const inserted = new URL(resourceMetadataUrl(server.options.resource)).pathname;
  return { [RESOURCE_METADATA_PREFIX]: serve, [inserted]: serve };
}
