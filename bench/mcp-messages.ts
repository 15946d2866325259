/** The MCP messages the bridge benches send: a session's handshake and the call they time. */

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  },
};

export const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** A tool of the Go SDK everything-server with a small, fixed answer. */
export const CALL = { name: 'test_simple_text', arguments: {} };
