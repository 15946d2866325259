/**
 * A streamable-http server under Enforce behind OAuth 2.1, on the real node: the operator
 * (in-process, against the real control plane) renders the bridge in proxy mode in front of the
 * npm everything server; a real authorization server (oidc-provider,
 * test/oauth/authorization-server.ts) issues the tokens. Agents use the official SDK client
 * with its client-credentials support and start from a bare 401, as the MCP authorization spec
 * (2025-11-25 basic/authorization) has them: each sees and calls exactly the approved,
 * unchanged tools its token's scopes allow. Discovery, with the operator's own
 * client-credentials token, still sees every tool.
 *
 * The authorization server runs in the test process on the host's address on the node's
 * network (the pods' gateway), so the bridge in the pod and the operator both reach it, and
 * nothing leaves the machine.
 *
 * The only stand-in: discovery and the agents reach the server at its Service's ClusterIP
 * instead of its DNS name, which the test process cannot resolve; so the resource URI is that
 * address, and the server starts with no replicas until the Service (and so the URI) exists.
 */

import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import type { Manager } from '../../src/controller/manager.ts';
import { toolDigest } from '../../src/tools/digest.ts';
import { installCrd } from '../api/install-crd.ts';
import { INITIALIZE, post } from '../bridge/harness.ts';
import { NODE_NETWORK } from '../cluster/network.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';
import { waitForCondition } from '../discovery/operator.ts';
import { AuthorizationServer, type TestClient } from '../oauth/authorization-server.ts';
import {
  clusterIpOf,
  connectAgent,
  discoveryRun,
  everythingHttpSpec,
  EVERYTHING_HTTP_PORT,
  POD_TIMEOUT_MS,
  snapshotTools,
  toolNames,
  type Agent,
} from './fixtures/everything-http.ts';

const NAME = 'everything-oauth';
const DISCOVERY_SECRET = 'discovery-client';
/** Every request needs it; the operator's client has it and nothing more. */
const REQUIRED = 'mcp:tools';
const SUM_SCOPE = 'sum:use';
/** Listed by the server, never approved. */
const UNAPPROVED = 'get-env';
/** Approved, but only for tokens with SUM_SCOPE. */
const SCOPED = 'get-sum';
/** Approved with a definition other than the one the server lists. */
const DRIFTED = 'get-tiny-image';
const OTHER_SERVER = 'http://other-server.example/mcp';

const CLIENTS = {
  operator: { id: 'mcp-operator', secret: 'operator-secret-value', scopes: [REQUIRED] },
  agent: { id: 'agent', secret: 'agent-secret-value', scopes: [REQUIRED] },
  calculator: {
    id: 'calculator',
    secret: 'calculator-secret-value',
    scopes: [REQUIRED, SUM_SCOPE],
  },
} satisfies Record<string, TestClient>;

const kc = kubeConfig();
const ns = useNamespace('oauth', kc);
const k = cluster(kc, () => ns.name);
const images = inject('images');
/** The server's URL at its Service's ClusterIP: also its resource URI (RFC 8707). */
let resource: string | undefined;
let as: AuthorizationServer;
let operator: Manager;

const tokenRequests = (client: TestClient) => as.tokenRequests.get(client.id) ?? 0;

/** An agent logging in with the SDK's client-credentials provider, from the 401 on. */
function oauthAgent(client: TestClient, options: { fetch?: typeof fetch } = {}): Promise<Agent> {
  const authProvider = new ClientCredentialsProvider({
    clientId: client.id,
    clientSecret: client.secret,
    scope: client.scopes.join(' '),
    expectedIssuer: as.issuer,
  });
  return connectAgent(new URL(resource!), { authProvider, ...options });
}

/** The parameters of a `WWW-Authenticate: Bearer …` challenge. */
function challenge(response: Response): Record<string, string> {
  const value = response.headers.get('www-authenticate') ?? '';
  expect(value).toMatch(/^Bearer /);
  return Object.fromEntries(
    [...value.matchAll(/(\w+)="([^"]*)"/g)].map((m): [string, string] => [m[1]!, m[2]!]),
  );
}

/** An initialize request as a client opens a session, with `headers` added. */
const initialize = (headers: Record<string, string> = {}) => post(resource!, INITIALIZE, headers);

/** Waits until discovery succeeded; on time-out the error says why the last run failed. */
function discovered(): Promise<unknown> {
  return waitFor(
    `${NAME} Discovered=True`,
    async () => {
      const server = await k.get(NAME);
      const condition = server.status?.conditions?.find((c) => c.type === 'Discovered');
      if (condition?.status === 'False')
        throw new Error(`${condition.reason}: ${condition.message}`);
      return condition?.status === 'True';
    },
    { timeoutMs: POD_TIMEOUT_MS, intervalMs: 1_000 },
  );
}

async function refusalOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.unreachable('the call was not refused'),
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  await installCrd(kc);
  await k.core.createNamespacedSecret({
    namespace: ns.name,
    body: {
      metadata: { name: DISCOVERY_SECRET },
      stringData: { 'client-id': CLIENTS.operator.id, 'client-secret': CLIENTS.operator.secret },
    },
  });
  operator = await startOperator(ns.name, [`--bridge-image=${images.operator}`], {
    // Before the Service exists, there are no replicas to discover either.
    discoveryEndpoint: (server: StoredMCPServer) =>
      resource ?? `http://127.0.0.1:1${server.spec.path ?? '/mcp'}`,
  });
}, POD_TIMEOUT_MS);

afterAll(async () => {
  await operator?.stop();
  await as?.close();
});

describe('a streamable-http server under Enforce and OAuth, behind the bridge on the real node', () => {
  let all: Tool[];

  it(
    'answers a bare client with 401 and the metadata that starts the login; discovery, with its own token, sees every tool',
    async () => {
      // No pod until the resource URI, the Service's address, is known.
      await k.create(
        NAME,
        everythingHttpSpec(images.servers.everything, {
          replicas: 0,
          tools: { driftPolicy: 'Enforce', approved: { tools: [] } },
        }),
      );
      const ip = await clusterIpOf(k, ns.name, NAME);
      resource = `http://${ip}:${EVERYTHING_HTTP_PORT}/mcp`;
      as = await AuthorizationServer.start({
        host: NODE_NETWORK.gateway,
        clients: Object.values(CLIENTS),
        resources: [
          { uri: resource, scopes: [REQUIRED, SUM_SCOPE] },
          { uri: OTHER_SERVER, scopes: [REQUIRED, SUM_SCOPE] },
        ],
      });
      await k.patchSpec(NAME, {
        replicas: 1,
        oauth: {
          issuer: as.issuer,
          resource,
          scopes: [REQUIRED],
          discovery: { secretRef: { name: DISCOVERY_SECRET } },
        },
      });
      const bare = await waitFor(
        'the bridge to answer through the Service',
        async () => {
          const response = await initialize();
          return response.status === 401 && response;
        },
        { timeoutMs: 2 * POD_TIMEOUT_MS, intervalMs: 2_000 },
      );
      const params = challenge(bare);
      expect(params.scope).toBe(REQUIRED);
      const metadata = await fetch(params.resource_metadata!);
      expect(metadata.status).toBe(200);
      expect(await metadata.json()).toMatchObject({
        resource,
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
      });

      // The bridge answers before the server behind it is ready: discovery waits for both.
      await waitFor(
        'the pod ready',
        async () => {
          const { status } = await k.apps.readNamespacedDeployment({
            name: NAME,
            namespace: ns.name,
          });
          return (status?.readyReplicas ?? 0) >= 1;
        },
        { timeoutMs: POD_TIMEOUT_MS, intervalMs: 1_000 },
      );
      await discoveryRun(k, operator.url, ns.name, NAME, 'behind-oauth');
      await discovered();
      expect(tokenRequests(CLIENTS.operator)).toBeGreaterThan(0);
      all = await snapshotTools(k, ns.name, NAME);
      expect(toolNames(all)).toEqual(expect.arrayContaining([UNAPPROVED, SCOPED, DRIFTED, 'echo']));
    },
    3 * POD_TIMEOUT_MS,
  );

  it(
    'shows each agent that logged in exactly the approved, unchanged tools its scopes allow, and refuses the others',
    async () => {
      const approved = all
        .filter((tool) => tool.name !== UNAPPROVED)
        .map((tool) =>
          tool.name === DRIFTED
            ? { name: tool.name, digest: toolDigest({ ...tool, description: 'as approved' }) }
            : { name: tool.name, digest: toolDigest(tool) },
        );
      await k.patchSpec(NAME, {
        tools: { approved: { tools: approved } },
        oauth: { toolScopes: { [SCOPED]: [SUM_SCOPE] } },
      });
      const calculatorView = toolNames(all).filter((name) => ![UNAPPROVED, DRIFTED].includes(name));
      const agentView = calculatorView.filter((name) => name !== SCOPED);

      // The policy reaches the bridge with the ConfigMap volume (the kubelet syncs it).
      const agentTokens = tokenRequests(CLIENTS.agent);
      const agent = await waitFor(
        'the new policy in the bridge',
        async () => {
          const candidate = await oauthAgent(CLIENTS.agent);
          if (toolNames((await candidate.client.listTools()).tools).join() === agentView.join())
            return candidate;
          await candidate.close();
          return undefined;
        },
        { timeoutMs: POD_TIMEOUT_MS, intervalMs: 3_000 },
      );
      expect(tokenRequests(CLIENTS.agent)).toBeGreaterThan(agentTokens);
      expect(
        JSON.stringify(
          await agent.client.callTool({ name: 'echo', arguments: { message: 'logged-in' } }),
        ),
      ).toContain('logged-in');

      for (const [name, reason] of [
        [UNAPPROVED, 'not-approved'],
        [DRIFTED, 'drifted'],
      ] as const) {
        const refused = await refusalOf(agent.client.callTool({ name, arguments: {} }));
        expect(refused).toBeInstanceOf(McpError);
        expect((refused as McpError).data).toEqual({ reason, tool: name });
      }
      await agent.close();

      const calculator = await oauthAgent(CLIENTS.calculator);
      expect(toolNames((await calculator.client.listTools()).tools)).toEqual(calculatorView);
      const sum = await calculator.client.callTool({ name: SCOPED, arguments: { a: 19, b: 23 } });
      expect(JSON.stringify(sum)).toContain('42');
      await calculator.close();
    },
    2 * POD_TIMEOUT_MS,
  );

  it(
    'refuses a call outside the token scopes with 403 insufficient_scope naming the scope',
    async () => {
      const challenges: Response[] = [];
      const recording: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 403) challenges.push(response);
        return response;
      };
      const agent = await oauthAgent(CLIENTS.agent, { fetch: recording });
      // The SDK client asks its authorization server for the scope (step-up), which refuses it
      // to this client; the call fails and never reaches the server.
      await refusalOf(agent.client.callTool({ name: SCOPED, arguments: { a: 2, b: 3 } }));
      expect(challenges.length).toBeGreaterThan(0);
      const params = challenge(challenges[0]!);
      expect(params.error).toBe('insufficient_scope');
      expect(params.scope).toBe(`${REQUIRED} ${SUM_SCOPE}`);
      await agent.close().catch(() => undefined);
    },
    POD_TIMEOUT_MS,
  );

  it(
    'refuses a token minted for another MCP server with 401 (confused deputy)',
    async () => {
      const token = await as.token(CLIENTS.calculator, OTHER_SERVER, CLIENTS.calculator.scopes);
      const response = await initialize({ authorization: `Bearer ${token}` });
      expect(response.status).toBe(401);
      expect(challenge(response).error).toBe('invalid_token');
      // The same client's token for this server opens a session.
      const own = `Bearer ${await as.token(CLIENTS.calculator, resource!, [REQUIRED])}`;
      const opened = await initialize({ authorization: own });
      expect(opened.status).toBe(200);
      const session = opened.headers.get('mcp-session-id')!;
      await fetch(resource!, {
        method: 'DELETE',
        headers: { authorization: own, 'mcp-session-id': session },
      });
    },
    POD_TIMEOUT_MS,
  );

  it(
    'still discovers every tool with the operator token, and names the unapproved and drifted ones',
    async () => {
      await discoveryRun(k, operator.url, ns.name, NAME, 'after-approval');
      const server = await waitForCondition(k, NAME, 'Drifted', 'True', 'ToolsChanged');
      expect(server.status?.conditions?.find((c) => c.type === 'Discovered')?.status).toBe('True');
      expect(toolNames(server.status?.discovery?.tools ?? [])).toEqual(toolNames(all));
      expect(server.status?.drift?.added).toEqual([UNAPPROVED]);
      expect(server.status?.drift?.changed?.map((tool) => tool.name)).toEqual([DRIFTED]);
    },
    POD_TIMEOUT_MS,
  );
});
