/**
 * Child processes that cannot outlive the process that started them.
 *
 * Three layers, because a test run can end in three ways:
 * - a normal stop: `stopProcess` sends SIGTERM to the child's process group, then SIGKILL;
 * - the parent is interrupted or exits early: handlers for SIGINT/SIGTERM/SIGHUP and `exit` kill
 *   every live group synchronously and remove the registered directories;
 * - the parent is killed outright (SIGKILL, OOM): nothing in it runs, so each child is started
 *   through `setpriv --pdeathsig KILL`, which asks the kernel to kill it when its parent dies
 *   (prctl PR_SET_PDEATHSIG; setpriv is part of util-linux).
 *
 * The one exception is a process started `shared` (the Docker engine, which several test runs on
 * one machine use at once): its users stop it, the last one out (test/images/docker.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Set once the process has exited. */
  exit: Exit | undefined;
  readonly exited: Promise<Exit>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: readonly string[];
  /** stdout and stderr are appended here. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Started for every test run on the machine, not only this one (the Docker engine): it may
   * outlive this process, so no pdeathsig and no kill on exit; its users stop it.
   */
  shared?: boolean;
}

/*
 * Process-wide on purpose: signals and `exit` are process-wide, and a crash handler has to reach
 * every child no matter which harness instance started it.
 */
const live = new Set<ManagedProcess>();
const directories = new Set<string>();
const cleanUps = new Set<() => void>();
let handlersInstalled = false;

const setpriv = lazy(() => spawnSync('setpriv', ['--help'], { stdio: 'ignore' }).status === 0);

export function startProcess(options: StartOptions): ManagedProcess {
  installHandlers();
  const log = openSync(options.logFile, 'a');
  const [command, args] =
    setpriv() && options.shared !== true
      ? ['setpriv', ['--pdeathsig', 'KILL', '--', options.command, ...options.args]]
      : [options.command, [...options.args]];
  let child: ChildProcess;
  try {
    // detached: the child leads its own process group, so one kill reaches all it may fork.
    child = spawn(command, args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: options.env ?? process.env,
    });
  } finally {
    closeSync(log);
  }
  if (child.pid === undefined) throw new Error(`cannot start ${options.name} (${options.command})`);
  const managed: ManagedProcess = {
    name: options.name,
    pid: child.pid,
    logFile: options.logFile,
    exit: undefined,
    exited: new Promise<Exit>((resolve) => {
      child.on('exit', (code, signal) => {
        managed.exit = { code, signal };
        live.delete(managed);
        resolve(managed.exit);
      });
    }),
  };
  if (options.shared === true) child.unref();
  else live.add(managed);
  return managed;
}

/** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when the process has exited. */
export async function stopProcess(proc: ManagedProcess, graceMs = 3000): Promise<void> {
  if (proc.exit) return;
  signalGroup(proc.pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(proc.pid, 'SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
  // A component may leave children in its group; none of ours do, but the group must go too.
  signalGroup(proc.pid, 'SIGKILL');
}

/** SIGKILL to the process group, as an OOM kill would; resolves when the process has exited. */
export async function killProcess(proc: ManagedProcess): Promise<void> {
  if (proc.exit) return;
  signalGroup(proc.pid, 'SIGKILL');
  await proc.exited;
}

/** Registers a directory to remove if the process is interrupted before it is cleaned up. */
export function removeOnExit(dir: string): void {
  installHandlers();
  directories.add(dir);
}

export function forgetDirectory(dir: string): void {
  directories.delete(dir);
}

/**
 * Registers a synchronous clean-up (state a process leaves outside its directory, such as network
 * devices) to run, after every child is killed, if the process is interrupted. Returns the
 * function that unregisters it once the normal stop has done the same.
 */
export function cleanUpOnExit(cleanUp: () => void): () => void {
  installHandlers();
  cleanUps.add(cleanUp);
  return () => cleanUps.delete(cleanUp);
}

/** True while a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const statFile = `/proc/${pid}/stat`;
  if (existsSync('/proc/self/stat')) {
    try {
      // Field 3 is the state; the command name before it is in parentheses and may hold spaces.
      const stat = readFileSync(statFile, 'utf8');
      return stat[stat.lastIndexOf(')') + 2] !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

function cleanUpNow(): void {
  for (const proc of live) signalGroup(proc.pid, 'SIGKILL');
  for (const cleanUp of cleanUps) cleanUp();
  cleanUps.clear();
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  directories.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  cleanUpNow();
  // Our listener replaced Node's default action (exit); if nobody else handles the signal,
  // restore the default and re-raise it so the process still ends as the sender meant.
  if (process.listenerCount(signal) === 1) {
    uninstallHandlers();
    process.kill(process.pid, signal);
  }
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', cleanUpNow);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstallHandlers(): void {
  handlersInstalled = false;
  process.off('exit', cleanUpNow);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

/** Runs `command` with `input` on its stdin; fails with its stderr when it exits non-zero. */
export async function runWithInput(
  command: string,
  args: readonly string[],
  input: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'pipe'], env });
  const stderr = collect(child.stderr);
  child.stdin.end(input);
  if ((await exitCode(child)) !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${await stderr}`);
  }
}

/** Everything a stream carries until it ends, as text. */
export function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.on('end', () => resolve(text));
  });
}

export function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
}

function lazy<T>(compute: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: compute() }).v;
}
