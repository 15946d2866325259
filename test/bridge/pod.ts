/**
 * The pod's wiring as local processes: an emptyDir (a temp dir) filled by `bridge-install`,
 * the server container's command (`supervisedCommand()`: the static busybox running
 * supervisor.sh), and the bridge talking to it over FIFOs.
 *
 * Needs Debian's `busybox-static` (/bin/busybox), or MCP_TEST_BUSYBOX pointing at a static
 * busybox. Tests fail with that message when it is missing: a skipped supervisor test would
 * hide the part of the pod that matters most.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { chmod, copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import {
  BUSYBOX_FILE,
  SUPERVISOR_FILE,
  SUPERVISOR_GRACE_ENV,
  supervisedCommand,
} from '../../src/bridge/pod-contract.ts';
import { installBridgeFiles } from '../../src/bridge/install.ts';
import { waitFor } from '../support/wait.ts';

export const SUPERVISOR_SCRIPT = fileURLToPath(
  new URL('../../src/bridge/supervisor.sh', import.meta.url),
);

export function busyboxPath(): string {
  const path = process.env.MCP_TEST_BUSYBOX ?? '/bin/busybox';
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: the supervisor tests need a static busybox. Install Debian's busybox-static ` +
        '(apt-get install busybox-static) or set MCP_TEST_BUSYBOX to a static busybox binary.',
    );
  }
  return path;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What our image holds under IMAGE_ASSET_DIR: busybox and the supervisor script. */
export async function assetDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-assets-'));
  await copyFile(busyboxPath(), join(dir, BUSYBOX_FILE));
  await copyFile(SUPERVISOR_SCRIPT, join(dir, SUPERVISOR_FILE));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh "emptyDir" with busybox and the supervisor installed, as the init container does. */
export async function emptyDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-emptydir-'));
  await chmod(dir, 0o777);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await installBridgeFiles(await assetDir(), dir);
  return dir;
}

export interface Supervisor {
  dir: string;
  process: ChildProcess;
  /** Lines the supervisor wrote to stderr (the container log). */
  log: string[];
  stop(): Promise<void>;
}

/**
 * Runs the server container's command, `supervisedCommand(command, args, dir)`, in its own
 * process group (so a test can signal the supervisor and everything it started).
 */
export async function startSupervisor(
  command: string[],
  options: { dir?: string; env?: NodeJS.ProcessEnv; wrap?: string[]; cwd?: string } = {},
): Promise<Supervisor> {
  const dir = options.dir ?? (await emptyDir());
  const [program, ...args] = [
    ...(options.wrap ?? []),
    ...supervisedCommand(command.slice(0, 1), command.slice(1), dir),
  ];
  const child = spawn(program!, args, {
    stdio: ['ignore', 'ignore', 'pipe'] as const,
    detached: true,
    env: { ...process.env, [SUPERVISOR_GRACE_ENV]: '1', ...options.env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  const log: string[] = [];
  child.stderr
    .setEncoding('utf8')
    .on('data', (chunk: string) => log.push(...chunk.split('\n').filter(Boolean)));
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  await waitFor(
    'the supervisor to be ready',
    () => log.some((line) => line.includes('ready to start')) || undefined,
  );
  return { dir, process: child, log, stop };
}

const MARK_ENV = 'MCP_TEST_MARK';

/**
 * The command run through `env` with a fresh mark in its environment, which everything it
 * starts inherits (and the supervisor, its monitors and timers do not): `markedProcesses(mark)`
 * then finds every process of that server, however deep.
 */
export function markedCommand(command: string[]): { command: string[]; mark: string } {
  const mark = randomUUID();
  return { command: ['env', `${MARK_ENV}=${mark}`, ...command], mark };
}

/** Pids of the live processes carrying `mark`, read from /proc (a zombie has no environment). */
export async function markedProcesses(mark: string): Promise<number[]> {
  const entry = `${MARK_ENV}=${mark}`;
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(entry)) pids.push(Number(name));
  }
  return pids;
}
