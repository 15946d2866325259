/**
 * The operator as a child process (`node src/cli.ts controller …`), for tests that kill it:
 * SIGKILL mid-reconcile, SIGTERM for a graceful stop, two replicas electing a leader. Every
 * child started here is killed by `killAll` (call it in afterEach/afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { CLI } from '../support/cli.ts';

export interface OperatorProcess {
  process: ChildProcess;
  /** Its JSON log lines so far, parsed. */
  logs: Record<string, unknown>[];
  /** http://host:port of its /metrics, once it has logged it. */
  url: Promise<string>;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();

export function spawnOperator(kubeconfig: string, flags: string[]): OperatorProcess {
  const child = spawn(process.execPath, [CLI, 'controller', ...flags], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  const logs: Record<string, unknown>[] = [];
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry['msg'] === 'controller started') resolve(entry['metrics'] as string);
      } catch {
        // Not a log line (a warning from Node): ignore.
      }
    });
    child.once('exit', () => reject(new Error('the operator exited before it started')));
  });
  url.catch(() => undefined);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { process: child, logs, url, exited };
}

export async function killAll(): Promise<void> {
  const exits = [...children].map((child) => new Promise((resolve) => child.once('exit', resolve)));
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(exits);
}

/** Whether this operator holds the lease, from its /metrics. */
export async function isLeader(url: string): Promise<boolean> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return /^mcp_operator_leader 1$/m.test(text);
}
