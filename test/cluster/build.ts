/**
 * Builds the test cluster's binaries (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler, kwok and helm; kubelet, kube-proxy, kubectl and CoreDNS for the real node;
 * Prometheus and the MCP Registry for the tests that need them) from
 * the wrapper Go modules in `test/cluster/go/`, and caches them
 * outside the clone so that only the first run on a machine pays for the build.
 *
 * Cache layout: `<cache>/bin/<component>-<version>-<hash>/<binary>`, where the hash covers the
 * wrapper's go.mod and go.sum and the build recipe, so a version bump or a changed flag builds
 * anew. A component is built into a temporary directory and renamed into place only when all of
 * it is done: a killed build never leaves a directory that looks complete.
 *
 * Run directly (`node test/cluster/build.ts`) to build everything; the test setup and
 * `npm run cluster` call `ensureBinaries`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from './processes.ts';

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kwok'
  | 'helm'
  | 'kubelet'
  | 'kube-proxy'
  | 'kubectl'
  | 'coredns'
  | 'prometheus'
  | 'promtool'
  | 'mcp-registry'
  | 'jaeger';

export type Binaries = Record<BinaryName, string>;

/** How to build one wrapper module: which Go packages become which binaries, and with what. */
interface Recipe {
  /** The wrapper directory under `go/`, when it is not the component's own name. */
  goDir?: string;
  /** The module whose version names the build, e.g. `k8s.io/kubernetes`. */
  module: string;
  binaries: Partial<Record<BinaryName, string>>;
  ldflags: (goMod: string) => string[];
  /** Go build tags, when the module's own release build uses some. */
  tags?: string[];
  /** Files copied from the named module's source into `<dir>/<to>` next to the binaries. */
  extras?: { module: string; to: string; files: string[] };
}

const GO_DIR = join(import.meta.dirname, 'go');

/** kwok's own default stages (what `kwokctl` installs): nodes get Ready and keep a lease, pods get Ready and go away when deleted. */
const KWOK_STAGES = [
  'kustomize/stage/node/fast/node-initialize.yaml',
  'kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
  'kustomize/stage/pod/fast/pod-ready.yaml',
  'kustomize/stage/pod/fast/pod-complete.yaml',
  'kustomize/stage/pod/fast/pod-delete.yaml',
];

/** What kubernetes' own hack/lib/version.sh stamps; `/version` (which helm reads) reports it. */
function kubernetesLdflags(goMod: string): string[] {
  const version = moduleVersion(goMod, 'k8s.io/kubernetes');
  const [major, minor] = majorMinor(version);
  return [
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    `-X k8s.io/component-base/version.gitMajor=${major}`,
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
    `-X k8s.io/client-go/pkg/version.gitVersion=${version}`,
    `-X k8s.io/client-go/pkg/version.gitMajor=${major}`,
    `-X k8s.io/client-go/pkg/version.gitMinor=${minor}`,
  ];
}

/**
 * Prometheus publishes its Go module as v0.3MM.P for release 3.MM.P; its release build (.promu.yml)
 * stamps that release into prometheus/common's version package, which `--version` and the
 * `prometheus_build_info` metric report.
 */
function prometheusLdflags(goMod: string): string[] {
  const moduleVersionMatch = /^v0\.3(\d\d)\.(\d+)$/.exec(
    moduleVersion(goMod, 'github.com/prometheus/prometheus'),
  );
  if (moduleVersionMatch === null) throw new Error('not a Prometheus 3 module version');
  const [, minor, patch] = moduleVersionMatch;
  return [
    `-X github.com/prometheus/common/version.Version=3.${Number(minor)}.${patch}`,
    '-X github.com/prometheus/common/version.Branch=HEAD',
  ];
}

const RECIPES = {
  kubernetes: {
    module: 'k8s.io/kubernetes',
    binaries: {
      'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
      'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
      'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
    },
    ldflags: kubernetesLdflags,
  },
  // The real node's binaries, from the same pinned module as the control plane. A recipe of its
  // own, so that a machine that only runs the control plane does not wait for them.
  node: {
    goDir: 'kubernetes',
    module: 'k8s.io/kubernetes',
    binaries: {
      kubelet: 'k8s.io/kubernetes/cmd/kubelet',
      'kube-proxy': 'k8s.io/kubernetes/cmd/kube-proxy',
      kubectl: 'k8s.io/kubernetes/cmd/kubectl',
    },
    ldflags: kubernetesLdflags,
  },
  // Cluster DNS for the real node's pods. CoreDNS's version is a constant in its source.
  coredns: {
    module: 'github.com/coredns/coredns',
    binaries: { coredns: 'github.com/coredns/coredns' },
    ldflags: () => [],
  },
  // etcd's version is a constant in its source; nothing to stamp.
  etcd: {
    module: 'go.etcd.io/etcd/server/v3',
    binaries: { etcd: 'go.etcd.io/etcd/server/v3' },
    ldflags: () => [],
  },
  kwok: {
    module: 'sigs.k8s.io/kwok',
    binaries: { kwok: 'sigs.k8s.io/kwok/cmd/kwok' },
    // kwok's version is a constant in its source.
    ldflags: () => [],
    extras: { module: 'sigs.k8s.io/kwok', to: 'stages', files: KWOK_STAGES },
  },
  helm: {
    module: 'helm.sh/helm/v3',
    binaries: { helm: 'helm.sh/helm/v3/cmd/helm' },
    // As helm's Makefile: its own version, and the Kubernetes version it assumes offline
    // (`helm template`, `helm lint`), derived from the client-go it is built with (v0.N → 1.N).
    ldflags: (goMod) => {
      const [, minor] = majorMinor(moduleVersion(goMod, 'k8s.io/client-go'));
      return [
        `-X helm.sh/helm/v3/internal/version.version=${moduleVersion(goMod, 'helm.sh/helm/v3')}`,
        '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
        ...['pkg/lint/rules', 'pkg/chartutil'].flatMap((pkg) => [
          `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1`,
          `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${minor}`,
        ]),
      ];
    },
  },
  // Alert rule tests (promtool) and a real scrape (prometheus). Of the service discovery plugins
  // only Kubernetes' is built (upstream's remove_all_sd/enable_*_sd tags): it is what the chart's
  // ServiceMonitor stands for, and the others would double a build that is already long. No
  // builtinassets: the web UI's assets come from an npm build that the Go module does not ship.
  prometheus: {
    module: 'github.com/prometheus/prometheus',
    binaries: {
      prometheus: 'github.com/prometheus/prometheus/cmd/prometheus',
      promtool: 'github.com/prometheus/prometheus/cmd/promtool',
    },
    ldflags: prometheusLdflags,
    tags: ['netgo', 'remove_all_sd', 'enable_kubernetes_sd'],
  },
  // The official MCP Registry server, for `mcp-operator import` against a real registry. Only
  // its server binary (not the publisher CLI); the version it reports is stamped as its
  // Makefile does.
  'mcp-registry': {
    module: 'github.com/modelcontextprotocol/registry',
    binaries: { 'mcp-registry': 'github.com/modelcontextprotocol/registry/cmd/registry' },
    ldflags: (goMod) => [
      `-X main.Version=${moduleVersion(goMod, 'github.com/modelcontextprotocol/registry')}`,
    ],
  },
  // Jaeger v2, the trace backend of the tracing tests: an OpenTelemetry Collector distribution
  // that receives OTLP and answers its query API from memory. Nothing stamped: the tests read
  // traces, not its version.
  jaeger: {
    module: 'github.com/jaegertracing/jaeger',
    binaries: { jaeger: 'github.com/jaegertracing/jaeger/cmd/jaeger' },
    ldflags: () => [],
  },
} satisfies Record<string, Recipe>;

/** A wrapper module in test/cluster/go/. */
export type WrapperModule = keyof typeof RECIPES;

/** Reads `<module> vX.Y.Z` from a go.mod's require block. */
export function moduleVersion(goMod: string, module: string): string {
  const escaped = module.replace(/[.]/g, '\\.');
  const match = new RegExp(`^\\s*${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (match?.[1] === undefined) throw new Error(`go.mod does not require ${module}`);
  return match[1];
}

function majorMinor(version: string): [string, string] {
  const match = /^v(\d+)\.(\d+)\./.exec(version);
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new Error(`not a semantic version: ${version}`);
  }
  return [match[1], match[2]];
}

/** Where binaries are cached: `$MCP_OPERATOR_CACHE`, else `$XDG_CACHE_HOME/mcp-operator`, else `~/.cache/mcp-operator`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCP_OPERATOR_CACHE) return env.MCP_OPERATOR_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mcp-operator');
}

/** Flags every build shares. Kept identical across builds so Go's build cache is reused. */
const GO_BUILD_FLAGS = ['-mod=readonly', '-buildvcs=false', '-trimpath'];

interface Plan {
  component: string;
  recipe: Recipe;
  version: string;
  dir: string;
  goMod: string;
}

/** The cache directory that holds (or will hold) a component's binaries. */
export async function cacheDir(component: WrapperModule): Promise<string> {
  return (await plan(component, RECIPES[component], join(cacheRoot(), 'bin'))).dir;
}

async function plan(component: string, recipe: Recipe, binRoot: string): Promise<Plan> {
  const moduleDir = join(GO_DIR, recipe.goDir ?? component);
  const goMod = await readFile(join(moduleDir, 'go.mod'), 'utf8');
  const goSum = await readFile(join(moduleDir, 'go.sum'), 'utf8');
  const version = moduleVersion(goMod, recipe.module);
  const hash = createHash('sha256')
    .update(goMod)
    .update(goSum)
    .update(
      JSON.stringify([
        GO_BUILD_FLAGS,
        recipe.binaries,
        recipe.ldflags(goMod),
        recipe.extras,
        // Only when set, so that adding tags to the recipe format kept every cached build's key.
        ...(recipe.tags === undefined ? [] : [recipe.tags]),
      ]),
    )
    .digest('hex')
    .slice(0, 12);
  return {
    component,
    recipe,
    version,
    goMod,
    dir: join(binRoot, `${component}-${version}-${hash}`),
  };
}

export type Log = (line: string) => void;

/** Progress goes to stderr: test runners show it even when they capture stdout. */
export const stderrLog: Log = (line) => process.stderr.write(`[cluster] ${line}\n`);

const ALL: readonly BinaryName[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
  'helm',
  'kubelet',
  'kube-proxy',
  'kubectl',
  'coredns',
  'prometheus',
  'promtool',
  'mcp-registry',
  'jaeger',
];

/**
 * Returns the path of each requested binary, building (once per machine) what is not cached.
 * Components are built one at a time: a machine with two cores gains nothing from more.
 */
export async function ensureBinaries(
  names: readonly BinaryName[] = ALL,
  log: Log = stderrLog,
): Promise<Binaries> {
  const binRoot = join(cacheRoot(), 'bin');
  await mkdir(binRoot, { recursive: true });
  await removeAbandonedBuilds(binRoot);
  const paths: Partial<Binaries> = {};
  for (const [component, recipe] of Object.entries(RECIPES) as [WrapperModule, Recipe][]) {
    const wanted = Object.keys(recipe.binaries) as BinaryName[];
    if (!wanted.some((name) => names.includes(name))) continue;
    const p = await plan(component, recipe, binRoot);
    if (!existsSync(p.dir)) await build(p, log);
    for (const name of wanted) paths[name] = join(p.dir, name);
  }
  return paths as Binaries;
}

/** The directory of kwok stage files that `ensureBinaries` installs beside the kwok binary. */
export function kwokStagesDir(kwokBinary: string): string {
  return join(kwokBinary, '..', 'stages');
}

async function build(p: Plan, log: Log): Promise<void> {
  const go = findGo();
  const tmp = join(p.dir, '..', `.tmp-${process.pid}-${p.component}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp);
  try {
    const cwd = join(GO_DIR, p.recipe.goDir ?? p.component);
    const ldflags = ['-s', '-w', ...p.recipe.ldflags(p.goMod)].join(' ');
    const tags = p.recipe.tags === undefined ? [] : ['-tags', p.recipe.tags.join(',')];
    for (const [name, pkg] of Object.entries(p.recipe.binaries)) {
      const started = Date.now();
      log(`${name} ${p.version}: building (a cold build takes minutes)`);
      await runGo(
        go,
        ['build', ...GO_BUILD_FLAGS, ...tags, '-ldflags', ldflags, '-o', join(tmp, name), pkg],
        cwd,
        () => log(`${name} ${p.version}: still building, ${elapsed(started)}`),
      );
      log(`${name} ${p.version}: built in ${elapsed(started)}`);
    }
    if (p.recipe.extras) await copyExtras(go, cwd, p.recipe.extras, tmp);
    await rename(tmp, p.dir).catch((error: unknown) => {
      // Another build finished first (ENOTEMPTY/EEXIST); its result is as good as ours.
      if (!existsSync(p.dir)) throw error;
    });
    log(`installed ${p.dir}`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function copyExtras(
  go: string,
  cwd: string,
  extras: NonNullable<Recipe['extras']>,
  tmp: string,
): Promise<void> {
  const source = captureGo(
    go,
    ['list', '-mod=readonly', '-m', '-f', '{{.Dir}}', extras.module],
    cwd,
  ).trim();
  await mkdir(join(tmp, extras.to));
  for (const file of extras.files) {
    await copyFile(join(source, file), join(tmp, extras.to, file.split('/').at(-1) ?? file));
  }
}

function elapsed(since: number): string {
  const seconds = Math.round((Date.now() - since) / 1000);
  return seconds < 60
    ? `${seconds}s`
    : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

function findGo(): string {
  const result = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new Error(
      'Go is needed to build the test control plane (etcd, Kubernetes, kwok, helm) but `go version` failed' +
        ` (${result.error?.message ?? result.stderr.trim()}). Install Go 1.25 or newer from https://go.dev/dl/ and` +
        ' put it on PATH, or point MCP_OPERATOR_TEST_KUBECONFIG at an existing cluster.',
    );
  }
  return 'go';
}

/** The environment for go: no workspace from a parent directory may change what is built. */
function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOWORK: 'off' };
}

async function runGo(
  go: string,
  args: string[],
  cwd: string,
  heartbeat: () => void,
): Promise<void> {
  const child = spawn(go, args, { cwd, env: goEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const timer = setInterval(heartbeat, 60_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) {
      throw new Error(
        `go ${args.join(' ')} failed (exit ${code}) in ${cwd}:\n${output.split('\n').slice(-40).join('\n')}`,
      );
    }
  } finally {
    clearInterval(timer);
  }
}

function captureGo(go: string, args: string[], cwd: string): string {
  const result = spawnSync(go, args, { cwd, env: goEnv(), encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`go ${args.join(' ')} failed in ${cwd}:\n${result.stderr}`);
  return result.stdout;
}

/** Removes temporary build directories whose builder process is gone (killed mid-build). */
async function removeAbandonedBuilds(binRoot: string): Promise<void> {
  for (const entry of await readdir(binRoot)) {
    const pid = /^\.tmp-(\d+)-/.exec(entry)?.[1];
    if (pid !== undefined && !isAlive(Number(pid))) {
      await rm(join(binRoot, entry), { recursive: true, force: true });
    }
  }
}

if (process.argv[1] === import.meta.filename) {
  const started = Date.now();
  const paths = await ensureBinaries();
  process.stdout.write(`${Object.values(paths).join('\n')}\n`);
  stderrLog(`all binaries ready in ${elapsed(started)}`);
}
