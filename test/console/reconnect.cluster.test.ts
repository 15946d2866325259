/**
 * The fleet page across a reset of the console's watches: the console talks to the real API
 * server through a TCP proxy the test cuts, so its watches end with ECONNRESET and are retried,
 * as in a bench run whose log showed them. Changes made while the console was cut off reach the
 * page, and the table ends in drift order (drifted rows first, each group by name), with every
 * server once. Debian's Chromium shows the page; no DOM emulation.
 */

import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_VERSION, type MCPServerStatus } from '../../src/api/v1alpha1/mcpserver.ts';
import { MCP_SERVER } from '../../src/api/v1alpha1/stored.ts';
import { startConsole, type RunningConsole } from '../../src/console/start.ts';
import { connect, type KubeClient } from '../../src/kube/client.ts';
import { loadClientConfig } from '../../src/kube/config.ts';
import { collectionPath, objectPath } from '../../src/kube/resources.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';
import { CuttableProxy } from '../support/cuttable-proxy.ts';
import { launchBrowser, type RealBrowser } from './browser.ts';

const kc = kubeConfig();
const ns = useNamespace('console-reconnect', kc);

const SERVERS = 24;
/** Drifted at the start: every sixth. */
const driftedAtStart = (i: number) => i % 6 === 0;

let direct: KubeClient;
let proxy: CuttableProxy;
let console_: RunningConsole;
let browser: RealBrowser;
/** The console's warnings: the test shows its watches were really reset. */
const warnings: string[] = [];

/** A status as the operator writes it: Ready, and Drifted True or False. */
function statusOf(drifted: boolean): MCPServerStatus {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: `${type} ${reason}`,
    lastTransitionTime: now,
    observedGeneration: 1,
  });
  return {
    observedGeneration: 1,
    conditions: [
      condition('Ready', 'True', 'External'),
      drifted
        ? condition('Drifted', 'True', 'ToolsChanged')
        : condition('Drifted', 'False', 'ToolsMatch'),
    ],
    discovery: { toolCount: 3 },
    // A merge patch: null takes a previous drift away.
    drift: drifted
      ? { changed: [{ name: 'tool_0', fields: ['description'], severity: 'description-only' }] }
      : null,
  } as unknown as MCPServerStatus;
}

async function writeStatus(i: number, drifted: boolean): Promise<void> {
  await direct.request({
    method: 'PATCH',
    patchType: 'merge',
    path: objectPath(MCP_SERVER, ns.name, `srv-${i}`, 'status'),
    body: { status: statusOf(drifted) },
  });
}

/** The fleet's rows as the page shows them: key, and D (drifted) or M (matching). */
function shownRows(page: Page): Promise<string[]> {
  return page.$$eval('table.fleet tbody tr', (rows) =>
    rows.map((tr) => {
      const row = tr as unknown as { dataset: { key?: string }; textContent: string };
      return `${row.dataset.key} ${row.textContent.includes('ToolsChanged') ? 'D' : 'M'}`;
    }),
  );
}

/** The rows in the page's default order: drifted first, then by key (as the page compares). */
function driftOrder(drifted: (i: number) => boolean): string[] {
  const rows = Array.from({ length: SERVERS }, (_, i) => ({
    key: `${ns.name}/srv-${i}`,
    drifted: drifted(i),
  }));
  rows.sort((a, b) => Number(b.drifted) - Number(a.drifted) || a.key.localeCompare(b.key));
  return rows.map((row) => `${row.key} ${row.drifted ? 'D' : 'M'}`);
}

beforeAll(async () => {
  await installCrd(kc);
  const config = await loadClientConfig({ kubeconfig: inject('kubeconfig'), env: {} });
  direct = connect(config);
  for (let i = 0; i < SERVERS; i++) {
    await direct.request({
      method: 'POST',
      path: collectionPath(MCP_SERVER, ns.name),
      body: {
        apiVersion: API_VERSION,
        kind: 'MCPServer',
        metadata: { name: `srv-${i}` },
        spec: { url: `http://srv-${i}.example/mcp`, discovery: { enabled: false } },
      },
    });
    await writeStatus(i, driftedAtStart(i));
  }
  proxy = new CuttableProxy(new URL(config.server));
  const port = await proxy.listen();
  console_ = await startConsole({
    // Same credentials and server certificate (it names 127.0.0.1), through the proxy.
    clientConfig: { ...config, server: `https://127.0.0.1:${port}` },
    namespaces: [ns.name],
    port: 0,
    log: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }),
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await console_?.close();
  await proxy?.close();
  direct?.close();
});

describe('the fleet page when the console’s watches are reset', () => {
  it('shows the changes made meanwhile, every server once, in drift order', async () => {
    const page = await (await browser.context()).newPage();
    await page.goto(console_.url);
    await expect.poll(() => shownRows(page)).toEqual(driftOrder(driftedAtStart));

    // The console's connections are cut and refused for a while; the changes happen meanwhile.
    proxy.refuse(true);
    const changed = new Map([
      [1, true],
      [13, true],
      [6, false],
      [23, true],
    ]);
    for (const [i, drifted] of changed) await writeStatus(i, drifted);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    proxy.refuse(false);

    const now = (i: number) => changed.get(i) ?? driftedAtStart(i);
    await expect
      .poll(() => shownRows(page), { timeout: 30_000, interval: 250 })
      .toEqual(driftOrder(now));
    expect(warnings.join('\n')).toMatch(/"resource":"mcpservers".*list\/watch failed; retrying/);

    // And a cut while changes arrive: the watch resumes and misses none of them.
    const more = new Map([
      [2, true],
      [12, false],
    ]);
    for (const [i, drifted] of more) {
      proxy.cut();
      await writeStatus(i, drifted);
    }
    const later = (i: number) => more.get(i) ?? now(i);
    await expect
      .poll(() => shownRows(page), { timeout: 30_000, interval: 250 })
      .toEqual(driftOrder(later));
    await page.context().close();
  });
});
