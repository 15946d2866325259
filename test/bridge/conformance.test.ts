/**
 * The official conformance suite (`@modelcontextprotocol/conformance`, server mode, every
 * suite) against the bridge fronting the Go SDK's stdio everything-server, in both session
 * modes, and against the same server serving Streamable HTTP itself. The bar: the bridge
 * passes every scenario the server passes on its own, with no failed check; any exception must
 * be listed in EXPECTED_FAILURES with its reason.
 */

import { spawn, execFile } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionMode } from '../../src/bridge/pod-contract.ts';
import { everythingServer } from './go-server.ts';
import { NODE, startTestBridge, tempDir } from './harness.ts';
import { waitFor } from '../support/wait.ts';
import { freePort } from '../support/ports.ts';

const CONFORMANCE = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

/** Scenarios the bridge may fail although the server passes them directly, and why. */
const EXPECTED_FAILURES: Record<string, string> = {};

interface ScenarioResult {
  passed: number;
  failed: number;
}

/** Runs every conformance scenario against `url`; returns the summary per scenario. */
async function conformance(url: string): Promise<Map<string, ScenarioResult>> {
  const cwd = await tempDir('conformance');
  const { stdout } = await promisify(execFile)(
    NODE,
    [CONFORMANCE, 'server', '--url', url, '--suite', 'all'],
    {
      cwd,
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const summary = stdout.slice(stdout.indexOf('=== SUMMARY ==='));
  const results = new Map<string, ScenarioResult>();
  for (const [, name, passed, failed] of summary.matchAll(
    /^[✓✗] (\S+): (\d+) passed, (\d+) failed/gm,
  )) {
    results.set(name!, { passed: Number(passed), failed: Number(failed) });
  }
  return results;
}

describe('conformance suite', { timeout: 600_000 }, () => {
  let binary: string;
  let direct: Map<string, ScenarioResult>;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    binary = await everythingServer();
    // Stateful, so that the session scenarios apply to it as they do to the bridge.
    const port = await freePort();
    const server = spawn(binary, ['-http', `127.0.0.1:${port}`, '-stateless=false'], {
      stdio: 'ignore',
    });
    const exited = once(server, 'exit');
    stop = async () => {
      server.kill('SIGTERM');
      await exited;
    };
    const url = `http://127.0.0.1:${port}/`;
    await waitFor(
      'the Go server to listen',
      async () => (await fetch(url).catch(() => undefined)) !== undefined || undefined,
    );
    direct = await conformance(url);
  }, 600_000);

  afterAll(async () => {
    await stop?.();
  });

  it('the server itself passes the suite (the baseline)', () => {
    expect(direct.size).toBeGreaterThanOrEqual(30);
    console.log(
      `direct: ${[...direct.values()].reduce((n, r) => n + r.passed, 0)} checks passed in ${direct.size} scenarios`,
    );
  });

  it.each<SessionMode>(['PerSession', 'Shared'])(
    'the bridge in %s mode passes what the server passes',
    async (sessionMode) => {
      const bridge = await startTestBridge({ command: [binary], sessionMode, maxSessions: 256 });
      const bridged = await conformance(bridge.url);
      const table = [...direct].map(([name, own]) => {
        const through = bridged.get(name);
        return {
          name,
          direct: `${own.passed}/${own.failed}`,
          bridge: through ? `${through.passed}/${through.failed}` : 'missing',
        };
      });
      console.log(
        `${sessionMode} (passed/failed checks):\n${table.map((row) => `  ${row.name.padEnd(32)} direct ${row.direct.padEnd(6)} bridge ${row.bridge}`).join('\n')}`,
      );
      const regressions = [...direct]
        .filter(([name, own]) => own.failed === 0 && !(name in EXPECTED_FAILURES))
        .filter(([name]) => (bridged.get(name)?.failed ?? 1) > 0)
        .map(([name]) => name);
      expect(regressions).toEqual([]);
      expect([...bridged.keys()].sort()).toEqual([...direct.keys()].sort());
    },
  );
});
