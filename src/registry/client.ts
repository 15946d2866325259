/**
 * Reads server.json entries: from an MCP registry's API (the generic registry API, `/v0.1`,
 * which the official registry serves), from a URL, or from a file. Every read is bounded in
 * time and bytes, and an answer is believed only after it validates (./server-json.ts): a
 * registry is a server on the network like any other.
 */

import { readFile, stat } from 'node:fs/promises';
import { fetch } from 'undici';
import { OperatorError, operatorError } from '../errors.ts';
import { visible } from '../tools/text.ts';
import {
  SERVER_NAME_MAX,
  SERVER_NAME_PATTERN,
  type ServerJson,
  ServerListSchema,
  ServerResponseSchema,
  checkEntry,
} from './server-json.ts';
import { checker } from '../mcp/schemas.ts';

/** The official MCP Registry; its API is under API_PREFIX. */
export const OFFICIAL_REGISTRY = 'https://registry.modelcontextprotocol.io';
/** The version of the generic registry API read here (the official registry's current one). */
export const API_PREFIX = '/v0.1';

export interface ReadLimits {
  /** Time for one request, headers and body. */
  timeoutMs: number;
  /** Most bytes of one entry (a server.json is a few KiB). */
  entryBytes: number;
  /** Most bytes of a list of versions. */
  listBytes: number;
}

export const DEFAULT_LIMITS: ReadLimits = {
  timeoutMs: 10_000,
  entryBytes: 1024 * 1024,
  listBytes: 8 * 1024 * 1024,
};

/** `NAME[@VERSION]` as typed. */
export interface EntryReference {
  name: string;
  /** Undefined: the registry's latest. */
  version: string | undefined;
}

const NAME = new RegExp(SERVER_NAME_PATTERN);

/**
 * `NAME[@VERSION]`, refused unless the name is a registry name (reverse-DNS, one slash) and the
 * version one path segment. Both are percent-encoded into the request path anyway; refusing
 * `..` and the like here says what is wrong instead of asking the registry about it.
 */
export function parseReference(text: string): EntryReference {
  const at = text.lastIndexOf('@');
  const name = at > 0 ? text.slice(0, at) : text;
  const version = at > 0 ? text.slice(at + 1) : undefined;
  const refuse = (problem: string) =>
    operatorError('MCPOP_REGISTRY_NAME_INVALID', JSON.stringify(visible(text)), problem);
  if (name.length > SERVER_NAME_MAX || !NAME.test(name))
    throw refuse('a registry name is namespace/server (letters, digits, . and -, one slash)');
  if (name.split(/[/.]/).some((part) => part === '') || name.includes('..'))
    throw refuse('a registry name has no empty or dot-only part');
  if (version !== undefined) {
    if (version === '' || version.length > 255)
      throw refuse('the version after @ is empty or too long');
    if (
      /[\s/\\?#%]/.test(version) ||
      version !== visible(version) ||
      version === '.' ||
      version === '..'
    )
      throw refuse('a version is one exact release, without spaces, slashes or ?#%');
  }
  return { name, version };
}

/** What a registry says about one entry. */
export interface RegistryEntry {
  entry: ServerJson;
  /** The registry's `isLatest`, when it says. */
  isLatest: boolean | undefined;
  /** `active`, `deprecated` or `deleted`, when the registry says. */
  status: string | undefined;
}

const responseChecker = checker(ServerResponseSchema);
const listChecker = checker(ServerListSchema);

export class RegistryClient {
  /** The registry's root, without a trailing slash: what provenance records. */
  readonly root: string;
  private readonly limits: ReadLimits;

  constructor(root: string, limits: ReadLimits = DEFAULT_LIMITS) {
    this.root = registryRoot(root);
    this.limits = limits;
  }

  /** One version of `name`, or its latest. */
  async entry(reference: EntryReference): Promise<RegistryEntry> {
    const version = reference.version ?? 'latest';
    const url = `${this.root}${API_PREFIX}/servers/${encodeURIComponent(reference.name)}/versions/${encodeURIComponent(version)}`;
    const body = await readUrl(url, this.limits, this.limits.entryBytes);
    return this.believe(body, url, reference);
  }

  /** Every version the registry lists for `name`. */
  async versions(name: string): Promise<RegistryEntry[]> {
    const url = `${this.root}${API_PREFIX}/servers/${encodeURIComponent(name)}/versions`;
    const body = await readUrl(url, this.limits, this.limits.listBytes);
    if (!listChecker.check(body)) {
      const { path, message } = listChecker.firstError(body);
      throw operatorError('MCPOP_REGISTRY_ENTRY_INVALID', url, path, message);
    }
    return body.servers.map((response, i) =>
      this.believe(response, `${url} (servers[${i}])`, { name, version: undefined }),
    );
  }

  /** A response checked, and its entry checked to be the one asked for. */
  private believe(body: unknown, source: string, asked: EntryReference): RegistryEntry {
    if (!responseChecker.check(body)) {
      const { path, message } = responseChecker.firstError(body);
      throw operatorError('MCPOP_REGISTRY_ENTRY_INVALID', source, path, message);
    }
    const entry = checkEntry(body.server, source);
    if (entry.name !== asked.name)
      throw operatorError(
        'MCPOP_REGISTRY_ENTRY_INVALID',
        source,
        'server.name',
        `the registry answered with ${JSON.stringify(visible(entry.name))}, not the server asked for`,
      );
    if (asked.version !== undefined && entry.version !== asked.version)
      throw operatorError(
        'MCPOP_REGISTRY_ENTRY_INVALID',
        source,
        'server.version',
        `the registry answered with version ${JSON.stringify(visible(entry.version))}, not the one asked for`,
      );
    const official = body._meta?.['io.modelcontextprotocol.registry/official'];
    return { entry, isLatest: official?.isLatest, status: official?.status };
  }
}

/** `text` as an http(s) URL without credentials, query or fragment. */
function httpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw operatorError(
      'MCPOP_REGISTRY_UNREACHABLE',
      JSON.stringify(visible(text)),
      'it is not a URL',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw operatorError('MCPOP_REGISTRY_UNREACHABLE', url.href, 'it is reached over http or https');
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw operatorError(
      'MCPOP_REGISTRY_UNREACHABLE',
      url.origin,
      'give it as scheme://host[/path], without credentials, query or fragment',
    );
  return url;
}

/** A registry URL as its root: `https://host[/prefix]`, without `/v0.1` or a trailing slash. */
export function registryRoot(text: string): string {
  const url = httpUrl(text);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith(API_PREFIX) ? path.slice(0, -API_PREFIX.length) : path}`;
}

/** An entry from a server.json URL (not a registry API). */
export async function entryFromUrl(
  text: string,
  limits: ReadLimits = DEFAULT_LIMITS,
): Promise<ServerJson> {
  const url = httpUrl(text).href;
  return checkEntry(await readUrl(url, limits, limits.entryBytes), url);
}

/** An entry from a file. */
export async function entryFromFile(
  path: string,
  limits: ReadLimits = DEFAULT_LIMITS,
): Promise<ServerJson> {
  const source = JSON.stringify(visible(path));
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > limits.entryBytes)
      throw operatorError('MCPOP_REGISTRY_TOO_LARGE', source, limits.entryBytes);
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof OperatorError) throw error;
    throw operatorError('MCPOP_REGISTRY_UNREACHABLE', source, (error as Error).message);
  }
  return checkEntry(parseJson(text, source), source);
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw operatorError(
      'MCPOP_REGISTRY_ENTRY_INVALID',
      source,
      '',
      `not JSON: ${(error as Error).message}`,
    );
  }
}

/**
 * GET `url` as JSON within the time and byte bounds. The body is read as it arrives and
 * dropped past `maxBytes`; a status other than 200 is an error with the registry's own short
 * message when it sends one (RFC 9457 problem details, as the official registry does).
 */
async function readUrl(url: string, limits: ReadLimits, maxBytes: number): Promise<unknown> {
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), limits.timeoutMs).unref();
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: timer.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        timer.abort();
        throw operatorError('MCPOP_REGISTRY_TOO_LARGE', url, maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (response.status !== 200)
      throw operatorError('MCPOP_REGISTRY_HTTP_STATUS', url, response.status, problemDetail(text));
    return parseJson(text, url);
  } catch (error) {
    if (error instanceof OperatorError) throw error;
    if (timer.signal.aborted) throw operatorError('MCPOP_REGISTRY_TIMEOUT', url, limits.timeoutMs);
    const cause = (error as Error & { cause?: Error }).cause;
    throw operatorError(
      'MCPOP_REGISTRY_UNREACHABLE',
      url,
      cause?.message ?? (error as Error).message,
    );
  } finally {
    clearTimeout(timeout);
  }
}

/** `: <title or detail>` of a problem-details body, short and visible; or nothing. */
function problemDetail(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown };
    const said = typeof body.detail === 'string' ? body.detail : body.title;
    return typeof said === 'string' ? `: ${visible(said.slice(0, 200))}` : '';
  } catch {
    return '';
  }
}
