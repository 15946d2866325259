/**
 * The stand-ins for public base images hold what their names say: a test that runs an example
 * on one of them runs it on the Python or Node the example names.
 */
import { describe, expect, inject, it } from 'vitest';
import { docker } from './docker.ts';

const images = inject('images');

describe('the stand-in base images', () => {
  it('the uv image runs the Python its tag names', async () => {
    const tagged = /:python(\d+\.\d+)-/.exec(images.bases.uv)?.[1];
    expect(tagged, images.bases.uv).toBeDefined();
    const version = await docker([
      'run',
      '--rm',
      '--entrypoint',
      'python3',
      images.bases.uv,
      '-c',
      'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")',
    ]);
    expect(version.trim()).toBe(tagged);
    // uv, which uvx runs the tools with, finds the same interpreter.
    const found = await docker([
      'run',
      '--rm',
      images.bases.uv,
      'sh',
      '-c',
      '"$(uv python find)" -c "import sys; print(sys.version_info[:2])"',
    ]);
    expect(found.trim()).toBe(`(${tagged!.replace('.', ', ')})`);
  });

  it('the Node image runs the Node major its tag names', async () => {
    const tagged = /^node:(\d+)-/.exec(images.bases.node)?.[1];
    expect(tagged, images.bases.node).toBeDefined();
    const version = await docker(['run', '--rm', images.bases.node, 'node', '--version']);
    expect(version.trim()).toMatch(new RegExp(`^v${tagged}\\.`));
  });
});
