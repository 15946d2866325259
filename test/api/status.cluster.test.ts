/**
 * Status writes against the real API server with the committed CRD: what happens to a write
 * with one field over its bound (the whole write is refused, Ready included, which is why the
 * operator bounds every server-provided text before writing), and the bounds the CRD now puts
 * on each field a server controls, with the API server's exact messages; and that the
 * operator's own status write lands on the object it was computed for, never on a successor of
 * the same name.
 */

import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, PLURAL } from '../../src/api/names.ts';
import {
  API_VERSION,
  VERSION,
  type MCPServer,
  type MCPServerStatus,
} from '../../src/api/v1alpha1/mcpserver.ts';
import { statusWrite } from '../../src/controller/reconcile.ts';
import { connect } from '../../src/kube/client.ts';
import { loadClientConfig } from '../../src/kube/config.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';
import { installCrd } from './install-crd.ts';

const kc = kubeConfig();
const ns = useNamespace('api-status', kc);
const api = kc.makeApiClient(CustomObjectsApi);
const target = { group: API_GROUP, version: VERSION, plural: PLURAL };

beforeAll(async () => {
  await installCrd(kc);
  await api.createNamespacedCustomObject({
    ...target,
    namespace: ns.name,
    body: {
      apiVersion: API_VERSION,
      kind: 'MCPServer',
      metadata: { name: 'srv' },
      spec: { url: 'https://mcp.example.com/mcp' },
    },
  });
});

/** After a schema error the API server skips the CEL rules of the object, and says so. */
const NOT_CHECKED =
  '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

const NOW = '2026-11-30T10:00:00Z';
const condition = (type: string, message: string) => ({
  type,
  status: 'False' as const,
  observedGeneration: 1,
  lastTransitionTime: NOW,
  reason: 'Failed',
  message,
});
const READY = condition('Ready', 'The server at https://mcp.example.com/mcp does not answer.');

const read = async () =>
  (await api.getNamespacedCustomObject({
    ...target,
    namespace: ns.name,
    name: 'srv',
  })) as MCPServer;

/** Replaces status (PUT on the status subresource); the causes of a refusal, or []. */
async function writeStatus(status: MCPServerStatus): Promise<string[]> {
  const current = await read();
  try {
    await api.replaceNamespacedCustomObjectStatus({
      ...target,
      namespace: ns.name,
      name: 'srv',
      body: { ...current, status },
    });
    return [];
  } catch (error) {
    if (!(error instanceof ApiException) || error.code !== 422) throw error;
    const body = JSON.parse(error.body as string) as {
      details?: { causes?: { field?: string; message?: string }[] };
    };
    return (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`).sort();
  }
}

describe('a status write with one field over its bound', () => {
  it('is refused as a whole: Ready is lost with the field that was too long', async () => {
    const discovered = condition('Discovered', `x${'y'.repeat(40_080)}`);
    expect(await writeStatus({ conditions: [READY, discovered] })).toEqual([
      NOT_CHECKED,
      'status.conditions[1].message: Too long: may not be more than 32768 bytes',
    ]);
    expect((await read()).status?.conditions ?? []).toEqual([]);
  });
});

describe('the bounds on what a server controls', () => {
  const refused: [string, MCPServerStatus, string[]][] = [
    [
      'a lastError over 32768 characters',
      { discovery: { lastError: 'e'.repeat(32_769) } },
      [NOT_CHECKED, 'status.discovery.lastError: Too long: may not be more than 32768 bytes'],
    ],
    [
      'a tool name with an escape sequence',
      { discovery: { tools: [{ name: 'evil\u001b[2J', digest: 'sha256:0123456789ab' }] } },
      [
        'status.discovery.tools[0].name: Invalid value: "evil\\x1b[2J": discovery.tools[0].name in body should match \'^[A-Za-z0-9_.-]{1,128}$\'',
      ],
    ],
    [
      'a serverInfo name over 128 characters',
      { discovery: { serverInfo: { name: 'n'.repeat(129), version: '1' } } },
      [NOT_CHECKED, 'status.discovery.serverInfo.name: Too long: may not be more than 128 bytes'],
    ],
    [
      'an added tool whose name breaks the rules',
      { drift: { added: ['has space'] } },
      [
        'status.drift.added[0]: Invalid value: "has space": drift.added[0] in body should match \'^[A-Za-z0-9_.-]{1,128}$\'',
      ],
    ],
  ];

  it.each(refused)('refuses %s with a message naming the field', async (_, status, causes) => {
    expect(await writeStatus({ conditions: [READY], ...status })).toEqual(causes);
  });

  it('accepts what the operator writes for such a server: escaped, bounded names', async () => {
    const status: MCPServerStatus = {
      conditions: [READY],
      discovery: {
        serverInfo: { name: 'evil\\e[2J', version: '1\\u202E0' },
        capabilities: ['tools'],
        tools: [{ name: 'fine', digest: 'sha256:0123456789ab' }],
      },
      drift: { invalidNames: ['evil\\e[2J', `${'n'.repeat(41)}… (3959 more characters)`] },
    };
    expect(await writeStatus(status)).toEqual([]);
    expect((await read()).status).toMatchObject(status);
  });
});

describe("the operator's status write", () => {
  const create = (name: string) =>
    api.createNamespacedCustomObject({
      ...target,
      namespace: ns.name,
      body: {
        apiVersion: API_VERSION,
        kind: 'MCPServer',
        metadata: { name },
        spec: { url: 'https://mcp.example.com/mcp' },
      },
    }) as Promise<MCPServer>;

  it('fails on a same-named successor of the server it was computed for', async () => {
    const client = connect(await loadClientConfig({ kubeconfig: inject('kubeconfig'), env: {} }));
    try {
      const first = await create('replaced');
      const computedFor = {
        name: 'replaced',
        namespace: ns.name,
        uid: first.metadata.uid!,
      };
      await client.request(
        statusWrite(computedFor, { observedGeneration: 1, conditions: [READY] }),
      );
      await api.deleteNamespacedCustomObject({ ...target, namespace: ns.name, name: 'replaced' });
      const successor = await create('replaced');

      const late = client.request(
        statusWrite(computedFor, { observedGeneration: 1, conditions: [READY] }),
      );
      await expect(late).rejects.toMatchObject({ status: 422 });
      const now = (await api.getNamespacedCustomObject({
        ...target,
        namespace: ns.name,
        name: 'replaced',
      })) as MCPServer;
      expect(now.metadata?.uid).toBe(successor.metadata.uid);
      expect(now.status).toBeUndefined();
    } finally {
      client.close();
    }
  });
});
