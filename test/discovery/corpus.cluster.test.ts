/**
 * Real published releases of an npm MCP server, each behind the real bridge, discovered by the
 * operator against the real control plane: a release approved, then a rollback to
 * server-filesystem 2025.8.21, whose fresh install resolves zod 4 and lists every inputSchema
 * without `type: object`. The rollback must not look like an outage (Ready stays True,
 * Discovered stays True): it is breaking drift in every emptied schema, and the schema
 * violations are findings in status and in `mcp-operator diff`.
 */

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Manager } from '../../src/controller/manager.ts';
import { installCrd } from '../api/install-crd.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bridgePolicy } from '../../src/controller/render/policy.ts';
import { resolveBaseline } from '../../src/tools/baseline.ts';
import type { BridgePolicy } from '../../src/tools/policy.ts';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import { callError, connect, startTestBridge, tempDir } from '../bridge/harness.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';
import { CLI } from '../support/cli.ts';
import { CORPUS, installed } from './corpus/packages.ts';
import { waitForCondition } from './operator.ts';

const kc = kubeConfig();
const ns = useNamespace('corpus', kc);
const k = cluster(kc, () => ns.name);
let operator: Manager;

beforeAll(async () => {
  await installCrd(kc);
  operator = await startOperator(ns.name);
});

afterAll(async () => {
  await operator?.stop();
});

const release = (spec: string) => CORPUS.find((server) => server.spec.endsWith(spec))!;

/** The release's stdio server, served over Streamable HTTP by the bridge (closed after the test). */
async function bridged(spec: string): Promise<string> {
  const { command } = await installed(release(spec));
  const bridge = await startTestBridge({ command, sessionMode: 'Shared' });
  return bridge.url;
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  const argv = [CLI, ...args, '-n', ns.name, '--kubeconfig', inject('kubeconfig')];
  try {
    return { code: 0, stdout: (await promisify(execFile)(process.execPath, argv)).stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

const conditionOf = (server: Awaited<ReturnType<typeof k.get>>, type: string) =>
  server.status?.conditions?.find((c) => c.type === type);

describe('server-filesystem, approved at 2025.11.25, rolled back to 2025.8.21', () => {
  it('is breaking drift with findings, not an outage', { timeout: 240_000 }, async () => {
    await k.create('fs', { url: await bridged('server-filesystem@2025.11.25') });
    const current = await waitForCondition(k, 'fs', 'Conformant', 'True', 'Conformant', 120_000);
    expect(current.status?.discovery?.toolCount).toBe(14);
    expect((await cli('approve', 'fs', '--apply')).code).toBe(0);
    await waitForCondition(k, 'fs', 'Drifted', 'False', 'ToolsMatch', 60_000);

    await k.patchSpec('fs', { url: await bridged('server-filesystem@2025.8.21') });
    const rolledBack = await waitForCondition(
      k,
      'fs',
      'Conformant',
      'False',
      'SchemaViolations',
      120_000,
    );
    expect(conditionOf(rolledBack, 'Ready')).toMatchObject({ status: 'True', reason: 'External' });
    expect(conditionOf(rolledBack, 'Discovered')).toMatchObject({ status: 'True' });
    const drifted = await waitForCondition(k, 'fs', 'Drifted', 'True', 'ToolsChanged', 60_000);
    expect(drifted.status?.discovery?.toolCount).toBe(14);
    expect(drifted.status?.discovery?.findingCount).toBe(13);
    expect(drifted.status?.discovery?.findings).toContainEqual({
      item: 'read_text_file',
      problem: 'inputSchema lacks type: object',
    });
    const changed = drifted.status?.drift?.changed ?? [];
    expect(changed).toHaveLength(14);
    expect(changed.every((c) => c.severity === 'breaking')).toBe(true);
    expect(changed.find((c) => c.name === 'read_text_file')?.fields).toContain('inputSchema');

    const diff = await cli('diff', 'fs');
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('inputSchema /properties/path: property path removed');
    expect(diff.stdout).toContain('FINDING  read_text_file  inputSchema lacks type: object');
  });
});

describe('server-everything, approved at 2026.8.31 with its prompts and resources', () => {
  it('rolled back to 2025.9.25, reports each kind that drifted', { timeout: 240_000 }, async () => {
    await k.create('everything', { url: await bridged('server-everything@2026.8.31') });
    const found = await waitForCondition(k, 'everything', 'Discovered', 'True', undefined, 120_000);
    expect(found.status?.discovery).toMatchObject({
      prompts: { count: 4 },
      resources: { count: 7 },
      resourceTemplates: { count: 2 },
    });
    expect((await cli('approve', 'everything', '--apply')).code).toBe(0);
    const approved = (await k.get('everything')).spec.tools?.approved;
    expect(approved?.prompts?.map((p) => p.name)).toEqual([
      'args-prompt',
      'completable-prompt',
      'resource-prompt',
      'simple-prompt',
    ]);
    expect(approved?.resourceTemplates).toHaveLength(2);
    await waitForCondition(k, 'everything', 'Drifted', 'False', 'ToolsMatch', 60_000);

    await k.patchSpec('everything', { url: await bridged('server-everything@2025.9.25') });
    const drifted = await waitForCondition(
      k,
      'everything',
      'Drifted',
      'True',
      'ToolsChanged',
      120_000,
    );
    expect(drifted.status?.discovery?.resources?.count).toBe(100);
    expect(drifted.status?.drift?.prompts).toEqual({
      added: ['complex_prompt', 'resource_prompt', 'simple_prompt'],
      removed: ['args-prompt', 'completable-prompt', 'resource-prompt', 'simple-prompt'],
    });
    expect(drifted.status?.drift?.resourceTemplates?.added).toEqual([
      'test://static/resource/{id}',
    ]);
    expect(conditionOf(drifted, 'Drifted')?.message).toContain(
      "Prompts: not approved 'complex_prompt', 'resource_prompt', 'simple_prompt'",
    );
    const diff = await cli('diff', 'everything');
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('REMOVED  prompt args-prompt  approved, no longer listed');
    expect(diff.stdout).toContain('ADDED    resource template test://static/resource/{id}');

    // Enforce, as render writes the policy from this approval: the approved release is served
    // whole, the rolled-back one shows nothing of what drifted and refuses to read it.
    const stored = (await k.get('everything')) as StoredMCPServer;
    const policy = bridgePolicy(stored, resolveBaseline(stored.spec.tools?.approved));
    const approvedRelease = await enforcedClient('server-everything@2026.8.31', policy);
    expect((await approvedRelease.listPrompts()).prompts).toHaveLength(4);
    expect((await approvedRelease.listResources()).resources).toHaveLength(7);
    expect((await approvedRelease.listResourceTemplates()).resourceTemplates).toHaveLength(2);
    await approvedRelease.close();
    const rolledBack = await enforcedClient('server-everything@2025.9.25', policy);
    expect((await rolledBack.listPrompts()).prompts).toEqual([]);
    expect((await rolledBack.listResources()).resources).toEqual([]);
    expect((await rolledBack.listResourceTemplates()).resourceTemplates).toEqual([]);
    const listed = await callError(rolledBack.readResource({ uri: 'test://static/resource/1' }));
    expect(listed.data).toEqual({ reason: 'not-approved', uri: 'test://static/resource/1' });
    const templated = await callError(
      rolledBack.readResource({ uri: 'test://static/resource/150' }),
    );
    expect(templated.data).toEqual({
      reason: 'no-approved-template',
      uri: 'test://static/resource/150',
    });
    await rolledBack.close();
  });
});

/** A client of the release behind a bridge enforcing `policy`. */
async function enforcedClient(spec: string, policy: BridgePolicy) {
  const file = join(await tempDir('policy'), 'policy.json');
  await writeFile(file, JSON.stringify(policy));
  const { command } = await installed(release(spec));
  const bridge = await startTestBridge({ command, sessionMode: 'Shared', policyFile: file });
  return connect(bridge.url);
}
