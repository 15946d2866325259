/**
 * Names on the wire beside the JSON-RPC body: HTTP headers of Streamable HTTP and `_meta` keys.
 * The bridge reads what discovery and other clients send, so both take the names from here.
 */

/**
 * Request metadata of revision 2026-07-28 (basic/transports/streamable-http, "Request
 * Metadata", and the `_meta` keys of schema.ts).
 */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** HTTP headers of Streamable HTTP (lower case, as Node reports them). */
export const HEADER = {
  /** 2025-11-25 basic/transports, "Protocol Version Header"; required by 2026-07-28. */
  protocolVersion: 'mcp-protocol-version',
  /** 2025-11-25 basic/transports, "Session Management"; gone in 2026-07-28. */
  sessionId: 'mcp-session-id',
  /** 2026-07-28: mirrors the JSON-RPC method. */
  method: 'mcp-method',
  /** 2026-07-28: mirrors `params.name` or `params.uri`. */
  name: 'mcp-name',
  /** SSE resumption (WHATWG HTML, server-sent events). */
  lastEventId: 'last-event-id',
} as const;

/**
 * A `_meta` key of a tools/list (prompts/list, resources/list, resources/templates/list) request
 * (MCP `_meta` naming: prefix/name) that asks the bridge for every entry, unfiltered by the
 * enforcement policy. Discovery sends it: drift can only name what changed if discovery sees the
 * drifted entries too. The bridge honours it only on a request that carries
 * DISCOVERY_TOKEN_HEADER with the token of its --discovery-token-file; on any other it is
 * dropped, and the list stays filtered. It widens only what the requester itself reads; every
 * tools/call, prompts/get and resources/read is screened all the same.
 */
export const UNFILTERED_LIST_META = 'mcp-operator.dev/unfiltered';

/**
 * The HTTP header by which discovery proves it is the operator: its value is the random token
 * the operator keeps in the server's `<name>-discovery` Secret, which is mounted into the
 * bridge alone.
 */
export const DISCOVERY_TOKEN_HEADER = 'Mcp-Operator-Discovery-Token';
