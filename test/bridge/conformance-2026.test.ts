/**
 * The official requirement set of revision 2026-07-28 (`conformance server --requirements
 * 2026-07-28`: stateless requests, MRTR, caching, header validation) through the bridge in
 * front of the Go SDK's stdio everything-server, in both session modes, and in proxy mode in
 * front of the same server's own HTTP: stateless, where it speaks 2026-07-28 (relayed), and
 * stateful, where it speaks only the handshake (translated). The bar: every scenario passes
 * (required and pending alike), except the extension scenarios the bridge declines, and what a
 * way of serving cannot pass, each with its reason; and supergateway, run in the same test in
 * front of the same server, passes nothing we fail. The server's own stateful HTTP is run too,
 * as the reference.
 *
 * TARGETS lists what is held to that bar; another way of serving the same server is one more
 * entry.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionMode } from '../../src/bridge/pod-contract.ts';
import {
  conformance,
  goHttp,
  supergateway,
  totals,
  type RunningServer,
  type SuiteRun,
} from './conformance.ts';
import { everythingServer } from './go-server.ts';
import { post, startTestBridge } from './harness.ts';

const REVISION = '2026-07-28';

/** Extension scenarios the bridge does not implement, and why (docs/adr/0009). */
const DECLINED: Record<string, string> = Object.fromEntries(
  [
    'tasks-lifecycle',
    'tasks-capability-negotiation',
    'tasks-wire-fields',
    'tasks-request-state-removal',
    'tasks-mrtr-input',
    'tasks-request-headers',
    'tasks-dispatch-and-envelope',
    'tasks-status-notifications',
    'tasks-required-task-error',
    'tasks-mrtr-composition',
  ].map((name) => [
    name,
    'io.modelcontextprotocol/tasks: the bridge relays tasks of a child that offers them and is no task runtime itself; the Go fixture offers none',
  ]),
);

interface Target {
  name: string;
  start: (binary: string) => Promise<RunningServer>;
  /** Scenarios this way of serving cannot pass, and why; held to the bar all the same. */
  cannotPass?: Record<string, string>;
}

const bridgeIn =
  (sessionMode: SessionMode) =>
  async (binary: string): Promise<RunningServer> => {
    const bridge = await startTestBridge({ command: [binary], sessionMode, maxSessions: 256 });
    return { url: bridge.url, stop: () => bridge.close() };
  };

/** The bridge in proxy mode in front of the Go server's own HTTP, of either revision. */
const proxyIn =
  (stateless: boolean) =>
  async (binary: string): Promise<RunningServer> => {
    const server = await goHttp(binary, { stateless });
    try {
      const bridge = await startTestBridge({ upstream: server.url, maxSessions: 256 });
      return {
        url: bridge.url,
        stop: async () => {
          await bridge.close();
          await server.stop();
        },
      };
    } catch (error) {
      await server.stop();
      throw error;
    }
  };

const TARGETS: Target[] = [
  { name: 'bridge PerSession', start: bridgeIn('PerSession') },
  { name: 'bridge Shared', start: bridgeIn('Shared') },
  // The server speaks 2026-07-28 over HTTP: the bridge relays natively.
  { name: 'proxy, 2026 upstream', start: proxyIn(true) },
  // The server speaks the handshake only (its stateful HTTP): the bridge translates.
  {
    name: 'proxy, 2025 upstream',
    start: proxyIn(false),
    cannotPass: {
      'input-required-result-basic-elicitation':
        "checks that the server's own inputRequests key is user_name; a handshake-era server asks with elicitation/create, which carries no key, so a translator names it itself",
    },
  },
];

/** A 2026-07-28 request as a client sends it, headers mirrored from the body. */
function modern(url: string, method: string, params: Record<string, unknown> = {}) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': REVISION,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return post(
    url,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
    { 'mcp-protocol-version': REVISION, 'mcp-method': method },
  );
}

function row(name: string, run: SuiteRun): string {
  const { passed, failed, scenarios } = totals(run);
  return `  ${name.padEnd(20)} ${String(passed).padStart(4)} / ${String(failed).padEnd(4)} ${scenarios}/${run.scenarios.size}`;
}

const passes = (run: SuiteRun, name: string) => run.scenarios.get(name)?.failed === 0;

describe(`conformance requirement set ${REVISION}`, { timeout: 900_000 }, () => {
  let binary: string;
  let reference: SuiteRun;
  let gateway: SuiteRun;
  const runs = new Map<string, SuiteRun>();

  beforeAll(async () => {
    binary = await everythingServer();
    for (const [start, keep] of [
      [goHttp, (run: SuiteRun) => (reference = run)],
      [supergateway, (run: SuiteRun) => (gateway = run)],
    ] as const) {
      const server = await start(binary);
      try {
        keep(await conformance(server.url, REVISION));
      } finally {
        await server.stop();
      }
    }
  }, 600_000);

  afterAll(() => {
    const table = [
      row("the fixture's HTTP", reference),
      ...[...runs].map(([name, run]) => row(name, run)),
      row('supergateway', gateway),
    ];
    console.log(
      `${REVISION} requirement set (checks passed / failed, scenarios passed):\n${table.join('\n')}`,
    );
  });

  it('ran in full against the references', () => {
    // The server's own HTTP speaks only the handshake: it passes few, but every scenario ran.
    expect(reference.scenarios.size).toBeGreaterThanOrEqual(50);
    expect(gateway.scenarios.size).toBe(reference.scenarios.size);
    expect([...reference.notScored.keys()]).toEqual(
      expect.arrayContaining(
        Object.keys(DECLINED).filter((name) => name !== 'tasks-status-notifications'),
      ),
    );
  });

  it.each(TARGETS.map((target) => [target.name, target] as const))(
    '%s passes every scenario but the declined extensions, and all that supergateway passes',
    async (name, target) => {
      const server = await target.start(binary);
      let run: SuiteRun;
      try {
        run = await conformance(server.url, REVISION);
      } finally {
        await server.stop();
      }
      runs.set(name, run);
      expect([...run.scenarios.keys()].sort()).toEqual([...reference.scenarios.keys()].sort());
      const excused = (scenario: string) =>
        scenario in DECLINED || scenario in (target.cannotPass ?? {});
      const failing = [...run.scenarios]
        .filter(([scenario, result]) => result.failed > 0 && !excused(scenario))
        .map(([scenario]) => scenario);
      expect(failing).toEqual([]);
      const behindSupergateway = [...gateway.scenarios.keys()].filter(
        (scenario) => passes(gateway, scenario) && !passes(run, scenario) && !excused(scenario),
      );
      expect(behindSupergateway).toEqual([]);
      expect(passes(run, 'dns-rebinding-protection')).toBe(true);
    },
  );

  it.each(TARGETS.map((target) => [target.name, target] as const))(
    '%s answers for tasks as a server without the extension does',
    async (_name, target) => {
      const server = await target.start(binary);
      try {
        const discover = (await (await modern(server.url, 'server/discover')).json()) as {
          result: { capabilities: { extensions?: Record<string, unknown> } };
        };
        expect(discover.result.capabilities.extensions ?? {}).not.toHaveProperty(
          'io.modelcontextprotocol/tasks',
        );
        const get = await modern(server.url, 'tasks/get', { taskId: 'any' });
        expect(get.status).toBe(404);
        expect(await get.json()).toMatchObject({ error: { code: -32601 } });
      } finally {
        await server.stop();
      }
    },
  );
});
