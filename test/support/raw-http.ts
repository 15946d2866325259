/** Raw HTTP over a socket: bytes no HTTP client would send. */

import { once } from 'node:events';
import { connect } from 'node:net';

/**
 * Sends `bytes` as they are over a fresh connection and returns what came back before the
 * server closed it, or before `timeoutMs` (a server that keeps it open for more).
 */
export async function rawExchange(
  port: number,
  bytes: string | Buffer,
  timeoutMs = 5_000,
): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(bytes);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  await once(socket, 'close');
  clearTimeout(timer);
  return Buffer.concat(chunks).toString('latin1');
}

/** The status code of the first response in a raw exchange; undefined when none came. */
export function statusOf(raw: string): number | undefined {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  return match ? Number(match[1]) : undefined;
}
