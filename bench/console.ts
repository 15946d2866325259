/**
 * The review console at N MCPServers (1,000 by default), in a real browser (Debian's Chromium):
 *
 * - fleet first paint: from the console URL's navigation to the first frame that shows the
 *   fleet's rows (the page's `console:fleet-painted` mark: a task queued from the animation
 *   frame after the rows were drawn), against the floor: the same browser's first contentful
 *   paint of a static HTML table of the same rows, from a bare node:http server (the table is
 *   all that page has, so its first paint is its first rows);
 * - a status change on the page: from the status write to its row showing the new drift, N
 *   times, against the floor: the same write seen by a bare watch of the API server;
 * - the console process's RSS (VmRSS after the run and its peak, VmHWM), against an idle Node.
 *
 * The console runs as it ships (`npm run build`, `node dist/cli.js console`), as its own
 * process, against the local control plane (or the cluster KUBECONFIG names). The MCPServers
 * have statuses written by the bench as the operator would (no operator runs): Ready, a tool
 * list, drift on some.
 *
 * Usage: npm run bench:console -- [servers=1000] [changes=10]
 * Prints each figure with its floor and ratio, and the load average before and after.
 */

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { API_VERSION, type MCPServerStatus } from '../src/api/v1alpha1/mcpserver.ts';
import { MCP_SERVER } from '../src/api/v1alpha1/stored.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { collectionPath, objectPath } from '../src/kube/resources.ts';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/console/browser.ts';
import {
  benchCluster,
  createNamespace,
  peakRssMb,
  pool,
  removeNamespace,
  rssMb,
} from './harness.ts';

const servers = Number(process.argv[2] ?? 1000);
const changes = Number(process.argv[3] ?? 10);
const root = join(import.meta.dirname, '..');

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

function statusOf(i: number, drifted: boolean): MCPServerStatus {
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
      condition('Discovered', 'True', 'Succeeded'),
      drifted
        ? condition('Drifted', 'True', 'ToolsChanged')
        : condition('Drifted', 'False', 'ToolsMatch'),
    ],
    discovery: {
      lastSuccessTime: now,
      toolCount: 20,
      tools: Array.from({ length: 20 }, (_, t) => ({
        name: `tool_${t}`,
        digest: `sha256:${(i * 100 + t).toString(16).padStart(12, '0')}`,
      })),
    },
    ...(drifted
      ? {
          drift: {
            changed: [{ name: 'tool_0', fields: ['description'], severity: 'description-only' }],
            since: now,
          },
        }
      : {}),
  } as MCPServerStatus;
}

async function writeStatus(client: KubeClient, namespace: string, i: number, drifted: boolean) {
  await client.request({
    method: 'PATCH',
    patchType: 'merge',
    path: objectPath(MCP_SERVER, namespace, `srv-${i}`, 'status'),
    body: { status: statusOf(i, drifted) },
  });
}

async function build(): Promise<void> {
  process.stderr.write('building (npm run build)…\n');
  await promisify(execFile)('npm', ['run', 'build'], { cwd: root });
}

/** `node dist/cli.js console`, as it ships; resolves once it printed its URL. */
async function startConsole(kubeconfig: string, namespace: string) {
  const child = spawn(
    process.execPath,
    [join(root, 'dist', 'cli.js'), 'console', '-n', namespace, `--kubeconfig=${kubeconfig}`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const url = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(line)?.[1];
    if (url !== undefined) return { child, url, base: new URL(url).origin };
  }
  throw new Error('the console exited before printing its URL');
}

/** The floor of first paint: the same rows as a static table from a bare node:http server. */
async function staticTable(n: number) {
  const rows = Array.from(
    { length: n },
    (_, i) =>
      `<tr><td><a href="#">srv-${i}</a></td><td>ns</td><td>Ready</td><td>url</td><td>20</td><td>ToolsMatch</td><td>0</td><td>1m ago</td></tr>`,
  ).join('');
  const html = `<!doctype html><html lang="en"><title>floor</title><table><tbody>${rows}</tbody></table></html>`;
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end(html),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => server.close(),
  };
}

/**
 * Resolves once `condition` (page code) holds, checked every frame in the page. Not
 * waitForFunction: that evaluates its text with eval, which the console's CSP refuses.
 */
function until(page: Page, condition: string): Promise<unknown> {
  return page.evaluate(
    `new Promise((resolve) => { const check = () => (${condition}) ? resolve(true) : requestAnimationFrame(check); check(); })`,
  );
}

/** In the page: every row drawn. (Page code is passed as text: this file has no DOM types.) */
const allRows = `document.querySelectorAll('table.fleet tbody tr').length === ${servers}`;
/**
 * In the page: whether the rows are all there with the drifted ones first, and the first few
 * rows out of place (a drifted row after a matching one).
 */
const inDriftOrder = `(() => {
  const rows = [...document.querySelectorAll('table.fleet tbody tr')];
  const drifted = rows.map((tr) => tr.textContent.includes('ToolsChanged'));
  const firstMatching = drifted.indexOf(false);
  const misplaced = firstMatching < 0 ? [] : rows.slice(firstMatching).filter((tr, i) => drifted[firstMatching + i]).slice(0, 5).map((tr) => tr.dataset.key);
  return { ok: rows.length === ${servers} && misplaced.length === 0, rows: rows.length, misplaced };
})()`;
/** How long after the last change the rows may take to reach their places. */
const ORDER_DEADLINE_MS = 15_000;
/** The Paint Timing entry of a page's first text (https://w3c.github.io/paint-timing/). */
const FIRST_PAINT = 'first-contentful-paint';
/** In the page: when a performance mark was set, in ms since the navigation started. */
const markTime = (name: string) => `performance.getEntriesByName('${name}')[0].startTime`;

/**
 * The first-paint goal against the same run's static table: the issue asks for under a second
 * at 1,000 servers; on a quiet machine the static table paints in a small part of that, and
 * the console's page, modules and fleet request may take this much longer, not more.
 */
const PAINT_RATIO_GOAL = 1.5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function main() {
  const before = load();
  await build();
  const cluster = await benchCluster();
  const { client } = cluster;
  const namespace = await createNamespace(client, 'console-bench');
  const browser = await launchBrowser();
  let consoleProcess: ChildProcess | undefined;
  try {
    process.stderr.write(`creating ${servers} MCPServers with statuses…\n`);
    const indexes = Array.from({ length: servers }, (_, i) => i);
    await pool(indexes, 16, async (i) => {
      await client.request({
        method: 'POST',
        path: collectionPath(MCP_SERVER, namespace),
        body: {
          apiVersion: API_VERSION,
          kind: 'MCPServer',
          metadata: { name: `srv-${i}` },
          spec: { url: `http://srv-${i}.example/mcp`, discovery: { enabled: false } },
        },
      });
      await writeStatus(client, namespace, i, i % 10 === 0);
    });

    const idle = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idleRss = await rssMb(idle.pid!);
    idle.kill();

    const console_ = await startConsole(cluster.kubeconfig, namespace);
    consoleProcess = console_.child;
    const context = await browser.context();
    const page = await context.newPage();

    // First paint, three times (the browser's caches are warm after the first).
    const paints: number[] = [];
    for (let run = 0; run < 3; run++) {
      await page.goto(console_.url);
      await until(page, allRows);
      paints.push(await page.evaluate<number>(markTime('console:fleet-painted')));
    }
    const floorServer = await staticTable(servers);
    const floorPage = await context.newPage();
    const floors: number[] = [];
    for (let run = 0; run < 3; run++) {
      await floorPage.goto(floorServer.url);
      await until(floorPage, `performance.getEntriesByName('${FIRST_PAINT}').length > 0`);
      floors.push(await floorPage.evaluate<number>(markTime(FIRST_PAINT)));
    }
    floorServer.close();

    // A status change, seen on the page and by a bare watch. A second EventSource in the page
    // notes when each change reaches the browser, to tell the console's part from the page's.
    await page.goto(console_.url);
    await until(page, allRows);
    await page.evaluate(`(() => {
      window.__arrived = {};
      new EventSource('/api/stream').addEventListener('message', (event) => {
        const message = JSON.parse(event.data);
        if (message.type === 'upsert') window.__arrived[message.row.key] = performance.timeOrigin + performance.now();
      });
    })()`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen: number[] = [];
    const arrived: number[] = [];
    const watched: number[] = [];
    for (let c = 0; c < changes; c++) {
      const i = 1 + c * Math.floor(servers / changes);
      const drifted = i % 10 !== 0;
      const key = `${namespace}/srv-${i}`;
      const abort = new AbortController();
      let watchSeen: number | undefined;
      const started = performance.now();
      const watch = client
        .watch(
          {
            path: collectionPath(MCP_SERVER, namespace),
            query: { fieldSelector: `metadata.name=srv-${i}`, resourceVersion: '0' },
            signal: abort.signal,
          },
          (event) => {
            const status = (event.object as { status?: MCPServerStatus }).status;
            const drift = status?.conditions?.find((cond) => cond.type === 'Drifted');
            if (
              watchSeen === undefined &&
              (drift?.status === 'True') === drifted &&
              event.type === 'MODIFIED'
            ) {
              watchSeen = performance.now();
            }
          },
        )
        .catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await page.evaluate(`delete window.__arrived['${key}']`);
      const t0 = performance.now();
      const wall0 = performance.timeOrigin + t0;
      await writeStatus(client, namespace, i, drifted);
      const reason = drifted ? 'ToolsChanged' : 'ToolsMatch';
      await until(
        page,
        `document.querySelector('tr[data-key="${key}"]')?.textContent.includes('${reason}')`,
      );
      seen.push(performance.now() - t0);
      const at = await page.evaluate<number | undefined>(`window.__arrived['${key}']`);
      if (at !== undefined) arrived.push(at - wall0);
      abort.abort();
      await watch;
      if (watchSeen !== undefined) watched.push(Math.max(0, watchSeen - Math.max(t0, started)));
    }
    // The changed rows move to their places once changes pause (the page waits for a quiet
    // second, then a frame): drifted rows first. Waited for, not slept on: on a loaded machine
    // the page's timer and frame come late, and a fixed sleep failed the order check there.
    const lastChange = performance.now();
    const ordered = await Promise.race([
      until(page, `${inDriftOrder}.ok`).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), ORDER_DEADLINE_MS)),
    ]);
    const reordered = performance.now() - lastChange;
    if (!ordered) {
      const seenOrder = await page.evaluate<{ rows: number; misplaced: string[] }>(inDriftOrder);
      throw new Error(
        `the fleet table is not in drift order ${ORDER_DEADLINE_MS} ms after the changes: ${seenOrder.rows} rows; first misplaced: ${seenOrder.misplaced.join(', ')}`,
      );
    }
    const rss = await rssMb(console_.child.pid!);
    const peak = await peakRssMb(console_.child.pid!);
    console_.child.kill('SIGINT');
    await once(console_.child, 'exit');

    const paint = median(paints);
    const floor = median(floors);
    const change = median(seen);
    const watchFloor = watched.length === 0 ? NaN : median(watched);
    console.log(`console bench: ${servers} MCPServers, ${changes} status changes`);
    console.log(`load average before: ${before}; after: ${load()}`);
    console.log(
      `fleet first paint: median ${ms(paint)} (runs ${paints.map(ms).join(', ')}); static table's first paint ${ms(floor)} (runs ${floors.map(ms).join(', ')}); ratio ${(paint / floor).toFixed(2)}; goal ≤ ${PAINT_RATIO_GOAL}× the static table: ${paint <= PAINT_RATIO_GOAL * floor ? 'met' : 'missed'}; < 1000 ms: ${paint < 1000 ? 'met' : 'missed'}`,
    );
    console.log(
      `status change on the page: median ${ms(change)}, max ${ms(Math.max(...seen))} (${seen.map(ms).join(', ')}); at the browser (stream): median ${ms(median(arrived))}, max ${ms(Math.max(...arrived))}; bare watch floor median ${ms(watchFloor)}, max ${ms(Math.max(...watched))}; goal < 1000 ms: ${Math.max(...seen) < 1000 ? 'met' : 'missed'}`,
    );
    console.log(
      `rows in drift order ${ms(reordered)} after the last change (the page waits for a quiet second)`,
    );
    console.log(
      `console RSS: ${rss.toFixed(1)} MiB now, ${peak.toFixed(1)} MiB peak; idle node ${idleRss.toFixed(1)} MiB; goal < 100 MiB: ${peak < 100 ? 'met' : 'missed'}`,
    );
  } finally {
    // On a failure too: left running, the console outlives the bench and retries its watches
    // against the stopped control plane (the ECONNRESET, then ECONNREFUSED, lines in its log).
    if (consoleProcess?.exitCode === null && consoleProcess.signalCode === null) {
      consoleProcess.kill('SIGINT');
      await once(consoleProcess, 'exit');
    }
    await browser.close();
    await removeNamespace(client, namespace).catch(() => undefined);
    await cluster.stop();
  }
}

await main();
