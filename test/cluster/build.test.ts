import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cacheDir, ensureBinaries, moduleVersion } from './build.ts';

describe('ensureBinaries', () => {
  let cache: string;
  const quiet = (): void => {};

  beforeEach(async () => {
    cache = await mkdtemp(join(tmpdir(), 'mcp-operator-build-test-'));
    vi.stubEnv('MCP_OPERATOR_CACHE', cache);
    // No Go on PATH: anything that would build fails, so passing tests prove nothing was built.
    vi.stubEnv('PATH', '/nonexistent');
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await rm(cache, { recursive: true, force: true });
  });

  it('keys the cache directory by component, version and a hash of the recipe', async () => {
    expect(basename(await cacheDir('helm'))).toMatch(/^helm-v3\.\d+\.\d+-[0-9a-f]{12}$/);
    expect(basename(await cacheDir('kubernetes'))).toMatch(
      /^kubernetes-v1\.\d+\.\d+-[0-9a-f]{12}$/,
    );
    expect(basename(await cacheDir('prometheus'))).toMatch(
      /^prometheus-v0\.3\d\d\.\d+-[0-9a-f]{12}$/,
    );
  });

  it('uses cached binaries without building, and removes builds abandoned by a dead process', async () => {
    const dir = await cacheDir('helm');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'helm'), '#!/bin/sh\n');
    await chmod(join(dir, 'helm'), 0o755);
    // pid_max is at most 2^22 on Linux, so this builder cannot be alive.
    await mkdir(join(cache, 'bin', '.tmp-999999999-helm'));

    const binaries = await ensureBinaries(['helm'], quiet);

    expect(binaries.helm).toBe(join(dir, 'helm'));
    expect(await readdir(join(cache, 'bin'))).toEqual([basename(dir)]);
  });

  it('says that Go is needed when it must build and cannot find go', async () => {
    await expect(ensureBinaries(['etcd'], quiet)).rejects.toThrow(
      /Go is needed to build the test control plane .*Install Go/,
    );
    expect(await readdir(join(cache, 'bin'))).toEqual([]);
  });
});

describe('moduleVersion', () => {
  it('reads a required module version from go.mod text', () => {
    const goMod =
      'module x\n\nrequire (\n\tk8s.io/client-go v0.37.0 // indirect\n\tk8s.io/api v0.37.1\n)\n';
    expect(moduleVersion(goMod, 'k8s.io/api')).toBe('v0.37.1');
    expect(moduleVersion(goMod, 'k8s.io/client-go')).toBe('v0.37.0');
    expect(() => moduleVersion(goMod, 'k8s.io/kubernetes')).toThrow(
      /does not require k8s.io\/kubernetes/,
    );
  });
});
