/**
 * The live stream's bounds (src/console/stream.ts), over real sockets: how many streams may be
 * open, and how much may wait on a reader that stopped reading.
 */
import { once } from 'node:events';
import { type IncomingMessage, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BACKLOG_BYTES, MAX_STREAMS, Streams } from '../../src/console/stream.ts';
import { waitFor } from '../support/wait.ts';

const cleanup: (() => void)[] = [];
afterEach(() => cleanup.splice(0).forEach((done) => done()));

async function streamServer(streams: Streams) {
  const refused: number[] = [];
  const server = createServer((_req, res) => {
    if (!streams.open(res, {})) {
      refused.push(Date.now());
      res.writeHead(503).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(() => {
    streams.close();
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const connect = () =>
    new Promise<IncomingMessage>((resolve, reject) => get(url, resolve).on('error', reject));
  return { connect, refused };
}

describe('the live stream', () => {
  it(`refuses a stream past ${MAX_STREAMS} open ones`, async () => {
    const streams = new Streams();
    const { connect } = await streamServer(streams);
    const open = await Promise.all(Array.from({ length: MAX_STREAMS }, connect));
    expect(open.every((res) => res.statusCode === 200)).toBe(true);
    expect((await connect()).statusCode).toBe(503);
    open.forEach((res) => res.destroy());
  });

  it('cuts off a reader that stopped reading, and keeps serving the others', async () => {
    const streams = new Streams();
    const { connect } = await streamServer(streams);
    const stuck = await connect();
    stuck.pause();
    const reading = await connect();
    let received = 0;
    reading.on('data', (chunk: Buffer) => (received += chunk.length));
    const row = { key: 'ns/x', padding: 'x'.repeat(64 * 1024) };
    // Far more than the backlog bound; the reader that reads keeps up, the other cannot.
    for (let i = 0; i < (2 * MAX_BACKLOG_BYTES) / (64 * 1024) + 64; i++) {
      streams.send({ type: 'touch', key: JSON.stringify(row) });
      await new Promise((resolve) => setImmediate(resolve));
    }
    await waitFor('the stuck reader to be cut off', () => streams.size === 1);
    expect(received).toBeGreaterThan(MAX_BACKLOG_BYTES);
    reading.destroy();
    stuck.destroy();
  });
});
