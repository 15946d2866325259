/**
 * Local mode: the bridge spawns the server command itself (`mcp-operator bridge -- <command>`),
 * on a laptop or in tests. stdin/stdout carry MCP; stderr is passed through to ours.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { BRIDGE_TOKEN_ENV } from '../pod-contract.ts';
import { StreamTransport, type Launcher, type Transport } from '../transport.ts';

export interface SpawnOptions {
  command: string;
  args: readonly string[];
  maxLineBytes: number;
  /** How long to wait after closing stdin, then after SIGTERM, before escalating. */
  graceMs: number;
  env?: NodeJS.ProcessEnv;
}

class ChildProcessTransport extends StreamTransport {
  readonly label: string;
  readonly #child: ChildProcess;
  readonly #graceMs: number;
  readonly #exited: Promise<void>;

  constructor(child: ChildProcess, options: SpawnOptions) {
    super(child.stdout!, child.stdin!, options.maxLineBytes);
    this.#child = child;
    this.#graceMs = options.graceMs;
    this.label = `pid ${child.pid}`;
    // 'close' comes after 'exit' and after stdout has ended, so every line has been decoded.
    // Not events.once: that would reject on the 'error' of a command that cannot be spawned.
    this.#exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        this.closed(signal ? `killed by ${signal}` : `exited with code ${String(code)}`);
        resolve();
      });
    });
  }

  /**
   * The shutdown MCP prescribes for stdio (2025-11-25 basic/lifecycle "Shutdown"): close the
   * child's stdin, wait, SIGTERM, wait, SIGKILL. The signals go to the child's process group:
   * with `npx` or a shell the server is a grandchild, which would outlive its parent and keep
   * the session's stdout open. A process that left the group is not waited for forever.
   */
  async close(): Promise<void> {
    this.endInput();
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      if (await this.#exitsWithin(this.#graceMs)) return;
      this.#signalGroup(signal);
    }
    if (!(await this.#exitsWithin(this.#graceMs))) {
      this.closed('a process of the server left its process group and still holds its stdout');
    }
  }

  #signalGroup(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    try {
      if (pid !== undefined) process.kill(-pid, signal);
    } catch {
      // The group is gone; the child may still be reaped by Node.
      this.#child.kill(signal);
    }
  }

  async #exitsWithin(ms: number): Promise<boolean> {
    if (this.isClosed) return true;
    const timer = new AbortController();
    const exited = await Promise.race([
      this.#exited.then(() => true),
      sleep(ms, false, { signal: timer.signal }).catch(() => false),
    ]);
    timer.abort();
    return exited;
  }
}

export class SpawnLauncher implements Launcher {
  readonly #options: SpawnOptions;

  constructor(options: SpawnOptions) {
    this.#options = options;
  }

  async launch(): Promise<Transport> {
    const env = { ...(this.#options.env ?? process.env) };
    // The clients' bearer token is the bridge's secret, not the server's.
    delete env[BRIDGE_TOKEN_ENV];
    // detached: the child leads a process group of its own, which close() signals as a whole.
    const child = spawn(this.#options.command, this.#options.args, {
      stdio: ['pipe', 'pipe', 'inherit'],
      env,
      detached: true,
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    // Later errors (a failed kill) also end in 'close', which the transport reports.
    child.on('error', () => undefined);
    const transport = new ChildProcessTransport(child, this.#options);
    await spawned;
    return transport;
  }

  async close(): Promise<void> {
    // Nothing held: every child belongs to the session it was handed to.
  }
}
