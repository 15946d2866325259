/**
 * Enforcement for prompts, resources and resource templates (driftPolicy: Enforce) in the real
 * bridge, in front of the real npm everything server, which publishes all three: what is not
 * approved, or changed since, is hidden from the lists and refused by prompts/get and
 * resources/read, with a JSON-RPC error that says what and why.
 */

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideItem } from '../../src/bridge/policy/catalog-gate.ts';
import { discover } from '../../src/discovery/client.ts';
import { DISCOVERY_TOKEN_HEADER, UNFILTERED_LIST_META } from '../../src/mcp/metadata.ts';
import { itemDigest } from '../../src/tools/catalog-items.ts';
import type { Digest } from '../../src/tools/digest.ts';
import { parsePolicy, type BridgePolicy } from '../../src/tools/policy.ts';
import {
  callError,
  connect,
  messagesOf,
  post,
  rawSession,
  SERVERS,
  startTestBridge,
  tempDir,
} from './harness.ts';

const D = (c: string): Digest => `sha256:${c.repeat(64)}`;

describe('policy file: prompts, resources and resource templates', () => {
  it('parses approved items of each kind by key and digest', () => {
    const text = JSON.stringify({
      approved: [],
      prompts: [{ name: 'p', digest: D('a') }],
      resources: [{ uri: 'demo://r', digest: D('b') }],
      resourceTemplates: [{ uriTemplate: 'demo://t/{id}', digest: D('c') }],
    });
    expect(parsePolicy(text)).toEqual(JSON.parse(text));
  });

  it('refuses a malformed or ambiguous approval, saying where', () => {
    const invalid = (policy: unknown) => () => parsePolicy(JSON.stringify(policy), 'p.json');
    expect(invalid({ prompts: [{ uri: 'demo://r', digest: D('a') }] })).toThrow(/\/prompts\/0/);
    expect(invalid({ resources: [{ uri: 'demo://r', digest: 'sha256:1' }] })).toThrow(
      /\/resources\/0\/digest/,
    );
    const twice = [
      { uriTemplate: 'demo://t/{id}', digest: D('a') },
      { uriTemplate: 'demo://t/{id}', digest: D('b') },
    ];
    expect(invalid({ resourceTemplates: twice })).toThrow(
      /resource template demo:\/\/t\/\{id\} is approved twice/,
    );
  });

  it('decides by approval and digest, for the kinds the policy lists only', () => {
    const policy: BridgePolicy = { prompts: [{ name: 'p', digest: D('a') }] };
    const listed = (digest: Digest | undefined) => ({ listed: true, digest });
    expect(decideItem(policy, 'prompts', 'p', listed(D('a')))).toBeUndefined();
    expect(decideItem(policy, 'prompts', 'p', listed(D('b')))?.reason).toBe('drifted');
    expect(decideItem(policy, 'prompts', 'q', listed(D('a')))?.reason).toBe('not-approved');
    const unlisted = { listed: false, digest: undefined };
    expect(decideItem(policy, 'prompts', 'p', unlisted)?.reason).toBe('unlisted');
    expect(
      decideItem(policy, 'prompts', 'p', { ...unlisted, listError: '-32603 down' })?.message,
    ).toBe("the MCP server's prompt list could not be read (-32603 down)");
    expect(decideItem(policy, 'resources', 'demo://r', listed(D('c')))).toBeUndefined();
    expect(decideItem(undefined, 'prompts', 'p', listed(D('a')))?.reason).toBe(
      'policy-unavailable',
    );
  });
});

interface Listed {
  prompts: Map<string, Digest>;
  resources: Map<string, Digest>;
  resourceTemplates: Map<string, Digest>;
}

/** What the everything server lists now, digested as discovery digests it (no policy). */
async function everythingListed(): Promise<Listed> {
  const bridge = await startTestBridge({ command: SERVERS.everything });
  const client = await connect(bridge.url);
  const { prompts } = await client.listPrompts();
  const { resources } = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  await client.close();
  return {
    prompts: new Map(prompts.map((p) => [p.name, itemDigest('prompts', p)])),
    resources: new Map(resources.map((r) => [r.uri, itemDigest('resources', r)])),
    resourceTemplates: new Map(
      resourceTemplates.map((t) => [t.uriTemplate, itemDigest('resourceTemplates', t)]),
    ),
  };
}

const TEXT_TEMPLATE = 'demo://resource/dynamic/text/{resourceId}';
const BLOB_TEMPLATE = 'demo://resource/dynamic/blob/{resourceId}';
const ARCHITECTURE = 'demo://resource/static/document/architecture.md';
const FEATURES = 'demo://resource/static/document/features.md';
const EXTENSION = 'demo://resource/static/document/extension.md';
/** A definition approved before the server changed it: its digest is not the current one. */
const BEFORE = D('0');

/**
 * A bridge enforcing: prompts simple-prompt (as listed) and args-prompt (changed since);
 * resources architecture.md (as listed) and features.md (changed since); the text template (as
 * listed), not the blob template.
 */
async function enforced(extra: Partial<Parameters<typeof startTestBridge>[0]> = {}) {
  const listed = await everythingListed();
  const policy: BridgePolicy = {
    approved: [],
    prompts: [
      { name: 'simple-prompt', digest: listed.prompts.get('simple-prompt')! },
      { name: 'args-prompt', digest: BEFORE },
    ],
    resources: [
      { uri: ARCHITECTURE, digest: listed.resources.get(ARCHITECTURE)! },
      { uri: FEATURES, digest: BEFORE },
    ],
    resourceTemplates: [
      { uriTemplate: TEXT_TEMPLATE, digest: listed.resourceTemplates.get(TEXT_TEMPLATE)! },
    ],
  };
  const file = join(await tempDir('policy'), 'policy.json');
  await writeFile(file, JSON.stringify(policy));
  const bridge = await startTestBridge({ command: SERVERS.everything, policyFile: file, ...extra });
  return { bridge, listed };
}

const names = (list: { name: string }[]) => list.map((item) => item.name).sort();

async function visible(client: Client) {
  return {
    prompts: names((await client.listPrompts()).prompts),
    resources: (await client.listResources()).resources.map((r) => r.uri),
    templates: (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
  };
}

describe('prompts and resources under Enforce, through the bridge', () => {
  it('lists only the approved, unchanged prompts, resources and templates', async () => {
    const { bridge } = await enforced();
    const client = await connect(bridge.url);
    expect(await visible(client)).toEqual({
      prompts: ['simple-prompt'],
      resources: [ARCHITECTURE],
      templates: [TEXT_TEMPLATE],
    });
    await client.close();
  });

  it('serves what is approved and refuses the rest, saying what and why', async () => {
    const { bridge, listed } = await enforced();
    const client = await connect(bridge.url);

    const prompt = await client.getPrompt({ name: 'simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
    const drifted = await callError(
      client.getPrompt({ name: 'args-prompt', arguments: { city: 'Oslo' } }),
    );
    expect(drifted.code).toBe(-32602);
    expect(drifted.message).toContain(
      `Prompt "args-prompt" is refused by the bridge policy: its definition changed since it was approved (approved ${BEFORE}, now ${listed.prompts.get('args-prompt')})`,
    );
    expect(drifted.data).toEqual({ reason: 'drifted', prompt: 'args-prompt' });
    const unapproved = await callError(client.getPrompt({ name: 'completable-prompt' }));
    expect(unapproved.message).toContain(
      'Prompt "completable-prompt" is refused by the bridge policy: it is not approved (spec.tools.approved.prompts)',
    );
    const unknown = await callError(client.getPrompt({ name: 'no-such-prompt' }));
    expect(unknown.data).toEqual({ reason: 'unlisted', prompt: 'no-such-prompt' });

    const read = await client.readResource({ uri: ARCHITECTURE });
    expect(read.contents[0]?.uri).toBe(ARCHITECTURE);
    const changed = await callError(client.readResource({ uri: FEATURES }));
    expect(changed.data).toEqual({ reason: 'drifted', uri: FEATURES });
    const hidden = await callError(client.readResource({ uri: EXTENSION }));
    expect(hidden.message).toContain(
      `Resource "${EXTENSION}" is refused by the bridge policy: it is not approved (spec.tools.approved.resources)`,
    );

    // A URI of the approved template is read; one of the hidden template only is refused.
    const text = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
    expect(text.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/text/7' });
    const blob = await callError(client.readResource({ uri: 'demo://resource/dynamic/blob/7' }));
    expect(blob.code).toBe(-32602);
    expect(blob.message).toContain(
      'Resource "demo://resource/dynamic/blob/7" is refused by the bridge policy: the MCP server does not list it as a resource, and no approved, unchanged resource template (spec.tools.approved.resourceTemplates) matches it',
    );
    expect(blob.data).toEqual({
      reason: 'no-approved-template',
      uri: 'demo://resource/dynamic/blob/7',
    });
    // The approved template's single segment does not stretch over a path.
    const escape = 'demo://resource/dynamic/text/7/../../blob/7';
    expect((await callError(client.readResource({ uri: escape }))).data).toEqual({
      reason: 'no-approved-template',
      uri: escape,
    });

    // Refusals cost the caller nothing else: the session goes on, and so does a second one.
    expect((await client.readResource({ uri: ARCHITECTURE })).contents).toHaveLength(1);
    const other = await connect(bridge.url);
    expect((await other.getPrompt({ name: 'simple-prompt' })).messages.length).toBeGreaterThan(0);
    await other.close();
    await client.close();
    const metrics = await bridge.metrics.registry.metrics();
    expect(metrics).toMatch(/mcp_bridge_policy_denials_total\{reason="drifted"\} 2/);
    expect(metrics).toMatch(/mcp_bridge_policy_denials_total\{reason="no-approved-template"\} 2/);
  });

  it('refuses subscribing to a resource it would not let be read', async () => {
    const { bridge } = await enforced();
    const client = await connect(bridge.url);
    await expect(client.subscribeResource({ uri: ARCHITECTURE })).resolves.toEqual({});
    const hidden = await callError(client.subscribeResource({ uri: EXTENSION }));
    expect(hidden.code).toBe(-32602);
    expect(hidden.message).toContain(
      `Resource "${EXTENSION}" is refused by the bridge policy: it is not approved (spec.tools.approved.resources)`,
    );
    expect(hidden.data).toEqual({ reason: 'not-approved', uri: EXTENSION });
    const blob = 'demo://resource/dynamic/blob/7';
    expect((await callError(client.subscribeResource({ uri: blob }))).data).toEqual({
      reason: 'no-approved-template',
      uri: blob,
    });
    await client.close();
  });

  it("screens every session's subscribe in Shared mode, though another session asked first", async () => {
    const { bridge } = await enforced({ sessionMode: 'Shared' });
    const [first, second] = [await connect(bridge.url), await connect(bridge.url)];
    for (const client of [first, second]) {
      const refused = await callError(client.subscribeResource({ uri: EXTENSION }));
      expect(refused.data).toEqual({ reason: 'not-approved', uri: EXTENSION });
    }
    // An approved URI is subscribed once in the child and answered for both.
    await expect(first.subscribeResource({ uri: ARCHITECTURE })).resolves.toEqual({});
    await expect(second.subscribeResource({ uri: ARCHITECTURE })).resolves.toEqual({});
    await first.close();
    await second.close();
  });

  it('refuses completing the arguments of a hidden prompt or resource template', async () => {
    const { bridge } = await enforced();
    const client = await connect(bridge.url);
    const argument = { name: 'department', value: 'E' };
    const prompt = await callError(
      client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument }),
    );
    expect(prompt.message).toContain(
      'Prompt "completable-prompt" is refused by the bridge policy: it is not approved (spec.tools.approved.prompts)',
    );
    expect(prompt.data).toEqual({ reason: 'not-approved', prompt: 'completable-prompt' });
    const template = await callError(
      client.complete({
        ref: { type: 'ref/resource', uri: BLOB_TEMPLATE },
        argument: { name: 'resourceId', value: '1' },
      }),
    );
    expect(template.message).toContain(
      `Resource template "${BLOB_TEMPLATE}" is refused by the bridge policy: it is not approved (spec.tools.approved.resourceTemplates)`,
    );
    expect(template.data).toEqual({ reason: 'not-approved', uri: BLOB_TEMPLATE });
    // The approved template's arguments are completed by the server.
    const completed = await client.complete({
      ref: { type: 'ref/resource', uri: TEXT_TEMPLATE },
      argument: { name: 'resourceId', value: '1' },
    });
    expect(Array.isArray(completed.completion.values)).toBe(true);
    await client.close();
  });

  it('fails closed on a request it cannot screen', async () => {
    const { bridge } = await enforced();
    const session = await rawSession(bridge.url);
    const headers = { 'mcp-session-id': session };
    for (const method of [
      'prompts/get',
      'resources/read',
      'resources/subscribe',
      'completion/complete',
    ]) {
      const params = {
        name: 'completable-prompt',
        uri: EXTENSION,
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
      };
      const sneaked = await post(bridge.url, { jsonrpc: '2.0', method, params }, headers);
      expect(sneaked.status).toBe(400);
      expect(((await sneaked.json()) as { error: { message: string } }).error.message).toBe(
        `Invalid Request: ${method} must be a request (with an id), so the bridge policy can screen it`,
      );
    }
    const malformed = {
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/read',
      params: { uri: [EXTENSION] },
    };
    expect(await messagesOf(await post(bridge.url, malformed, headers))).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32602,
          message: 'Resource read refused by the bridge policy: params.uri must be a string',
          data: { reason: 'invalid-call' },
        },
      },
    ]);
    const unknownRef = {
      jsonrpc: '2.0',
      id: 2,
      method: 'completion/complete',
      params: { ref: { type: 'ref/tool', name: 'x' }, argument: { name: 'a', value: '' } },
    };
    expect(await messagesOf(await post(bridge.url, unknownRef, headers))).toEqual([
      {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32602,
          message:
            'Completion refused by the bridge policy: params.ref.type must be ref/prompt or ref/resource',
          data: { reason: 'invalid-call' },
        },
      },
    ]);
  });

  it('screens only the kinds the policy lists', async () => {
    const listed = await everythingListed();
    const file = join(await tempDir('policy'), 'policy.json');
    await writeFile(
      file,
      JSON.stringify({ approved: [], prompts: [{ name: 'simple-prompt', digest: BEFORE }] }),
    );
    const bridge = await startTestBridge({ command: SERVERS.everything, policyFile: file });
    const client = await connect(bridge.url);
    expect(await visible(client)).toEqual({
      prompts: [],
      resources: [...listed.resources.keys()],
      templates: [...listed.resourceTemplates.keys()],
    });
    expect(
      (await client.readResource({ uri: 'demo://resource/dynamic/blob/7' })).contents,
    ).toHaveLength(1);
    await client.close();
  });
});

describe('discovery sees every prompt and resource past the policy (the discovery token)', () => {
  const TOKEN = randomBytes(32).toString('base64url');

  it('lists them all to discovery and to nobody else', async () => {
    const tokenFile = join(await tempDir('discovery-token'), 'token');
    await writeFile(tokenFile, TOKEN);
    const { bridge, listed } = await enforced({ discoveryTokenFile: tokenFile });
    const found = await discover({ url: bridge.url, discoveryToken: TOKEN });
    expect(found.catalog?.prompts?.map((p) => p.name).sort()).toEqual(
      [...listed.prompts.keys()].sort(),
    );
    expect(found.catalog?.resourceTemplates?.map((t) => t.uriTemplate).sort()).toEqual([
      BLOB_TEMPLATE,
      TEXT_TEMPLATE,
    ]);
    const wrong = await connect(bridge.url, { headers: { [DISCOVERY_TOKEN_HEADER]: `${TOKEN}x` } });
    const unfiltered = { _meta: { [UNFILTERED_LIST_META]: true } };
    expect(names((await wrong.listPrompts(unfiltered)).prompts)).toEqual(['simple-prompt']);
    await wrong.close();
    // Seeing a prompt is not using it: discovery's view leaves every refusal in place.
    const agent = await connect(bridge.url);
    expect((await callError(agent.getPrompt({ name: 'completable-prompt' }))).data).toEqual({
      reason: 'not-approved',
      prompt: 'completable-prompt',
    });
    await agent.close();
  });
});
