/**
 * The EventRecorder under an API server that stops answering: a reconcile never waits on more
 * than the backlog, a flood is dropped (and logged once), and what was queued is still sent.
 *
 * The API server here is a local HTTP server that holds every Event POST until the test lets
 * it go: a real kube-apiserver cannot be made to stall its Event writes on demand, and the
 * recorder's backlog only shows while its sends are stuck.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EventRecorder } from '../../src/controller/event-recorder.ts';
import { connect, type KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/resources.ts';
import { waitFor } from '../support/wait.ts';

/** Sent at once and queued, as the recorder documents (client-go's queue of 1000). */
const SENDING = 4;
const BACKLOG = 1000;

interface StalledApiServer {
  client: KubeClient;
  /** POSTs received so far. */
  readonly received: () => number;
  /** Most POSTs open at one time. */
  readonly mostOpen: () => number;
  /** Answers every held POST, and every later one at once. */
  release(): void;
}

let server: Server | undefined;
let client: KubeClient | undefined;

afterEach(async () => {
  client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function stalledApiServer(): Promise<StalledApiServer> {
  const held: ServerResponse[] = [];
  let received = 0;
  let open = 0;
  let mostOpen = 0;
  let released = false;
  const answer = (res: ServerResponse) => {
    open -= 1;
    res.writeHead(201, { 'Content-Type': 'application/json' });
    res.end('{}');
  };
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      if (released) answer(res);
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  client = connect(
    {
      server: `http://127.0.0.1:${port}`,
      tls: {},
      authHeaders: () => Promise.resolve({}),
      source: 'test',
    },
    { requestTimeoutMs: 60_000 },
  );
  return {
    client,
    received: () => received,
    mostOpen: () => mostOpen,
    release() {
      released = true;
      for (const res of held.splice(0)) answer(res);
    },
  };
}

function warnings(): { lines: string[]; log: pino.Logger } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { lines, log: pino({ level: 'warn' }, sink) };
}

const server1: KubeObject = {
  apiVersion: 'mcp-operator.dev/v1alpha1',
  kind: 'MCPServer',
  metadata: { name: 'one', namespace: 'team-a', uid: 'u-1' },
};

describe('EventRecorder when the API server stalls', () => {
  it('sends four at a time, queues a thousand, drops the rest at once and sends the queue later', async () => {
    const api = await stalledApiServer();
    const { lines, log } = warnings();
    const recorder = new EventRecorder({ client: api.client, component: 'c', instance: 'i', log });

    const flood = 25;
    // A distinct message per Event, so none of them aggregates into another.
    const queued = Array.from({ length: SENDING + BACKLOG }, (_, i) =>
      recorder.record(server1, 'Normal', 'Applied', `pass ${i}`),
    );
    await waitFor('the first sends to reach the API server', () => api.received() === SENDING, {
      timeoutMs: 10_000,
    });

    let droppedSettled = 0;
    const dropped = Array.from({ length: flood }, (_, i) =>
      recorder.record(server1, 'Warning', 'Flood', `flood ${i}`).then(() => (droppedSettled += 1)),
    );
    await Promise.all(dropped);
    expect(droppedSettled).toBe(flood);
    const dropWarnings = lines.filter((line) => line.includes('too many events; dropping'));
    expect(dropWarnings).toHaveLength(1);
    expect(api.received()).toBe(SENDING);

    api.release();
    await Promise.all(queued);
    expect(api.received()).toBe(SENDING + BACKLOG);
    expect(api.mostOpen()).toBeLessThanOrEqual(SENDING);
    expect(lines.filter((line) => line.includes('could not record'))).toEqual([]);
  });

  it('sends an Event recorded twice while its create is unanswered once, then counts it', async () => {
    const api = await stalledApiServer();
    const { lines, log } = warnings();
    const recorder = new EventRecorder({ client: api.client, component: 'c', instance: 'i', log });
    const twice = [1, 2].map(() => recorder.record(server1, 'Normal', 'DriftCleared', 'cleared'));
    await waitFor('the create to reach the API server', () => api.received() === 1, {
      timeoutMs: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The second waits for the first instead of creating a second Event.
    expect(api.received()).toBe(1);
    api.release();
    await Promise.all(twice);
    // One create, then one count on it.
    expect(api.received()).toBe(2);
    expect(lines.filter((line) => line.includes('could not record'))).toEqual([]);
  });
});
