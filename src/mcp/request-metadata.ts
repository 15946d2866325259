/**
 * Request metadata of revision 2026-07-28 (basic/transports/streamable-http, "Request
 * Metadata"): the body fields mirrored into HTTP headers, which a server that reads the body
 * MUST check against it, so that intermediaries routing on headers and the server acting on
 * the body cannot be told different things.
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { JsonRpcRequest } from './jsonrpc.ts';
import { HEADER, META } from './metadata.ts';
import { ownValue } from './untrusted.ts';

/** A request as far as its headers go (Node's `IncomingMessage` is one). */
interface HeadersOf {
  headers: IncomingHttpHeaders;
}

/** A header's value; the first, should a client repeat it. */
function header(req: HeadersOf, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Methods whose `Mcp-Name` header mirrors `params.name` or `params.uri`. */
const NAMED: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/**
 * The sentinel marks an encoded value; clients encode plain values that look like one too
 * (basic/transports/streamable-http, "Value Encoding"), so a sentinel around anything but Base64
 * (RFC 4648 section 4, padded) is malformed.
 */
const SENTINEL = /^=\?base64\?(.*)\?=$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Visible ASCII, space and tab (RFC 9110 field values). */
const PLAIN = /^[\x20-\x7e\t]*$/;

/** Fails on bytes that are not UTF-8, rather than replacing them. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A header value as the client meant it: Base64 sentinels decoded; undefined if malformed. */
export function decodeHeaderValue(raw: string): string | undefined {
  const encoded = SENTINEL.exec(raw);
  if (encoded) {
    if (!BASE64.test(encoded[1]!)) return undefined;
    try {
      return UTF8.decode(Buffer.from(encoded[1]!, 'base64'));
    } catch {
      return undefined;
    }
  }
  return PLAIN.test(raw) ? raw : undefined;
}

/**
 * A value as a client puts it into a header: as it is when it is visible ASCII with no space
 * at either end, else Base64 of its UTF-8 inside the sentinel ("Value Encoding").
 */
export function encodeHeaderValue(value: string): string {
  if (/^(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?$/.test(value) && !SENTINEL.test(value))
    return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

export function requestMeta(request: JsonRpcRequest): Record<string, unknown> {
  const meta = request.params?._meta;
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
}

/** Why the standard headers do not match the body, or undefined when they do. */
export function headerMismatch(req: HeadersOf, request: JsonRpcRequest): string | undefined {
  const version = header(req, HEADER.protocolVersion);
  const bodyVersion = requestMeta(request)[META.protocolVersion];
  if (version === undefined) return 'the MCP-Protocol-Version header is missing';
  if (bodyVersion !== version) {
    return `MCP-Protocol-Version header value '${version}' does not match body value '${String(bodyVersion)}'`;
  }
  const method = header(req, HEADER.method);
  if (method === undefined) return 'the Mcp-Method header is missing';
  if (method !== request.method) {
    return `Mcp-Method header value '${method}' does not match body value '${request.method}'`;
  }
  const field = ownValue(NAMED, request.method);
  if (field === undefined) return undefined;
  const raw = header(req, HEADER.name);
  if (raw === undefined) return 'the Mcp-Name header is missing';
  const name = decodeHeaderValue(raw);
  const bodyName = request.params?.[field];
  if (name === undefined) return 'the Mcp-Name header contains invalid characters';
  if (name !== bodyName)
    return `Mcp-Name header value '${name}' does not match body value '${String(bodyName)}'`;
  return undefined;
}

/** An `x-mcp-header` annotation: where the value sits in the arguments, and its header name. */
export interface ParamHeader {
  path: string[];
  name: string;
  type: 'string' | 'integer' | 'boolean';
}

/**
 * The `x-mcp-header` annotations of a tool's inputSchema that are statically reachable, i.e.
 * through `properties` keys only (server/tools "x-mcp-header"). Annotations elsewhere make the
 * definition invalid for clients, which then never send the header; we ignore them too.
 */
export function paramHeaders(schema: unknown, path: string[] = []): ParamHeader[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as {
    properties?: Record<string, unknown>;
    type?: unknown;
    'x-mcp-header'?: unknown;
  };
  const found: ParamHeader[] = [];
  const name = node['x-mcp-header'];
  const type = node.type;
  if (
    path.length > 0 &&
    typeof name === 'string' &&
    (type === 'string' || type === 'integer' || type === 'boolean')
  ) {
    found.push({ path, name, type });
  }
  for (const [key, child] of Object.entries(node.properties ?? {}))
    found.push(...paramHeaders(child, [...path, key]));
  return found;
}

function valueAt(args: unknown, path: string[]): unknown {
  let value = args;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = ownValue(value as Record<string, unknown>, key);
  }
  return value;
}

/**
 * The headers a client of 2026-07-28 mirrors from `request` ("Request Metadata"), as the
 * bridge sends them when it relays the request to a server over HTTP: version, method, name,
 * and the `Mcp-Param-{name}` of each annotated argument of a tools/call present in the body.
 */
export function metadataHeaders(
  request: JsonRpcRequest,
  annotations: readonly ParamHeader[],
): Record<string, string> {
  const headers: Record<string, string> = { [HEADER.method]: request.method };
  const version = requestMeta(request)[META.protocolVersion];
  if (typeof version === 'string') headers[HEADER.protocolVersion] = version;
  const field = ownValue(NAMED, request.method);
  const name = field === undefined ? undefined : request.params?.[field];
  if (typeof name === 'string') headers[HEADER.name] = encodeHeaderValue(name);
  for (const { path, name: header } of annotations) {
    const value = valueAt(request.params?.arguments, path);
    if (value === undefined || value === null) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    headers[`mcp-param-${header.toLowerCase()}`] = encodeHeaderValue(text);
  }
  return headers;
}

/**
 * Checks the `Mcp-Param-{name}` headers of a tools/call against its arguments: each annotated
 * value present in the body must be in its header, equal after decoding (integers compared
 * numerically).
 */
export function paramMismatch(
  req: HeadersOf,
  args: unknown,
  annotations: readonly ParamHeader[],
): string | undefined {
  for (const { path, name, type } of annotations) {
    const value = valueAt(args, path);
    if (value === undefined || value === null) continue;
    const raw = header(req, `mcp-param-${name.toLowerCase()}`);
    if (raw === undefined) return `the Mcp-Param-${name} header is missing`;
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined) return `the Mcp-Param-${name} header contains invalid characters`;
    // The annotated parameter is a string, integer or boolean; anything else cannot match.
    const body = typeof value === 'string' ? value : JSON.stringify(value);
    const matches = type === 'integer' ? Number(decoded) === value : decoded === body;
    if (!matches)
      return `Mcp-Param-${name} header value '${decoded}' does not match body value '${body}'`;
  }
  return undefined;
}
