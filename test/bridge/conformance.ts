/**
 * Runs the official conformance suite (`@modelcontextprotocol/conformance`, server mode) and
 * reads its summary; starts the servers the conformance tests compare: the Go SDK's
 * everything-server serving HTTP itself, and supergateway in front of it.
 */

import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NODE, tempDir } from './harness.ts';
import { waitFor } from '../support/wait.ts';
import { freePort } from '../support/ports.ts';

const CONFORMANCE = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);
const SUPERGATEWAY = fileURLToPath(
  new URL('../../node_modules/supergateway/dist/index.js', import.meta.url),
);

export interface ScenarioResult {
  passed: number;
  failed: number;
}

export interface SuiteRun {
  scenarios: Map<string, ScenarioResult>;
  /** Scenarios a requirement set runs without scoring, and why (extension, pending, …). */
  notScored: Map<string, string>;
}

/** Runs the requirement set of `revision` (e.g. 2026-07-28) against `url`. */
export async function conformance(url: string, revision: string): Promise<SuiteRun> {
  const cwd = await tempDir('conformance');
  const { stdout } = await promisify(execFile)(
    NODE,
    [CONFORMANCE, 'server', '--url', url, '--requirements', revision],
    { cwd, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const summary = stdout.slice(stdout.indexOf('=== SUMMARY ==='));
  const scenarios = new Map<string, ScenarioResult>();
  for (const [, name, passed, failed] of summary.matchAll(
    /^[✓✗] (\S+): (\d+) passed, (\d+) failed/gm,
  )) {
    scenarios.set(name!, { passed: Number(passed), failed: Number(failed) });
  }
  const notScored = new Map<string, string>();
  for (const [, name, reason] of summary.matchAll(/^\s+[✓✗] (\S+) \(([\w-]+)\)$/gm)) {
    notScored.set(name!, reason!);
  }
  return { scenarios, notScored };
}

/** Checks passed and failed, and scenarios without a failed check. */
export function totals(run: SuiteRun): { passed: number; failed: number; scenarios: number } {
  const results = [...run.scenarios.values()];
  return {
    passed: results.reduce((n, r) => n + r.passed, 0),
    failed: results.reduce((n, r) => n + r.failed, 0),
    scenarios: results.filter((r) => r.failed === 0).length,
  };
}

export interface RunningServer {
  url: string;
  stop: () => Promise<void>;
}

async function serve(child: ChildProcess, url: string): Promise<RunningServer> {
  const exited = once(child, 'exit');
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(
      `${url} to listen`,
      async () => (await fetch(url).catch(() => undefined)) !== undefined || undefined,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/**
 * The Go everything-server on its own Streamable HTTP. Stateful (the default here), like the
 * bridge's sessions, it speaks the handshake revisions only; stateless, it speaks 2026-07-28
 * (the SDK serves that revision over HTTP only without sessions).
 */
export async function goHttp(
  binary: string,
  { stateless = false }: { stateless?: boolean } = {},
): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(binary, ['-http', `127.0.0.1:${port}`, `-stateless=${stateless}`], {
    stdio: 'ignore',
  });
  return serve(child, `http://127.0.0.1:${port}/`);
}

/** supergateway serving the stdio server as stateful Streamable HTTP. */
export async function supergateway(command: string): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(
    NODE,
    [
      SUPERGATEWAY,
      '--stdio',
      command,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
    ],
    { stdio: 'ignore' },
  );
  return serve(child, `http://127.0.0.1:${port}/mcp`);
}
