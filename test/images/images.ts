/**
 * The images the tests and a developer's local node use, built into the local Docker engine
 * (`npm run images`, or from code):
 *
 *   const docker = await ensureDocker();          // ./docker.ts: starts dockerd if none runs
 *   const images = await ensureImages();          // builds what is missing, returns the names
 *   images.operator                               // 'mcp-operator:<package.json version>-<inputs>'
 *   images.servers.filesystem['2026.1.14']        // 'mcp-operator-test/server-filesystem:2026.1.14'
 *   await docker.stop();                          // only if ensureDocker started it
 *
 * - `bases`: stand-ins for the public base images the Dockerfile and the examples name
 *   (./bases.ts); no image registry is reachable here.
 * - `servers`: MCP servers preinstalled (pods cannot reach npm or PyPI), runnable by their
 *   command name or by `npx -y <package>@<version>` / `uvx <package>@<version>` offline.
 * - `operator`: the project's image, built from the real Dockerfile by testcontainers.
 *
 * Every image is cached by the digest of its inputs (./cache.ts): a second run builds nothing.
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { copies, parseDockerfile } from './dockerfile.ts';
import {
  DEBIAN_IMAGE,
  NODE_IMAGE,
  REPO,
  UV_IMAGE,
  debianRecipe,
  imagesCache,
  nodeRecipe,
  pipRequirement,
  serverRecipe,
  uvRecipe,
  withScratch,
} from './bases.ts';
import { GenericContainer } from 'testcontainers';
import { digest, dockerBuild, ensureImage, fileParts, type Log, type Recipe } from './cache.ts';
import { docker } from './docker.ts';

/** The filesystem server before and after a release whose tools drift. */
export const FILESYSTEM_VERSIONS = ['2026.1.14', '2026.8.31'] as const;
export const TIME_SERVER_VERSION = '2026.10.19';

export interface Images {
  operator: string;
  bases: { debian: string; node: string; uv: string };
  servers: {
    /** @modelcontextprotocol/server-everything at the version package-lock.json pins. */
    everything: string;
    filesystem: Record<(typeof FILESYSTEM_VERSIONS)[number], string>;
    /** mcp-server-time from PyPI, installed with uv. */
    time: string;
  };
}

const PREFIX = 'mcp-operator-test';

async function lockedVersion(pkg: string): Promise<string> {
  const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const version = lock.packages[`node_modules/${pkg}`]?.version;
  if (version === undefined) throw new Error(`package-lock.json has no ${pkg}`);
  return version;
}

async function operatorRecipe(baseIds: readonly string[]): Promise<Recipe> {
  const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
    version: string;
  };
  const dockerfile = await readFile(join(REPO, 'Dockerfile'), 'utf8');
  const sources = parseDockerfile(dockerfile)
    .stages.flatMap(copies)
    .filter((copy) => copy.from === undefined)
    .flatMap((copy) => copy.sources);
  const inputs = digest([
    'operator',
    ...baseIds,
    ...(await fileParts(REPO, ['Dockerfile', '.dockerignore', ...new Set(sources)])),
  ]);
  // The inputs in the tag: two checkouts of the project on one machine (one Docker engine, one
  // node) each test their own code, never the image the other tagged a moment before.
  const name = `mcp-operator:${version}-${inputs.slice(0, 12)}`;
  return { name, inputs, build: () => buildWithTestcontainers(name, inputs) };
}

/**
 * Builds the Dockerfile the way the tests build images, with testcontainers
 * (GenericContainer.fromDockerfile), then adds the inputs label with a one-line build on top
 * (the builder takes no labels of ours).
 */
async function buildWithTestcontainers(name: string, inputs: string): Promise<void> {
  // testcontainers' reaper (Ryuk) is an image no registry here serves; nothing is left to reap:
  // the build's temporary tag is removed below.
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  const built = `${PREFIX}/build:${randomUUID()}`;
  await GenericContainer.fromDockerfile(REPO).build(built, { deleteOnExit: false });
  try {
    await withScratch('label', async (context) => {
      await writeFile(join(context, 'Dockerfile'), `FROM ${built}\n`);
      await dockerBuild(
        { name, inputs, context, logFile: join(imagesCache(), 'mcp-operator.log') },
        () => {},
      );
    });
  } finally {
    await docker(['rmi', built]);
  }
}

/** How long an operator image of other sources is kept: another checkout may still test it. */
const KEEP_OTHER_OPERATOR_IMAGES_MS = 24 * 60 * 60 * 1000;

/**
 * The operator images in `listed` (lines of `name|CreatedAt` from `docker images`) that other
 * sources tagged (same version, other inputs) more than a day before `now`.
 */
export function staleOperatorImages(listed: string, current: string, now: number): string[] {
  const sameVersion = current.slice(0, current.lastIndexOf('-') + 1);
  const cutoff = now - KEEP_OTHER_OPERATOR_IMAGES_MS;
  return listed
    .split('\n')
    .map((line) => line.split('|'))
    .filter(([name]) => name !== current && name?.startsWith(sameVersion) === true)
    .filter(([, created]) => created !== undefined && createdAt(created) < cutoff)
    .map(([name]) => name!);
}

/** Docker's CreatedAt, "2026-12-01 14:35:07 +0000 UTC": the zone name after the offset is noise. */
function createdAt(text: string): number {
  return Date.parse(text.replace(/ [A-Z]+$/, ''));
}

/**
 * Removes operator images of other sources built more than a day ago: every edit of the sources
 * tags a new image, and without this they pile up in the engine, 150 MB each. An image that a
 * container still uses stays (no --force).
 */
async function pruneOperatorImages(current: string, log: Log): Promise<void> {
  const repository = current.slice(0, current.lastIndexOf(':'));
  const format = '{{.Repository}}:{{.Tag}}|{{.CreatedAt}}';
  const listed = await docker(['images', '--format', format, repository]);
  for (const name of staleOperatorImages(listed, current, Date.now())) {
    await docker(['rmi', name]).then(
      () => log(`removed ${name}, built more than a day ago from other sources`),
      () => log(`kept ${name}: a container still uses it`),
    );
  }
}

const print: Log = (line) => process.stderr.write(`[images] ${line}\n`);

/** Builds what is missing or out of date; the Docker engine must be running (ensureDocker). */
export async function ensureImages(log: Log = print): Promise<Images> {
  const debianId = await ensureImage(debianRecipe(), log);
  const nodeId = await ensureImage(await nodeRecipe(debianId), log);
  const uvId = await ensureImage(await uvRecipe(debianId), log);
  const npmServer = async (pkg: string, version: string) => {
    const name = `${PREFIX}/${pkg.split('/').at(-1)}:${version}`;
    await ensureImage(
      await serverRecipe({
        name,
        dockerfile: 'npm-server.Dockerfile',
        baseId: nodeId,
        arg: 'PACKAGE',
        spec: `${pkg}@${version}`,
      }),
      log,
    );
    return name;
  };
  const everything = await npmServer(
    '@modelcontextprotocol/server-everything',
    await lockedVersion('@modelcontextprotocol/server-everything'),
  );
  const [before, after] = FILESYSTEM_VERSIONS;
  const filesystem = {
    [before]: await npmServer('@modelcontextprotocol/server-filesystem', before),
    [after]: await npmServer('@modelcontextprotocol/server-filesystem', after),
  };
  const time = `${PREFIX}/server-time:${TIME_SERVER_VERSION}`;
  await ensureImage(
    await serverRecipe({
      name: time,
      dockerfile: 'uv-server.Dockerfile',
      baseId: uvId,
      arg: 'REQUIREMENT',
      spec: pipRequirement(`mcp-server-time@${TIME_SERVER_VERSION}`),
    }),
    log,
  );
  const operator = await operatorRecipe([debianId, nodeId]);
  await ensureImage(operator, log);
  await pruneOperatorImages(operator.name, log);
  return {
    operator: operator.name,
    bases: { debian: DEBIAN_IMAGE, node: NODE_IMAGE, uv: UV_IMAGE },
    servers: { everything, filesystem, time },
  };
}
