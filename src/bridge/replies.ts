/** Small helpers for writing HTTP answers; every error body is a JSON-RPC error response. */

import type { ServerResponse } from 'node:http';
import { errorResponse, type JsonRpcMessage, type RequestId } from '../mcp/jsonrpc.ts';
import { jsonText } from './message-text.ts';

export type Headers = Record<string, string | number>;

/**
 * Header names and values in turn, as writeHead takes them: Node writes such a list as it is,
 * with no header object to build and walk for every answer.
 */
export type HeaderList = readonly string[];

export function replyJson(
  res: ServerResponse,
  status: number,
  body: JsonRpcMessage,
  headers: Headers = {},
): void {
  const list = Object.entries(headers).flatMap(([name, value]) => [name, String(value)]);
  replyJsonListed(res, status, body, list);
}

/** replyJson with a header list: what a session answers most requests with. */
export function replyJsonListed(
  res: ServerResponse,
  status: number,
  body: JsonRpcMessage,
  headers: HeaderList,
): void {
  if (res.headersSent || res.destroyed) return;
  const text = jsonText(body);
  res.writeHead(status, [
    ...headers,
    'content-type',
    'application/json',
    'content-length',
    String(Buffer.byteLength(text)),
  ]);
  res.end(text);
}

/** An HTTP error whose body is a JSON-RPC error (the spec allows one without an id). */
export function replyError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  options: { id?: RequestId | null; data?: unknown; headers?: Headers } = {},
): void {
  replyJson(
    res,
    status,
    errorResponse(options.id ?? null, code, message, options.data),
    options.headers,
  );
}

export function replyEmpty(res: ServerResponse, status: number, headers: Headers = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, headers);
  res.end();
}

export function replyText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = 'text/plain',
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
