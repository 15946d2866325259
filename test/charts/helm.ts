/**
 * The real helm binary (built by test/cluster/build.ts) run against the chart in
 * charts/mcp-operator, with a private HELM_*_HOME so that nothing a user configured (repositories,
 * plugins, a registry login) takes part and nothing is left in their home directory.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../../src/kube/resources.ts';
import { ensureBinaries } from '../cluster/build.ts';

export const CHART_DIR = join(import.meta.dirname, '..', '..', 'charts', 'mcp-operator');

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A deployed object as `helm template` renders it. */
export type Rendered = KubeObject & Record<string, unknown>;

export class Helm {
  readonly #binary: string;
  readonly #home: string;
  readonly #kubeconfig: string | undefined;

  private constructor(binary: string, home: string, kubeconfig: string | undefined) {
    this.#binary = binary;
    this.#home = home;
    this.#kubeconfig = kubeconfig;
  }

  /** `binary`: a helm path (the cluster setup provides one); default: build or reuse the cached one. */
  static async create(options: { binary?: string; kubeconfig?: string } = {}): Promise<Helm> {
    const binary = options.binary ?? (await ensureBinaries(['helm'])).helm;
    return new Helm(
      binary,
      await mkdtemp(join(tmpdir(), 'mcp-operator-helm-')),
      options.kubeconfig,
    );
  }

  async close(): Promise<void> {
    await rm(this.#home, { recursive: true, force: true });
  }

  /** Runs helm; `values` go in as a values file on stdin (`-f -`). Never throws on exit codes. */
  run(args: readonly string[], values?: unknown): Promise<HelmResult> {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: this.#home,
      HELM_CONFIG_HOME: join(this.#home, 'config'),
      HELM_CACHE_HOME: join(this.#home, 'cache'),
      HELM_DATA_HOME: join(this.#home, 'data'),
      ...(this.#kubeconfig === undefined ? {} : { KUBECONFIG: this.#kubeconfig }),
    };
    const child = spawn(this.#binary, [...args, ...(values === undefined ? [] : ['-f', '-'])], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // JSON is YAML: helm reads it as a values file.
    child.stdin.end(values === undefined ? '' : JSON.stringify(values));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  /** Like `run`, but throws with helm's stderr when it fails. */
  async ok(args: readonly string[], values?: unknown): Promise<string> {
    const result = await this.run(args, values);
    if (result.code !== 0) {
      throw new Error(`helm ${args.join(' ')} exited ${result.code}:\n${result.stderr}`);
    }
    return result.stdout;
  }

  /** The objects `helm template` renders for `values`. */
  async template(
    values: unknown = {},
    {
      release = 'ops',
      namespace = 'mcp-system',
      chart = CHART_DIR,
      /** API versions the pretend cluster serves besides the built-in ones (`--api-versions`). */
      apiVersions = [] as string[],
    } = {},
  ): Promise<Rendered[]> {
    const args = ['template', release, chart, '--namespace', namespace];
    for (const version of apiVersions) args.push('--api-versions', version);
    const stdout = await this.ok(args, values);
    return parseManifests(stdout);
  }
}

export function parseManifests(text: string): Rendered[] {
  return loadAll(text).filter((doc): doc is Rendered => typeof doc === 'object' && doc !== null);
}

/** The one object of `kind` (and `name`, when given); throws when there is not exactly one. */
export function only(objects: readonly Rendered[], kind: string, name?: string): Rendered {
  const found = objects.filter(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  if (found.length !== 1) {
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  }
  return found[0]!;
}
