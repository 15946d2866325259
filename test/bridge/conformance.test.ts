/**
 * The official conformance suite (`@modelcontextprotocol/conformance`, server mode, the
 * requirement set of 2025-11-25) against the bridge fronting the Go SDK's stdio everything-server, in both session
 * modes; against the same server serving Streamable HTTP itself; and against the bridge in
 * proxy mode in front of that HTTP server. The bar: the bridge
 * passes every scenario the server passes on its own, with no failed check; any exception must
 * be listed in EXPECTED_FAILURES with its reason.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionMode } from '../../src/bridge/pod-contract.ts';
import { conformance, goHttp, type ScenarioResult } from './conformance.ts';
import { everythingServer } from './go-server.ts';
import { startTestBridge } from './harness.ts';

/** Scenarios the bridge may fail although the server passes them directly, and why. */
const EXPECTED_FAILURES: Record<string, string> = {};

/** The revision whose handshake-era sessions this test covers (conformance-2026.test.ts: the next). */
const REVISION = '2025-11-25';

describe('conformance suite', { timeout: 600_000 }, () => {
  let binary: string;
  let direct: Map<string, ScenarioResult>;
  let directUrl: string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    binary = await everythingServer();
    // Stateful, so that the session scenarios apply to it as they do to the bridge.
    const server = await goHttp(binary);
    stop = server.stop;
    directUrl = server.url;
    direct = (await conformance(server.url, REVISION)).scenarios;
  }, 600_000);

  afterAll(async () => {
    await stop?.();
  });

  /** The scenarios the server passes on its own and `bridged` fails, after printing both. */
  function regressions(
    label: string,
    bridged: Map<string, ScenarioResult>,
    baseline: Map<string, ScenarioResult> = direct,
  ): string[] {
    const table = [...baseline].map(([name, own]) => {
      const through = bridged.get(name);
      return {
        name,
        direct: `${own.passed}/${own.failed}`,
        bridge: through ? `${through.passed}/${through.failed}` : 'missing',
      };
    });
    console.log(
      `${label} (passed/failed checks):\n${table.map((row) => `  ${row.name.padEnd(32)} direct ${row.direct.padEnd(6)} bridge ${row.bridge}`).join('\n')}`,
    );
    expect([...bridged.keys()].sort()).toEqual([...baseline.keys()].sort());
    return [...baseline]
      .filter(([name, own]) => own.failed === 0 && !(name in EXPECTED_FAILURES))
      .filter(([name]) => (bridged.get(name)?.failed ?? 1) > 0)
      .map(([name]) => name);
  }

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
      const bridged = (await conformance(bridge.url, REVISION)).scenarios;
      expect(regressions(sessionMode, bridged)).toEqual([]);
    },
  );

  it('the bridge in proxy mode, in front of the server serving HTTP, passes what the server passes', async () => {
    const bridge = await startTestBridge({ upstream: directUrl, maxSessions: 256 });
    const bridged = (await conformance(bridge.url, REVISION)).scenarios;
    expect(regressions('proxy', bridged)).toEqual([]);
  });

  it('the bridge in proxy mode, in front of the server serving 2026-07-28, passes what the server passes', async () => {
    const server = await goHttp(binary, { stateless: true });
    try {
      const own = (await conformance(server.url, REVISION)).scenarios;
      const bridge = await startTestBridge({ upstream: server.url, maxSessions: 256 });
      const bridged = (await conformance(bridge.url, REVISION)).scenarios;
      expect(regressions('proxy, 2026-07-28 upstream', bridged, own)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
