/**
 * A local npm registry in front of registry.npmjs.org, for `npx -y <package>` runs that must
 * resolve a release the test chooses: one package is served with only some of its published
 * versions and a `latest` the test moves, as when its author publishes a new release; every
 * other request (its dependencies, all tarballs) is passed to npmjs as it is. npm sends tarball
 * requests here too: its `replace-registry-host` (default `npmjs`) rewrites npmjs tarball URLs
 * to the configured registry.
 */

import type { IncomingMessage } from 'node:http';
import { relayed, serveLocally, type Answer } from './upstream.ts';

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
  const server = await serveLocally('npmjs', (req) => {
    const path = req.url ?? '/';
    return path.toLowerCase() === packument.toLowerCase() || path === `/${name}`
      ? chosen(name, versions, registry.latest)
      : passed(path, req);
  });
  registry.close = server.close;
  registry.url = `${server.origin}/`;
  return registry;
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

function passed(path: string, req: IncomingMessage): Promise<Answer> {
  const accept = req.headers.accept;
  return relayed(`${UPSTREAM}${path}`, accept === undefined ? {} : { accept });
}
