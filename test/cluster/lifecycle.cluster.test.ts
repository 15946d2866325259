/**
 * The harness cleans up after itself: after a stop, and after its own process is killed, no
 * component process, listening port or working directory is left. These tests start control
 * planes of their own next to the shared one.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureBinaries } from './build.ts';
import { ControlPlane, type Component } from './control-plane.ts';
import { isAlive } from './processes.ts';
import { waitFor } from './testing.ts';

const execFileAsync = promisify(execFile);
const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

/**
 * The pids of processes listening on a port. A freed port can be taken at once by some other
 * process on this busy machine, so "nothing listens" is too strict; what must not happen is a
 * listener that belongs to the stopped control plane, recognised by its working directory on
 * the command line.
 */
async function listenersFrom(port: number, dir: string): Promise<string[]> {
  expect(dir, 'the control plane directory').toMatch(/^\/./);
  const { stdout } = await execFileAsync('ss', ['-Hltnp', `sport = :${port}`]);
  const pids = [...stdout.matchAll(/pid=(\d+)/g)].map((match) => match[1] ?? '');
  const commands = await Promise.all(
    pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
  );
  return commands.filter((command) => command.includes(dir));
}

async function expectAllGone(components: Component[], dir: string): Promise<void> {
  for (const { name, pid } of components) expect(isAlive(pid), `${name} (pid ${pid})`).toBe(false);
  for (const port of components.flatMap((c) => c.ports)) {
    expect(await listenersFrom(port, dir), `port ${port}`).toEqual([]);
  }
}

describe('ControlPlane', () => {
  it('leaves no process, port or directory behind after stop()', async () => {
    const binaries = await ensureBinaries();
    const started = Date.now();
    const plane = await ControlPlane.start({ binaries, nodes: 1, log: () => {} });
    console.log(`warm start: ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    const components = plane.components();
    expect(components.map((c) => c.name)).toEqual(COMPONENTS);
    expect(components.every((c) => isAlive(c.pid))).toBe(true);

    await plane.stop();

    await expectAllGone(components, plane.dir);
    expect(existsSync(plane.dir)).toBe(false);
  });

  it('cleans up when the process that started it is interrupted', async () => {
    const module = (name: string): string => JSON.stringify(join(import.meta.dirname, name));
    const script = `
      import { ensureBinaries } from ${module('build.ts')};
      import { ControlPlane } from ${module('control-plane.ts')};
      const plane = await ControlPlane.start({ binaries: await ensureBinaries(), nodes: 1, log: () => {} });
      console.log(JSON.stringify({ dir: plane.dir, components: plane.components() }));
      setInterval(() => {}, 60_000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const { dir, components } = JSON.parse(line) as { dir: string; components: Component[] };

    child.kill('SIGTERM');

    const [, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGTERM'); // the handler cleaned up, then let the signal end the process
    // Only the handler removes the directory; the kernel's parent-death signal cannot.
    expect(existsSync(dir)).toBe(false);
    await waitFor('every component to exit', () =>
      Promise.resolve(components.every((c) => !isAlive(c.pid))),
    );
    await expectAllGone(components, dir);
  });
});

// Fake nodes only: the shared control plane of this run holds the machine's one real node (the
// real node's own clean-up is node.machine.test.ts).
describe('npm run cluster', () => {
  let stateDir: string;
  const cli = async (...args: string[]): Promise<string> => {
    const { stdout } = await execFileAsync(
      process.execPath,
      [join(import.meta.dirname, 'cli.ts'), ...args],
      { env: { ...process.env, MCP_OPERATOR_CLUSTER_DIR: stateDir } },
    );
    return stdout;
  };
  const state = async (): Promise<{ pid: number; dir: string; components: Component[] }> =>
    JSON.parse(await readFile(join(stateDir, 'state.json'), 'utf8')) as {
      pid: number;
      dir: string;
      components: Component[];
    };

  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'mcp-operator-cli-test-'));
  });
  afterEach(async () => {
    await cli('down');
    await rm(stateDir, { recursive: true, force: true });
  });

  it('up prints a KUBECONFIG that kubectl can use, and down stops everything', async () => {
    const lastLine = (await cli('up', '--no-real-node')).trimEnd().split('\n').at(-1) ?? '';
    expect(lastLine).toMatch(/^KUBECONFIG=\//);
    const kubeconfig = lastLine.slice('KUBECONFIG='.length);
    const { dir, components: running } = await state();

    const { stdout } = await execFileAsync('kubectl', ['get', 'nodes', '--no-headers'], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    expect(stdout).toMatch(/^kwok-node-0\s+Ready/m);

    expect(await cli('down')).toContain('stopped');
    await expectAllGone(running, dir);
    expect(existsSync(kubeconfig)).toBe(false);
  });

  it('takes the components down with it when its daemon is killed', async () => {
    await cli('up', '--no-real-node');
    const { pid, dir, components: running } = await state();

    // SIGKILL runs no handler in the daemon: only the kernel's parent-death signal is left.
    process.kill(pid, 'SIGKILL');

    await waitFor('every component to exit', () =>
      Promise.resolve(running.every((c) => !isAlive(c.pid))),
    );
    await expectAllGone(running, dir);
  });
});
