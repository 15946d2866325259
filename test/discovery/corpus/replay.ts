/**
 * Serves a corpus recording (capture.ts) over Streamable HTTP the way the recorded release's
 * SDK 1.x does after the bridge: the 2025-11-25 handshake with a session, then each list
 * method's pages exactly as recorded, by cursor. It replays real answers to the real discovery
 * client; the servers themselves run behind the real bridge in the cluster tests.
 */

import { readFileSync } from 'node:fs';
import { type Running, bodyOf, startHttp, track } from '../servers.ts';
import type { Recording } from './capture.ts';

export function recording(file: string): Recording {
  return JSON.parse(readFileSync(new URL(`./${file}.json`, import.meta.url), 'utf8')) as Recording;
}

/** Every entry of a recorded list, all pages in order (`key`: tools, prompts, …). */
export function recorded(
  from: Recording,
  method: keyof Recording['lists'],
  key: string,
): Record<string, unknown>[] {
  return (from.lists[method] ?? []).flatMap((page) => page[key] as Record<string, unknown>[]);
}

export function replay(from: Recording): Promise<Running> {
  return track(
    startHttp(async (req, res) => {
      if (req.method === 'DELETE') {
        res.writeHead(200).end();
        return;
      }
      const message = JSON.parse(await bodyOf(req)) as {
        id?: number;
        method: string;
        params?: { cursor?: string };
      };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      if (message.method !== 'initialize' && req.headers['mcp-session-id'] !== 'replay') {
        // SDK 1.x answers a request outside a session so; discovery then does the handshake.
        const error = { code: -32000, message: 'Bad Request: Server not initialized' };
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
        return;
      }
      const answer =
        message.method === 'initialize'
          ? { result: from.initialize }
          : page(from, message.method, message.params?.cursor);
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'replay' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
    }),
  );
}

function page(from: Recording, method: string, cursor: string | undefined) {
  const pages = from.lists[method as keyof Recording['lists']];
  if (pages === undefined) return { error: { code: -32601, message: 'Method not found' } };
  const index = cursor === undefined ? 0 : pages.findIndex((p) => p.nextCursor === cursor) + 1;
  const result = pages[index];
  return result === undefined ? { error: { code: -32602, message: 'Invalid cursor' } } : { result };
}
