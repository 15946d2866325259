/** Health probes and waiting, for components that are starting up. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { createServer } from 'node:net';

export interface Reply {
  status: number;
  body: string;
}

/**
 * GET with a short timeout. `tls` carries the CA and client certificate for the API server;
 * `insecure` is for the self-signed health ports of the controller manager and scheduler,
 * which serve nothing but `/healthz` to us.
 */
export type Tls = Pick<RequestOptions, 'ca' | 'cert' | 'key'> | 'insecure';

export function get(url: string, tls: Tls = {}): Promise<Reply> {
  const options: RequestOptions =
    tls === 'insecure' ? { rejectUnauthorized: false } : { ...tls, rejectUnauthorized: true };
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Called before every attempt; throw from it to give up early (e.g. the process died). */
  abort?: () => void;
}

/**
 * Calls `attempt` until it returns something other than undefined, and returns that. On
 * timeout, the error names `what` and says why the last attempt failed.
 */
export async function poll<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last: string;
  for (;;) {
    options.abort?.();
    try {
      const value = await attempt();
      if (value !== undefined) return value;
      last = 'not yet';
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `${what}: not done within ${options.timeoutMs / 1000}s (last attempt: ${last})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}

/**
 * Ports that are free on 127.0.0.1 right now. All are held open until all are found, so they
 * differ from one another; another process may still take one before a component binds it, in
 * which case that component fails to start and says so in its log.
 */
export async function freePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const servers = await Promise.all(
    names.map(async () => {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      return server;
    }),
  );
  const ports = servers.map((server, i) => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return [names[i], address.port];
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return Object.fromEntries(ports) as Record<K, number>;
}
