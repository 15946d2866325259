/**
 * uv, pinned, from its PyPI wheel: the stand-in image's uv (bases.ts) and the `uv`/`uvx` the
 * bridge tests run on this machine, which has python3 and nothing else of Python's tooling.
 * The wheel is checked against the sha256 PyPI publishes and kept under the cache, like the Go
 * binaries (test/cluster/build.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot } from '../cluster/build.ts';
import { runLogged } from './cache.ts';

export const UV_VERSION = '0.13.9';

interface Wheel {
  url: string;
  sha256: string;
}

/** uv's manylinux wheel for this machine, from PyPI's JSON API, verified and cached. */
export async function uvWheel(): Promise<string> {
  const dir = join(cacheRoot(), 'images', 'downloads');
  const file = join(dir, `uv-${UV_VERSION}-${process.arch}.whl`);
  if (existsSync(file)) return file;
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch as string];
  if (arch === undefined) throw new Error(`no uv wheel for ${process.arch}`);
  // The project's JSON (https://docs.pypi.org/api/json/); the per-release URL is not mirrored.
  const response = await fetch('https://pypi.org/pypi/uv/json');
  if (!response.ok) throw new Error(`PyPI: uv: HTTP ${response.status}`);
  const project = (await response.json()) as {
    releases: Record<string, { filename: string; url: string; digests: { sha256: string } }[]>;
  };
  const wheel: Wheel | undefined = (project.releases[UV_VERSION] ?? [])
    .filter((u) => u.filename.endsWith('.whl') && /manylinux/.test(u.filename))
    .filter((u) => u.filename.includes(arch))
    .map((u) => ({ url: new URL(u.url, response.url).href, sha256: u.digests.sha256 }))[0];
  if (wheel === undefined) throw new Error(`PyPI: no manylinux ${arch} wheel of uv ${UV_VERSION}`);
  const bytes = Buffer.from(await (await fetch(wheel.url)).arrayBuffer());
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== wheel.sha256)
    throw new Error(`${wheel.url}: sha256 ${actual}, PyPI says ${wheel.sha256}`);
  await mkdir(dir, { recursive: true });
  const partial = `${file}.${process.pid}`;
  await writeFile(partial, bytes);
  await rename(partial, file);
  return file;
}

export interface Uv {
  /** Absolute paths of the two commands the wheel carries. */
  uv: string;
  uvx: string;
}

/**
 * `uv` and `uvx` of UV_VERSION under <cache>/bin/uv-<version>, unpacked from the wheel once.
 * The wheel is a zip; python3's zipfile unpacks it, as in the stand-in image (uv.Dockerfile).
 */
export async function ensureUv(): Promise<Uv> {
  const bin = join(cacheRoot(), 'bin', `uv-${UV_VERSION}`);
  const uv: Uv = { uv: join(bin, 'uv'), uvx: join(bin, 'uvx') };
  if (existsSync(uv.uv) && existsSync(uv.uvx)) return uv;
  const wheel = await uvWheel();
  await mkdir(join(cacheRoot(), 'bin'), { recursive: true });
  // Unpacked beside its place and renamed into it: a concurrent run sees all of it or none.
  const scratch = await mkdtemp(`${bin}.partial-`);
  try {
    await runLogged(
      'python3',
      ['-m', 'zipfile', '-e', wheel, scratch],
      join(cacheRoot(), 'images', 'uv.log'),
    );
    const scripts = join(scratch, `uv-${UV_VERSION}.data`, 'scripts');
    for (const name of ['uv', 'uvx']) await chmod(join(scripts, name), 0o755);
    await rename(scripts, bin).catch((error: unknown) => {
      if (!existsSync(uv.uv)) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return uv;
}
