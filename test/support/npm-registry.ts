/**
 * A local npm registry in front of registry.npmjs.org, for `npx -y <package>` runs that must
 * resolve a release the test chooses: one package is served with only some of its published
 * versions and a `latest` the test moves, as when its author publishes a new release; every
 * other request (its dependencies, all tarballs) is passed to npmjs as it is. npm sends tarball
 * requests here too: its `replace-registry-host` (default `npmjs`) rewrites npmjs tarball URLs
 * to the configured registry.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const UPSTREAM = 'https://registry.npmjs.org';

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/`, for `npm_config_registry`. */
  url: string;
  /** The version `npx -y <package>` resolves from now on. */
  latest: string;
  close(): Promise<void>;
}

export async function startRegistry(
  name: string,
  versions: readonly string[],
  latest: string,
): Promise<LocalRegistry> {
  const registry: LocalRegistry = { url: '', latest, close: () => Promise.resolve() };
  const packument = `/${name.replace('/', '%2f')}`;
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const served =
      path.toLowerCase() === packument.toLowerCase() || path === `/${name}`
        ? chosen(name, versions, registry.latest)
        : passed(path, req);
    served.then(
      ({ status, type, body }) => {
        // Never cached: the next `npx -y` must ask again, as it would npmjs after max-age.
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(body);
      },
      (error: unknown) => fail(res, error),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registry.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  registry.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return registry;
}

interface Answer {
  status: number;
  type: string;
  body: Buffer;
}

/** The package's full packument from npmjs, cut to `versions`, with `latest` as chosen. */
async function chosen(name: string, versions: readonly string[], latest: string): Promise<Answer> {
  const response = await fetch(`${UPSTREAM}/${name.replace('/', '%2f')}`, {
    headers: { accept: 'application/json' },
  });
  if (!response.ok) throw new Error(`npmjs answered ${response.status} for ${name}`);
  const full = (await response.json()) as {
    versions: Record<string, unknown>;
    time?: Record<string, string>;
  };
  const kept = Object.fromEntries(versions.map((v) => [v, full.versions[v]]));
  const body = { ...full, versions: kept, 'dist-tags': { latest } };
  delete body.time;
  return {
    status: 200,
    type: 'application/json',
    body: Buffer.from(JSON.stringify(body)),
  };
}

async function passed(path: string, req: IncomingMessage): Promise<Answer> {
  const accept = req.headers.accept;
  const response = await fetch(`${UPSTREAM}${path}`, {
    headers: accept === undefined ? {} : { accept },
  });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? 'application/octet-stream',
    body: Buffer.from(await response.arrayBuffer()),
  };
}

function fail(res: ServerResponse, error: unknown): void {
  res.writeHead(502, { 'content-type': 'text/plain' });
  res.end(`npmjs unreachable: ${String(error)}\n`);
}
