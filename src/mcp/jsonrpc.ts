/**
 * JSON-RPC 2.0 messages as MCP uses them (schema.ts of 2025-11-25 and 2026-07-28, "JSON-RPC
 * types"), and the wire error codes the bridge answers with. Schemas first, types derived;
 * the checks are compiled once because every line from a child and every POST body pass them.
 *
 * Wire codes are not the local error registry (src/errors.ts): these travel to MCP clients.
 */

import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const RequestIdSchema = Type.Union([Type.String(), Type.Number()]);
/**
 * Any JSON object. Not a Record of string to unknown: its compiled check walks every member
 * (Object.entries and a key pattern that accepts any key) and proves nothing more, for every
 * message in both directions.
 */
const ParamsSchema = Type.Unsafe<Record<string, unknown>>(Type.Object({}));

export const JsonRpcRequestSchema = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: RequestIdSchema,
  method: Type.String(),
  params: Type.Optional(ParamsSchema),
});

export const JsonRpcNotificationSchema = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  method: Type.String(),
  params: Type.Optional(ParamsSchema),
});

export const JsonRpcResultSchema = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: RequestIdSchema,
  result: ParamsSchema,
});

export const JsonRpcErrorObjectSchema = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Optional(Type.Unknown()),
});

export const JsonRpcErrorSchema = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  // JSON-RPC 2.0 §5: `null` when the id could not be determined (parse errors).
  id: Type.Optional(Type.Union([RequestIdSchema, Type.Null()])),
  error: JsonRpcErrorObjectSchema,
});

export type RequestId = Static<typeof RequestIdSchema>;
export type JsonRpcRequest = Static<typeof JsonRpcRequestSchema>;
export type JsonRpcNotification = Static<typeof JsonRpcNotificationSchema>;
export type JsonRpcResult = Static<typeof JsonRpcResultSchema>;
export type JsonRpcError = Static<typeof JsonRpcErrorSchema>;
export type JsonRpcErrorObject = Static<typeof JsonRpcErrorObjectSchema>;
export type JsonRpcResponse = JsonRpcResult | JsonRpcError;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

const isRequestShape = TypeCompiler.Compile(JsonRpcRequestSchema);
const isNotificationShape = TypeCompiler.Compile(JsonRpcNotificationSchema);
const isResultShape = TypeCompiler.Compile(JsonRpcResultSchema);
const isErrorShape = TypeCompiler.Compile(JsonRpcErrorSchema);

export type MessageKind = 'request' | 'notification' | 'response';

/** The kind of a decoded JSON value, or undefined when it is not a JSON-RPC 2.0 message. */
export function classify(value: unknown): MessageKind | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if ('method' in value) {
    if ('id' in value) return isRequestShape.Check(value) ? 'request' : undefined;
    return isNotificationShape.Check(value) ? 'notification' : undefined;
  }
  if ('result' in value) return isResultShape.Check(value) ? 'response' : undefined;
  if ('error' in value) return isErrorShape.Check(value) ? 'response' : undefined;
  return undefined;
}

export const isRequest = (m: JsonRpcMessage): m is JsonRpcRequest => 'method' in m && 'id' in m;
export const isNotification = (m: JsonRpcMessage): m is JsonRpcNotification =>
  'method' in m && !('id' in m);
export const isResponse = (m: JsonRpcMessage): m is JsonRpcResponse => !('method' in m);
export const isErrorResponse = (m: JsonRpcMessage): m is JsonRpcError => 'error' in m;

/**
 * Key for maps of request ids: `1` and `"1"` are different ids (JSON-RPC 2.0 §4), so the key
 * keeps the type.
 */
export const idKey = (id: RequestId): string => (typeof id === 'number' ? `n${id}` : `s${id}`);

/**
 * Wire error codes. -32700..-32603 are JSON-RPC 2.0's; -32000..-32019 are implementation
 * defined (2026-07-28 basic/index "Error codes"). Like the MCP SDKs we use -32000 for transport
 * and session failures and -32001 for a request that timed out. -32020.. are the MCP
 * specification's own.
 */
export const WIRE = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
  REQUEST_TIMEOUT: -32001,
  HEADER_MISMATCH: -32020,
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

export function errorResponse(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcError {
  const error: JsonRpcErrorObject =
    data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}
