/**
 * `npm run cluster -- <command>`: a control plane for poking at by hand or from scripts.
 *
 *   up      start one in the background (builds binaries first if needed), with a real node
 *           when run as root (`--no-real-node` for fake nodes only); the last line printed is
 *           `KUBECONFIG=<path>`
 *   down    stop it and remove its files
 *   status  say whether it runs, with its components' pids and ports
 *   build   only build the binaries
 *   load IMAGE...
 *           copy images from the local Docker engine into the real node's containerd, as
 *           `kind load docker-image` does
 *   deploy  the README's quick start on the real node: build and load the images, install the
 *           chart, apply the examples (deploy.ts); prints the MCPServers' names, then
 *           `KUBECTL=<path>` (the kubectl built here, for a machine that has none)
 *
 * `up` starts a detached daemon (this file's internal `serve` command) that holds the control
 * plane and writes `state.json` once it is ready. State lives in `.cluster/` at the repository
 * root, or in $MCP_OPERATOR_CLUSTER_DIR.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureBinaries } from './build.ts';
import { ControlPlane, type Component } from './control-plane.ts';
import { deploy } from './deploy.ts';
import { cleanUpAbandonedNode, loadImages } from './node.ts';
import { waitFor } from '../support/wait.ts';
import { isAlive } from './processes.ts';

interface State {
  pid: number;
  /** The real node's containerd socket; absent without a real node. */
  containerdSocket?: string;
  /** The control plane's working directory: every component's command line names it. */
  dir: string;
  kubeconfig: string;
  server: string;
  components: Component[];
}

const stateDir =
  process.env.MCP_OPERATOR_CLUSTER_DIR ?? join(import.meta.dirname, '..', '..', '.cluster');
const stateFile = join(stateDir, 'state.json');
const runDir = join(stateDir, 'run');
const daemonLog = join(stateDir, 'daemon.log');

async function readState(): Promise<State | undefined> {
  try {
    return JSON.parse(await readFile(stateFile, 'utf8')) as State;
  } catch {
    return undefined;
  }
}

async function up(): Promise<number> {
  const running = await readState();
  if (running && isAlive(running.pid)) {
    console.log(`a control plane is already running (daemon pid ${running.pid})`);
    console.log(`KUBECONFIG=${running.kubeconfig}`);
    return 0;
  }
  await cleanUp(running);
  const realNode = wantsRealNode(process.argv.slice(3));
  if (realNode) await ensureSystemPackages();
  await ensureBinaries();
  await mkdir(stateDir, { recursive: true });
  const log = openSync(daemonLog, 'w');
  const daemon = spawn(
    process.execPath,
    [import.meta.filename, 'serve', ...(realNode ? [] : [NO_REAL_NODE])],
    {
      detached: true,
      stdio: ['ignore', log, log],
    },
  );
  closeSync(log);
  daemon.unref();
  const daemonPid = daemon.pid ?? 0;
  console.log(`starting the control plane (daemon pid ${daemonPid}, log ${daemonLog})`);
  try {
    const state = await waitFor(
      'the control plane',
      async () => {
        const state = await readState();
        return state?.pid === daemonPid ? state : undefined;
      },
      {
        timeoutMs: 180_000,
        intervalMs: 200,
        abort: () => {
          if (!isAlive(daemonPid)) throw new Error('the daemon exited');
        },
      },
    );
    console.log(`KUBECONFIG=${state.kubeconfig}`);
    return 0;
  } catch (error) {
    const logText = await readFile(daemonLog, 'utf8').catch(() => '');
    console.error(`${(error as Error).message}\n--- ${daemonLog} ---\n${logText.trimEnd()}`);
    await down();
    return 1;
  }
}

const NO_REAL_NODE = '--no-real-node';

/**
 * The Debian packages a real node and the images need (containerd, docker.io, …), installed
 * when missing, as `npm test` does: `npm start` on a fresh machine goes through here.
 */
async function ensureSystemPackages(): Promise<void> {
  const script = join(import.meta.dirname, '..', '..', 'scripts', 'ensure-system-packages.ts');
  const child = spawn(process.execPath, [script], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error('the Debian packages the real node needs are missing');
}

/** A real node needs root (containers, network devices, iptables); without it, fake nodes only. */
function wantsRealNode(args: readonly string[]): boolean {
  if (args.includes(NO_REAL_NODE)) return false;
  if (process.getuid?.() === 0) return true;
  console.log('not root: starting fake (kwok) nodes only; a real node needs root');
  return false;
}

/** The daemon: runs the control plane until SIGTERM or until a component dies. */
async function serve(): Promise<number> {
  const plane = await ControlPlane.start({
    binaries: await ensureBinaries(),
    dir: runDir,
    realNode: !process.argv.includes(NO_REAL_NODE),
    log: (line) => console.log(line),
  });
  const state: State = {
    pid: process.pid,
    ...(plane.containerdSocket !== undefined && { containerdSocket: plane.containerdSocket }),
    dir: plane.dir,
    kubeconfig: plane.kubeconfigPath,
    server: plane.server,
    components: plane.components(),
  };
  await writeFile(`${stateFile}.tmp`, JSON.stringify(state, null, 2));
  await rename(`${stateFile}.tmp`, stateFile);
  // SIGTERM (from `down`) is handled by processes.ts: it kills the components, runs the real
  // node's clean-up, removes runDir and ends this process. Until then, watch for a component
  // that dies on its own.
  const dead = await plane.whenAnyExits();
  console.error(
    `${dead.name} exited unexpectedly (see ${dead.logFile}); stopping the control plane`,
  );
  await plane.stop();
  return 1;
}

async function down(): Promise<number> {
  const state = await readState();
  if (state === undefined) {
    console.log('no control plane is running');
    return 0;
  }
  if (isAlive(state.pid)) process.kill(state.pid, 'SIGTERM');
  await cleanUp(state);
  console.log('control plane stopped');
  return 0;
}

/** Waits for the daemon and its components to go, forcing them after a while, and removes the files. */
async function cleanUp(state: State | undefined): Promise<void> {
  const pids = state ? [state.pid, ...state.components.map((c) => c.pid)] : [];
  try {
    await waitFor(
      'the control plane to stop',
      () => Promise.resolve(pids.some(isAlive) ? undefined : true),
      { timeoutMs: 15_000 },
    );
  } catch {
    for (const pid of pids.filter(isAlive)) process.kill(pid, 'SIGKILL');
  }
  cleanUpAbandonedNode(await ensureBinaries(), (line) => console.log(line));
  await rm(runDir, { recursive: true, force: true });
  await rm(stateFile, { force: true });
}

async function status(): Promise<number> {
  const state = await readState();
  if (state === undefined || !isAlive(state.pid)) {
    console.log('no control plane is running');
    return 1;
  }
  console.log(`control plane at ${state.server} (daemon pid ${state.pid})`);
  for (const c of state.components) {
    const ports = c.ports.length > 0 ? ` ports ${c.ports.join(',')}` : '';
    console.log(
      `  ${c.name.padEnd(24)} pid ${c.pid} ${isAlive(c.pid) ? 'running' : 'GONE'}${ports}`,
    );
  }
  if (state.containerdSocket !== undefined) console.log(`real node: ${state.containerdSocket}`);
  console.log(`KUBECONFIG=${state.kubeconfig}`);
  return 0;
}

async function build(): Promise<number> {
  await ensureBinaries();
  return 0;
}

async function load(): Promise<number> {
  const images = process.argv.slice(3);
  const state = await runningWithNode();
  if (state === undefined) return 1;
  if (images.length === 0) {
    console.error('usage: npm run cluster -- load IMAGE...');
    return 2;
  }
  await loadImages(state.containerdSocket, images, (line) => console.log(line));
  return 0;
}

/** The running control plane, with a real node; undefined (and says why) without. */
async function runningWithNode(): Promise<(State & { containerdSocket: string }) | undefined> {
  const state = await readState();
  if (state === undefined || !isAlive(state.pid)) {
    console.error('no control plane is running: start one with `npm run cluster -- up`');
    return undefined;
  }
  if (state.containerdSocket === undefined) {
    console.error('the running control plane has no real node (it was started without root)');
    return undefined;
  }
  return { ...state, containerdSocket: state.containerdSocket };
}

async function deployCommand(): Promise<number> {
  const state = await runningWithNode();
  if (state === undefined) return 1;
  const names = await deploy({
    kubeconfig: state.kubeconfig,
    containerdSocket: state.containerdSocket,
    log: (line) => console.error(line),
  });
  console.log(names.join(' '));
  console.log(`KUBECTL=${(await ensureBinaries(['kubectl'])).kubectl}`);
  return 0;
}

const COMMANDS: Record<string, () => Promise<number>> = {
  up,
  down,
  status,
  build,
  load,
  deploy: deployCommand,
  serve,
};

const command = COMMANDS[process.argv[2] ?? ''];
if (command === undefined) {
  console.error(
    'usage: npm run cluster -- up [--no-real-node] | down | status | build | load IMAGE... | deploy',
  );
  process.exitCode = 2;
} else {
  process.exitCode = await command().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  });
}
