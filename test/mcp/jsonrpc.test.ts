import { describe, expect, it } from 'vitest';
import { classify } from '../../src/mcp/jsonrpc.ts';

describe('classify', () => {
  it('takes params and results that are JSON objects, whatever their members', () => {
    const params = { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 1 } };
    expect(classify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params })).toBe('request');
    expect(classify({ jsonrpc: '2.0', method: 'notifications/initialized', params: {} })).toBe(
      'notification',
    );
    expect(classify({ jsonrpc: '2.0', id: 'a', result: { content: [] } })).toBe('response');
  });

  it('refuses params or a result that are not JSON objects', () => {
    for (const params of [[1, 2], null, 'text', 3]) {
      expect(classify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params })).toBeUndefined();
      expect(classify({ jsonrpc: '2.0', method: 'notifications/x', params })).toBeUndefined();
      expect(classify({ jsonrpc: '2.0', id: 1, result: params })).toBeUndefined();
    }
  });

  it('refuses a message without jsonrpc 2.0 or with an id that is neither string nor number', () => {
    expect(classify({ jsonrpc: '1.0', id: 1, method: 'ping' })).toBeUndefined();
    expect(classify({ jsonrpc: '2.0', id: { n: 1 }, method: 'ping' })).toBeUndefined();
    expect(classify([{ jsonrpc: '2.0', id: 1, method: 'ping' }])).toBeUndefined();
  });
});
