/**
 * Test runs on one machine share the Docker engine: the run that started it may end first, and
 * the engine stays for the others; the last one out stops it, whether it stops normally, is
 * interrupted, or was killed outright.
 *
 * Needs the machine to itself (no Docker engine running), as the `machine` project does: it
 * starts and stops the machine's engine.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cacheRoot } from '../cluster/build.ts';
import { isAlive } from '../cluster/processes.ts';
import { waitFor } from '../support/wait.ts';
import { dockerSocket, ping } from './docker.ts';

const USER = join(import.meta.dirname, 'engine-user.ts');
const users: ChildProcessWithoutNullStreams[] = [];

interface EngineUser {
  child: ChildProcessWithoutNullStreams;
  /** `started` or `joined`. */
  how: string;
  send(line: 'stop' | 'exit'): Promise<void>;
}

async function use(): Promise<EngineUser> {
  const child = spawn(process.execPath, [USER], { stdio: ['pipe', 'pipe', 'pipe'] });
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

const answers = async () => (await ping(dockerSocket())) !== undefined;

function enginePid(): number {
  return Number(readFileSync(join(cacheRoot(), 'docker', 'dockerd.pid'), 'utf8').trim());
}

beforeAll(async () => {
  if (await answers()) {
    throw new Error('a Docker engine already runs: this test needs the machine to itself');
  }
});

afterEach(() => {
  for (const child of users.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
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
  });

  it('is stopped by an interrupted run when it is the last user', async () => {
    const only = await use();
    expect(only.how).toBe('started');
    const pid = enginePid();
    await only.send('exit');
    await waitFor('the engine to stop', () => !isAlive(pid), { timeoutMs: 30_000 });
    expect(await answers()).toBe(false);
  });
});
