/**
 * The Dockerfile, checked without a container engine: its build stage is replayed in a temporary
 * directory from exactly the files it copies (running its own `npm run build`), the final
 * image's file tree is assembled from its COPY lines, and the entrypoint is run from that tree.
 * What cannot be replayed (apt-get in the busybox stage, `npm ci`) is checked against its
 * source: the Debian package's file list and package.json.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  cp,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUSYBOX_FILE, IMAGE_ASSET_DIR, SUPERVISOR_FILE } from '../../src/bridge/pod-contract.ts';
import { DEFAULT_POD_ID } from '../../src/controller/render/pod.ts';
import { render } from '../../src/controller/render/render.ts';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import type { V1Deployment } from '@kubernetes/client-node';
import { copies, last, parseDockerfile, resolveIn, type Stage } from './dockerfile.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..', '..');
const { args, stages } = parseDockerfile(await readFile(join(REPO, 'Dockerfile'), 'utf8'));
const stage = (name: string): Stage => {
  const found = stages.find((s) => s.name === name);
  if (found === undefined) throw new Error(`the Dockerfile has no stage ${name}`);
  return found;
};
const buildStage = stage('build');
const busyboxStage = stage('busybox');
const finalStage = stages.at(-1)!;

/** `.dockerignore` as path prefixes; the test refuses patterns it cannot evaluate. */
const ignored = (await readFile(join(REPO, '.dockerignore'), 'utf8'))
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));
const isIgnored = (path: string) => ignored.some((p) => path === p || path.startsWith(`${p}/`));

let tmp: string;
/** Stand-ins for the build stage's and the final image's root directories. */
let buildRoot: string;
let imageRoot: string;
const inRoot = (root: string, path: string) => join(root, path);

/** Copies what a COPY line names into `root`, resolving the source in `sourceRoot`. */
async function replayCopies(
  s: Stage,
  root: string,
  sourceRoot: (from: string | undefined) => string | undefined,
) {
  let workdir: string | undefined;
  for (const instruction of s.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = instruction.text;
    if (instruction.keyword !== 'COPY') continue;
    const [copy] = copies({ ...s, instructions: [instruction] });
    const base = sourceRoot(copy!.from);
    if (base === undefined) continue;
    const destination = resolveIn(workdir, copy!.destination);
    for (const source of copy!.sources) {
      const target =
        copy!.sources.length > 1 || copy!.destination.endsWith('/')
          ? join(destination, source.split('/').at(-1)!)
          : destination;
      await mkdir(dirname(inRoot(root, target)), { recursive: true });
      await cp(join(base, source), inRoot(root, target), {
        recursive: true,
        verbatimSymlinks: true,
      });
    }
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'mcp-operator-dockerfile-'));
  buildRoot = join(tmp, 'build');
  imageRoot = join(tmp, 'image');
  await replayCopies(buildStage, buildRoot, (from) => (from === undefined ? REPO : undefined));
  const workdir = last(buildStage, 'WORKDIR')!;
  // `npm ci` cannot run offline: the installed tree stands in for it.
  await symlink(join(REPO, 'node_modules'), inRoot(buildRoot, join(workdir, 'node_modules')));
  await run('npm', ['run', 'build'], { cwd: inRoot(buildRoot, workdir) });
  await replayCopies(finalStage, imageRoot, (from) =>
    from === undefined ? REPO : from === 'build' ? buildRoot : undefined,
  );
  // The busybox stage's file, from this machine's busybox-static when it has one.
  const busybox = inRoot(imageRoot, `${IMAGE_ASSET_DIR}/${BUSYBOX_FILE}`);
  await mkdir(dirname(busybox), { recursive: true });
  if (existsSync('/bin/busybox')) await cp('/bin/busybox', busybox);
  else await writeFile(busybox, '');
}, 300_000);

afterAll(async () => {
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

describe('the Dockerfile', () => {
  it('builds and runs on Node.js 24', async () => {
    const image = args['NODE_IMAGE'] ?? '';
    expect(image).toMatch(/^node:24-/);
    expect(buildStage.image).toBe('${NODE_IMAGE}');
    expect(finalStage.image).toBe('${NODE_IMAGE}');
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toBe('>=24');
  });

  it('copies from the build context only files that exist and .dockerignore lets through', () => {
    for (const p of ignored) expect(p, '.dockerignore: plain paths only').toMatch(/^[\w.-]+$/);
    const fromContext = stages.flatMap((s) => copies(s).filter((c) => c.from === undefined));
    expect(fromContext.length).toBeGreaterThan(0);
    for (const source of fromContext.flatMap((c) => c.sources)) {
      expect(existsSync(join(REPO, source)), source).toBe(true);
      expect(isIgnored(source), `${source} is excluded by .dockerignore`).toBe(false);
    }
  });

  it('copies from the build stage only what its own `npm run build` produced', () => {
    expect(
      buildStage.instructions.some((i) => i.keyword === 'RUN' && /npm run build/.test(i.text)),
    ).toBe(true);
    const fromBuild = copies(finalStage).filter((c) => c.from === 'build');
    expect(fromBuild.map((c) => c.sources).flat()).toContain('/app/dist');
    for (const source of fromBuild.flatMap((c) => c.sources)) {
      expect(existsSync(inRoot(buildRoot, source)), source).toBe(true);
    }
  });

  it('ships busybox from Debian busybox-static and the supervisor where bridge-install looks', () => {
    expect(
      busyboxStage.instructions.some((i) => /apt-get install .*busybox-static/.test(i.text)),
    ).toBe(true);
    const assets = copies(finalStage).filter((c) => c.destination.startsWith(IMAGE_ASSET_DIR));
    expect(assets).toEqual([
      {
        from: 'busybox',
        sources: ['/bin/busybox'],
        destination: `${IMAGE_ASSET_DIR}/${BUSYBOX_FILE}`,
      },
      {
        sources: ['src/bridge/supervisor.sh'],
        destination: `${IMAGE_ASSET_DIR}/${SUPERVISOR_FILE}`,
      },
    ]);
  });

  it.skipIf(spawnSync('dpkg', ['--version']).status !== 0)(
    'busybox-static installs /bin/busybox (dpkg file list)',
    () => {
      const files = spawnSync('dpkg', ['-L', 'busybox-static'], { encoding: 'utf8' });
      if (files.status !== 0) {
        throw new Error('busybox-static is not installed here: apt-get install busybox-static');
      }
      expect(files.stdout.split('\n')).toContain('/bin/busybox');
    },
  );

  it('runs as the non-root user the chart and the rendered pods run as', async () => {
    expect(last(finalStage, 'USER')).toBe(`${DEFAULT_POD_ID}:${DEFAULT_POD_ID}`);
    const chart = await readFile(
      join(REPO, 'charts/mcp-operator/templates/deployment.yaml'),
      'utf8',
    );
    expect(chart).toContain(`runAsUser: ${DEFAULT_POD_ID}`);
  });

  it('puts the CLI on PATH under the name the rendered pods call it by', () => {
    const entrypoint = JSON.parse(last(finalStage, 'ENTRYPOINT')!) as string[];
    const link = /ln -s (\S+) (\S+)/.exec(
      finalStage.instructions
        .filter((i) => i.keyword === 'RUN')
        .map((i) => i.text)
        .join('\n'),
    );
    expect(link?.[1]).toBe('/app/dist/cli.js');
    expect(existsSync(inRoot(imageRoot, link![1]!))).toBe(true);
    expect(link?.[2]).toBe(`/usr/local/bin/${entrypoint[0]}`);
    const server = {
      apiVersion: 'mcp-operator.dev/v1alpha1',
      kind: 'MCPServer',
      metadata: { name: 'x', namespace: 'ns', uid: 'u' },
      spec: { image: 'node:24', transport: 'stdio', command: ['npx', 'server'] },
    } as StoredMCPServer;
    const deployment = render(server, { image: 'mcp-operator:0.1.0' }).find(
      (o) => o.kind === 'Deployment',
    ) as V1Deployment;
    const pod = deployment.spec!.template.spec!;
    const ours = [...(pod.initContainers ?? []), ...pod.containers].filter(
      (c) => c.image === 'mcp-operator:0.1.0',
    );
    expect(ours.map((c) => c.command?.[0])).toEqual([entrypoint[0], entrypoint[0]]);
  });
});

describe('the image file tree', () => {
  const app = () => inRoot(imageRoot, last(finalStage, 'WORKDIR')!);
  const cli = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
    run(process.execPath, [join(app(), 'dist/cli.js'), ...argv], {
      env: { PATH: process.env.PATH, NODE_ENV: 'production', ...env },
    });

  it('starts the CLI with a shebang, as the entrypoint symlink needs', async () => {
    expect((await readFile(join(app(), 'dist/cli.js'), 'utf8')).split('\n')[0]).toBe(
      '#!/usr/bin/env node',
    );
    const { stdout } = await cli(['--help']);
    for (const command of ['controller', 'bridge', 'bridge-install'])
      expect(stdout).toContain(command);
  });

  it.each([['controller'], ['bridge']])('`%s --help` exits 0', async (command) => {
    const { stdout } = await cli([command, '--help']);
    expect(stdout).toMatch(new RegExp(`^Usage: mcp-operator ${command}`));
  });

  it('`bridge-install --to <dir>` copies busybox and the supervisor from the image', async () => {
    const volume = join(tmp, 'volume');
    await mkdir(volume);
    await cli(['bridge-install', '--to', volume], {
      // The image's asset directory, relocated into the stand-in tree.
      MCP_OPERATOR_ASSET_DIR: inRoot(imageRoot, IMAGE_ASSET_DIR),
    });
    expect((await readdir(volume)).sort()).toEqual([BUSYBOX_FILE, SUPERVISOR_FILE].sort());
    expect((await stat(join(volume, BUSYBOX_FILE))).mode & 0o111).not.toBe(0);
    expect(await readFile(join(volume, SUPERVISOR_FILE), 'utf8')).toBe(
      await readFile(join(REPO, 'src/bridge/supervisor.sh'), 'utf8'),
    );
  });

  it('imports only production dependencies (the image prunes dev dependencies)', async () => {
    const pkg = JSON.parse(await readFile(join(app(), 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const allowed = new Set([...Object.keys(pkg.dependencies), ...builtinModules]);
    const dist = join(app(), 'dist');
    const files = (await readdir(dist, { recursive: true })).filter((f) => f.endsWith('.js'));
    const bare = new Set<string>();
    for (const file of files) {
      const text = await readFile(join(dist, file), 'utf8');
      // tsc writes each import statement's `from '…'` at the end of a line; dynamic imports of
      // packages use a plain string literal.
      const statements = /^\s*(?:import|export|\})[^'"\n]*?\bfrom\s+['"]([^'"]+)['"];$/gm;
      const dynamic = /\bimport\((['"])([^'"]+)\1\)/g;
      const specifiers = [
        ...[...text.matchAll(statements)].map((m) => m[1]!),
        ...[...text.matchAll(dynamic)].map((m) => m[2]!),
      ].filter((s) => !s.startsWith('.'));
      for (const specifier of specifiers) {
        const name = specifier.replace(/^node:/, '').split('/');
        bare.add(specifier.startsWith('@') ? name.slice(0, 2).join('/') : name[0]!);
      }
    }
    expect(bare.size).toBeGreaterThan(0);
    expect(
      [...bare].filter((name) => !allowed.has(name)),
      relative(REPO, dist),
    ).toEqual([]);
  });
});
