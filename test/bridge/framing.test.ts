import { describe, expect, it } from 'vitest';
import { JsonRpcLineDecoder, salvageIds, type BadLine } from '../../src/bridge/framing.ts';
import type { JsonRpcMessage } from '../../src/mcp/jsonrpc.ts';

function decoder(maxLineBytes = 1024) {
  const messages: JsonRpcMessage[] = [];
  const bad: BadLine[] = [];
  const d = new JsonRpcLineDecoder(maxLineBytes, {
    onMessage: (m) => messages.push(m),
    onBadLine: (b) => bad.push(b),
  });
  return { d, messages, bad };
}

const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;

describe('JsonRpcLineDecoder', () => {
  it('reassembles messages split anywhere, also inside a multi-byte character', () => {
    const { d, messages, bad } = decoder();
    const bytes = Buffer.from(
      `${ping(1)}\n{"jsonrpc":"2.0","method":"note","params":{"text":"héllo ✓"}}\r\n${ping(2)}\n`,
    );
    for (let i = 0; i < bytes.length; i += 3) d.push(bytes.subarray(i, i + 3));
    expect(bad).toEqual([]);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'note', params: { text: 'héllo ✓' } },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
  });

  it('skips blank lines silently', () => {
    const { d, messages, bad } = decoder();
    d.push(Buffer.from(`\n\r\n   \n${ping(1)}\n`));
    expect(messages).toHaveLength(1);
    expect(bad).toEqual([]);
  });

  it('reports and skips garbage, non-JSON-RPC and invalid UTF-8 lines, then goes on', () => {
    const { d, messages, bad } = decoder();
    d.push(
      Buffer.from(
        'Server listening on stdio\n{"hello":"world"}\n{"jsonrpc":"1.0","id":1,"method":"x"}\n',
      ),
    );
    d.push(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":3,"result":{"t":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}}\n'),
      ]),
    );
    d.push(Buffer.from(`${ping(4)}\n`));
    expect(bad.map((line) => line.reason)).toEqual([
      'not-json',
      'not-json-rpc',
      'not-json-rpc',
      'invalid-utf8',
    ]);
    expect(bad[3]!.sample).toContain('"id":3');
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  });

  it('drops a line over the limit without buffering it, keeping its head and tail', () => {
    const { d, messages, bad } = decoder(100);
    d.push(Buffer.from('{"jsonrpc":"2.0","id":77,"result":{"text":"'));
    for (let i = 0; i < 1000; i++) d.push(Buffer.alloc(1000, 'x'));
    d.push(Buffer.from(`"},"id2":5}\n${ping(5)}\n`));
    expect(bad).toHaveLength(1);
    expect(bad[0]!.reason).toBe('too-large');
    expect(bad[0]!.bytes).toBeGreaterThan(1_000_000);
    expect(bad[0]!.sample.length).toBeLessThan(1100);
    expect(salvageIds(bad[0]!.sample)).toContain(77);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 5, method: 'ping' }]);
  });

  it('treats a last line without newline at end of stream as a line', () => {
    const { d, messages } = decoder();
    d.push(Buffer.from(ping(9)));
    expect(messages).toEqual([]);
    d.end();
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 9, method: 'ping' }]);
  });
});

describe('salvageIds', () => {
  it('finds string and number ids wherever the serializer put them', () => {
    expect(salvageIds('{"result":{"x":1},"jsonrpc":"2.0","id":12}')).toEqual([12]);
    expect(salvageIds('{"jsonrpc":"2.0","id":"a\\"b","result":')).toEqual(['a"b']);
    expect(salvageIds('no ids here')).toEqual([]);
  });
});
