/**
 * The Docker engine the image builds and the container tests use.
 *
 * `ensureDocker()` uses the engine that answers on the socket, or, when none does, starts
 * `dockerd` as a managed process (its own log file and pidfile under the cache directory) and
 * waits for it. It keeps Docker's default networking (the bridge network and port publishing)
 * that testcontainers relies on.
 *
 * Several test runs on one machine (two checkouts, or a run beside `npm run images`) share one
 * engine, so the engine that a run started belongs to every run using it: each run registers
 * as a user (a file named by its pid under the cache directory) before it looks for the engine,
 * and the last one out stops it — at `stop()`, or synchronously when the run is interrupted or
 * exits. A run killed outright leaves its file behind; the next run counts only live pids, and
 * so stops the engine when it is done. An engine that no run of ours started is never stopped.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot } from '../cluster/build.ts';
import { cleanUpOnExit, isAlive, startProcess, type ManagedProcess } from '../cluster/processes.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);

/**
 * The Docker CLI: Debian's docker.io client when present. A newer client elsewhere on PATH
 * defaults `docker build` to BuildKit, which needs the buildx plugin that is not packaged here.
 */
export const DOCKER_CLI = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const DOCKERD = '/usr/sbin/dockerd';

export interface Docker {
  /** The engine's unix socket. */
  readonly socket: string;
  /** True if this process started dockerd. */
  readonly startedHere: boolean;
  /** Where a dockerd started here logs. */
  readonly logFile?: string;
  stop(): Promise<void>;
}

/** The socket that `DOCKER_HOST` names (unix sockets only), else Docker's default. */
export function dockerSocket(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  if (host === undefined || host === '') return '/var/run/docker.sock';
  if (!host.startsWith('unix://')) {
    throw new Error(`DOCKER_HOST=${host}: only a local unix socket is supported`);
  }
  return host.slice('unix://'.length);
}

/** The engine's `/_ping` answer ("OK"), or undefined when nothing answers on the socket. */
export function ping(socket: string, timeoutMs = 2000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path: '/_ping', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

export interface EnsureDockerOptions {
  log?: (line: string) => void;
  /** How long a dockerd started here may take to answer. */
  startTimeoutMs?: number;
  /**
   * A private engine kept in this directory (its socket, pidfile, users, images and state) and
   * in a network namespace of its own, instead of the machine's: for tests of the engine's own
   * lifecycle beside the machine's engine, whose bridge (docker0) it must not touch.
   */
  home?: string;
}

/** Where an engine of ours keeps its pidfile, log and users, and how dockerd is started. */
interface EngineHome {
  dir: string;
  socket: string;
  /** dockerd's command line before its own flags. */
  command: readonly [string, ...string[]];
  args: readonly string[];
}

function engineHome(options: EnsureDockerOptions): EngineHome | undefined {
  const { home } = options;
  if (home !== undefined) {
    const own = (name: string) => join(home, name);
    return {
      dir: home,
      socket: own('docker.sock'),
      command: ['unshare', '--net', DOCKERD],
      args: ['--data-root', own('data'), '--exec-root', own('exec')],
    };
  }
  // DOCKER_HOST naming another socket is someone else's engine.
  const socket = dockerSocket();
  return socket === dockerSocket({})
    ? { dir: join(cacheRoot(), 'docker'), socket, command: [DOCKERD], args: [] }
    : undefined;
}

export async function ensureDocker(options: EnsureDockerOptions = {}): Promise<Docker> {
  const home = engineHome(options);
  if (home === undefined) {
    const socket = dockerSocket();
    if ((await ping(socket)) !== undefined) return unmanagedEngine(socket);
    throw new Error(`no Docker engine answers on ${socket} (DOCKER_HOST); start it first`);
  }
  const { socket } = home;
  // Registered before looking, so that a run leaving meanwhile sees a user and keeps the engine.
  const user = useEngine(home);
  if ((await ping(socket)) !== undefined) {
    if (managedEngine(home) !== undefined) return sharedEngine(home, false, user);
    leaveEngine(home, user);
    return unmanagedEngine(socket);
  }
  if (process.getuid?.() !== 0 || !existsSync(DOCKERD)) {
    leaveEngine(home, user);
    throw new Error(
      `no Docker engine answers on ${socket}, and this process cannot start one ` +
        `(${existsSync(DOCKERD) ? 'dockerd needs root' : `${DOCKERD} is missing: npm run system-packages`}). ` +
        'Start dockerd, or run as root.',
    );
  }
  try {
    await startDockerd(home, options);
  } catch (error) {
    await stopEngine(leaveEngine(home, user));
    throw error;
  }
  return sharedEngine(home, true, user);
}

/** An engine that no run of ours started: used, never stopped. */
function unmanagedEngine(socket: string): Docker {
  return { socket, startedHere: false, stop: () => Promise.resolve() };
}

const usersDir = (home: EngineHome) => join(home.dir, 'users');
const pidFile = (home: EngineHome) => join(home.dir, 'dockerd.pid');
const logFile = (home: EngineHome) => join(home.dir, 'dockerd.log');

let uses = 0;

/** Registers a use (a run's global set-ups each register one); returns its file. */
function useEngine(home: EngineHome): string {
  mkdirSync(usersDir(home), { recursive: true });
  uses += 1;
  const file = join(usersDir(home), `${process.pid}.${uses}`);
  writeFileSync(file, '');
  return file;
}

/**
 * The pid of the dockerd that a run of ours started, while it runs: a pidfile left by a killed
 * dockerd may name a pid that now belongs to another process, so its command line must name the
 * pidfile.
 */
function managedEngine(home: EngineHome): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile(home), 'utf8').trim());
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return isAlive(pid) && command.split('\0').includes(pidFile(home)) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Unregisters this run; when no live user is left, asks our dockerd to stop and returns its pid.
 * Synchronous, so that it also runs from an exit handler.
 */
function leaveEngine(home: EngineHome, use: string): number | undefined {
  rmSync(use, { force: true });
  for (const user of readdirSync(usersDir(home))) {
    if (isAlive(Number.parseInt(user, 10))) return undefined;
    rmSync(join(usersDir(home), user), { force: true });
  }
  const pid = managedEngine(home);
  if (pid !== undefined) process.kill(pid, 'SIGTERM');
  return pid;
}

/** Waits for a dockerd asked to stop: it stops its running containers first. */
async function stopEngine(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  try {
    await waitFor('dockerd to stop', () => !isAlive(pid), { timeoutMs: 30_000 });
  } catch {
    process.kill(pid, 'SIGKILL');
  }
}

function sharedEngine(home: EngineHome, startedHere: boolean, use: string): Docker {
  const forget = cleanUpOnExit(() => void leaveEngine(home, use));
  return {
    socket: home.socket,
    startedHere,
    logFile: logFile(home),
    stop: async () => {
      forget();
      await stopEngine(leaveEngine(home, use));
    },
  };
}

async function startDockerd(home: EngineHome, options: EnsureDockerOptions): Promise<void> {
  options.log?.(`starting dockerd (log: ${logFile(home)})`);
  const [command, ...prefix] = home.command;
  const proc = startProcess({
    name: 'dockerd',
    command,
    args: [...prefix, '--pidfile', pidFile(home), '--host', `unix://${home.socket}`, ...home.args],
    logFile: logFile(home),
    shared: true,
  });
  await waitForEngine(proc, home.socket, options.startTimeoutMs ?? 60_000);
}

async function waitForEngine(proc: ManagedProcess, socket: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answers = (await ping(socket)) !== undefined;
    // Another run may have started its dockerd a moment before ours, which then gave up.
    if (answers) return;
    if (proc.exit !== undefined) {
      throw new Error(`dockerd exited (${JSON.stringify(proc.exit)}); see ${proc.logFile}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `dockerd did not answer on ${socket} within ${timeoutMs} ms; see ${proc.logFile}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Runs the Docker CLI; rejects with its stderr. */
export async function docker(args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run(DOCKER_CLI, args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`docker ${args.join(' ')}: ${stderr || (error as Error).message}`, {
      cause: error,
    });
  }
}

/** A container's output so far, stdout and stderr interleaved as Docker stored them. */
export async function dockerLogs(id: string): Promise<string> {
  const { stdout, stderr } = await run(DOCKER_CLI, ['logs', id], { maxBuffer: 16 * 1024 * 1024 });
  return stdout + stderr;
}
