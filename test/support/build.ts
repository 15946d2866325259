/**
 * The CLI as users run it: `npm run build` output (`dist/cli.js`, `dist/kubectl-mcp.js`, the
 * npm package's `bin`), built once per state of its inputs and shared by every test file and
 * vitest run that asks, instead of `node src/cli.ts`.
 *
 * The build runs in a copy of its inputs (src/, package.json, the tsconfigs) under
 * node_modules/.cache, so it never races `npm pack` or a developer's `npm run build` writing
 * dist/ in the clone, and the built files still resolve their dependencies from the clone's
 * node_modules. A second caller waits for the first caller's build (a lock directory naming
 * its pid; one whose process died is taken over).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait.ts';

const REPO = join(import.meta.dirname, '..', '..');
const CACHE = join(REPO, 'node_modules', '.cache', 'mcp-operator-build');
/** What `npm run build` reads (package.json holds the script itself). */
const INPUTS = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src'];
/** A build on a loaded machine: tsc type-checks and emits the whole of src/. */
const BUILD_TIMEOUT_MS = 600_000;
/**
 * Builds of other input states (and what a dead builder left) are removed once this old: another
 * run may still use one.
 */
const STALE_MS = 24 * 3600_000;

export interface BuiltCli {
  /** dist/cli.js: `mcp-operator`. */
  cli: string;
  /** dist/kubectl-mcp.js: `kubectl-mcp`, `kubectl mcp`. */
  plugin: string;
}

let built: Promise<BuiltCli> | undefined;

/** The built CLI for the clone's current inputs, building it first when no build has them. */
export function builtCli(): Promise<BuiltCli> {
  built ??= ensureBuilt();
  return built;
}

async function ensureBuilt(): Promise<BuiltCli> {
  const dir = join(CACHE, await inputsDigest());
  const entries = { cli: join(dir, 'dist', 'cli.js'), plugin: join(dir, 'dist', 'kubectl-mcp.js') };
  if (existsSync(entries.plugin)) return entries;
  await mkdir(CACHE, { recursive: true });
  const lock = `${dir}.lock`;
  await waitFor(
    `the build in ${dir}`,
    async () => existsSync(entries.plugin) || (await takeLock(lock)),
    { timeoutMs: BUILD_TIMEOUT_MS, intervalMs: 1000 },
  );
  if (existsSync(entries.plugin)) return entries;
  try {
    const building = `${dir}.${process.pid}`;
    await rm(building, { recursive: true, force: true });
    for (const input of INPUTS)
      await cp(join(REPO, input), join(building, input), { recursive: true });
    await promisify(execFile)('npm', ['run', 'build'], {
      cwd: building,
      timeout: BUILD_TIMEOUT_MS,
    });
    // Only a finished build gets the name a reader looks for.
    await rename(building, dir);
    await removeStaleBuilds(dir);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
  return entries;
}

/** True once this process holds the lock: it made the directory, or took it from a dead pid. */
async function takeLock(lock: string): Promise<boolean> {
  try {
    await mkdir(lock);
    await writeFile(join(lock, 'pid'), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const holder = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => 'NaN'));
  // A lock without a pid yet is being taken now; one whose process is gone is free.
  if (Number.isNaN(holder) || alive(holder)) return false;
  await rm(lock, { recursive: true, force: true });
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SHA-256 over every input file's path and content, in a fixed order. */
async function inputsDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of (await Promise.all(INPUTS.map((input) => files(join(REPO, input))))).flat()) {
    hash.update(`${relative(REPO, file)}\0`);
    hash.update(await readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

async function files(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const names = (await readdir(path)).sort();
  return (await Promise.all(names.map((name) => files(join(path, name))))).flat();
}

async function removeStaleBuilds(current: string): Promise<void> {
  for (const name of await readdir(CACHE)) {
    const path = join(CACHE, name);
    if (path !== current && Date.now() - (await stat(path)).mtimeMs > STALE_MS)
      await rm(path, { recursive: true, force: true });
  }
}
