/**
 * The real MCP servers of the discovery corpus: published releases from npm, installed as a
 * new user's `npx -y` would install them (a fresh dependency resolution), into a cache that
 * outlives test runs. capture.ts records what each lists; the cluster tests run some of them
 * behind the real bridge.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface CorpusServer {
  /** `@modelcontextprotocol/server-filesystem@2025.8.21`. */
  spec: string;
  /** Arguments after the entry point. */
  args: readonly string[];
}

const SCOPE = '@modelcontextprotocol';

export const CORPUS: readonly CorpusServer[] = [
  // Up to 2025.8.21 a fresh install resolves zod 4, and every inputSchema loses its type.
  { spec: `${SCOPE}/server-filesystem@2025.8.21`, args: ['/tmp'] },
  { spec: `${SCOPE}/server-filesystem@2025.11.25`, args: ['/tmp'] },
  { spec: `${SCOPE}/server-filesystem@2026.8.31`, args: ['/tmp'] },
  { spec: `${SCOPE}/server-everything@2025.9.25`, args: [] },
  { spec: `${SCOPE}/server-everything@2026.8.31`, args: ['stdio'] },
  { spec: `${SCOPE}/server-memory@2025.8.4`, args: [] },
  { spec: `${SCOPE}/server-memory@2026.8.31`, args: [] },
];

const CACHE = join(homedir(), '.cache', 'mcp-operator', 'corpus');

/** `@scope/name@version` split at its last `@`. */
export function nameAndVersion(spec: string): { name: string; version: string } {
  const at = spec.lastIndexOf('@');
  return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

/**
 * The command that runs the release (node and its entry point), installed first if the cache
 * does not have it; `versions` says what the install resolved for the dependencies that matter.
 */
export async function installed(
  server: CorpusServer,
): Promise<{ command: string[]; versions: Record<string, string> }> {
  const { name } = nameAndVersion(server.spec);
  const dir = join(CACHE, server.spec.replaceAll('/', '+'));
  const root = join(dir, 'node_modules', name);
  if (!existsSync(join(root, 'package.json'))) {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'package.json'), '{"private":true}\n');
    await promisify(execFile)(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefix', dir, server.spec],
      { timeout: 300_000 },
    );
  }
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  const entry = join(root, Object.values(manifest.bin)[0]!);
  const versionOf = async (dependency: string) =>
    (
      JSON.parse(await readFile(join(dir, 'node_modules', dependency, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  return {
    command: [process.execPath, entry, ...server.args],
    versions: { zod: await versionOf('zod'), [`${SCOPE}/sdk`]: await versionOf(`${SCOPE}/sdk`) },
  };
}
