/**
 * The stdio pod, container by container, as local processes: `bridge-install` (init container)
 * fills the emptyDir, the server container runs `supervisedCommand()`, and the bridge container
 * runs `mcp-operator bridge` with the flags `bridgeArgs()` renders. Then an SDK client talks to
 * server-everything through all of it.
 */

import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import {
  bridgeArgs,
  BUSYBOX_FILE,
  installArgs,
  SUPERVISOR_FILE,
  type BridgeSettings,
} from '../../src/bridge/pod-contract.ts';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { BRIDGE_MOUNT_PATH } from '../../src/bridge/pod-contract.ts';
import { ASSET_DIR_ENV } from '../../src/bridge/install.ts';
import {
  BRIDGE_CONTAINER,
  INSTALL_CONTAINER,
  SERVER_CONTAINER,
} from '../../src/controller/render/containers.ts';
import { render } from '../../src/controller/render/render.ts';
import {
  connect,
  INITIALIZE,
  NODE,
  post,
  SERVERS,
  startTestBridge,
  tempDir,
  textOf,
} from './harness.ts';
import { waitFor, within } from '../support/wait.ts';
import { assetDir, emptyDir, markedCommand, markedProcesses, startSupervisor } from './pod.ts';
import { CLI } from '../support/cli.ts';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** Runs `mcp-operator bridge <args>` as its own process; resolves once it serves /readyz. */
async function startBridgeProcess(
  settings: BridgeSettings,
  { awaitReady = true } = {},
): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = spawn(NODE, [CLI, 'bridge', ...bridgeArgs(settings)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    return code;
  };
  stops.push(async () => void (await stop()));
  const base = `http://${settings.listen}`;
  if (awaitReady)
    await waitFor(
      'the bridge to be ready',
      async () => {
        const response = await fetch(`${base}/readyz`).catch(() => undefined);
        return response?.status === 200 || undefined;
      },
      { timeoutMs: 30_000 },
    );
  return { url: `${base}${settings.path}`, stop };
}

/** A PerSession bridge on a free loopback port, without a warm pool, in front of a supervisor. */
const perSession = async (supervisorDir: string): Promise<BridgeSettings> => ({
  listen: `127.0.0.1:${await freePort()}`,
  path: '/mcp',
  sessionMode: 'PerSession',
  maxSessions: 4,
  warmPool: 0,
  idleTimeout: '1m',
  requestTimeout: '30s',
  supervisorDir,
});

// Real processes all the way down: generous timeouts for a loaded machine.
describe('the stdio pod wiring', { timeout: 90_000 }, () => {
  it('bridge-install copies busybox and the supervisor into the volume', async () => {
    const volume = await tempDir('volume');
    const [, ...args] = installArgs(volume);
    const result = spawnSync(NODE, [CLI, 'bridge-install', ...args, '--from', await assetDir()], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect((await readdir(volume)).sort()).toEqual([BUSYBOX_FILE, SUPERVISOR_FILE]);
    expect((await stat(join(volume, BUSYBOX_FILE))).mode & 0o777).toBe(0o755);
    expect(spawnSync(join(volume, BUSYBOX_FILE), ['true']).status).toBe(0);
  });

  it('bridge-install fails clearly when the image has no busybox', async () => {
    const volume = await tempDir('volume');
    const empty = await tempDir('assets');
    const result = spawnSync(NODE, [CLI, 'bridge-install', '--to', volume, '--from', empty], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`cannot copy ${join(empty, BUSYBOX_FILE)}`);
  });

  it('serves server-everything through supervisor, FIFOs and the bridge process', async () => {
    const supervisor = await startSupervisor(SERVERS.everything);
    const port = await freePort();
    const bridge = await startBridgeProcess({
      listen: `127.0.0.1:${port}`,
      path: '/mcp',
      sessionMode: 'PerSession',
      maxSessions: 8,
      warmPool: 1,
      idleTimeout: '1m',
      requestTimeout: '30s',
      supervisorDir: supervisor.dir,
    });

    const clients = await Promise.all([
      connect(bridge.url),
      connect(bridge.url),
      connect(bridge.url),
    ]);
    const answers = await Promise.all(
      clients.map((client, i) =>
        client.callTool({ name: 'echo', arguments: { message: `client ${i}` } }),
      ),
    );
    expect(answers.map(textOf)).toEqual(['Echo: client 0', 'Echo: client 1', 'Echo: client 2']);
    const progress: number[] = [];
    await clients[0].callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
      undefined,
      {
        onprogress: (update) => progress.push(update.progress),
      },
    );
    expect(progress).toEqual([1, 2]);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/mcp_bridge_sessions 3/);
    await Promise.all(clients.map((client) => client.close()));

    // SIGTERM: the bridge drains, stops its children through the supervisor and exits 0.
    expect(await bridge.stop()).toBe(0);
    // Five children at least: the probe's, the three sessions', and the pool's last refill.
    const left = async () =>
      (await readdir(supervisor.dir)).filter((name) => /\.(in|out|pid)$/.test(name));
    await waitFor(
      'every child to be stopped and its FIFOs removed',
      async () => ((await left()).length === 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );
    expect(
      supervisor.log.filter((line) => /: (stopped|exited)/.test(line)).length,
    ).toBeGreaterThanOrEqual(5);
  });

  it('leaves nothing of a session closed through the bridge, even of a server deaf to SIGTERM and stdin EOF', async () => {
    // server-everything, made to ignore SIGTERM and the end of stdin, under `sh -c` as npx runs it.
    const [node, ...everything] = SERVERS.everything;
    const preload = fileURLToPath(new URL('./fixtures/ignore-term-and-eof.ts', import.meta.url));
    const { command, mark } = markedCommand([
      '/bin/sh',
      '-c',
      '"$@"; exit $?',
      'sh',
      node!,
      '--import',
      preload,
      ...everything,
    ]);
    const supervisor = await startSupervisor(command);
    const bridge = await startBridgeProcess(await perSession(supervisor.dir));
    const client = await connect(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'up' } }))).toBe(
      'Echo: up',
    );
    expect(await markedProcesses(mark)).toHaveLength(2); // sh and node: the session's server
    const transport = client.transport as unknown as {
      sessionId: string;
      terminateSession(): Promise<void>;
    };
    const sessionId = transport.sessionId;

    // DELETE: stdin closed, the bridge's 5 s grace, `stop`, SIGTERM, 1 s, SIGKILL to the group.
    await transport.terminateSession();
    await waitFor(
      'every process of the session to end',
      async () => ((await markedProcesses(mark)).length === 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    expect((await post(bridge.url, ping, { 'mcp-session-id': sessionId })).status).toBe(404);
    expect(await within('stopping the bridge', 20_000, bridge.stop())).toBe(0);
  });

  it('stops a child whose start was under way when SIGTERM came, and exits', async () => {
    // No supervisor yet: the session's start waits for the control FIFO (up to the bridge's
    // grace period), so SIGTERM lands while the child is being started, as it can with a busy
    // supervisor in a pod. The supervisor comes up once the bridge is shutting down.
    const dir = await emptyDir();
    const bridge = await startBridgeProcess(await perSession(dir), { awaitReady: false });
    const base = new URL(bridge.url).origin;
    await waitFor('the bridge to listen', async () =>
      (await fetch(`${base}/healthz`).catch(() => undefined))?.ok ? true : undefined,
    );
    const opening = post(bridge.url, INITIALIZE).catch(() => undefined);
    await sleep(500);
    const stopping = bridge.stop();
    await sleep(300);
    const { command, mark } = markedCommand([...SERVERS.everything]);
    await startSupervisor(command, { dir });

    expect(await within('stopping the bridge', 30_000, stopping)).toBe(0);
    await opening;
    await waitFor(
      'every child to end',
      async () => ((await markedProcesses(mark)).length === 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );
  });

  it('holds --max-sessions when many clients initialize at once', async () => {
    const supervisor = await startSupervisor(SERVERS.misbehaving());
    const bridge = await startTestBridge({ supervisorDir: supervisor.dir, maxSessions: 2 });
    await bridge.probed;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(bridge.url, INITIALIZE)),
    );
    const statuses = Object.groupBy(answers, (answer) => answer.status);
    expect({ ok: statuses[200]?.length, refused: statuses[503]?.length }).toEqual({
      ok: 2,
      refused: 18,
    });
    for (const answer of statuses[503]!) {
      const body = (await answer.json()) as { id: unknown; error: { message: string } };
      expect(body.id).toBe(1);
      expect(body.error.message).toMatch(/Too many sessions: the limit of 2 is reached/);
    }
    // The supervisor runs a child per session, none for the refused ones (the probe's has ended).
    const running = async () =>
      (await readdir(supervisor.dir)).filter((name) => name.endsWith('.pid')).length;
    await waitFor(
      "only the sessions' children to run",
      async () => (await running()) === 2 || undefined,
    );
  });

  it('runs the containers the controller renders for a stdio MCPServer', async () => {
    const port = await freePort();
    const [command, ...args] = SERVERS.everything;
    const objects = render(
      {
        apiVersion: 'mcp-operator.dev/v1alpha1',
        kind: 'MCPServer',
        metadata: { name: 'everything', namespace: 'default', uid: 'u1', generation: 1 },
        spec: {
          image: 'node:24-slim',
          transport: 'stdio',
          command: [command!],
          args,
          port,
          bridge: { warmPool: 1 },
        },
      },
      { image: 'mcp-operator:test' },
    );
    const deployment = objects.find((object) => object.kind === 'Deployment') as V1Deployment;
    const pod = deployment.spec!.template.spec!;
    const all = [...(pod.initContainers ?? []), ...pod.containers];
    const container = (name: string): V1Container => all.find((c) => c.name === name)!;

    // The emptyDir becomes a temp dir, `mcp-operator` this checkout's CLI, and the bridge binds
    // to loopback only (the pod binds to all interfaces for the Service).
    const volume = await emptyDir();
    const local = (argv: string[]): string[] =>
      argv
        .flatMap((arg) => (arg === 'mcp-operator' ? [NODE, CLI] : [arg]))
        .map((arg) => arg.replace(BRIDGE_MOUNT_PATH, volume).replace(/^0\.0\.0\.0:/, '127.0.0.1:'));
    const run = (c: V1Container, env: NodeJS.ProcessEnv = {}) => {
      const [program, ...rest] = local([...(c.command ?? []), ...(c.args ?? [])]);
      return spawn(program!, rest, {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, ...env },
      });
    };

    const install = run(container(INSTALL_CONTAINER), { [ASSET_DIR_ENV]: await assetDir() });
    expect((await once(install, 'exit'))[0]).toBe(0);
    const server = run(container(SERVER_CONTAINER));
    const bridge = run(container(BRIDGE_CONTAINER));
    for (const child of [bridge, server]) {
      const exited = once(child, 'exit');
      stops.push(async () => {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      });
    }
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      'the bridge to be ready',
      async () =>
        (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200 || undefined,
      { timeoutMs: 30_000 },
    );

    const client = await connect(`${base}/mcp`);
    expect(
      textOf(await client.callTool({ name: 'echo', arguments: { message: 'rendered' } })),
    ).toBe('Echo: rendered');
    await client.close();
  });
});
