/**
 * OAuth 2.1 as the MCP authorization spec uses it (2025-11-25 basic/authorization): where an
 * authorization server publishes its metadata, and where a protected resource publishes its
 * own. The bridge (a resource server) and discovery (a client) both find an issuer this way.
 */

/** RFC 9728 section 3: the well-known prefix of Protected Resource Metadata. */
export const RESOURCE_METADATA_PREFIX = '/.well-known/oauth-protected-resource';

/**
 * Where the metadata of `resource` lives (RFC 9728 section 3.1): the well-known prefix inserted
 * between the host and the resource's path, so one host can serve several resources.
 */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${RESOURCE_METADATA_PREFIX}${path}`;
}

/**
 * The metadata URLs of an issuer, in the order the MCP spec has clients try them (2025-11-25
 * basic/authorization, "Authorization Server Metadata Discovery"): RFC 8414 with the path
 * inserted, OpenID Connect Discovery with the path inserted, then appended.
 */
export function issuerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path !== '') urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

/** What the operator uses of an authorization server's metadata (RFC 8414 section 2). */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri?: string;
  token_endpoint?: string;
  introspection_endpoint?: string;
}

const METADATA_BYTES = 256 * 1024;

/**
 * Fetches the issuer's metadata from the first URL that has it, with `fetchVia` (discovery
 * passes its egress guard). The document must name the
 * same issuer (RFC 8414 section 3.3: a mismatch MUST NOT be used), which stops a metadata
 * document from steering clients and resource servers to another issuer's keys.
 */
export async function fetchIssuerMetadata(
  issuer: string,
  timeoutMs: number,
  fetchVia: typeof fetch = fetch,
): Promise<IssuerMetadata> {
  const tried: string[] = [];
  for (const url of issuerMetadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetchVia(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      tried.push(`${url}: ${failureText(error)}`);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      tried.push(`${url}: HTTP ${response.status}`);
      continue;
    }
    const metadata = parseMetadata(await boundedText(response, METADATA_BYTES), url);
    // The document's own issuer is not quoted: a tenant may point `issuer` at an internal service,
    // and its answer must not reach status (hostile-inputs.md).
    if (metadata.issuer !== issuer) {
      throw new Error(
        `the metadata at ${url} names another issuer (${metadata.issuer.length} characters, not shown), not ${JSON.stringify(issuer)}`,
      );
    }
    return metadata;
  }
  throw new Error(`no authorization server metadata for issuer ${issuer} (${tried.join('; ')})`);
}

/** fetch() says only "fetch failed"; the cause says why (refused, egress denied, timed out). */
export function failureText(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}

function parseMetadata(text: string, url: string): IssuerMetadata {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`the metadata at ${url} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`the metadata at ${url} is not a JSON object`);
  const record = value as Record<string, unknown>;
  const field = (key: string): string | undefined =>
    typeof record[key] === 'string' ? record[key] : undefined;
  const issuer = field('issuer');
  if (issuer === undefined) throw new Error(`the metadata at ${url} names no issuer`);
  const metadata: IssuerMetadata = { issuer };
  for (const key of ['jwks_uri', 'token_endpoint', 'introspection_endpoint'] as const) {
    const found = field(key);
    if (found !== undefined) metadata[key] = found;
  }
  return metadata;
}

/** The body as text, refusing more than `limit` bytes. */
export async function boundedText(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > limit) {
    await response.body?.cancel();
    throw new Error(`the answer is larger than ${limit} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > limit) throw new Error(`the answer is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
