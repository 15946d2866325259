/**
 * Reading entries from a file and from a URL (a plain HTTP server on loopback serving a
 * server.json, as a publisher's site would), with the bounds on time and size. The registry API
 * itself is read from the real registry in registry.cluster.test.ts.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorError } from '../../src/errors.ts';
import {
  DEFAULT_LIMITS,
  entryFromFile,
  entryFromUrl,
  parseReference,
  registryRoot,
} from '../../src/registry/client.ts';
import { filesystemEntry } from './entries.ts';

const entry = filesystemEntry('2026.1.14');

/** The OperatorError `promise` rejects with: its code and message. */
async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OperatorError);
  return error as OperatorError;
}
const LIMITS = { ...DEFAULT_LIMITS, timeoutMs: 500, entryBytes: 64 * 1024 };

let server: Server;
let base: string;
let dir: string;
/** Responses still open (the slow path), ended after the tests. */
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/server.json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(entry));
    } else if (req.url === '/huge.json') {
      // A body that never ends: the reader must stop at its bound, not wait for the end.
      res.setHeader('content-type', 'application/json');
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const write = () => {
        while (res.write(chunk));
      };
      res.on('drain', write);
      res.write('{"name": "io.example/huge", "description": "');
      write();
    } else if (req.url === '/slow.json') {
      hanging.push(res);
    } else if (req.url === '/invalid.json') {
      res.end(JSON.stringify({ ...entry, name: 'no-slash' }));
    } else {
      res.statusCode = 404;
      res.setHeader('content-type', 'application/problem+json');
      res.end(JSON.stringify({ title: 'Not Found', detail: 'no such file\u001b[2J' }));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'registry-client-'));
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('entryFromUrl', () => {
  it('reads and checks a server.json', async () => {
    expect(await entryFromUrl(`${base}/server.json`, LIMITS)).toEqual(entry);
  });

  it('stops reading past the size bound', async () => {
    const failed = await rejection(entryFromUrl(`${base}/huge.json`, LIMITS));
    expect(failed.code).toBe('MCPOP_REGISTRY_TOO_LARGE');
    expect(failed.message).toContain(`more than ${64 * 1024} bytes`);
  });

  it('gives up on a server that does not answer in time', async () => {
    const failed = await rejection(entryFromUrl(`${base}/slow.json`, LIMITS));
    expect(failed.code).toBe('MCPOP_REGISTRY_TIMEOUT');
    expect(failed.message).toContain('within 500 ms');
  });

  it('says what the server said for an error status, made visible', async () => {
    const error = await entryFromUrl(`${base}/missing.json`, LIMITS).catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'MCPOP_REGISTRY_HTTP_STATUS' });
    expect((error as Error).message).toContain('HTTP 404');
    expect((error as Error).message).toContain('no such file\\e[2J');
    expect((error as Error).message).not.toContain('\u001b');
  });

  it('reports a server that is down', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    const failed = await rejection(entryFromUrl(`http://127.0.0.1:${port}/server.json`, LIMITS));
    expect(failed.code).toBe('MCPOP_REGISTRY_UNREACHABLE');
    expect(failed.message).toContain('ECONNREFUSED');
  });

  it('refuses an entry that does not validate, naming the field', async () => {
    const failed = await rejection(entryFromUrl(`${base}/invalid.json`, LIMITS));
    expect(failed.code).toBe('MCPOP_REGISTRY_ENTRY_INVALID');
    expect(failed.message).toContain('invalid at name:');
  });

  it('refuses URLs that are not plain http(s)', async () => {
    for (const url of [
      'file:///etc/passwd',
      'http://user:pw@127.0.0.1/x.json',
      `${base}/x.json?q=1`,
    ]) {
      await expect(entryFromUrl(url, LIMITS)).rejects.toMatchObject({
        code: 'MCPOP_REGISTRY_UNREACHABLE',
      });
    }
  });
});

describe('entryFromFile', () => {
  it('reads a file, refuses one too large or not JSON', async () => {
    const good = join(dir, 'server.json');
    await writeFile(good, JSON.stringify(entry));
    expect(await entryFromFile(good, LIMITS)).toEqual(entry);
    const big = join(dir, 'big.json');
    await writeFile(big, ' '.repeat(LIMITS.entryBytes + 1));
    await expect(entryFromFile(big, LIMITS)).rejects.toMatchObject({
      code: 'MCPOP_REGISTRY_TOO_LARGE',
    });
    const text = join(dir, 'text.json');
    await writeFile(text, 'name: yaml');
    const failed = await rejection(entryFromFile(text, LIMITS));
    expect(failed.code).toBe('MCPOP_REGISTRY_ENTRY_INVALID');
    expect(failed.message).toContain('not JSON');
    await expect(entryFromFile(join(dir, 'none.json'), LIMITS)).rejects.toMatchObject({
      code: 'MCPOP_REGISTRY_UNREACHABLE',
    });
  });
});

describe('parseReference', () => {
  it('splits NAME@VERSION', () => {
    expect(parseReference('io.github.x/server@1.2.3')).toEqual({
      name: 'io.github.x/server',
      version: '1.2.3',
    });
    expect(parseReference('io.github.x/server')).toEqual({
      name: 'io.github.x/server',
      version: undefined,
    });
  });

  it.each([
    ['../etc/passwd', 'namespace/server'],
    ['io.x/..', 'no empty or dot-only part'],
    ['io..x/server', 'no empty or dot-only part'],
    ['.io/server', 'no empty or dot-only part'],
    ['io.x/server/../../admin', 'namespace/server'],
    ['io.x/%2e%2e', 'namespace/server'],
    ['io.x/server@../../v0.1/publish', 'without spaces, slashes'],
    ['io.x/server@1.0?x=1', 'without spaces, slashes'],
    ['io.x/server@', 'empty'],
    ['io.x/server@1.0\u001b[2J', 'without spaces, slashes'],
  ])('refuses %s', (text, problem) => {
    expect(() => parseReference(text)).toThrow(problem);
  });
});

describe('registryRoot', () => {
  it.each([
    ['https://registry.modelcontextprotocol.io', 'https://registry.modelcontextprotocol.io'],
    ['https://registry.modelcontextprotocol.io/', 'https://registry.modelcontextprotocol.io'],
    ['https://registry.modelcontextprotocol.io/v0.1', 'https://registry.modelcontextprotocol.io'],
    ['http://127.0.0.1:8080/mirror/v0.1/', 'http://127.0.0.1:8080/mirror'],
  ])('%s → %s', (given, root) => {
    expect(registryRoot(given)).toBe(root);
  });
});
