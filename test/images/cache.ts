/**
 * Images cached by content. Each image carries a label with a digest of everything that went
 * into it (its Dockerfile, the context files it copies, versions, the IDs of the images it is
 * built from); an image whose label matches the digest of the current inputs is not built
 * again.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DOCKER_CLI, docker } from './docker.ts';

export const INPUTS_LABEL = 'dev.mcp-operator.test.inputs';

export type Log = (line: string) => void;

/** sha256 over the parts, each length-prefixed so that no two part lists collide. */
export function digest(parts: readonly (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part) : part;
    hash.update(`${bytes.length}:`).update(bytes);
  }
  return hash.digest('hex');
}

/** Path, executable bit and content (or link target) of every file under each path, sorted. */
export async function fileParts(root: string, paths: readonly string[]): Promise<Buffer[]> {
  const parts: Buffer[] = [];
  const visit = async (path: string): Promise<void> => {
    const full = join(root, path);
    const stat = await lstat(full);
    if (stat.isDirectory()) {
      for (const entry of (await readdir(full)).sort()) await visit(join(path, entry));
    } else if (stat.isSymbolicLink()) {
      parts.push(Buffer.from(`${path} -> ${await readlink(full)}`));
    } else {
      parts.push(Buffer.from(`${path} ${stat.mode & 0o111 ? 'x' : '-'}`), await readFile(full));
    }
  };
  for (const path of [...paths].sort()) await visit(path);
  return parts;
}

/** The image IDs and input labels of the named images that exist. */
export async function inspectImages(
  names: readonly string[],
): Promise<Map<string, { id: string; inputs?: string }>> {
  const found = new Map<string, { id: string; inputs?: string }>();
  for (const name of names) {
    const text = await docker(['image', 'inspect', '--format', '{{json .}}', name]).catch(
      (error: Error) => {
        if (/No such image/i.test(error.message)) return undefined;
        throw error;
      },
    );
    if (text === undefined) continue;
    const image = JSON.parse(text) as { Id: string; Config?: { Labels?: Record<string, string> } };
    found.set(name, { id: image.Id, inputs: image.Config?.Labels?.[INPUTS_LABEL] });
  }
  return found;
}

export interface Recipe {
  name: string;
  /** Digest of every input; a change rebuilds the image. */
  inputs: string;
  /** Builds the image under `name` with the label INPUTS_LABEL=inputs. */
  build: (log: Log) => Promise<void>;
}

/** Builds the image unless one with the same inputs exists; resolves to its image ID. */
export async function ensureImage(recipe: Recipe, log: Log): Promise<string> {
  const existing = (await inspectImages([recipe.name])).get(recipe.name);
  if (existing?.inputs === recipe.inputs) {
    log(`cached ${recipe.name}`);
    return existing.id;
  }
  log(`building ${recipe.name}${existing === undefined ? '' : ' (inputs changed)'}`);
  const started = Date.now();
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  const heartbeat = setInterval(
    () => log(`  still building ${recipe.name} (${seconds()} s)`),
    30_000,
  );
  try {
    await recipe.build(log);
  } finally {
    clearInterval(heartbeat);
  }
  const built = (await inspectImages([recipe.name])).get(recipe.name);
  if (built?.inputs !== recipe.inputs) {
    throw new Error(`${recipe.name}: the build did not label the image with its inputs`);
  }
  log(`built ${recipe.name} in ${seconds()} s`);
  return built.id;
}

export interface BuildOptions {
  name: string;
  inputs: string;
  context: string;
  /** Relative to the context; `Dockerfile` when absent. */
  dockerfile?: string;
  buildArgs?: Record<string, string>;
  /** Every line the build prints is appended here. */
  logFile: string;
}

/**
 * `docker build` with the legacy builder (BuildKit needs buildx, which is not packaged here)
 * and the host's network: the builds fetch from npm, PyPI and Debian, which the host reaches.
 * Prints the builder's step lines; the whole output goes to the log file.
 */
export async function dockerBuild(options: BuildOptions, log: Log): Promise<void> {
  const args = [
    'build',
    // A failed step's container is removed too, not left behind.
    '--force-rm',
    '--network',
    'host',
    '--label',
    `${INPUTS_LABEL}=${options.inputs}`,
    '--tag',
    options.name,
    '--file',
    join(options.context, options.dockerfile ?? 'Dockerfile'),
    ...Object.entries(options.buildArgs ?? {}).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
    options.context,
  ];
  await runLogged(DOCKER_CLI, args, options.logFile, (line) => {
    if (/^Step \d+\/\d+ :/.test(line)) log(`  ${options.name}: ${line.slice(0, 120)}`);
  });
}

/** Runs a command, appending its output to `logFile`; rejects with the output's tail. */
export function runLogged(
  command: string,
  args: readonly string[],
  logFile: string,
  onLine: (line: string) => void = () => {},
): Promise<void> {
  const out = createWriteStream(logFile, { flags: 'a' });
  out.write(`$ ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
  });
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      out.write(`${line}\n`);
      tail.push(line);
      if (tail.length > 30) tail.shift();
      onLine(line);
    });
  }
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      out.end();
      if (code === 0) resolve();
      else {
        reject(
          new Error(
            `${command} ${args.slice(0, 2).join(' ')} … exited ${code}; ${logFile} ends:\n${tail.join('\n')}`,
          ),
        );
      }
    });
  });
}
