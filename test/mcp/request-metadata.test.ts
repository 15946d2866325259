/**
 * The headers the bridge mirrors from a 2026-07-28 request when it relays it to an HTTP server
 * (basic/transports/streamable-http, "Request Metadata" and "Value Encoding"): what a server
 * checks them against is the body, so they must decode to exactly the body's values.
 */

import { describe, expect, it } from 'vitest';
import {
  decodeHeaderValue,
  encodeHeaderValue,
  metadataHeaders,
  paramHeaders,
} from '../../src/mcp/request-metadata.ts';

describe('2026-07-28 request headers', () => {
  it('keeps header-safe values as they are and Base64-encodes the rest, decoding to the value', () => {
    expect(encodeHeaderValue('get_weather')).toBe('get_weather');
    expect(encodeHeaderValue('Seattle, WA')).toBe('Seattle, WA');
    for (const value of [' leading', 'trailing ', 'Zürich', 'line\nbreak', '=?base64?eA==?=', '']) {
      const encoded = encodeHeaderValue(value);
      expect(encoded).toMatch(/^[\x20-\x7e]*$/);
      expect(decodeHeaderValue(encoded)).toBe(value);
    }
    expect(encodeHeaderValue(' leading')).toMatch(/^=\?base64\?.*\?=$/);
  });

  it("mirrors version, method, name and the tool's annotated arguments from the body", () => {
    const annotations = paramHeaders({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        limits: {
          type: 'object',
          properties: { count: { type: 'integer', 'x-mcp-header': 'Count' } },
        },
        verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      },
    });
    const headers = metadataHeaders(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'räumen',
          arguments: { region: 'eu-west', limits: { count: 42 } },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
        },
      },
      annotations,
    );
    expect(headers).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': encodeHeaderValue('räumen'),
      'mcp-param-region': 'eu-west',
      'mcp-param-count': '42',
    });
    expect(decodeHeaderValue(headers['mcp-name']!)).toBe('räumen');
  });

  it('names the resource of resources/read and nothing for methods without a name', () => {
    const read = metadataHeaders(
      { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'file:///a b' } },
      [],
    );
    expect(read).toEqual({ 'mcp-method': 'resources/read', 'mcp-name': 'file:///a b' });
    const list = metadataHeaders({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, []);
    expect(list).toEqual({ 'mcp-method': 'tools/list' });
  });
});
