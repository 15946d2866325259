/**
 * The Go MCP SDK's conformance `everything-server`, built from the wrapper module in
 * `test/bridge/go/everything-server` and cached outside the clone (like the control plane's
 * binaries, test/cluster/build.ts): only the first run on a machine pays for the build.
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot, moduleVersion } from '../cluster/build.ts';

const MODULE_DIR = join(import.meta.dirname, 'go', 'everything-server');
const PACKAGE = 'github.com/modelcontextprotocol/go-sdk/conformance/everything-server';
const FLAGS = ['-mod=readonly', '-buildvcs=false', '-trimpath'];

export async function everythingServer(): Promise<string> {
  const goMod = await readFile(join(MODULE_DIR, 'go.mod'), 'utf8');
  const goSum = await readFile(join(MODULE_DIR, 'go.sum'), 'utf8');
  const version = moduleVersion(goMod, 'github.com/modelcontextprotocol/go-sdk');
  const hash = createHash('sha256')
    .update(goMod)
    .update(goSum)
    .update(FLAGS.join(' '))
    .digest('hex')
    .slice(0, 12);
  const binRoot = join(cacheRoot(), 'bin');
  const dir = join(binRoot, `go-sdk-everything-server-${version}-${hash}`);
  const binary = join(dir, 'everything-server');
  if (existsSync(binary)) return binary;

  if (spawnSync('go', ['version']).error) {
    throw new Error(
      'Go is missing: the conformance test builds the Go MCP SDK everything-server (install Go 1.26)',
    );
  }
  await mkdir(binRoot, { recursive: true });
  const building = await mkdtemp(join(binRoot, '.building-everything-server-'));
  // One package at a time: the machines these tests run on have two cores.
  const result = spawnSync(
    'go',
    ['build', ...FLAGS, '-p', '1', '-o', join(building, 'everything-server'), PACKAGE],
    {
      cwd: MODULE_DIR,
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) {
    await rm(building, { recursive: true, force: true });
    throw new Error(`building ${PACKAGE} failed:\n${result.stderr}`);
  }
  await rename(building, dir);
  return binary;
}
