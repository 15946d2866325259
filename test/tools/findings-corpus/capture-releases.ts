/**
 * Records more real releases for the benign half of the findings corpus: older and other
 * servers from npm and PyPI than the discovery corpus runs (test/discovery/corpus), each
 * written as that corpus writes its recordings, to `releases/<package>@<version>.json`. The
 * releases come from the corpus cache (~/.cache/mcp-operator/corpus), where an `npm install`
 * or a `uv venv` + `uv pip install` of the release put them; one that is not there is skipped.
 * Servers that want a key get a placeholder: listing tools calls no API.
 *
 *   node test/tools/findings-corpus/capture-releases.ts
 */

import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { recordLists, type Recording } from '../../discovery/corpus/capture.ts';

interface Release {
  registry: 'npm' | 'pypi';
  /** `@modelcontextprotocol/server-github@2025.4.8`, `mcp-server-git@2026.10.19`. */
  spec: string;
  args?: readonly string[];
  env?: Record<string, string>;
}

const PLACEHOLDER = 'placeholder-not-a-key';
const SCOPE = '@modelcontextprotocol';

export const RELEASES: readonly Release[] = [
  ...['0.6.2', '2025.1.14', '2025.5.12'].map((v) => npm(`server-everything@${v}`)),
  npm('server-everything@2026.1.26', ['stdio']),
  ...['0.6.2', '2025.1.14', '2025.7.29'].map((v) => npm(`server-filesystem@${v}`, ['/tmp'])),
  ...['0.6.2', '2025.4.25', '2025.9.25'].map((v) => npm(`server-memory@${v}`)),
  ...['0.6.2', '2025.7.1', '2026.8.31'].map((v) => npm(`server-sequential-thinking@${v}`)),
  ...['0.6.2', '2025.4.8'].map((v) =>
    npm(`server-github@${v}`, [], { GITHUB_PERSONAL_ACCESS_TOKEN: PLACEHOLDER }),
  ),
  npm('server-brave-search@0.6.2', [], { BRAVE_API_KEY: PLACEHOLDER }),
  npm('server-google-maps@0.6.2', [], { GOOGLE_MAPS_API_KEY: PLACEHOLDER }),
  npm('server-slack@2025.4.25', [], { SLACK_BOT_TOKEN: PLACEHOLDER, SLACK_TEAM_ID: 'T0' }),
  npm('server-everart@0.6.2', [], { EVERART_API_KEY: PLACEHOLDER }),
  npm('server-aws-kb-retrieval@0.6.2', [], {
    AWS_ACCESS_KEY_ID: PLACEHOLDER,
    AWS_SECRET_ACCESS_KEY: PLACEHOLDER,
    AWS_REGION: 'us-east-1',
  }),
  // Older PyPI releases (fetch 2025.4.7, git 2025.9.25, time 2025.8.4, sqlite 2025.4.25 and
  // before) no longer start from a fresh install: today's `mcp` package lacks what they import.
  pypi('mcp-server-fetch@2026.10.24'),
  pypi('mcp-server-git@2026.10.19'),
  pypi('mcp-server-time@2026.10.19'),
];

function npm(spec: string, args: readonly string[] = [], env?: Record<string, string>): Release {
  return { registry: 'npm', spec: `${SCOPE}/${spec}`, args, ...(env ? { env } : {}) };
}

function pypi(spec: string, args: readonly string[] = []): Release {
  return { registry: 'pypi', spec, args };
}

const CACHE = join(homedir(), '.cache', 'mcp-operator', 'corpus');

function split(spec: string): { name: string; version: string } {
  const at = spec.lastIndexOf('@');
  return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

/** The command that runs a cached release, and the dependency versions worth recording. */
async function cached(
  release: Release,
): Promise<{ command: string[]; resolved: Record<string, string> } | undefined> {
  const { name } = split(release.spec);
  const dir = join(
    CACHE,
    `${release.registry === 'pypi' ? 'pypi+' : ''}${release.spec.replaceAll('/', '+')}`,
  );
  if (release.registry === 'pypi') {
    const script = join(dir, 'bin', name);
    return existsSync(script)
      ? { command: [script, ...(release.args ?? [])], resolved: {} }
      : undefined;
  }
  const root = join(dir, 'node_modules', name);
  if (!existsSync(join(root, 'package.json'))) return undefined;
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    bin: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0]!;
  const resolved: Record<string, string> = {};
  for (const dependency of ['zod', `${SCOPE}/sdk`]) {
    const file = join(dir, 'node_modules', dependency, 'package.json');
    if (existsSync(file)) {
      resolved[dependency] = (
        JSON.parse(await readFile(file, 'utf8')) as { version: string }
      ).version;
    }
  }
  return { command: [process.execPath, join(root, bin), ...(release.args ?? [])], resolved };
}

if (import.meta.main) {
  for (const release of RELEASES) {
    const found = await cached(release);
    if (found === undefined) {
      console.log(`${release.spec}: not in ${CACHE}, skipped`);
      continue;
    }
    try {
      const lists = await recordLists(found.command, release.env, 20_000);
      const { name, version } = split(release.spec);
      const recording: Recording = { package: name, version, resolved: found.resolved, ...lists };
      const file = new URL(`./releases/${release.spec.split('/').at(-1)}.json`, import.meta.url);
      await writeFile(file, `${JSON.stringify(recording, null, 2)}\n`);
      const tools = (recording.lists['tools/list'] ?? []).flatMap((page) =>
        Array.isArray(page.tools) ? (page.tools as unknown[]) : [],
      ).length;
      console.log(`${release.spec}: ${tools} tools`);
    } catch (error) {
      console.log(`${release.spec}: not recorded: ${(error as Error).message}`);
    }
  }
}
