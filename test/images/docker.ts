/**
 * The Docker engine the image builds and the container tests use.
 *
 * `ensureDocker()` uses the engine that answers on the socket, or, when none does, starts
 * `dockerd` as a managed process (its own log file and pidfile under the cache directory) and
 * waits for it. `stop()` stops dockerd only if this process started it. A dockerd started here
 * cannot outlive this process: test/cluster/processes.ts puts it in its own process group under
 * `setpriv --pdeathsig KILL` and kills it on Ctrl-C or exit. It keeps Docker's default networking
 * (the bridge network and port publishing) that testcontainers relies on.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot } from '../cluster/build.ts';
import { startProcess, stopProcess, type ManagedProcess } from '../cluster/processes.ts';

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
  /** True if this process started dockerd (and `stop()` will stop it). */
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
}

export async function ensureDocker(options: EnsureDockerOptions = {}): Promise<Docker> {
  const socket = dockerSocket();
  if ((await ping(socket)) !== undefined) {
    return { socket, startedHere: false, stop: () => Promise.resolve() };
  }
  if (socket !== dockerSocket({})) {
    throw new Error(`no Docker engine answers on ${socket} (DOCKER_HOST); start it first`);
  }
  if (process.getuid?.() !== 0 || !existsSync(DOCKERD)) {
    throw new Error(
      `no Docker engine answers on ${socket}, and this process cannot start one ` +
        `(${existsSync(DOCKERD) ? 'dockerd needs root' : `${DOCKERD} is missing: npm run system-packages`}). ` +
        'Start dockerd, or run as root.',
    );
  }
  return startDockerd(socket, options);
}

async function startDockerd(socket: string, options: EnsureDockerOptions): Promise<Docker> {
  const dir = join(cacheRoot(), 'docker');
  await mkdir(dir, { recursive: true });
  const logFile = join(dir, 'dockerd.log');
  options.log?.(`starting dockerd (log: ${logFile})`);
  const proc = startProcess({
    name: 'dockerd',
    command: DOCKERD,
    args: ['--pidfile', join(dir, 'dockerd.pid'), '--host', `unix://${socket}`],
    logFile,
  });
  try {
    await waitForEngine(proc, socket, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await stopProcess(proc, 15_000);
    throw error;
  }
  return {
    socket,
    startedHere: true,
    logFile,
    // dockerd stops its running containers on SIGTERM before it exits; give it the time to.
    stop: () => stopProcess(proc, 30_000),
  };
}

async function waitForEngine(proc: ManagedProcess, socket: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exit !== undefined) {
      throw new Error(`dockerd exited (${JSON.stringify(proc.exit)}); see ${proc.logFile}`);
    }
    if ((await ping(socket)) !== undefined) return;
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
