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
import { messagesOf, post, startTestBridge } from './harness.ts';

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
      // Shown by 'names its own key for a handshake-era request and carries it whole', below.
      'input-required-result-basic-elicitation':
        "checks that the inputRequests key is user_name, a name only the server's own InputRequiredResult (2026-07-28) holds; a handshake-era server asks with elicitation/create, whose request (method, params, a JSON-RPC id) carries no such name, so any translator names the key itself",
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

  it('names its own key for a handshake-era request and carries it whole; a 2026 server names it', async () => {
    // The scenario's two rounds, as the suite sends them: its client declares elicitation.
    const call = async (url: string, extra: Record<string, unknown> = {}) => {
      const name = 'test_input_required_result_elicitation';
      const meta = {
        'io.modelcontextprotocol/protocolVersion': REVISION,
        'io.modelcontextprotocol/clientInfo': { name: 'conformance-test-client', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { sampling: {}, elicitation: {}, roots: {} },
      };
      const response = await post(
        url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: {}, ...extra, _meta: meta },
        },
        { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': name },
      );
      const answer = (await messagesOf(response)).find((m) => 'result' in m || 'error' in m);
      expect(answer).toHaveProperty('result');
      return answer as {
        result: {
          resultType?: string;
          inputRequests?: Record<string, unknown>;
          requestState?: string;
          content?: { text: string }[];
        };
      };
    };
    const asked = {
      method: 'elicitation/create',
      params: {
        message: 'What is your name?',
        requestedSchema: {
          type: 'object',
          properties: { name: { type: 'string' } },
          required: ['name'],
        },
      },
    };
    const rounds = async (target: Target) => {
      const server = await target.start(binary);
      try {
        const first = (await call(server.url)).result;
        expect(first.resultType).toBe('input_required');
        const keys = Object.keys(first.inputRequests ?? {});
        expect(keys).toHaveLength(1);
        const request = first.inputRequests![keys[0]!] as { params: Record<string, unknown> };
        const second = (
          await call(server.url, {
            inputResponses: { [keys[0]!]: { action: 'accept', content: { name: 'Alice' } } },
            ...(first.requestState === undefined ? {} : { requestState: first.requestState }),
          })
        ).result;
        return { key: keys[0]!, request, text: second.content?.[0]?.text };
      } finally {
        await server.stop();
      }
    };
    const [relayed, translated] = [TARGETS.at(-2)!, TARGETS.at(-1)!];
    expect([relayed.name, translated.name]).toEqual([
      'proxy, 2026 upstream',
      'proxy, 2025 upstream',
    ]);

    // A server of 2026-07-28 names the key in its own result: relayed as it wrote it.
    const native = await rounds(relayed);
    expect(native.key).toBe('user_name');
    expect(native.text).toBe('Hello, Alice!');

    // The same server over the handshake asks with elicitation/create. Everything it sent
    // reaches the client unchanged, and no part of it is the name: the key is the bridge's.
    const handshake = await rounds(translated);
    expect(handshake.request).toMatchObject(asked);
    expect(JSON.stringify(handshake.request)).not.toContain('user_name');
    expect(handshake.key).not.toBe('user_name');
    // Under that key the round completes as the scenario's second round expects.
    expect(handshake.text).toBe('Hello, Alice!');
  });

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
