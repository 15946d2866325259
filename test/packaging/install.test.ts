/**
 * Installing the CLI as the README says, into a clean prefix: `npm pack` (which builds) and
 * `npm install -g` of the tarball, and `npm install -g .` of the built clone. Each installed
 * command answers --version and help from the prefix's bin, on a PATH with Node and nothing of
 * this repository.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  version: string;
};

let dir: string;

function sh(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { cwd: REPO, env, encoding: 'utf8', timeout: 800_000 });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return result.stdout;
}

/** A PATH with the prefix's bin and the Node that runs the tests, and the system's own. */
const pathWith = (bin: string) =>
  [bin, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter);

function installed(prefix: string, command: string, args: string[]) {
  const bin = join(prefix, 'bin');
  const result = spawnSync(join(bin, command), args, {
    cwd: dir,
    env: { PATH: pathWith(bin), HOME: dir },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'install-'));
}, 600_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
}, 120_000);

function expectWorking(prefix: string) {
  expect(installed(prefix, 'mcp-operator', ['--version'])).toMatchObject({
    code: 0,
    stdout: `mcp-operator ${version}\n`,
  });
  expect(installed(prefix, 'kubectl-mcp', ['--version'])).toMatchObject({
    code: 0,
    stdout: `kubectl-mcp ${version}\n`,
  });
  const help = installed(prefix, 'mcp-operator', ['help', 'bridge']);
  expect([help.code, help.stdout]).toEqual([
    0,
    expect.stringMatching(/^Usage: mcp-operator bridge/),
  ]);
  const plugin = installed(prefix, 'kubectl-mcp', ['help']);
  expect([plugin.code, plugin.stdout]).toEqual([0, expect.stringMatching(/^Usage: kubectl mcp /)]);
  // A command that reads the cluster says in one line that there is none to read.
  const status = installed(prefix, 'kubectl-mcp', ['status', 'x']);
  expect(status.code).toBe(2);
  expect(status.stderr).toMatch(/^kubectl mcp status: no usable Kubernetes client configuration/);
}

// npm pack builds (tsc, some two minutes on a loaded machine) and the install fetches the
// dependencies (from npm's cache when it has them).
describe('installing from a clone', { timeout: 900_000 }, () => {
  it('npm pack builds a tarball that installs and runs in a clean prefix', () => {
    const packed = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', dir])) as {
      filename: string;
    }[];
    const prefix = join(dir, 'from-tarball');
    sh('npm', [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      join(dir, packed[0]!.filename),
    ]);
    expectWorking(prefix);
  });

  it('npm install -g . installs the built clone', () => {
    const prefix = join(dir, 'from-clone');
    sh('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '.']);
    expectWorking(prefix);
  });
});
