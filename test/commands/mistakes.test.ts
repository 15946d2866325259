/**
 * The mistakes people make on their first day, each run through the entry points as built and
 * installed (`dist/cli.js` is `mcp-operator`, `dist/kubectl-mcp.js` is `kubectl-mcp`): each
 * gets one line that says what to do and an exit code, and never a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from '../support/build.ts';
import { freePort } from '../support/ports.ts';

let CLI: string;
let PLUGIN: string;
let dir: string;
let taken: Server;
let takenPort: number;
/** A kubeconfig whose cluster does not answer: nothing listens at its port. */
let unreachable: string;
let deadPort: number;

// The first test file to ask builds the CLI (npm run build); the others wait for it.
beforeAll(async () => {
  ({ cli: CLI, plugin: PLUGIN } = await builtCli());
  dir = await mkdtemp(join(tmpdir(), 'mistakes-'));
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
  deadPort = await freePort();
  unreachable = join(dir, 'unreachable');
  await writeFile(
    unreachable,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${deadPort}"}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: lab, context: {cluster: c, user: u}}]',
      'current-context: lab',
    ].join('\n'),
  );
}, 600_000);

afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** Runs an entry point to its end, with a bound: a mistake must not leave it running. */
function run(entry: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [entry, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '', HOME: dir, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** One line saying what is wrong (and at most one saying where to read more); no trace. */
function expectOneLine(stderr: string, message: RegExp) {
  expect(stderr).not.toMatch(/\n\s+at |"stack"|Error:/);
  const lines = stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(message);
  expect(lines.length).toBeLessThanOrEqual(2);
}

describe('mcp-operator bridge', () => {
  it.each([
    [
      ['--lsten', '127.0.0.1:1', '--', 'x'],
      /^mcp-operator bridge: unknown flag --lsten; did you mean --listen\?$/,
    ],
    [['--listen', '127.0.0.1:99999', '--', 'x'], /--listen: port 99999 is not from 0 to 65535$/],
    [
      ['--log-level', 'verbose', '--', 'x'],
      /--log-level: 'verbose' is not one of fatal, error, warn, info/,
    ],
    [['--peers', 'a:1', '--', 'x'], /^mcp-operator bridge: --peers needs --replica-address$/],
  ])('%j: exit 2', (args, message) => {
    const result = run(CLI, ['bridge', ...args]);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr, message);
  });

  it('a port in use: exit 1, naming the address and the flag', () => {
    const result = run(CLI, [
      'bridge',
      '--listen',
      `127.0.0.1:${takenPort}`,
      '--',
      process.execPath,
    ]);
    expect(result.code).toBe(1);
    expectOneLine(
      result.stderr,
      new RegExp(`^mcp-operator bridge: 127.0.0.1:${takenPort} is in use: .* with --listen$`),
    );
  });

  it('a command that does not exist: exit 1 at once, not a retry per session', () => {
    const result = run(CLI, ['bridge', '--listen', '127.0.0.1:0', '--', 'no-such-server']);
    expect(result.code).toBe(1);
    expectOneLine(result.stderr, /^mcp-operator bridge: no-such-server: command not found on PATH/);
    expect(result.stdout).toBe('');
  });
});

describe('mcp-operator controller', () => {
  it.each([
    [['--log-level', 'verbose'], /--log-level: 'verbose' is not one of/],
    [['--metrics-address', ':99999'], /--metrics-address: port 99999 is not from 0 to 65535$/],
    [['--namespace', 'a'], /unknown flag --namespace; did you mean --namespaces\?$/],
  ])('%j: exit 2', (args, message) => {
    const result = run(CLI, ['controller', ...args]);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr, message);
  });

  it('its metrics port in use: exit 1, naming the flag', () => {
    const result = run(CLI, [
      'controller',
      '--kubeconfig',
      unreachable,
      '--metrics-address',
      `127.0.0.1:${takenPort}`,
      '--no-leader-elect',
    ]);
    expect(result.code).toBe(1);
    expectOneLine(result.stderr, /is in use: .* with --metrics-address$/);
  });
});

describe('kubeconfig and cluster mistakes', () => {
  it('KUBECONFIG naming no file: says it was set', () => {
    const result = run(CLI, ['controller'], { KUBECONFIG: '/nonexistent' });
    expect(result.code).toBe(1);
    expectOneLine(result.stderr, /\$KUBECONFIG is \/nonexistent, and no such file exists/);
  });

  it('--kubeconfig naming no file', () => {
    const result = run(CLI, ['status', 'x', '--kubeconfig', '/nonexistent']);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr, /--kubeconfig \/nonexistent: no such file$/);
  });

  it('a malformed kubeconfig: the file is named', async () => {
    const broken = join(dir, 'broken');
    await writeFile(broken, 'clusters: [unclosed\n');
    const result = run(PLUGIN, ['diff', 'x', '--kubeconfig', broken]);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr, new RegExp(`^kubectl mcp diff: .*${broken} is not valid YAML: `));
  });

  it('an unreachable API server: the server, the context and the file are named', () => {
    const result = run(CLI, ['approve', 'x', '--kubeconfig', unreachable]);
    expect(result.code).toBe(2);
    expectOneLine(
      result.stderr,
      new RegExp(
        `cannot reach the Kubernetes API server https://127.0.0.1:${deadPort} \\(context lab of ${unreachable}\\): .*ECONNREFUSED.*; check that the cluster runs`,
      ),
    );
  });

  it.each(['outdated', 'export', 'export x'])(
    'an unreachable API server, %s: the server, the context and the file are named',
    (command) => {
      const args = command.split(' ');
      const result = run(PLUGIN, [...args, '--kubeconfig', unreachable]);
      expect(result.code).toBe(2);
      expectOneLine(
        result.stderr,
        new RegExp(
          `^kubectl mcp ${args[0]}: cannot reach the Kubernetes API server https://127.0.0.1:${deadPort} \\(context lab of ${unreachable}\\): .*ECONNREFUSED`,
        ),
      );
    },
  );

  it('a failing credential plugin: what we were doing, then its own words', async () => {
    const plugin = join(dir, 'plugin.mjs');
    await writeFile(
      plugin,
      'process.stderr.write("token expired: run cloud login\\n"); process.exit(1);',
    );
    const config = join(dir, 'exec');
    await writeFile(
      config,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${deadPort}"}}]`,
        `users: [{name: sso, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(plugin)}], interactiveMode: Never}}}]`,
        'contexts: [{name: prod, context: {cluster: c, user: sso}}]',
        'current-context: prod',
      ].join('\n'),
    );
    const result = run(CLI, ['status', 'x', '--kubeconfig', config]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /the credential plugin of user sso \(context prod, .*\) failed while connecting to https:\/\/127.0.0.1:\d+: .*token expired: run cloud login/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('review commands', () => {
  it('an unknown flag: did you mean', () => {
    const result = run(CLI, ['approve', 'x', '--digest']);
    expect(result.code).toBe(2);
    expectOneLine(
      result.stderr,
      /^mcp-operator approve: unknown flag --digest; did you mean --digests\?$/,
    );
  });
});
