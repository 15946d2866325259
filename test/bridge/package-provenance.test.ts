/**
 * The package an unpinned `npx -y` or `uvx` resolved, from the child to the operator's watch:
 * real `npx` and `uvx` children of the real supervisor (busybox), the real bridge over its
 * FIFOs, and a local registry in front of npmjs (test/support/npm-registry.ts) or a local
 * index in front of PyPI (test/support/pypi-index.ts) that serves two published releases of a
 * server and moves the one resolved from the older to the newer, as a new release does. Each
 * test has a cache of its own, so every launch resolves against the registry or index.
 */

import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../src/bridge/front/change-feed.ts';
import { SupervisedLauncher } from '../../src/bridge/child/supervised.ts';
import { ChangeWatch } from '../../src/discovery/change-watch.ts';
import {
  CHANGES_PATH,
  formatSeen,
  type ChangeMark,
  type ResolvedPackage,
} from '../../src/mcp/change-feed.ts';
import { DISCOVERY_TOKEN_HEADER } from '../../src/mcp/metadata.ts';
import { ensureUv } from '../images/uv.ts';
import { startRegistry } from '../support/npm-registry.ts';
import { startIndex } from '../support/pypi-index.ts';
import { testLogger } from '../support/log.ts';
import { waitFor } from '../support/wait.ts';
import { NODE, connect, startTestBridge, tempDir } from './harness.ts';
import { startSupervisor } from './pod.ts';

const PACKAGE = '@modelcontextprotocol/server-memory';
const OLD = '2025.8.4';
const NEW = '2026.8.31';
const TOKEN = 'discovery-token-of-this-test';
/** A fresh npm cache downloads the server and its dependencies through the registry. */
const NPX_TIMEOUT_MS = 120_000;

const npx = (version: string): ResolvedPackage => ({ launcher: 'npx', name: PACKAGE, version });

/**
 * A server from PyPI, two releases that start with today's `mcp` SDK (uv resolves its newest:
 * the releases before PY_OLD fail to import it). PY_OLD reports the SDK's version as its
 * serverInfo.version, not its own.
 */
const PROJECT = 'mcp-server-time';
const PY_OLD = '2026.8.18';
const PY_NEW = '2026.10.19';
/** A fresh uv cache downloads the server and its dependencies (some 30) through the index. */
const UVX_TIMEOUT_MS = 120_000;

const uvx = (version: string): ResolvedPackage => ({ launcher: 'uvx', name: PROJECT, version });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The pod's server container running `command`, and its bridge with a discovery token. */
async function supervisedPod(command: string[], env: NodeJS.ProcessEnv, timeoutMs: number) {
  // Outside this project, whose node_modules has the npm package: npx would run that one.
  const supervisor = await startSupervisor(command, { cwd: await tempDir('workdir'), env });
  const tokenFile = join(await tempDir('token'), 'token');
  await writeFile(tokenFile, TOKEN);
  return startTestBridge({
    supervisorDir: supervisor.dir,
    discoveryTokenFile: tokenFile,
    requestTimeoutMs: timeoutMs,
    graceMs: 2_000,
  });
}

/** `npx -y <PACKAGE>` resolving through a local registry whose `latest` is OLD. */
async function npxPod() {
  const registry = await startRegistry(PACKAGE, [OLD, NEW], OLD);
  cleanups.push(() => registry.close());
  const env = {
    npm_config_registry: registry.url,
    npm_config_cache: await tempDir('npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  const bridge = await supervisedPod(['npx', '-y', PACKAGE], env, NPX_TIMEOUT_MS);
  return { registry, bridge };
}

/**
 * `uvx <PROJECT>` (uv from the project's pin, test/images/uv.ts) resolving through a local
 * index whose newest release is PY_OLD, with this machine's python3: uv downloads no Python.
 */
async function uvxPod() {
  const { uvx: command } = await ensureUv();
  const index = await startIndex(PROJECT, [PY_OLD, PY_NEW], PY_OLD);
  cleanups.push(() => index.close());
  const env = {
    UV_DEFAULT_INDEX: index.url,
    UV_CACHE_DIR: await tempDir('uv-cache'),
    // Neither a uv.toml of this machine nor a Python of uv's own.
    UV_NO_CONFIG: '1',
    UV_PYTHON: 'python3',
    UV_PYTHON_DOWNLOADS: 'never',
  };
  const bridge = await supervisedPod([command, PROJECT], env, UVX_TIMEOUT_MS);
  return { index, bridge };
}

/** A session: the bridge starts a child for it, whose first answer makes the package known. */
async function session(url: string) {
  const client = await connect(url);
  cleanups.push(() => client.close());
  return client;
}

type Answer = ChangeMark & { packages: ResolvedPackage[] };

async function poll(url: string, seen: ChangeMark[], wait: number): Promise<Answer> {
  const query = `?wait=${wait}&seen=${formatSeen(seen)}`;
  const response = await fetch(new URL(`${CHANGES_PATH}${query}`, url), {
    headers: { [DISCOVERY_TOKEN_HEADER]: TOKEN },
  });
  return (await response.json()) as Answer;
}

describe('the package npx resolved', () => {
  it(
    'reaches the change feed, and a new release resolved by a new child counts as a change',
    { timeout: 4 * NPX_TIMEOUT_MS },
    async () => {
      const { registry, bridge } = await npxPod();
      const before = await poll(bridge.url, [], 0);
      expect(before.packages).toEqual([]);

      // The first child answers: the supervisor reads which package runs, and a poll that was
      // waiting hears of it without a change being counted (a first sighting).
      const waiting = poll(bridge.url, [before], 60);
      await session(bridge.url);
      const first = await waiting;
      expect(first).toEqual({ ...before, packages: [npx(OLD)] });

      // The author publishes a release; the next session's child resolves it.
      registry.latest = NEW;
      const changed = poll(bridge.url, [first], 60);
      await session(bridge.url);
      const second = await changed;
      expect(second.epoch).toBe(first.epoch);
      expect(second.generation).toBeGreaterThan(first.generation);
      expect(second.packages).toEqual([npx(NEW)]);
    },
  );

  it(
    "is kept by the operator's watch, which asks for a discovery when it changes",
    { timeout: 4 * NPX_TIMEOUT_MS },
    async () => {
      const { registry, bridge } = await npxPod();
      const told = { changes: 0, packages: 0 };
      const dispatcher = new Agent();
      const watch = new ChangeWatch({
        dispatcher,
        onChange: () => told.changes++,
        onPackages: () => told.packages++,
        log: testLogger(),
        waitSeconds: 30,
        minGapMs: 100,
      });
      watch.watch('ns/memory', { endpoint: bridge.url, token: () => Promise.resolve(TOKEN) });
      cleanups.push(async () => {
        watch.stop();
        await dispatcher.close();
      });
      await waitFor('the first answer', () => watch.packages('ns/memory'));
      expect(watch.packages('ns/memory')).toEqual([]);

      await session(bridge.url);
      await waitFor(
        'the package to reach the watch',
        () => watch.packages('ns/memory')?.length === 1,
        { timeoutMs: NPX_TIMEOUT_MS },
      );
      expect(watch.packages('ns/memory')).toEqual([npx(OLD)]);
      expect(told).toEqual({ changes: 0, packages: 1 });

      registry.latest = NEW;
      await session(bridge.url);
      await waitFor(
        'the new release to reach the watch',
        () => watch.packages('ns/memory')?.[0]?.version === NEW,
        { timeoutMs: NPX_TIMEOUT_MS },
      );
      expect(watch.packages('ns/memory')).toEqual([npx(NEW)]);
      expect(told.changes).toBeGreaterThanOrEqual(1);
      expect(told.packages).toBe(2);
    },
  );

  it('is nothing for a child that runs no package from the npx cache', async () => {
    const print = new URL('./fixtures/print-argv.ts', import.meta.url).pathname;
    const { line, told } = await packageLineOf([NODE, print]);
    expect(line).toBe('\n');
    expect(told).toEqual([]);
  });
});

describe('the package uvx resolved', () => {
  it(
    'reaches the change feed, and a new release resolved by a new child counts as a change',
    { timeout: 4 * UVX_TIMEOUT_MS },
    async () => {
      const { index, bridge } = await uvxPod();
      const before = await poll(bridge.url, [], 0);
      expect(before.packages).toEqual([]);

      // Polled without waiting: a cold uvx may take longer to answer than a poll may wait,
      // and a first sighting is no change that a later poll would return at once for.
      const answered = (seen: ChangeMark, enough: (answer: Answer) => boolean) =>
        waitFor('the package', async () => {
          const answer = await poll(bridge.url, [seen], 0);
          return enough(answer) ? answer : undefined;
        });
      await session(bridge.url);
      const first = await answered(before, (answer) => answer.packages.length > 0);
      expect(first).toEqual({ ...before, packages: [uvx(PY_OLD)] });

      // The author publishes a release; the next session's child resolves it, in an
      // environment of its own beside the first child's, which keeps running. Its serverInfo
      // differs too, which the feed may count first: the package follows.
      index.newest = PY_NEW;
      await session(bridge.url);
      const second = await answered(first, (answer) => answer.packages[0]?.version === PY_NEW);
      expect(second.epoch).toBe(first.epoch);
      expect(second.generation).toBeGreaterThan(first.generation);
      expect(second.packages).toEqual([uvx(PY_NEW)]);
    },
  );
});

/**
 * What the supervisor makes of uv environments that a real `uvx` would not make but a package
 * could: a dist-info whose METADATA the package's author wrote. Each is a directory laid out as
 * uv lays one out, whose `bin/python` is Node and whose console script prints its argv.
 */
describe('the package of a uv environment, as the supervisor reads it', () => {
  const SCRIPT = 'time-server';

  async function uvEnvironment(files: { pyvenv?: string; entryPoints?: string; metadata: string }) {
    const env = await tempDir('uv-env');
    const distInfo = join(env, 'lib', 'python3.11', 'site-packages', 'time_server-1.0.dist-info');
    await mkdir(join(env, 'bin'), { recursive: true });
    await mkdir(distInfo, { recursive: true });
    await writeFile(join(env, 'pyvenv.cfg'), files.pyvenv ?? 'home = /usr/bin\nuv = 0.13.9\n');
    await writeFile(
      join(distInfo, 'entry_points.txt'),
      files.entryPoints ?? `[console_scripts]\n${SCRIPT} = time_server:main\n`,
    );
    await writeFile(join(distInfo, 'METADATA'), files.metadata);
    await symlink(NODE, join(env, 'bin', 'python'));
    await copyFile(new URL('./fixtures/print-argv.ts', import.meta.url), join(env, 'bin', SCRIPT));
    return [join(env, 'bin', 'python'), join(env, 'bin', SCRIPT)];
  }

  it('names the package that declares the console script, normalized as PEP 503 says', async () => {
    const metadata =
      'Metadata-Version: 2.4\nName: Time_Server.Py\nVersion: 1.0rc1.post2\n\nName: x\n';
    const entryPoints = `[gui_scripts]\nother = a:b\n\n[console_scripts]\n  ${SCRIPT}   =   time_server:main\n`;
    const { line, told } = await packageLineOf(await uvEnvironment({ metadata, entryPoints }));
    expect(line).toBe('uvx time-server-py 1.0rc1.post2\n');
    await waitFor('the bridge to tell it', () => told.length > 0);
    expect(told).toEqual([{ launcher: 'uvx', name: 'time-server-py', version: '1.0rc1.post2' }]);
  });

  it('is nothing for a name or version with characters no index allows', async () => {
    for (const metadata of [
      'Name: time\u001b[2J-server\nVersion: 1.0\n',
      'Name: time-server\nVersion: 1.0 ; rm -rf /\n',
      `Name: time-server\nVersion: 1.0\u202e0\n`,
      'Name: time-server\n\nVersion: 1.0\n',
    ]) {
      expect((await packageLineOf(await uvEnvironment({ metadata }))).line).toBe('\n');
    }
  });

  it('finds a process whose command name looks like the fields that follow it in /proc', async () => {
    // proc(5): the name in /proc/<pid>/stat is in parentheses and may hold ") " itself. Cut at
    // its first ") ", this one's process group would read as 1, and the process would be missed.
    const [, script] = await uvEnvironment({ metadata: 'Name: time-server\nVersion: 1.0\n' });
    const shell = join(dirname(script!), 'py) S 1 1 x');
    await symlink('/bin/sh', shell);
    await writeFile(
      script!,
      `printf '%s\\n' '{"jsonrpc":"2.0","method":"ready"}'\ncat >/dev/null\n`,
    );
    const { line } = await packageLineOf([shell, script!]);
    expect(line).toBe('uvx time-server 1.0\n');
  });

  it('is nothing for an environment uv did not make, or a script no package declares', async () => {
    const metadata = 'Name: time-server\nVersion: 1.0\n';
    const plainVenv = { metadata, pyvenv: 'home = /usr/bin\n' };
    const undeclared = { metadata, entryPoints: '[console_scripts]\nother-server = a:b\n' };
    for (const files of [plainVenv, undeclared]) {
      expect((await packageLineOf(await uvEnvironment(files))).line).toBe('\n');
    }
  });
});

describe('ChangeFeed', () => {
  it('counts another version of a package as a change, its first sighting not', async () => {
    const feed = new ChangeFeed();
    const gone = new AbortController();
    const waiting = feed.until([feed.mark], 60_000, gone.signal);
    feed.observePackage(npx(OLD));
    await waiting; // told at once
    expect(feed.mark.generation).toBe(0);
    feed.observePackage(npx(OLD));
    expect(feed.mark.generation).toBe(0);
    feed.observePackage(npx(NEW));
    expect(feed.mark.generation).toBe(1);
    expect(feed.packages).toEqual([npx(NEW)]);
  });
});

/**
 * `command` started by the supervisor for a session: what it wrote to `<id>.package` once the
 * child's first message arrived, and the package the launcher told of.
 */
async function packageLineOf(command: string[]) {
  const told: ResolvedPackage[] = [];
  const supervisor = await startSupervisor(command);
  const launcher = new SupervisedLauncher({
    dir: supervisor.dir,
    maxLineBytes: 1024 * 1024,
    graceMs: 500,
    onPackage: (resolved) => told.push(resolved),
  });
  cleanups.push(() => launcher.close());
  const transport = await launcher.launch();
  cleanups.push(() => transport.close());
  transport.attach({
    onMessage: () => undefined,
    onBadLine: () => undefined,
    onClose: () => undefined,
  });
  const line = await waitFor('the package file', () => packageFile(supervisor.dir));
  return { line, told };
}

/** The content of the one `<id>.package` in `dir`, if there is one. */
async function packageFile(dir: string): Promise<string | undefined> {
  const file = (await readdir(dir)).find((name) => name.endsWith('.package'));
  return file === undefined ? undefined : readFile(join(dir, file), 'utf8');
}
