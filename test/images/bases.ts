/**
 * Stand-ins for the public base images, made on this machine because no image registry is
 * reachable: `debian:bookworm-slim` from debootstrap, `node:24-bookworm-slim` from it with npm's
 * Node binary and the npm package, and the uv image the Python example names, with Debian's
 * Python and uv from PyPI. Each carries the packages the examples start, preinstalled, so that
 * the examples run unmodified in a pod with no route to npm or PyPI.
 *
 * The stand-ins trust this machine's extra CA certificates (its HTTPS goes through an
 * intercepting proxy); the product's Dockerfile never does.
 */
import { existsSync } from 'node:fs';
import {
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { loadExamples } from '../examples/examples.ts';
import { cacheRoot } from '../cluster/build.ts';
import { forgetDirectory, removeOnExit } from '../cluster/processes.ts';
import { DOCKER_CLI } from './docker.ts';
import { UV_VERSION, uvWheel } from './uv.ts';
import {
  INPUTS_LABEL,
  digest,
  dockerBuild,
  fileParts,
  runLogged,
  type Log,
  type Recipe,
} from './cache.ts';

export const REPO = join(import.meta.dirname, '..', '..');
const HERE = import.meta.dirname;

export const DEBIAN_IMAGE = 'debian:bookworm-slim';
export const NODE_IMAGE = 'node:24-bookworm-slim';
export const UV_IMAGE = 'ghcr.io/astral-sh/uv:python3.11-bookworm-slim';

const DEBIAN = {
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  security: 'http://deb.debian.org/debian-security',
};
/** npm 11 is what Node 24 ships with. */
const NPM_VERSION = '11.19.1';

/** Downloads and build logs, outside the clone. */
export const imagesCache = (): string => join(cacheRoot(), 'images');

/** What the official slim images leave out (docs, man pages, locales), as dpkg path filters. */
const SLIM_DPKG_CONFIG = `path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
`;
const SLIM_REMOVE = [
  'usr/share/info',
  'usr/share/locale',
  'usr/share/man',
  'var/cache/apt',
  'var/lib/apt/lists',
  'var/log',
];

const SOURCES = `deb ${DEBIAN.mirror} ${DEBIAN.suite} main
deb ${DEBIAN.mirror} ${DEBIAN.suite}-updates main
deb ${DEBIAN.security} ${DEBIAN.suite}-security main
`;

/** A scratch directory under the images cache, removed after `use` (or on Ctrl-C). */
export async function withScratch<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  await mkdir(imagesCache(), { recursive: true });
  const dir = await mkdtemp(join(imagesCache(), `${prefix}-`));
  removeOnExit(dir);
  try {
    return await use(dir);
  } finally {
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
    forgetDirectory(dir);
  }
}

/** debootstrap mounts /proc and /sys in its target; an interrupted run can leave them. */
async function unmountUnder(dir: string): Promise<void> {
  const mounts = (await readFile('/proc/self/mounts', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((point) => point.startsWith(`${dir}/`))
    .sort()
    .reverse();
  for (const point of mounts) {
    await runLogged('umount', ['--lazy', point], '/dev/null').catch(() => undefined);
  }
}

/** The lines of debootstrap's output worth printing as progress. */
const DEBOOTSTRAP_MILESTONE =
  /^I: (Retrieving Release|Installing core|Unpacking the base|Configuring the base|Base system installed)/;

const logFile = (name: string) => join(imagesCache(), `${name.replace(/[/:]/g, '_')}.log`);

export function debianRecipe(): Recipe {
  const inputs = digest([
    'debian',
    DEBIAN.suite,
    DEBIAN.mirror,
    process.arch,
    SLIM_DPKG_CONFIG,
    SOURCES,
    ...SLIM_REMOVE,
  ]);
  return {
    name: DEBIAN_IMAGE,
    inputs,
    build: (log) =>
      withScratch('debian', async (dir) => {
        if (process.getuid?.() !== 0) throw new Error('debootstrap needs root');
        const rootfs = join(dir, 'rootfs');
        const output = logFile(DEBIAN_IMAGE);
        log(`  debootstrap --variant=minbase ${DEBIAN.suite} (log: ${output})`);
        await runLogged(
          'debootstrap',
          ['--variant=minbase', DEBIAN.suite, rootfs, DEBIAN.mirror],
          output,
          (line) => {
            if (DEBOOTSTRAP_MILESTONE.test(line)) log(`  ${DEBIAN_IMAGE}: ${line}`);
          },
        );
        await unmountUnder(rootfs);
        for (const path of SLIM_REMOVE) {
          await rm(join(rootfs, path), { recursive: true, force: true });
          await mkdir(join(rootfs, path), { recursive: true });
        }
        await slimDocs(join(rootfs, 'usr/share/doc'));
        await mkdir(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
        await mkdir(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
        await writeFile(join(rootfs, 'etc/dpkg/dpkg.cfg.d/docker'), SLIM_DPKG_CONFIG);
        await writeFile(join(rootfs, 'etc/apt/sources.list'), SOURCES);
        const tarball = join(dir, 'rootfs.tar');
        await runLogged('tar', ['--numeric-owner', '-C', rootfs, '-cf', tarball, '.'], output);
        await runLogged(
          DOCKER_CLI,
          [
            'import',
            '--change',
            'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
            '--change',
            'CMD ["bash"]',
            '--change',
            `LABEL ${INPUTS_LABEL}=${inputs}`,
            tarball,
            DEBIAN_IMAGE,
          ],
          output,
        );
      }),
  };
}

/** Keeps only each package's copyright file, as the official slim images do. */
async function slimDocs(docs: string): Promise<void> {
  for (const pkg of await readdir(docs)) {
    for (const entry of await readdir(join(docs, pkg)).catch(() => [])) {
      if (entry !== 'copyright') await rm(join(docs, pkg, entry), { recursive: true, force: true });
    }
  }
}

/** The package specs the examples start with `command[0]` (`npx -y <spec>`, `uvx <spec>`). */
async function exampleSpecs(runner: 'npx' | 'uvx'): Promise<string[]> {
  const specs = new Set<string>();
  for (const { server } of await loadExamples()) {
    const [command, ...rest] = server.spec.command ?? [];
    if (command !== runner) continue;
    const spec = rest.find((word) => !word.startsWith('-'));
    if (spec !== undefined) specs.add(spec);
  }
  return [...specs].sort();
}

/** The extra CA certificates Debian's update-ca-certificates installed on this machine. */
async function extraCaCertificates(): Promise<string> {
  const dir = '/usr/local/share/ca-certificates';
  if (!existsSync(dir)) return '';
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.crt')).sort();
  return (await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')))).join('\n');
}

/** The Node binary the `node` dev dependency installed: same version as the project pins. */
async function nodeBinary(): Promise<{ path: string; version: string }> {
  const pkg = join(REPO, 'node_modules', 'node', 'package.json');
  const { version } = JSON.parse(await readFile(pkg, 'utf8')) as { version: string };
  const path = join(REPO, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm ci`);
  return { path, version };
}

/** The npm package's tarball, fetched once into the images cache. */
async function npmTarball(): Promise<string> {
  const dir = join(imagesCache(), 'downloads');
  const tarball = join(dir, `npm-${NPM_VERSION}.tgz`);
  if (!existsSync(tarball)) {
    await mkdir(dir, { recursive: true });
    await runLogged(
      'npm',
      ['pack', `npm@${NPM_VERSION}`, '--pack-destination', dir],
      logFile('npm'),
    );
  }
  return tarball;
}

/**
 * An image built from files of this directory (the first is the Dockerfile) and whatever
 * `stage` adds to the build context; `parts` are its other inputs.
 */
async function contextRecipe(options: {
  name: string;
  files: readonly [string, ...string[]];
  parts: readonly (string | Buffer)[];
  buildArgs?: Record<string, string>;
  stage?: (context: string) => Promise<void>;
}): Promise<Recipe> {
  const { name, files } = options;
  const inputs = digest([...options.parts, ...(await fileParts(HERE, files))]);
  return {
    name,
    inputs,
    build: (log) =>
      withScratch('context', async (context) => {
        for (const file of files) await copyFile(join(HERE, file), join(context, file));
        await options.stage?.(context);
        await dockerBuild(
          {
            name,
            inputs,
            context,
            dockerfile: files[0],
            buildArgs: options.buildArgs,
            logFile: logFile(name),
          },
          log,
        );
      }),
  };
}

export async function nodeRecipe(debianId: string): Promise<Recipe> {
  const node = await nodeBinary();
  const ca = await extraCaCertificates();
  const packages = await exampleSpecs('npx');
  return contextRecipe({
    name: NODE_IMAGE,
    files: ['node.Dockerfile'],
    parts: ['node', debianId, node.version, NPM_VERSION, ca, ...packages],
    buildArgs: { PACKAGES: packages.join(' ') },
    stage: async (context) => {
      await copyFile(node.path, join(context, 'node'));
      await writeFile(join(context, 'extra-ca.pem'), ca);
      await runLogged('tar', ['-xzf', await npmTarball(), '-C', context], logFile(NODE_IMAGE));
      await rename(join(context, 'package'), join(context, 'npm'));
    },
  });
}

/** The machine's CA bundle (with the proxy's CA), for uv inside the stand-in's builds. */
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const UV_FILES: [string, ...string[]] = ['uv.Dockerfile', 'uv.toml', 'uv-wheels.sh'];

/** uvx's `name@version` as a pip requirement. */
export const pipRequirement = (spec: string): string => spec.replace('@', '==');

export async function uvRecipe(debianId: string): Promise<Recipe> {
  const tools = (await exampleSpecs('uvx')).map(pipRequirement);
  return contextRecipe({
    name: UV_IMAGE,
    files: UV_FILES,
    parts: ['uv', debianId, UV_VERSION, process.arch, await readFile(CA_BUNDLE), ...tools],
    buildArgs: { REQUIREMENTS: tools.join(' ') },
    stage: async (context) => {
      await copyFile(await uvWheel(), join(context, 'uv.whl'));
      await copyFile(CA_BUNDLE, join(context, 'ca-certificates.crt'));
    },
  });
}

/** A test server image: one package installed in a stand-in by `dockerfile` (build arg `arg`). */
export function serverRecipe(options: {
  name: string;
  dockerfile: 'npm-server.Dockerfile' | 'uv-server.Dockerfile';
  /** The stand-in it is built from (the Dockerfile's default base), by image ID. */
  baseId: string;
  arg: string;
  spec: string;
}): Promise<Recipe> {
  return contextRecipe({
    name: options.name,
    files: [options.dockerfile],
    parts: ['server', options.baseId, options.spec],
    buildArgs: { [options.arg]: options.spec },
  });
}

export type { Log };
