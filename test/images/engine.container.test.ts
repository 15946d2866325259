/**
 * Test runs on one machine share the Docker engine: the run that started it may end first, and
 * the engine stays for the others; the last one out stops it, whether it stops normally, is
 * interrupted, or was killed outright.
 *
 * Each test has a private engine of its own (its own socket, state and pidfile, in a network
 * namespace of its own), beside the machine's engine that the other container tests use: the
 * machine's bridge must still be there afterwards.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlive } from '../cluster/processes.ts';
import { waitFor } from '../support/wait.ts';
import { ping } from './docker.ts';

const USER = join(import.meta.dirname, 'engine-user.ts');
const users: ChildProcessWithoutNullStreams[] = [];
let home: string;

interface EngineUser {
  child: ChildProcessWithoutNullStreams;
  /** `started` or `joined`. */
  how: string;
  send(line: 'stop' | 'exit'): Promise<void>;
}

async function use(): Promise<EngineUser> {
  const child = spawn(process.execPath, [USER, home], { stdio: ['pipe', 'pipe', 'pipe'] });
  users.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done === true) throw new Error('the engine user exited before the engine answered');
  return {
    child,
    how: first.value,
    async send(line) {
      child.stdin.write(`${line}\n`);
      await once(child, 'exit');
    },
  };
}

const answers = async () => (await ping(join(home, 'docker.sock'))) !== undefined;

function enginePid(): number {
  return Number(readFileSync(join(home, 'dockerd.pid'), 'utf8').trim());
}

/** The machine engine's bridge (its containers' network), present or not. */
const machineBridge = () => existsSync('/sys/class/net/docker0');
let bridgeBefore: boolean;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engine-'));
  bridgeBefore = machineBridge();
});

afterEach(async () => {
  for (const child of users.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  const pid = Number(readFileSync(join(home, 'dockerd.pid'), { encoding: 'utf8', flag: 'a+' }));
  if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(home, { recursive: true, force: true });
});

describe('the shared Docker engine', () => {
  it('outlives the run that started it while another uses it, and stops with the last user', async () => {
    const first = await use();
    expect(first.how).toBe('started');
    const pid = enginePid();
    const second = await use();
    const third = await use();
    expect([second.how, third.how]).toEqual(['joined', 'joined']);

    await first.send('exit');
    expect(await answers()).toBe(true);

    third.child.kill('SIGKILL');
    await once(third.child, 'exit');
    expect(await answers()).toBe(true);

    await second.send('stop');
    expect(isAlive(pid)).toBe(false);
    expect(await answers()).toBe(false);
    expect(machineBridge()).toBe(bridgeBefore);
  });

  it('is stopped by an interrupted run when it is the last user', async () => {
    const only = await use();
    expect(only.how).toBe('started');
    const pid = enginePid();
    await only.send('exit');
    await waitFor('the engine to stop', () => !isAlive(pid), { timeoutMs: 30_000 });
    expect(await answers()).toBe(false);
    expect(machineBridge()).toBe(bridgeBefore);
  });
});
