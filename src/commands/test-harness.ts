/**
 * The one seam between `mcp-operator dev` and the test harness: the local cluster of a clone
 * (`test/cluster/cli.ts`), run as a child process rather than imported, so that nothing in src/
 * depends on test/. It exists only in a clone of the repository, which is where `npm start`
 * runs; `available()` says whether this is one.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The repository root, when this runs from a clone (src/commands/ → ../..). */
export const REPO = join(import.meta.dirname, '..', '..');

const CLUSTER_CLI = join(REPO, 'test', 'cluster', 'cli.ts');

export interface LocalCluster {
  kubeconfig: string;
  /** Whether we started it, and so stop it on the way out. */
  ours: boolean;
  /** Whether pods really run there (a real node), or only on kwok's fake nodes. */
  realNode: boolean;
}

export interface Deployed {
  code: number;
  /** The kubectl the harness built, when it printed one. */
  kubectl?: string | undefined;
}

/** Runs `test/cluster/cli.ts <command>`, relaying its output; returns its exit code and lines. */
function clusterCli(command: string): Promise<{ code: number; lines: string[] }> {
  const child = spawn(process.execPath, [CLUSTER_CLI, command], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    process.stderr.write(`  ${line}\n`);
    lines.push(line);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, lines }));
  });
}

function valueOf(lines: readonly string[], key: string): string | undefined {
  return lines.find((line) => line.startsWith(`${key}=`))?.slice(key.length + 1);
}

export const testHarness = {
  /** Whether the harness is here: a clone of the repository, not an installed package. */
  available(): boolean {
    return existsSync(CLUSTER_CLI);
  },

  /** The running local cluster, or one started now; undefined when it does not start. */
  async cluster(): Promise<LocalCluster | undefined> {
    const running = await clusterCli('status');
    const ours = running.code !== 0;
    if (ours) {
      process.stderr.write('Starting a local cluster…\n');
      if ((await clusterCli('up')).code !== 0) return undefined;
    }
    const { lines } = ours ? await clusterCli('status') : running;
    const kubeconfig = valueOf(lines, 'KUBECONFIG');
    if (kubeconfig === undefined) return undefined;
    return { kubeconfig, ours, realNode: lines.some((line) => line.startsWith('real node: ')) };
  },

  /** The README's quick start on the real node: images, the chart, the examples. */
  async deploy(): Promise<Deployed> {
    const { code, lines } = await clusterCli('deploy');
    return { code, kubectl: valueOf(lines, 'KUBECTL') };
  },

  async stop(): Promise<void> {
    await clusterCli('down');
  },
};
