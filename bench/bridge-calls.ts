/**
 * The client side of the bridge's per-call benches (bridge-instructions.ts,
 * bridge-allocations.ts): sessions opened with fetch, then closed loops of the timed call.
 */

import { CALL, INITIALIZE, INITIALIZED } from './mcp-messages.ts';

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

async function post(url: string, body: unknown, session?: string): Promise<Response> {
  const headers: Record<string, string> = { ...HEADERS };
  if (session !== undefined) headers['mcp-session-id'] = session;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return res;
}

export async function openSession(url: string): Promise<string> {
  const init = await post(url, INITIALIZE);
  await init.text();
  const session = init.headers.get('mcp-session-id');
  if (session === null) throw new Error('no session id');
  await (await post(url, INITIALIZED, session)).text();
  return session;
}

/** `total` calls spread over the sessions, each a closed loop. */
export async function calls(url: string, sessions: string[], total: number): Promise<void> {
  let left = total;
  let next = 1;
  await Promise.all(
    sessions.map(async (session) => {
      while (left > 0) {
        left--;
        const body = { jsonrpc: '2.0', id: next++, method: 'tools/call', params: CALL };
        const text = await (await post(url, body, session)).text();
        if (!text.includes('"result"')) throw new Error(`unexpected answer: ${text}`);
      }
    }),
  );
}

/** Polls `url` with OPTIONS until the bridge answers, for up to `timeoutMs`. */
export async function waitUp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const up = await fetch(url, { method: 'OPTIONS' }).then(
      () => true,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the bridge did not start within ${timeoutMs} ms`);
}

/** The arguments to node that start the bridge built at `cli` in `mode` in front of `server`. */
export const bridgeCommand = (cli: string, mode: string, port: number, server: string) => [
  cli,
  'bridge',
  '--listen',
  `127.0.0.1:${port}`,
  '--session-mode',
  mode,
  '--log-level',
  'warn',
  '--',
  server,
];
