/**
 * The next steps `mcp-operator dev` prints, run as printed from a shell that has only the
 * machine's own PATH: none of the project's node_modules/.bin (so `node` is whatever the machine
 * has, v20 on some, which cannot run src/*.ts) and none of the harness's binaries.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewSteps, watchSteps, writeCommands } from '../../src/commands/next-steps.ts';
import { CLI } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';

const PLUGIN = join(import.meta.dirname, '..', '..', 'src', 'kubectl-mcp.ts');

/** PATH without what npm and the test harness put on it. */
const MACHINE_PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.includes('node_modules') && !dir.includes('mcp-operator'))
  .join(delimiter);

let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "next steps 'quoted' "));
  // A cluster that does not answer: the commands must run, and say so in their own words.
  const port = await freePort();
  kubeconfig = join(dir, 'kube config');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:' + port + '"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]',
      'current-context: x',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `script` in sh with the machine's PATH only. */
function plainShell(script: string) {
  const result = spawnSync('/bin/sh', ['-c', script], {
    env: { PATH: MACHINE_PATH, HOME: dir },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The printed lines a user can paste that end by themselves (not `kubectl … -w`, `logs -f`). */
function pasteable(printed: string): string {
  return printed
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('export ') || line.startsWith('mcp-operator'))
    .join('\n');
}

/** The commands dev writes for this checkout, with `kubectl` for a shell that has none. */
function commands(sub: string, kubectl?: string) {
  return writeCommands({
    dir: join(dir, sub),
    node: process.execPath,
    cli: CLI,
    plugin: PLUGIN,
    kubectl,
    path: MACHINE_PATH,
  });
}

describe('the next steps dev prints', () => {
  it('run as printed from a plain shell: approve and diff reach the cluster on Node 24', async () => {
    const steps = reviewSteps({ kubeconfig, bin: await commands('bin') }, 'everything');
    expect(steps).not.toMatch(/node src\/cli\.ts/);
    const script = pasteable(steps);
    expect(script.split('\n').filter((l) => l.startsWith('mcp-operator '))).toEqual([
      expect.stringMatching(/^mcp-operator approve everything --apply +# approve the tools/),
      expect.stringMatching(/^mcp-operator diff everything +# after a change/),
    ]);
    // The shell's own node (if any) is not the one the commands run on.
    expect(plainShell('command -v node || true').stdout.trim()).not.toBe(process.execPath);
    // Each command on its own, after the setup lines, so that each exit code is its own.
    const setup = script
      .split('\n')
      .filter((l) => !l.startsWith('mcp-operator '))
      .join('\n');
    for (const command of ['approve', 'diff']) {
      const run = plainShell(`${setup}\nmcp-operator ${command} everything`);
      expect(run.stderr).not.toMatch(/Unknown file extension|not found/);
      expect(run.stderr).toMatch(new RegExp(`^mcp-operator ${command}: .*127\\.0\\.0\\.1`));
      expect(run.code).toBe(2);
    }
    const plugin = plainShell(`${setup}\nkubectl-mcp status everything`);
    expect([plugin.code, plugin.stderr]).toEqual([
      2,
      expect.stringMatching(/^kubectl mcp status: /),
    ]);
  });

  it('link the local cluster’s kubectl only when the shell has none', async () => {
    const built = join(dir, 'built', 'kubectl');
    await mkdir(dirname(built));
    await writeFile(built, '#!/bin/sh\necho "built kubectl $*"\n');
    await chmod(built, 0o755);
    const write = (sub: string, path: string) =>
      writeCommands({
        dir: join(dir, sub),
        node: 'n',
        cli: 'c',
        plugin: 'p',
        kubectl: built,
        path,
      });
    // A shell with no kubectl: the printed PATH line brings the built one.
    const linked = await write('linked', join(dir, 'empty'));
    const setup = watchSteps({ bin: linked }).split('\n')[0]!.trim();
    const run = spawnSync('/bin/sh', ['-c', `${setup}\nkubectl get mcpservers -A`], {
      env: { PATH: join(dir, 'empty') },
      encoding: 'utf8',
    });
    expect(run.stdout).toBe('built kubectl get mcpservers -A\n');
    // A shell with its own kubectl keeps it.
    const kept = await write('kept', dirname(built));
    expect(existsSync(join(kept, 'kubectl'))).toBe(false);
  });
});
