/**
 * The README's commands work as printed: every `kubectl mcp …` and `mcp-operator …` line of
 * its shell blocks (the quick start's approval loop among them) runs through the built CLI,
 * as installed, against a kubeconfig whose cluster does not answer. A command, flag or argument
 * the CLI does not take stops it with a usage error; one it takes gets as far as the cluster
 * (or, for `import`, the MCP Registry first) and says that it cannot reach it. What the
 * commands then do on a cluster is the end-to-end test's (test/e2e/user-story.cluster.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from '../support/build.ts';
import { freePort } from '../support/ports.ts';

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
/** Commands that serve until stopped: their flags are checked by their own tests. */
const SERVING = new Set(['console', 'bridge', 'controller', 'dev']);

/** The words of one shell line: quotes and backslash continuations as sh reads them. */
function words(line: string): string[] {
  const found: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(#.*$)|(\S+)/g)) {
    if (match[3] !== undefined) break;
    found.push(match[1] ?? match[2]?.replace(/\\(.)/g, '$1') ?? match[4]!);
  }
  return found;
}

/** The program and arguments of each CLI command line in the README's `sh` blocks. */
interface ReadmeCommand {
  program: 'kubectl mcp' | 'mcp-operator';
  args: string[];
}

function readmeCommands(): ReadmeCommand[] {
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const lines = blocks.flatMap((block) => block.replace(/\\\n\s*/g, '').split('\n'));
  return lines.flatMap((line): ReadmeCommand[] => {
    const [first, second, ...rest] = words(line);
    if (first === 'kubectl' && second === 'mcp') return [{ program: 'kubectl mcp', args: rest }];
    if (first === 'mcp-operator' && second !== undefined)
      return [{ program: 'mcp-operator', args: [second, ...rest] }];
    return [];
  });
}

let dir: string;
let kubeconfig: string;
let deadPort: number;
let entries: { 'kubectl mcp': string; 'mcp-operator': string };

beforeAll(async () => {
  const built = await builtCli();
  entries = { 'kubectl mcp': built.plugin, 'mcp-operator': built.cli };
  dir = await mkdtemp(join(tmpdir(), 'readme-commands-'));
  deadPort = await freePort();
  kubeconfig = join(dir, 'kubeconfig');
  // The README's --context prod names a context of its own.
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${deadPort}"}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: lab, context: {cluster: c, user: u}}, {name: prod, context: {cluster: c, user: u}}]',
      'current-context: lab',
    ].join('\n'),
  );
}, 600_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the README's commands", () => {
  const commands = readmeCommands().filter(({ args }) => !SERVING.has(args[0]!));

  it('are found: the quick start ends with the approval loop', () => {
    const lines = commands.map(({ program, args }) => `${program} ${args.slice(0, 2).join(' ')}`);
    for (const expected of [
      'kubectl mcp status server-filesystem',
      'kubectl mcp approve server-filesystem',
      'kubectl mcp diff server-filesystem',
    ])
      expect(lines).toContain(expected);
  });

  it.each(
    commands.map((command) => [`${command.program} ${command.args.join(' ')}`, command] as const),
  )('%s: parses, then reaches for the cluster', (_, { program, args }) => {
    const result = spawnSync(process.execPath, [entries[program], ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: kubeconfig },
    });
    expect(result.stderr.split('\n')[0]).toMatch(
      new RegExp(
        `^${program} ${args[0]}: (cannot reach the Kubernetes API server https://127\\.0\\.0\\.1:${deadPort} |cannot read https://registry\\.modelcontextprotocol\\.io/)`,
      ),
    );
    expect(result.status).toBe(2);
  });
});
