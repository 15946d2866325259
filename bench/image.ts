/**
 * Image size: the operator image as test/images builds it (total, the base image's share, our
 * layers, node_modules), and with `--baseline <git ref>` the same figures for the image that
 * ref's Dockerfile and package files build on the same stand-in bases, with ratios.
 *
 *   node bench/image.ts [--baseline <git ref>]
 *
 * Starts dockerd for the run if none is running (test/images/docker.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { dockerBuild } from '../test/images/cache.ts';
import { parseDockerfile } from '../test/images/dockerfile.ts';
import { docker, ensureDocker } from '../test/images/docker.ts';
import { ensureImages } from '../test/images/images.ts';
import { REPO, imagesCache } from '../test/images/bases.ts';

const run = promisify(execFile);
const MB = 1e6;

interface Sizes {
  image: string;
  total: number;
  base: number;
  ours: number;
  nodeModules: number;
}

/** Layer sizes, oldest first, as `docker history` reports them. */
async function layers(image: string): Promise<{ size: number; createdBy: string }[]> {
  const text = await docker([
    'history',
    '--no-trunc',
    '--human=false',
    '--format',
    '{{.Size}}\t{{.CreatedBy}}',
    image,
  ]);
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [size = '0', createdBy = ''] = line.split('\t');
      return { size: Number(size), createdBy };
    })
    .reverse();
}

/** The final stage's base image as the Dockerfile names it (ARG defaults applied). */
function finalBase(dockerfile: string): string {
  const { args, stages } = parseDockerfile(dockerfile);
  return stages.at(-1)!.image.replace(/\$\{(\w+)\}/g, (_, name: string) => args[name] ?? '');
}

async function measure(image: string, dockerfile: string): Promise<Sizes> {
  const all = await layers(image);
  const base = finalBase(dockerfile);
  const baseCount = base === 'scratch' ? 0 : (await layers(base)).length;
  const sum = (rows: typeof all) => rows.reduce((total, row) => total + row.size, 0);
  const nodeModules = all.filter((row) =>
    /\bin (\.\/|\/app\/)node_modules\s*$/.test(row.createdBy),
  );
  return {
    image,
    total: sum(all),
    base: sum(all.slice(0, baseCount)),
    ours: sum(all.slice(baseCount)),
    nodeModules: sum(nodeModules),
  };
}

/** Builds `ref`'s Dockerfile from `ref`'s tree (git archive) on the same stand-in bases. */
async function buildBaseline(ref: string): Promise<{ image: string; dockerfile: string }> {
  const { stdout: sha } = await run('git', ['-C', REPO, 'rev-parse', '--short', ref]);
  const image = `mcp-operator-bench/baseline:${sha.trim()}`;
  const context = await mkdtemp(join(tmpdir(), 'mcp-operator-baseline-'));
  try {
    await run('sh', ['-c', `git -C "${REPO}" archive "${ref}" | tar -x -C "${context}"`]);
    const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
    log(`building ${ref} (${sha.trim()}) as ${image}`);
    await dockerBuild(
      { name: image, inputs: ref, context, logFile: join(imagesCache(), 'baseline.log') },
      log,
    );
    return { image, dockerfile: await readFile(join(context, 'Dockerfile'), 'utf8') };
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

const row = (label: string, s: Sizes, baseline?: Sizes) => {
  const cell = (key: 'total' | 'base' | 'ours' | 'nodeModules') => {
    const mb = `${(s[key] / MB).toFixed(1)} MB`;
    return baseline === undefined || baseline[key] === 0
      ? mb
      : `${mb} (×${(s[key] / baseline[key]).toFixed(2)})`;
  };
  return `| ${label} | ${cell('total')} | ${cell('base')} | ${cell('ours')} | ${cell('nodeModules')} |`;
};

const { values } = parseArgs({ options: { baseline: { type: 'string' } } });
const engine = await ensureDocker();
try {
  const { operator } = await ensureImages();
  const current = await measure(operator, await readFile(join(REPO, 'Dockerfile'), 'utf8'));
  const lines = [
    '| image | total | base image | our layers | node_modules |',
    '|---|---|---|---|---|',
  ];
  let baseline: Sizes | undefined;
  if (values.baseline !== undefined) {
    const built = await buildBaseline(values.baseline);
    baseline = await measure(built.image, built.dockerfile);
    await docker(['rmi', built.image]);
    lines.push(row(`${values.baseline} (${built.image})`, baseline));
  }
  lines.push(row(`working tree (${operator})`, current, baseline));
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await engine.stop();
}
