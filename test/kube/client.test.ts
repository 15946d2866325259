/**
 * The HTTP side of the client seam against a local HTTP server: framing of bodies on a
 * keep-alive connection, errors as KubeApiError with the Status reason, timeouts, auth
 * headers per request, and watch streams that end, drop or abort.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  isConflict,
  isNotFound,
  isTransient,
  type KubeApiError,
  type KubeClient,
  type WatchEvent,
} from '../../src/kube/client.ts';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server | undefined;
let client: KubeClient | undefined;

afterEach(async () => {
  client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function serve(handler: Handler, tokens: string[] = ['t']): Promise<KubeClient> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString(), res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  let n = 0;
  client = connect(
    {
      server: `http://127.0.0.1:${port}`,
      tls: {},
      authHeaders: () =>
        Promise.resolve({ Authorization: `Bearer ${tokens[n++ % tokens.length]}` }),
      source: 'test',
    },
    { requestTimeoutMs: 200 },
  );
  return client;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('KubeClient over HTTP', () => {
  it('frames a DELETE body so the next request on the connection stays intact', async () => {
    const seen: string[] = [];
    const c = await serve((req, body, res) => {
      seen.push(`${req.method} ${req.url} ${body}`);
      json(res, 200, {});
    });
    await c.request({ method: 'DELETE', path: '/a', body: { preconditions: { uid: 'u' } } });
    await c.request({ method: 'GET', path: '/b', query: { limit: 5, continue: undefined } });
    expect(seen).toEqual(['DELETE /a {"preconditions":{"uid":"u"}}', 'GET /b?limit=5 ']);
  });

  it('sends server-side apply as apply-patch+yaml, and fresh auth headers each time', async () => {
    const seen: string[] = [];
    const c = await serve(
      (req, _body, res) => {
        seen.push(`${req.headers['content-type']} ${req.headers.authorization}`);
        json(res, 200, {});
      },
      ['one', 'two'],
    );
    await c.request({ method: 'PATCH', path: '/x', patchType: 'apply', body: {} });
    await c.request({ method: 'PATCH', path: '/x', patchType: 'merge', body: {} });
    expect(seen).toEqual([
      'application/apply-patch+yaml Bearer one',
      'application/merge-patch+json Bearer two',
    ]);
  });

  it('turns an error Status into a KubeApiError with its reason and message', async () => {
    const c = await serve((req, _body, res) =>
      json(res, req.url === '/missing' ? 404 : 409, {
        kind: 'Status',
        reason: req.url === '/missing' ? 'NotFound' : 'Conflict',
        message: 'the object has been modified',
      }),
    );
    const missing = await c.request({ method: 'GET', path: '/missing' }).catch((e: unknown) => e);
    expect(isNotFound(missing)).toBe(true);
    const conflict = await c
      .request({ method: 'PUT', path: '/x', body: {} })
      .catch((e: unknown) => e);
    expect(isConflict(conflict)).toBe(true);
    expect((conflict as KubeApiError).detail).toBe('the object has been modified');
    expect((conflict as KubeApiError).code).toBe('MCPOP_KUBE_API');
  });

  it('gives up on a server that does not answer', async () => {
    const c = await serve(() => undefined);
    await expect(c.request({ method: 'GET', path: '/slow' })).rejects.toThrow(
      /no answer for 200 ms/,
    );
  });

  it('tells what a retry may clear (timeouts, throttling) from what it will not', async () => {
    const answers: Record<string, [number, string]> = {
      '/throttled': [429, 'TooManyRequests'],
      '/unavailable': [503, 'ServiceUnavailable'],
      '/timeout': [504, 'Timeout'],
      '/invalid': [422, 'Invalid'],
      '/forbidden': [403, 'Forbidden'],
      '/webhook': [500, 'InternalError'],
    };
    const c = await serve((req, _body, res) => {
      const answer = answers[req.url ?? ''];
      if (answer === undefined) return; // no answer at all
      json(res, answer[0], { kind: 'Status', code: answer[0], reason: answer[1] });
    });
    const verdicts: Record<string, boolean> = {};
    for (const path of [...Object.keys(answers), '/silent']) {
      const err = await c.request({ method: 'GET', path }).catch((e: unknown) => e);
      verdicts[path] = isTransient(err);
    }
    expect(verdicts).toEqual({
      '/throttled': true,
      '/unavailable': true,
      '/timeout': true,
      '/invalid': false,
      '/forbidden': false,
      '/webhook': false,
      '/silent': true,
    });
  });

  it('cuts off a request in flight on close, and sends none after it', async () => {
    const seen: string[] = [];
    const c = await serve((req) => seen.push(req.url ?? ''));
    const inFlight = c.request({ method: 'PATCH', path: '/held', patchType: 'apply', body: {} });
    await expect.poll(() => seen).toEqual(['/held']);
    c.close();
    await expect(inFlight).rejects.toMatchObject({ name: 'AbortError' });
    await expect(c.request({ method: 'GET', path: '/after' })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(seen).toEqual(['/held']);
  });

  it('streams watch events until the server ends the stream', async () => {
    const c = await serve((_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
      res.end(
        `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } })}\n`,
      );
    });
    const events: WatchEvent[] = [];
    await c.watch(
      { path: '/w', query: { timeoutSeconds: 1 }, signal: new AbortController().signal },
      (e) => events.push(e),
    );
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
  });

  it('rejects a watch whose connection drops mid-stream, and resolves one that is aborted', async () => {
    const c = await serve((_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const signal = new AbortController().signal;
    await expect(c.watch({ path: '/w', query: {}, signal }, () => undefined)).rejects.toThrow();
    const abort = new AbortController();
    const watching = c.watch({ path: '/w', query: {}, signal: abort.signal }, () => abort.abort());
    await expect(watching).resolves.toBeUndefined();
  });
});
