/**
 * Serves a corpus recording (capture.ts) over Streamable HTTP as a 2025-11-25 server: the
 * recorded initialize result with a session, then each list method's pages exactly as
 * recorded, by cursor; any other method (the 2026-07-28 probe) is method-not-found. It replays real answers to the real discovery
 * client; the servers themselves run behind the real bridge in the cluster tests.
 */

import { readFileSync } from 'node:fs';
import { type Running, startScripted, track } from '../servers.ts';
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
    startScripted({
      page: () => ({ tools: [] }),
      // Answers initialize and every list as recorded; the script keeps DELETE and notifications.
      override(message, res) {
        if (message.id === undefined) return false;
        const { params } = message as { params?: { cursor?: string } };
        const answer =
          message.method === 'initialize'
            ? { result: from.initialize }
            : page(from, message.method, params?.cursor);
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
        return true;
      },
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
