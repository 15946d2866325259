/**
 * A real `mcp-operator bridge` process, for what an in-process bridge cannot show: that the
 * process stays up. Its JSON log lines are kept, so a test can count what it logged.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach } from 'vitest';
import { CLI } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import { NODE } from './harness.ts';

export interface BridgeProcess {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** The MCP endpoint. */
  url: string;
  port: number;
  pid: number;
  /** How it ended, once it has: `code 1`, `signal SIGKILL`; undefined while it runs. */
  readonly exit: string | undefined;
  /** Its log lines so far, parsed (pino JSON); lines that are not JSON are kept as `{ text }`. */
  readonly logs: Record<string, unknown>[];
  /** Resident memory in bytes, from /proc. */
  rss(): Promise<number>;
  stop(): Promise<void>;
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/**
 * Starts `mcp-operator bridge <flags> -- <server>` on a free loopback port and waits until it
 * serves /healthz (or /readyz with `ready`). Stopped after the test.
 */
export async function startBridgeProcess(
  flags: readonly string[],
  server: readonly string[],
  { ready = true, env = {} }: { ready?: boolean; env?: Record<string, string> } = {},
): Promise<BridgeProcess> {
  const port = await freePort();
  const child = spawn(
    NODE,
    [
      CLI,
      'bridge',
      '--listen',
      `127.0.0.1:${port}`,
      '--grace-period',
      '1s',
      ...flags,
      '--',
      ...server,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  const logs: Record<string, unknown>[] = [];
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ text: line });
      }
    }
  });
  let exit: string | undefined;
  const exited = once(child, 'exit').then(([code, signal]) => {
    exit = signal ? `signal ${String(signal)}` : `code ${String(code)}`;
  });
  const stop = async () => {
    if (exit === undefined) child.kill('SIGTERM');
    await exited;
  };
  stops.push(stop);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    'the bridge process to serve',
    async () => {
      const response = await fetch(`${base}/${ready ? 'readyz' : 'healthz'}`).catch(
        () => undefined,
      );
      return response?.status === 200 || undefined;
    },
    {
      timeoutMs: 60_000,
      abort: () => {
        if (exit !== undefined) throw new Error(`the bridge process ended (${exit})`);
      },
    },
  );
  return {
    base,
    url: `${base}/mcp`,
    port,
    pid: child.pid!,
    get exit() {
      return exit;
    },
    logs,
    rss: () => residentBytes(child.pid!),
    stop,
  };
}

/** Resident memory of a process, from /proc/<pid>/status (VmRSS, in kB). */
export async function residentBytes(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
}
