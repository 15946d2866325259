/**
 * The official MCP Registry (its server, built from its Go module by test/cluster/build.ts) on a
 * real PostgreSQL (Debian's), both as local processes on loopback, each in a temporary
 * directory and stopped with the harness's processes. Entries are published through the
 * registry's own API: its anonymous mode (`MCP_REGISTRY_ENABLE_ANONYMOUS_AUTH`, documented for
 * local development and tests) hands out a short token for the `io.modelcontextprotocol.anonymous`
 * namespace. Its check that a publisher owns each package (`ENABLE_REGISTRY_VALIDATION`) asks
 * npm and PyPI over the internet, so it is off: tests reach only loopback.
 */
import { randomBytes } from 'node:crypto';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { ensureBinaries } from '../cluster/build.ts';
import {
  type ManagedProcess,
  forgetDirectory,
  removeOnExit,
  startProcess,
  stopProcess,
} from '../cluster/processes.ts';
import { freePorts } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';

const POSTGRES_LIB = '/usr/lib/postgresql';

/** The newest PostgreSQL server Debian installed: `/usr/lib/postgresql/<major>/bin`. */
async function postgresBin(): Promise<string> {
  const majors = existsSync(POSTGRES_LIB)
    ? (await readdir(POSTGRES_LIB)).filter((d) =>
        existsSync(join(POSTGRES_LIB, d, 'bin', 'postgres')),
      )
    : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined)
    throw new Error(
      'PostgreSQL is needed for the registry tests: apt-get install postgresql (npm run system-packages does)',
    );
  return join(POSTGRES_LIB, newest, 'bin');
}

/**
 * PostgreSQL refuses to run as root; as root, its processes run as Debian's `postgres` user
 * (setpriv keeps the parent-death signal, which a change of user would clear).
 */
function asPostgres(command: string, args: string[]): { command: string; args: string[] } {
  if (userInfo().uid !== 0) return { command, args };
  return {
    command: 'setpriv',
    args: [
      '--reuid=postgres',
      '--regid=postgres',
      '--clear-groups',
      '--pdeathsig=KILL',
      '--',
      command,
      ...args,
    ],
  };
}

export class RegistryServer {
  /** The registry's root URL, as `--registry` takes it. */
  readonly url: string;
  readonly registry: ManagedProcess;
  readonly #postgres: ManagedProcess;
  readonly #dir: string;

  private constructor(
    url: string,
    registry: ManagedProcess,
    postgres: ManagedProcess,
    dir: string,
  ) {
    this.url = url;
    this.registry = registry;
    this.#postgres = postgres;
    this.#dir = dir;
  }

  static async start(): Promise<RegistryServer> {
    const { 'mcp-registry': binary } = await ensureBinaries(['mcp-registry']);
    const bin = await postgresBin();
    const dir = await mkdtemp(join(tmpdir(), 'mcp-operator-registry-'));
    removeOnExit(dir);
    const data = join(dir, 'pg');
    if (userInfo().uid === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
      await chown(dir, uid, gid);
    }
    const initdb = asPostgres(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'registry',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    execFileSync(initdb.command, initdb.args, { stdio: 'pipe' });
    const { pg, http } = await freePorts(['pg', 'http']);
    // Durability is not what a test needs: fsync off makes the registry's migrations quick.
    const postgres = asPostgres(join(bin, 'postgres'), [
      '-D',
      data,
      '-h',
      '127.0.0.1',
      '-p',
      String(pg),
      '-k',
      dir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ]);
    const pgProcess = startProcess({
      name: 'postgres',
      ...postgres,
      logFile: join(dir, 'postgres.log'),
    });
    const registry = startProcess({
      name: 'mcp-registry',
      command: binary,
      args: [],
      logFile: join(dir, 'registry.log'),
      env: {
        PATH: process.env.PATH,
        MCP_REGISTRY_SERVER_ADDRESS: `127.0.0.1:${http}`,
        MCP_REGISTRY_DATABASE_URL: `postgres://registry@127.0.0.1:${pg}/postgres?sslmode=disable`,
        MCP_REGISTRY_DATABASE_MIN_CONNECTIONS: '1',
        MCP_REGISTRY_DATABASE_MAX_CONNECTIONS: '8',
        MCP_REGISTRY_ENABLE_ANONYMOUS_AUTH: 'true',
        MCP_REGISTRY_ENABLE_REGISTRY_VALIDATION: 'false',
        MCP_REGISTRY_JWT_PRIVATE_KEY: randomBytes(32).toString('hex'),
      },
    });
    const server = new RegistryServer(`http://127.0.0.1:${http}`, registry, pgProcess, dir);
    try {
      await waitFor(
        'the MCP registry to answer /v0.1/health',
        async () => {
          if (registry.exit !== undefined)
            throw new Error(`the registry exited; see ${registry.logFile}`);
          return (await fetch(`${server.url}/v0.1/health`)).ok ? true : undefined;
        },
        { timeoutMs: 120_000 },
      );
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** Publishes `entry` with an anonymous token, as `mcp-publisher` does; the registry's answer. */
  async publish(entry: unknown): Promise<{ status: number; body: unknown }> {
    const token = await fetch(`${this.url}/v0.1/auth/none`, { method: 'POST' });
    if (!token.ok) throw new Error(`POST /v0.1/auth/none: HTTP ${token.status}`);
    const { registry_token } = (await token.json()) as { registry_token: string };
    const response = await fetch(`${this.url}/v0.1/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${registry_token}`, 'content-type': 'application/json' },
      body: JSON.stringify(entry),
    });
    return { status: response.status, body: await response.json() };
  }

  /** The registry's own verdict on an entry (`POST /v0.1/validate`). */
  async validate(entry: unknown): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.url}/v0.1/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(entry),
    });
    return { status: response.status, body: await response.json() };
  }

  async stop(): Promise<void> {
    await stopProcess(this.registry, 10_000);
    await stopProcess(this.#postgres, 10_000);
    await rm(this.#dir, { recursive: true, force: true });
    forgetDirectory(this.#dir);
  }
}
