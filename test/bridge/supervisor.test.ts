/**
 * supervisor.sh under Debian's static busybox, driven through the same FIFOs the bridge uses
 * (SupervisedLauncher), with real child processes.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/bridge/budget.ts';
import { CONTROL_FIFO, SUPERVISOR_GRACE_ENV } from '../../src/bridge/pod-contract.ts';
import type { JsonRpcMessage } from '../../src/mcp/jsonrpc.ts';
import { SupervisedLauncher } from '../../src/bridge/child/supervised.ts';
import type { Transport } from '../../src/bridge/transport.ts';
import { NODE, SERVERS, tempDir } from './harness.ts';
import { waitFor, within } from '../support/wait.ts';
import {
  emptyDir,
  markedCommand,
  markedProcesses,
  startSupervisor,
  SUPERVISOR_SCRIPT,
} from './pod.ts';

const fixture = (name: string): string => new URL(`./fixtures/${name}`, import.meta.url).pathname;

function launcherFor(dir: string, graceMs = 500): SupervisedLauncher {
  return new SupervisedLauncher({ dir, maxLineBytes: 1024 * 1024, graceMs });
}

/** The bridge's accounting of what its children have not read; unbounded here. */
const account = new ByteBudget({ session: Infinity, bridge: Infinity }).account();

/** The pid a fixture announced in its first message. */
const announcedPid = (message: JsonRpcMessage | undefined): number =>
  (message as { params: { pid: number } } | undefined)!.params.pid;

/** No such process (not even a zombie: the supervisor reaped it). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** Attaches to a transport and collects what it receives. */
function collect(transport: Transport) {
  const messages: JsonRpcMessage[] = [];
  const closed: string[] = [];
  transport.attach({
    onMessage: (m) => messages.push(m),
    onBadLine: () => undefined,
    onClose: (r) => closed.push(r),
  });
  return { messages, closed };
}

const childFiles = async (dir: string) =>
  (await readdir(dir)).filter((name) => /^c.*\.(in|out|pid|group|package)$/.test(name));

describe('supervisor.sh', () => {
  it('passes the lint of shellcheck', () => {
    const result = spawnSync('shellcheck', ['-s', 'sh', SUPERVISOR_SCRIPT], { encoding: 'utf8' });
    if (result.error)
      throw new Error('shellcheck is missing: install it (apt-get install shellcheck)');
    expect(result.stdout).toBe('');
    expect(result.status).toBe(0);
  });

  it('starts a child per request and passes arguments verbatim, never through a shell', async () => {
    const tricky = [
      'two words',
      '$(touch /tmp/pwned)',
      '`id`',
      "it's",
      '"quoted"',
      '*',
      '; rm -rf /',
      '',
      'new\nline',
    ];
    const supervisor = await startSupervisor([NODE, fixture('print-argv.ts'), ...tricky]);
    const launcher = launcherFor(supervisor.dir);
    const [a, b] = await Promise.all([launcher.launch(), launcher.launch()]);
    const [seenA, seenB] = [collect(a), collect(b)];
    await waitFor('both children to announce themselves', () =>
      seenA.messages.length && seenB.messages.length ? true : undefined,
    );
    for (const seen of [seenA, seenB]) {
      expect(seen.messages[0]).toEqual({
        jsonrpc: '2.0',
        method: 'argv',
        params: { argv: tricky },
      });
    }
    expect(existsSync('/tmp/pwned')).toBe(false);
    expect(a.label).not.toBe(b.label);

    // Closing stdin ends each child; the supervisor reaps it and removes its FIFOs.
    await Promise.all([a.close(), b.close()]);
    expect(seenA.closed).toHaveLength(1);
    await waitFor('the FIFOs to be removed', async () =>
      (await childFiles(supervisor.dir)).length === 0 ? true : undefined,
    );
    await launcher.close();
  });

  it('stops a child that ignores SIGTERM with SIGKILL after the grace period', async () => {
    const supervisor = await startSupervisor([NODE, fixture('stubborn.ts')]);
    const launcher = launcherFor(supervisor.dir, 1_000);
    const transport = await launcher.launch();
    const seen = collect(transport);
    await waitFor('the child to start', () => seen.messages[0]);
    const pid = announcedPid(seen.messages[0]);

    const started = performance.now();
    await transport.close(); // stdin closed, 1 s, `stop`, SIGTERM, 1 s, SIGKILL
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThan(1_900);
    expect(elapsed).toBeLessThan(5_000);
    await waitFor('the child to be killed and reaped', () => (gone(pid) ? true : undefined));
    await waitFor('the log line', () => supervisor.log.find((line) => line.endsWith(': stopped')));
    await waitFor('the FIFOs to be removed', async () =>
      (await childFiles(supervisor.dir)).length === 0 ? true : undefined,
    );
    await launcher.close();
  });

  // `npm exec` -> `sh -c` -> `node`: the server the session talks to is a grandchild.
  const viaShell = (...command: string[]) => ['/bin/sh', '-c', '"$@"; exit $?', 'sh', ...command];

  it('stops the grandchildren of a server too, and the close of the session ends in time', async () => {
    const { command, mark } = markedCommand(viaShell(NODE, fixture('stubborn.ts')));
    const supervisor = await startSupervisor(command);
    const launcher = launcherFor(supervisor.dir, 1_000);
    const transport = await launcher.launch();
    const seen = collect(transport);
    await waitFor('the grandchild to start', () => seen.messages[0]);
    const running = await markedProcesses(mark);
    expect(running).toHaveLength(2); // sh and node
    expect(running).toContain(announcedPid(seen.messages[0]));

    // stdin closed, 1 s, `stop`: sh ends at SIGTERM, node ignores it until SIGKILL 1 s later.
    await within('closing the session', 10_000, transport.close());
    expect(seen.closed).toEqual(['exited (its stdout closed)']);
    expect(await markedProcesses(mark)).toEqual([]);
    await waitFor('the log line', () => supervisor.log.find((line) => line.endsWith(': stopped')));
    await waitFor('the FIFOs to be removed', async () =>
      (await childFiles(supervisor.dir)).length === 0 ? true : undefined,
    );
    await launcher.close();
  });

  it('ends what a server left running when it exits by itself, so its session ends', async () => {
    // sh starts node in the background (stdout the session's), then exits after one line.
    const { command, mark } = markedCommand([
      '/bin/sh',
      '-c',
      '"$@" & read -r line; exit 0',
      'sh',
      NODE,
      fixture('stubborn.ts'),
    ]);
    const supervisor = await startSupervisor(command);
    const launcher = launcherFor(supervisor.dir, 1_000);
    const transport = await launcher.launch();
    const seen = collect(transport);
    await waitFor('the background process to start', () => seen.messages[0]);
    transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, account);

    await waitFor('the session to end without a close', () => seen.closed[0], {
      timeoutMs: 10_000,
    });
    expect(await markedProcesses(mark)).toEqual([]);
    await waitFor('the log line', () =>
      supervisor.log.find((line) =>
        line.endsWith(': exited with status 0; ended the processes it left'),
      ),
    );
    await launcher.close();
  });

  it('stops every process of a server started with npx, so none is left to answer', async () => {
    // server-everything from this project's node_modules: npx needs no network for it.
    const { command, mark } = markedCommand([
      'npx',
      '-y',
      '@modelcontextprotocol/server-everything',
      'stdio',
    ]);
    const supervisor = await startSupervisor(command);
    const launcher = launcherFor(supervisor.dir, 10_000);
    const transport = await launcher.launch();
    const seen = collect(transport);
    transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }, account);
    await waitFor('the answer to a ping', () => seen.messages.find((m) => 'id' in m), {
      timeoutMs: 30_000,
    });
    expect((await markedProcesses(mark)).length).toBeGreaterThanOrEqual(3); // npm exec, sh, node

    // `stop` while the session still holds stdin open, as for a server that ignores its end.
    const id = transport.label.replace(/^fifo /, '');
    await writeFile(join(supervisor.dir, CONTROL_FIFO), `stop ${id}\n`);
    // The session's stdout closed: no process is left that could answer on it.
    await waitFor('the session to end', () => seen.closed[0], { timeoutMs: 10_000 });
    expect(await markedProcesses(mark)).toEqual([]);
    await launcher.close();
  });

  it('gives up on a process that left the process group, instead of waiting for it forever', async () => {
    // `setsid` (util-linux) puts node in a session of its own, out of the supervisor's reach.
    const escaped = viaShell('setsid', NODE, fixture('stubborn.ts'));
    const supervisor = await startSupervisor(escaped);
    const launcher = launcherFor(supervisor.dir, 500);
    const transport = await launcher.launch();
    const seen = collect(transport);
    await waitFor('the escaped process to start', () => seen.messages[0]);
    const pid = announcedPid(seen.messages[0]);
    try {
      // stdin closed, 0.5 s, `stop`, the group ends, then at most 2 × 0.5 s for the rest.
      await within('closing the session', 5_000, transport.close());
      expect(seen.closed[0]).toMatch(/still running after stop/);
      expect(gone(pid)).toBe(false);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
    await launcher.close();
  });

  it('runs the command from PATH even when busybox has an applet of that name', async () => {
    const bin = await tempDir('bin');
    // `cat` is a busybox applet; the server's own `cat` must win.
    await writeFile(
      join(bin, 'cat'),
      `#!/bin/sh\nexec "${NODE}" "${fixture('print-argv.ts')}" "$@"\n`,
    );
    await chmod(bin, 0o755);
    await chmod(join(bin, 'cat'), 0o755);
    const supervisor = await startSupervisor(['cat', 'from-path'], {
      env: { PATH: `${bin}:/usr/bin:/bin` },
    });
    const launcher = launcherFor(supervisor.dir);
    const transport = await launcher.launch();
    const seen = collect(transport);
    await waitFor('the child to announce itself', () => seen.messages[0]);
    expect(seen.messages[0]).toMatchObject({ params: { argv: ['from-path'] } });
    await transport.close();
    await launcher.close();
  });

  it('refuses to start when the command is not found, saying which', () => {
    const result = spawnSync(
      '/bin/busybox',
      ['sh', SUPERVISOR_SCRIPT, '--', 'no-such-server-command'],
      { encoding: 'utf8' },
    );
    expect(result.status).toBe(127);
    expect(result.stderr).toContain('command not found in PATH: no-such-server-command');
  });

  it('refuses a grace period that is not whole seconds, saying so', () => {
    const result = spawnSync('/bin/busybox', ['sh', SUPERVISOR_SCRIPT, '--', NODE], {
      encoding: 'utf8',
      env: { ...process.env, [SUPERVISOR_GRACE_ENV]: '0.5' },
    });
    expect(result.status).toBe(64);
    expect(result.stderr).toContain(
      "MCP_SUPERVISOR_GRACE_SECONDS must be a whole number of seconds, not '0.5'",
    );
  });

  it('ignores malformed control lines, including path tricks, and keeps serving', async () => {
    const supervisor = await startSupervisor(SERVERS.misbehaving());
    const control = join(supervisor.dir, CONTROL_FIFO);
    await writeFile(control, 'start ../escape\nstart a b\nexplode x\nstart\n\nstop ../../etc\n');
    await waitFor('the refusals in the log', () =>
      supervisor.log.filter((line) => line.includes('ignoring')).length >= 4 ? true : undefined,
    );
    expect(existsSync(join(supervisor.dir, '..', 'escape.in'))).toBe(false);

    const launcher = launcherFor(supervisor.dir);
    const transport = await launcher.launch();
    const seen = collect(transport);
    transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }, account);
    await waitFor('the ping answer', () => seen.messages[0]);
    await transport.close();
    await launcher.close();
  });

  it('keeps working when signals interrupt it and children that wait on their FIFOs', async () => {
    const supervisor = await startSupervisor(SERVERS.misbehaving());
    const launcher = launcherFor(supervisor.dir, 2_000);
    // Children exiting right away interrupt the supervisor's `read` with SIGCHLD.
    for (let i = 0; i < 5; i++) {
      const transport = await launcher.launch();
      await transport.close();
    }
    // Signals to the whole process group while a child waits in its FIFO open.
    const pending = launcher.launch();
    for (let i = 0; i < 20; i++) process.kill(-supervisor.process.pid!, 'SIGCHLD');
    process.kill(-supervisor.process.pid!, 'SIGWINCH');
    const transport = await pending;
    const seen = collect(transport);
    transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }, account);
    await waitFor('the ping answer', () => seen.messages[0]);
    expect(supervisor.process.exitCode).toBeNull();
    await transport.close();
    await launcher.close();
  });

  it('stops every child and exits when the container is stopped (SIGTERM)', async () => {
    const supervisor = await startSupervisor([NODE, fixture('stubborn.ts')]);
    const launcher = launcherFor(supervisor.dir);
    const transports = [await launcher.launch(), await launcher.launch()];
    const seen = transports.map(collect);
    await waitFor('both children to start', () =>
      seen.every((s) => s.messages.length > 0) ? true : undefined,
    );
    const pids = seen.map((s) => announcedPid(s.messages[0]));

    await supervisor.stop();
    expect(supervisor.process.exitCode).toBe(0);
    for (const pid of pids) expect(gone(pid)).toBe(true);
    await waitFor('the bridge side to see both children end', () =>
      seen.every((s) => s.closed.length === 1) ? true : undefined,
    );
    expect(await childFiles(supervisor.dir)).toEqual([]);
    await launcher.close();
  });

  it('creates FIFOs that a bridge running as another user of the pod group can open', async () => {
    if (process.getuid?.() !== 0) {
      throw new Error(
        'this test runs the server and the bridge as two users with setpriv: run it as root',
      );
    }
    const group = 2000;
    const supervisor = await startSupervisor(SERVERS.misbehaving(), {
      // The server and the bridge as different users sharing the fsGroup, as in the pod.
      wrap: ['setpriv', '--reuid=1001', '--regid=1001', `--groups=${group}`, '--'],
      dir: await fsGroupDir(group),
    });
    const control = statSync(join(supervisor.dir, CONTROL_FIFO));
    expect(control.uid).toBe(1001);
    expect(control.gid).toBe(group);
    expect(control.mode & 0o777).toBe(0o660);

    // The bridge side as uid 1002: open control, start a child, talk to it over its FIFOs.
    const script = `
      import { SupervisedLauncher } from ${JSON.stringify(new URL('../../src/bridge/child/supervised.ts', import.meta.url).pathname)};
      import { ByteBudget } from ${JSON.stringify(new URL('../../src/bridge/budget.ts', import.meta.url).pathname)};
      const launcher = new SupervisedLauncher({ dir: ${JSON.stringify(supervisor.dir)}, maxLineBytes: 65536, graceMs: 2000 });
      const t = await launcher.launch();
      t.attach({ onMessage: (m) => { console.log(JSON.stringify(m)); void t.close().then(() => launcher.close()); }, onBadLine() {}, onClose() {} });
      t.send({ jsonrpc: '2.0', id: 7, method: 'ping' }, new ByteBudget({ session: 1e6, bridge: 1e6 }).account());`;
    const result = spawnSync(
      'setpriv',
      [
        '--reuid=1002',
        '--regid=1002',
        `--groups=${group}`,
        '--',
        NODE,
        '--input-type=module',
        '-e',
        script,
      ],
      {
        encoding: 'utf8',
        timeout: 15_000,
      },
    );
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
  });
});

/** What the kubelet makes of an emptyDir with an fsGroup: group-owned, setgid, group-writable. */
async function fsGroupDir(group: number): Promise<string> {
  const dir = await emptyDir();
  spawnSync('chgrp', ['-R', String(group), dir]);
  await chmod(dir, 0o2770);
  return dir;
}
