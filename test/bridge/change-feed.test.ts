/**
 * The bridge's change feed and the operator's watch of it, with real bridges in front of a real
 * SDK server whose tools come from a file (test/e2e/fixtures/tools-from-file.ts): rewriting the
 * file makes the child announce `notifications/tools/list_changed`, as a server changing its
 * tools mid-session does.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed, MAX_PAGES } from '../../src/bridge/front/change-feed.ts';
import type { RunningBridge } from '../../src/bridge/server.ts';
import { ChangeWatch } from '../../src/discovery/change-watch.ts';
import { CHANGES_PATH, formatSeen, parseSeen } from '../../src/mcp/change-feed.ts';
import { DISCOVERY_TOKEN_HEADER } from '../../src/mcp/metadata.ts';
import { waitFor } from '../support/wait.ts';
import { testLogger } from '../support/log.ts';
import { NODE, connect, startTestBridge, tempDir } from './harness.ts';

const FIXTURE = fileURLToPath(new URL('../e2e/fixtures/tools-from-file.ts', import.meta.url));
const TOKEN = 'discovery-token-of-this-test';
const tool = (description: string) => ({
  name: 'search',
  description,
  inputSchema: { type: 'object' },
});

/**
 * The server's next release: the tools file replaced in one step (a rename), so that its child
 * sees one change and announces it once.
 */
async function release(file: string, tools: object[]): Promise<void> {
  await writeFile(`${file}.next`, JSON.stringify(tools));
  await rename(`${file}.next`, file);
}

/** A bridge with a discovery token, in front of the file-driven server. */
async function feedBridge() {
  const dir = await tempDir('feed');
  const tools = join(dir, 'tools.json');
  const tokenFile = join(dir, 'token');
  await writeFile(tools, JSON.stringify([tool('v1')]));
  await writeFile(tokenFile, TOKEN);
  const bridge = await startTestBridge({
    command: [NODE, FIXTURE, tools],
    discoveryTokenFile: tokenFile,
  });
  const changes = new URL(CHANGES_PATH, bridge.url);
  return { bridge, tools, changes };
}

const withToken = (token: string) => ({ [DISCOVERY_TOKEN_HEADER]: token });

const poll = (url: URL, query = '', headers: Record<string, string> = withToken(TOKEN)) =>
  fetch(`${url.href}${query}`, { headers });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the change feed of the bridge', () => {
  it('is there only with a discovery token, and only for its holder', async () => {
    const plain = await startTestBridge({ command: [NODE, FIXTURE, '/nonexistent'] });
    expect((await fetch(new URL(CHANGES_PATH, plain.url))).status).toBe(404);
    const { changes } = await feedBridge();
    expect((await poll(changes, '', {})).status).toBe(401);
    expect((await poll(changes, '', withToken('someone-else'))).status).toBe(401);
    expect((await fetch(changes, { method: 'POST' })).status).toBe(405);
  });

  it('answers a caller that knows nothing at once, and one that is up to date on a change', async () => {
    const { tools, changes } = await feedBridge();
    const first = (await (await poll(changes, '?wait=5')).json()) as {
      epoch: string;
      generation: number;
    };
    expect(first.generation).toBe(0);

    // Up to date: the poll waits out its time when nothing changes.
    const started = performance.now();
    const quiet = await (await poll(changes, `?wait=1&seen=${formatSeen([first])}`)).json();
    expect(quiet).toEqual(first);
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);

    // A session's child announces new tools mid-session: the waiting poll is answered.
    const session = await connect(changes.href.replace(CHANGES_PATH, '/mcp'));
    cleanups.push(() => session.close());
    await session.listTools();
    const waiting = poll(changes, `?wait=30&seen=${formatSeen([first])}`);
    await release(tools, [tool('v2')]);
    expect(await (await waiting).json()).toEqual({
      epoch: first.epoch,
      generation: 1,
      packages: [],
    });
  });
});

describe('ChangeFeed', () => {
  it('counts a tools/list page or serverInfo unlike the last, never the first sighting', () => {
    const feed = new ChangeFeed();
    feed.observeResult('tools/list', { tools: [tool('v1')] }, {});
    feed.observeResult('tools/list', { tools: [tool('v1')] }, {});
    feed.observeResult('initialize', { serverInfo: { name: 's', version: '1.0.0' } }, {});
    expect(feed.mark.generation).toBe(0);
    // A second page is compared with itself, not with the first.
    feed.observeResult('tools/list', { tools: [] }, { cursor: 'page-2' });
    expect(feed.mark.generation).toBe(0);
    // A new child that resolved a new release and never announced it.
    feed.observeResult('tools/list', { tools: [tool('v2')] }, {});
    feed.observeResult('initialize', { serverInfo: { name: 's', version: '1.1.0' } }, {});
    expect(feed.mark.generation).toBe(2);
  });

  it('reads at most a bounded list of marks, skipping malformed ones', () => {
    const seen = parseSeen(
      ['a-1.2', 'bad', 'b.x', 'c.-1', ...Array<string>(40).fill('d.1')].join(','),
    );
    expect(seen[0]).toEqual({ epoch: 'a-1', generation: 2 });
    // The first 16 entries are read; of those, the three malformed ones are skipped.
    expect(seen).toHaveLength(13);
    expect(seen.slice(1).every((m) => m.epoch === 'd' && m.generation === 1)).toBe(true);
  });
});

/** A Service in front of several bridges: each request goes to the next one. */
async function roundRobin(targets: URL[]): Promise<string> {
  let next = 0;
  const server: Server = createServer((req, res) => {
    const target = targets[next++ % targets.length]!;
    void fetch(new URL(req.url ?? '/', target), {
      headers: {
        [DISCOVERY_TOKEN_HEADER]: String(req.headers[DISCOVERY_TOKEN_HEADER.toLowerCase()]),
      },
    }).then(
      async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      },
      () => res.writeHead(502).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Long-polls the bridge holds open, from its gauge. */
async function waitingPolls(bridge: RunningBridge): Promise<number | undefined> {
  const gauge = bridge.metrics.registry.getSingleMetric('mcp_bridge_change_feed_waiting');
  return (await gauge?.get())?.values[0]?.value;
}

describe('ChangeWatch', () => {
  function watching(endpoint: string) {
    const changes: number[] = [];
    const dispatcher = new Agent();
    const watch = new ChangeWatch({
      dispatcher,
      onChange: () => changes.push(performance.now()),
      log: testLogger(),
      waitSeconds: 1,
      minGapMs: 100,
    });
    watch.watch('ns/server', { endpoint, token: () => Promise.resolve(TOKEN) });
    cleanups.push(async () => {
      watch.stop();
      await dispatcher.close();
    });
    return changes;
  }

  it('asks for discovery once per change, and not while nothing changes', async () => {
    const { bridge, tools } = await feedBridge();
    const changes = watching(bridge.url);
    const session = await connect(bridge.url);
    cleanups.push(() => session.close());
    await waitFor('the watch to poll', async () => (await waitingPolls(bridge)) === 1);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(changes).toEqual([]);
    await release(tools, [tool('v2')]);
    await waitFor('a discovery to be asked for', () => changes.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(changes).toHaveLength(1);
  });

  it('tells replicas behind one Service apart: only a change is news', async () => {
    const a = await feedBridge();
    const b = await feedBridge();
    const changes = watching(await roundRobin([a.changes, b.changes]));
    // The second replica is news once (a bridge not seen before), then polls alternate quietly.
    await waitFor('the second replica to be seen', () => changes.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(changes).toHaveLength(1);
    const session = await connect(b.bridge.url);
    cleanups.push(() => session.close());
    await session.listTools();
    await release(b.tools, [tool('v2')]);
    await waitFor('the change on one replica to be seen', () => changes.length === 2);
  });
});

describe('the pages the change feed remembers', () => {
  it('are at most MAX_PAGES: a page past them is not compared, the first ones still are', () => {
    const feed = new ChangeFeed();
    const page = (cursor: string, description: string) =>
      feed.observeResult('tools/list', { tools: [tool(description)] }, cursor ? { cursor } : {});
    page('', 'v1');
    for (let n = 1; n < 3 * MAX_PAGES; n++) page(`cursor-${n}`, 'v1');
    const before = feed.mark.generation;
    page(`cursor-${2 * MAX_PAGES}`, 'v2');
    expect(feed.mark.generation).toBe(before);
    page(`cursor-${MAX_PAGES - 1}`, 'v2');
    expect(feed.mark.generation).toBe(before + 1);
    page('', 'v2');
    expect(feed.mark.generation).toBe(before + 2);
  });
});
