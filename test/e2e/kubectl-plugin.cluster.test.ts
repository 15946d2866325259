/**
 * The review commands as a kubectl plugin: the real `kubectl` (built by the harness, first on
 * PATH) finds `kubectl-mcp` on PATH and runs `kubectl mcp status|diff|approve` against the
 * real API server, with kubectl's flags (`-n`, `--context`, `--kubeconfig`, `-o yaml|json`).
 * The MCPServer is a url server (server-everything from npm serving HTTP itself), discovered
 * by the operator in-process.
 *
 * `kubectl-mcp` here is a two-line shell script that runs this checkout's src/kubectl-mcp.ts
 * with node, as the npm bin (dist/kubectl-mcp.js) runs the built one.
 */

import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Manager } from '../../src/controller/manager.ts';
import type { MCPServerStatus } from '../../src/api/v1alpha1/mcpserver.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';
import { waitForCondition } from '../discovery/operator.ts';
import { type Running, startEverything } from '../discovery/servers.ts';

const PLUGIN = join(import.meta.dirname, '..', '..', 'src', 'kubectl-mcp.ts');
const NAME = 'everything';

const kc = kubeConfig();
const ns = useNamespace('plugin', kc);
const k = cluster(kc, () => ns.name);
let operator: Manager;
let everything: Running;
let dir: string;
let kubeconfig: string;

/** `kubectl <args>` with the plugin's directory on PATH after kubectl's own. */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', args, {
      env: { ...process.env, KUBECONFIG: kubeconfig, PATH: `${process.env.PATH}:${dir}` },
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, ...out }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-plugin-'));
  const shim = join(dir, 'kubectl-mcp');
  await writeFile(shim, `#!/bin/sh\nexec '${process.execPath}' '${PLUGIN}' "$@"\n`);
  await chmod(shim, 0o755);
  // The test cluster's kubeconfig, with a second context that is not the current one.
  const config = load(await readFile(inject('kubeconfig'), 'utf8')) as {
    contexts: { name: string; context: Record<string, string> }[];
    'current-context': string;
  };
  const current = config.contexts.find((c) => c.name === config['current-context'])!;
  config.contexts.push({ name: 'review', context: { ...current.context, namespace: ns.name } });
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, dump(config));
  await installCrd(kc);
  operator = await startOperator(ns.name);
  everything = await startEverything();
  await k.create(NAME, { url: everything.url });
  await waitForCondition(k, NAME, 'Discovered', 'True', 'Succeeded');
});

afterAll(async () => {
  await operator?.stop();
  await everything?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('kubectl mcp', () => {
  it('is a plugin kubectl finds on PATH', async () => {
    const listed = await kubectl('plugin', 'list');
    expect(listed.stdout).toContain(join(dir, 'kubectl-mcp'));
    const help = await kubectl('mcp', '--help');
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('kubectl mcp <command>')]);
  });

  it('status: conditions and tools, or the status object with -o json|yaml', async () => {
    const server = await k.get(NAME);
    const text = await kubectl('mcp', 'status', NAME, '-n', ns.name);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Discovered\s+True\s+Succeeded/);
    expect(text.stdout).toContain(`tools: ${server.status?.discovery?.toolCount}`);
    const json = await kubectl('mcp', 'status', NAME, '-n', ns.name, '-o', 'json');
    expect((JSON.parse(json.stdout) as MCPServerStatus).discovery).toEqual(
      server.status?.discovery,
    );
    const yaml = await kubectl('mcp', 'status', NAME, '-n', ns.name, '-o', 'yaml');
    expect((load(yaml.stdout) as MCPServerStatus).discovery).toEqual(server.status?.discovery);
    const wrong = await kubectl('mcp', 'status', NAME, '-n', ns.name, '-o', 'wide');
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringContaining('-o must be one of')]);
  });

  it('--context picks a context of the kubeconfig, and names one that is missing', async () => {
    const other = await kubectl('mcp', 'status', NAME, '--context', 'review');
    expect(other.code).toBe(0);
    expect(other.stdout.startsWith(`${ns.name}/${NAME}\n`)).toBe(true);
    const missing = await kubectl('mcp', 'status', NAME, '--context', 'nowhere');
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringContaining('no context nowhere'),
    ]);
  });

  it('diff, then approve -o json, approve --apply, and diff is clean', async () => {
    expect((await kubectl('mcp', 'diff', NAME, '-n', ns.name)).code).toBe(1);
    const printed = await kubectl('mcp', 'approve', NAME, '-n', ns.name, '-o', 'json');
    const block = JSON.parse(printed.stdout) as {
      spec: { tools: { approved: { tools: unknown[]; provenance: unknown } } };
    };
    const server = await k.get(NAME);
    expect(block.spec.tools.approved.tools).toHaveLength(server.status!.discovery!.toolCount!);
    expect(block.spec.tools.approved.provenance).toEqual({
      serverInfo: server.status?.discovery?.serverInfo,
    });
    const applied = await kubectl('mcp', 'approve', NAME, '-n', ns.name, '--apply');
    // It shows what it approves, then says what it wrote (a first approval needs no --yes).
    expect([applied.code, applied.stdout]).toEqual([
      0,
      expect.stringMatching(/\nApproved \d+ entr(y|ies) of [^\n]+\.\n$/),
    ]);
    await waitForCondition(k, NAME, 'Drifted', 'False', 'ToolsMatch');
    const clean = await kubectl('mcp', 'diff', NAME, '-n', ns.name);
    expect([clean.code, clean.stdout]).toEqual([0, expect.stringContaining('No drift')]);
  });
});
