/**
 * The layering of src/ (CONTRIBUTING.md, "Where the code lives") is enforced by ESLint rules in
 * eslint.config.js. These cases run those rules on one-line modules placed in each layer: an
 * import down the layers passes, one against the direction fails.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS, layerRules } from '../eslint.config.js';

const eslint = new ESLint({
  overrideConfigFile: true,
  overrideConfig: [{ languageOptions: { parser: tseslint.parser } }, ...layerRules],
});

/** The messages ESLint gives `file` (a path in src/) holding one import of `from`. */
async function problems(file: string, from: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import '${from}';\n`, { filePath: file });
  return result!.messages.map((message) => message.message);
}

describe('layers', () => {
  it.each([
    ['src/controller/reconcile.ts', '../kube/client.ts'],
    ['src/controller/render/pod.ts', '../../bridge/pod-contract.ts'],
    ['src/discovery/runner.ts', '../tools/drift.ts'],
    ['src/bridge/policy.ts', '../mcp/jsonrpc.ts'],
    ['src/tools/drift.ts', '../api/v1alpha1/mcpserver.ts'],
    ['src/kube/client.ts', '../errors.ts'],
    ['src/tools/digest.ts', 'node:crypto'],
    ['src/commands/approve.ts', '../discovery/baseline.ts'],
    ['src/commands/dev.ts', '../controller/command.ts'],
    ['src/commands/approve.ts', '../approval/index.ts'],
    ['src/approval/read.ts', '../discovery/baseline.ts'],
    ['src/registry/mapping.ts', '../api/v1alpha1/mcpserver.ts'],
    ['src/registry/client.ts', '../tools/text.ts'],
    ['src/commands/import.ts', '../registry/client.ts'],
    ['src/commands/import.ts', '../kube/client.ts'],
    ['src/console/review.ts', '../discovery/drift-basis.ts'],
  ])('%s may import %s', async (file, from) => {
    expect(await problems(file, from)).toEqual([]);
  });

  it.each([
    ['src/kube/queue.ts', '../controller/reconcile.ts', 'src/kube imports no other layer'],
    ['src/kube/apply.ts', '../api/names.ts', 'src/kube imports no other layer'],
    ['src/discovery/runner.ts', '../controller/render/metadata.ts', 'src/discovery may import'],
    ['src/tools/drift.ts', '../discovery/client.ts', 'src/tools may import only'],
    ['src/bridge/policy.ts', '../kube/client.ts', 'src/bridge may import only'],
    ['src/api/v1alpha1/stored.ts', '../../kube/resources.ts', 'src/api imports no other layer'],
    ['src/controller/manager.ts', '../bridge/session-table.ts', 'only src/bridge/pod-contract.ts'],
    ['src/tools/snapshot.ts', 'node:fs/promises', 'src/tools is pure'],
    ['src/errors.ts', './kube/client.ts', 'A shared leaf imports no layer'],
    ['src/controller/manager.ts', '../commands/dev.ts', 'src/controller may import only'],
    ['src/discovery/runner.ts', '../commands/diff.ts', 'src/discovery may import only'],
    ['src/commands/dev.ts', '../../test/cluster/cli.ts', 'src/ imports nothing from test/'],
    ['src/commands/status.ts', '../bridge/session-table.ts', 'only src/bridge/pod-contract.ts'],
    ['src/approval/write.ts', '../controller/reconcile.ts', 'src/approval may import only'],
    ['src/discovery/runner.ts', '../approval/plan.ts', 'src/discovery may import only'],
    ['src/registry/client.ts', '../kube/client.ts', 'src/registry may import only'],
    ['src/registry/mapping.ts', '../discovery/baseline.ts', 'src/registry may import only'],
    ['src/controller/reconcile.ts', '../registry/mapping.ts', 'src/controller may import only'],
    ['src/tools/drift.ts', '../commands/import.ts', 'src/tools may import only'],
    ['src/console/server.ts', '../controller/manager.ts', 'src/console may import only'],
    ['src/discovery/runner.ts', '../console/watch.ts', 'src/discovery may import'],
  ])('%s may not import %s', async (file, from, message) => {
    const found = await problems(file, from);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
  });
});

describe('the rooms of src/bridge', () => {
  it.each([
    ['src/bridge/front/endpoint.ts', '../policy/gate.ts'],
    ['src/bridge/front/session.ts', '../upstream.ts'],
    ['src/bridge/auth/oauth.ts', '../policy/gate.ts'],
    ['src/bridge/policy/gate.ts', '../identity.ts'],
    ['src/bridge/proxy/http-upstream.ts', '../transport.ts'],
    ['src/bridge/server.ts', './front/endpoint.ts'],
    ['src/bridge/upstream.ts', './transport.ts'],
  ])('%s may import %s', async (file, from) => {
    expect(await problems(file, from)).toEqual([]);
  });

  it.each([
    ['src/bridge/policy/gate.ts', '../front/session.ts', 'src/bridge/policy may import only'],
    ['src/bridge/child/spawn.ts', '../proxy/http-upstream.ts', 'src/bridge/child may import no'],
    ['src/bridge/proxy/era-2026-server.ts', '../front/session-table.ts', 'src/bridge/proxy'],
    ['src/bridge/auth/bearer.ts', '../front/guards.ts', 'src/bridge/auth may import only'],
    ['src/bridge/auth/oauth.ts', '../audit/events.ts', 'src/bridge/auth may import only'],
    ['src/bridge/front/endpoint.ts', '../server.ts', 'src/bridge/front may import only'],
    ['src/bridge/upstream.ts', './policy/gate.ts', 'beside upstream.ts in src/bridge import no'],
    ['src/bridge/metrics.ts', './front/session.ts', 'beside upstream.ts in src/bridge import no'],
  ])('%s may not import %s', async (file, from, message) => {
    const found = await problems(file, from);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
  });
});

describe('types only', () => {
  it('src/tools takes types from src/api, never values, which would load the API with it', async () => {
    const lint = async (text: string) => {
      const [result] = await eslint.lintText(`${text}\n`, { filePath: 'src/tools/drift.ts' });
      return result!.messages.map((message) => message.message);
    };
    expect(await lint("import type { DriftStatus } from '../api/v1alpha1/mcpserver.ts';")).toEqual(
      [],
    );
    for (const text of [
      "import { DEFAULTS } from '../api/v1alpha1/defaults.ts';",
      "import { type DriftStatus } from '../api/v1alpha1/mcpserver.ts';",
      "import * as api from '../api/v1alpha1/mcpserver.ts';",
    ]) {
      const found = await lint(text);
      expect(found).toHaveLength(1);
      expect(found[0]).toContain('src/tools takes only types from src/api');
    }
  });
});

/** The files of src/ that Node loads to import `entry` (a path in src/), by their path in src/. */
async function loadedBy(entry: string): Promise<string[]> {
  const src = new URL('../src/', import.meta.url);
  const script = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) });
    await import(${JSON.stringify(new URL(entry, src).href)});
    process.stdout.write(JSON.stringify(loaded));`;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '--eval',
    script,
  ]);
  return (JSON.parse(stdout) as string[])
    .filter((url) => url.startsWith(src.href))
    .map((url) => fileURLToPath(url).slice(fileURLToPath(src).length));
}

describe('the bridge sidecar', () => {
  it('loads none of the API: the facts it shares with it are leaves', async () => {
    const loaded = await loadedBy('bridge/command.ts');
    expect(loaded).toContain('bridge/server.ts');
    expect(loaded).toContain('tools/digest.ts');
    expect(loaded.filter((file) => file.startsWith('api/'))).toEqual([]);
  });
});

describe('the layout', () => {
  const src = join(import.meta.dirname, '..', 'src');
  const folders = readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

  it('has a layer rule for every folder of src/', () => {
    expect(Object.keys(LAYERS).sort()).toEqual(folders);
  });

  it('has a row for every folder of src/ in the table of CONTRIBUTING.md', () => {
    const guide = readFileSync(join(src, '..', 'CONTRIBUTING.md'), 'utf8');
    const table = guide.slice(guide.indexOf('## Where the code lives'));
    const rows = [...table.matchAll(/^\| `src\/(\w+)`/gm)].map((match) => match[1]);
    expect(rows.sort()).toEqual(folders);
  });
});

/** Module → the modules of src/ it imports (static imports and re-exports, types included). */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.ts') && !file.startsWith('console/web/'),
  );
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+\.ts)'/gms)].map(
      (match) => relative(root, resolve(root, dirname(file), match[1]!)),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Each import cycle once, as the modules along it. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string): void => {
    const at = path.indexOf(module);
    if (at >= 0) {
      cycles.push([...path.slice(at), module]);
      return;
    }
    if (done.has(module)) return;
    path.push(module);
    for (const next of graph.get(module) ?? []) visit(next);
    path.pop();
    done.add(module);
  };
  for (const module of graph.keys()) visit(module);
  return cycles;
}

describe('imports between modules', () => {
  it('form no cycle in src/, types included', () => {
    const graph = importGraph(join(import.meta.dirname, '..', 'src'));
    expect(graph.size).toBeGreaterThan(100);
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('a cycle is found and named', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
    ]);
    expect(cyclesOf(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
