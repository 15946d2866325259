/**
 * The real node cleans up after itself, through the cluster CLI as a developer uses it: after
 * `down`, after Ctrl-C (SIGINT), and after the daemon is killed outright (the next command cleans
 * up). Nothing may be left: no component, shim or container process, mount, network device,
 * iptables chain or lock.
 *
 * These tests need the machine to themselves (a kubelet owns the machine's pod cgroups, kube-proxy
 * its iptables chains), so they run in the `machine` project, before the run that holds the
 * shared real node.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cacheRoot, ensureBinaries } from './build.ts';
import { NODE_NETWORK } from './network.ts';
import { ON_REAL_NODE, PAUSE_IMAGE } from './node.ts';
import { isAlive } from './processes.ts';
import { waitFor } from './testing.ts';

const execFileAsync = promisify(execFile);
const CLI = join(import.meta.dirname, 'cli.ts');
let stateDir: string;
let kubectlBinary: string;

beforeAll(async () => {
  kubectlBinary = (await ensureBinaries(['kubectl'])).kubectl;
});

async function cluster(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [CLI, ...args], {
    env: { ...process.env, MCP_OPERATOR_CLUSTER_DIR: stateDir },
  });
  return stdout;
}

interface State {
  pid: number;
  dir: string;
  kubeconfig: string;
}

async function state(): Promise<State> {
  return JSON.parse(await readFile(join(stateDir, 'state.json'), 'utf8')) as State;
}

async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(kubectlBinary, ['--kubeconfig', kubeconfig, ...args]);
  return stdout;
}

/** Starts a pod on the real node (the pause image is always there) and waits until it runs. */
async function runPod(kubeconfig: string): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'sleeper', namespace: 'default' },
    spec: {
      ...ON_REAL_NODE,
      containers: [{ name: 'pause', image: PAUSE_IMAGE, imagePullPolicy: 'Never' }],
    },
  };
  await kubectl(
    kubeconfig,
    'run',
    'sleeper',
    `--image=${PAUSE_IMAGE}`,
    '--image-pull-policy=Never',
    `--overrides=${JSON.stringify(pod)}`,
  );
  await waitFor(
    'the pod to run on the real node',
    async () =>
      (await kubectl(kubeconfig, 'get', 'pod', 'sleeper', '-o', 'jsonpath={.status.phase}')) ===
      'Running',
    { timeoutMs: 60_000 },
  );
}

/** Processes whose command line names `dir` (components, containerd's shims). */
function processesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const pid of spawnSync('ls', ['/proc'], { encoding: 'utf8' }).stdout.split('\n')) {
    if (!/^\d+$/.test(pid) || !isAlive(Number(pid))) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(dir))
        found.push(`${pid} ${cmdline.replaceAll('\0', ' ').slice(0, 120)}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function containerProcesses(): number {
  const result = spawnSync(
    'sh',
    ['-c', 'cat $(find /sys/fs/cgroup/pids/kubepods -name cgroup.procs 2>/dev/null) 2>/dev/null'],
    {
      encoding: 'utf8',
    },
  );
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .filter((pid) => isAlive(Number(pid))).length;
}

function expectNothingLeft(dir: string): void {
  expect(processesUnder(dir), 'processes of the node').toEqual([]);
  expect(containerProcesses(), 'container processes').toBe(0);
  expect(readFileSync('/proc/self/mountinfo', 'utf8').includes(dir), 'mounts').toBe(false);
  expect(spawnSync('ip', ['link', 'show', NODE_NETWORK.bridge]).status, 'the bridge').not.toBe(0);
  const rules = spawnSync('iptables-save', { encoding: 'utf8' }).stdout;
  expect(rules.match(/^.*(KUBE-|MCPOP-).*$/gm) ?? [], 'iptables').toEqual([]);
  expect(existsSync(join(cacheRoot(), 'node', 'lock.json')), 'the node lock').toBe(false);
  expect(existsSync(dir), 'the working directory').toBe(false);
}

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'mcp-operator-machine-'));
});
afterEach(async () => {
  await cluster('down').catch(() => undefined);
  await rm(stateDir, { recursive: true, force: true });
});

describe('the real node', () => {
  it('leaves nothing behind after down', async () => {
    await cluster('up');
    const { dir, kubeconfig } = await state();
    await runPod(kubeconfig);
    expect(containerProcesses()).toBeGreaterThan(0);

    await cluster('down');

    expectNothingLeft(dir);
  });

  it('leaves nothing behind after Ctrl-C', async () => {
    await cluster('up');
    const { dir, kubeconfig, pid } = await state();
    await runPod(kubeconfig);

    process.kill(pid, 'SIGINT');
    await waitFor('the daemon to exit', () => Promise.resolve(!isAlive(pid)), {
      timeoutMs: 30_000,
    });

    expectNothingLeft(dir);
  });

  it('after the daemon is killed outright, the next command cleans up', async () => {
    await cluster('up');
    const { dir, kubeconfig, pid } = await state();
    await runPod(kubeconfig);

    process.kill(pid, 'SIGKILL');
    await waitFor('the daemon to die', () => Promise.resolve(!isAlive(pid)));
    // Nothing in a killed process runs: its containers outlive it, until the next command.
    expect(containerProcesses()).toBeGreaterThan(0);

    const out = await cluster('down');

    expect(out).toContain(`cleaning up after a real node whose run died (pid ${pid})`);
    expectNothingLeft(dir);
  });
});
