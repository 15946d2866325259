/**
 * Where the bridge allocates per `tools/call`: V8's sampling heap profiler, keeping the
 * samples of objects that were collected again (most of a call's garbage lives shorter than
 * one scavenge), summed by the function that allocated. Bytes are those sampled, scaled by V8
 * to an estimate of all allocations; divided by the measured calls.
 *
 *   node bench/bridge-allocations.ts [--calls 20000] [--warm-up 5000] [--sessions 1]
 *                                    [--mode PerSession] [--cli <cli.ts of a build>]
 *                                    [--interval 512] [--top 25] [--save <file.heapprofile>]
 *
 * The bridge runs with --inspect on a loopback port; the profiler is started after the
 * warm-up. Its own cost (one stack walk per sample) slows the bridge, not the counts.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { everythingServer } from '../test/bridge/go-server.ts';
import { CLI } from '../test/support/cli.ts';
import { freePort } from '../test/support/ports.ts';
import { bridgeCommand, calls, openSession, waitUp } from './bridge-calls.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    'warm-up': { type: 'string', default: '5000' },
    sessions: { type: 'string', default: '1' },
    mode: { type: 'string', default: 'PerSession' },
    cli: { type: 'string', default: CLI },
    interval: { type: 'string', default: '512' },
    top: { type: 'string', default: '25' },
    save: { type: 'string' },
  },
});
const CALLS = Number(values.calls);
const SESSIONS = Number(values.sessions);
const START_TIMEOUT_MS = 60_000;

/** A Chrome DevTools Protocol client over the inspector's WebSocket. */
async function devtools(inspectPort: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await once(socket, 'open');
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const reply = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (reply.id !== undefined) waiting.get(reply.id)?.(reply.result);
  });
  return {
    send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    close: () => socket.close(),
  };
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Self bytes by allocating function (and its caller, for the anonymous and the builtins). */
function bySite(root: ProfileNode): Map<string, number> {
  const sites = new Map<string, number>();
  const frame = (node: ProfileNode): string => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(src|node_modules)\//, '$1/').replace(/^node:/, '');
    return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
  };
  const walk = (node: ProfileNode, parent: string): void => {
    const here = frame(node);
    if (node.selfSize > 0) {
      const name = `${here}  ← ${parent}`;
      sites.set(name, (sites.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(root, '');
  return sites;
}

const server = await everythingServer();
const port = await freePort();
const inspectPort = await freePort();
const child = spawn(
  process.execPath,
  [`--inspect=127.0.0.1:${inspectPort}`, ...bridgeCommand(values.cli, values.mode, port, server)],
  { stdio: ['ignore', 'ignore', 'ignore'] },
);
try {
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitUp(url, START_TIMEOUT_MS);
  const sessions = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(await openSession(url));
  await calls(url, sessions, Number(values['warm-up']));
  const cdp = await devtools(inspectPort);
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.startSampling', {
    samplingInterval: Number(values.interval),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await calls(url, sessions, CALLS);
  const { profile } = (await cdp.send('HeapProfiler.stopSampling')) as {
    profile: { head: ProfileNode };
  };
  cdp.close();
  if (values.save) await writeFile(values.save, JSON.stringify(profile));
  const sites = [...bySite(profile.head)].sort((a, b) => b[1] - a[1]);
  const total = sites.reduce((sum, [, bytes]) => sum + bytes, 0);
  console.log(
    `Bridge allocations per tools/call (sampling heap profiler), ${values.mode}, ${SESSIONS} session(s), ${CALLS} calls: ${(total / CALLS).toFixed(0)} bytes`,
  );
  for (const [site, bytes] of sites.slice(0, Number(values.top))) {
    console.log(`${(bytes / CALLS).toFixed(0).padStart(7)}  ${site}`);
  }
} finally {
  child.kill('SIGTERM');
}
