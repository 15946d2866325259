/**
 * A local HTTP server in front of a public registry (test/support/npm-registry.ts,
 * test/support/pypi-index.ts): the test's launchers talk to loopback only, and it answers
 * what the test chose or what the registry says.
 */

import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Answer {
  status: number;
  type: string;
  body: Buffer;
}

export interface LocalServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  close: () => Promise<void>;
}

/**
 * Serves `answer` on a free loopback port. Nothing is cached: a launcher must ask again next
 * time, as it would the registry after max-age. A failed answer is a 502 naming `upstream`.
 */
export async function serveLocally(
  upstream: string,
  answer: (req: IncomingMessage) => Promise<Answer>,
): Promise<LocalServer> {
  const server = createServer((req, res) => {
    answer(req).then(
      ({ status, type, body }) => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(body);
      },
      (error: unknown) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`${upstream} unreachable: ${String(error)}\n`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `url` from the registry, as it answered. */
export async function relayed(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { headers });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? 'application/octet-stream',
    body: Buffer.from(await response.arrayBuffer()),
  };
}
