/**
 * Records what the corpus servers (packages.ts) publish: each release runs over stdio, gets the
 * 2025-11-25 handshake, and every page of tools/list, prompts/list, resources/list and
 * resources/templates/list it declares a capability for is written, exactly as answered, to
 * `<package>@<version>.json` beside this file. The raw answers are kept, not parsed: the point of
 * the corpus is what real servers send, conformant or not.
 *
 *   node test/discovery/corpus/capture.ts
 */

import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { CORPUS, type CorpusServer, installed, nameAndVersion } from './packages.ts';

const PAGES_MAX = 50;

/** What a corpus file holds. */
export interface Recording {
  package: string;
  version: string;
  /** Versions the install resolved, for the record (zod decides whether schemas survive). */
  resolved: Record<string, string>;
  initialize: Record<string, unknown>;
  /** Result of every page, by method. */
  lists: Partial<Record<ListMethod, Record<string, unknown>[]>>;
}

export const LIST_METHODS = [
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
] as const;
export type ListMethod = (typeof LIST_METHODS)[number];

/** The capability a server declares for each list (2025-11-25 basic/lifecycle §Capabilities). */
export const CAPABILITY: Record<ListMethod, string> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
};

async function record(server: CorpusServer): Promise<Recording> {
  const { command, versions } = await installed(server);
  const { name, version } = nameAndVersion(server.spec);
  return { package: name, version, resolved: versions, ...(await recordLists(command)) };
}

/**
 * The handshake and every page of each list a server declares, from `command` run over stdio
 * (`env` added to this process's); rejects after `timeoutMs` without an answer.
 */
export async function recordLists(
  command: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<Pick<Recording, 'initialize' | 'lists'>> {
  const child = spawn(command[0]!, command.slice(1), {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, ...env },
  });
  const timer = setTimeout(() => child.kill(), timeoutMs);
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`${command.join(' ')} exited (${code})`))),
  );
  // Killed after the last answer too: that exit is nobody's error.
  exited.catch(() => undefined);
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: { id?: number; result?: Record<string, unknown> };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return; // a log line on stdout: not an answer
    }
    if (message.id !== undefined) pending.get(message.id)?.(message.result ?? {});
  });
  let nextId = 1;
  const send = (method: string, params: Record<string, unknown>) => {
    const id = nextId++;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return Promise.race([
      new Promise<Record<string, unknown>>((resolve) => pending.set(id, resolve)),
      exited,
    ]);
  };
  try {
    const initialize = await send('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'corpus-capture', version: '1' },
    });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
    );
    const capabilities = initialize.capabilities as Record<string, unknown>;
    const lists: Recording['lists'] = {};
    for (const method of LIST_METHODS) {
      if (capabilities[CAPABILITY[method]] === undefined) continue;
      const pages: Record<string, unknown>[] = [];
      let cursor: unknown;
      do {
        const page = await send(method, cursor === undefined ? {} : { cursor });
        pages.push(page);
        cursor = page.nextCursor;
      } while (typeof cursor === 'string' && pages.length < PAGES_MAX);
      lists[method] = pages;
    }
    return { initialize, lists };
  } finally {
    clearTimeout(timer);
    child.kill();
  }
}

if (import.meta.main) {
  for (const server of CORPUS) {
    const recording = await record(server);
    const file = new URL(`./${server.spec.split('/')[1]}.json`, import.meta.url);
    await writeFile(file, `${JSON.stringify(recording, null, 2)}\n`);
    const counts = Object.entries(recording.lists).map(
      ([method, pages]) =>
        `${method} ${pages.reduce((n, page) => n + Object.values(page).filter(Array.isArray).flat().length, 0)}`,
    );
    console.log(`${server.spec}: ${counts.join(', ')}`);
  }
}
