/**
 * Where the API server is and how to authenticate to it, loaded as client-go does: the
 * --kubeconfig flag, else $KUBECONFIG (a path list, merged: the first file to name a cluster,
 * user or context wins, and the first current-context wins), else ~/.kube/config, else the
 * in-cluster ServiceAccount.
 * https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
 *
 * Static credentials (client certificates, tokens, token files, in-cluster) are read here.
 * Users with an exec plugin or auth-provider are handed to @kubernetes/client-node, imported
 * only then: loading it costs about 80 MB of resident memory, more than the operator's caches
 * for a thousand servers (see docs/adr/0005-kubernetes-requests-of-our-own.md).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import { operatorError } from '../errors.ts';
import { importOptional } from '../optional.ts';

export interface TlsOptions {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  rejectUnauthorized?: boolean;
}

export interface ClientConfig {
  /** `https://host:port`, no trailing slash. */
  server: string;
  tls: TlsOptions;
  /** Headers that authenticate the next request; fresh each time (tokens rotate). */
  authHeaders(): Promise<Record<string, string>>;
  /** Where it came from, for logs. */
  source: string;
  /** The current context's namespace (in-cluster: the pod's), what kubectl uses without -n. */
  namespace?: string;
  /** The kubeconfig context in use; undefined in-cluster. */
  context?: string;
}

/** The in-cluster ServiceAccount, mounted by the kubelet. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface Named<T> {
  name: string;
  [key: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}
type Entry = Record<string, unknown>;
interface KubeconfigFile {
  clusters?: Named<Entry>[];
  users?: Named<Entry>[];
  contexts?: Named<Entry>[];
  'current-context'?: string;
}

interface Merged {
  clusters: Map<string, { entry: Entry; dir: string }>;
  users: Map<string, { entry: Entry; dir: string }>;
  contexts: Map<string, Entry>;
  current?: string;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** One kubeconfig file, read and parsed; a problem names the file and where it was named. */
async function readKubeconfig(path: string, namedBy: string): Promise<KubeconfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem = code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw operatorError('MCPOP_KUBE_CONFIG', `${namedBy} ${path}: ${problem}`);
  }
  let parsed: unknown;
  try {
    parsed = load(text);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    throw operatorError('MCPOP_KUBE_CONFIG', `${path} is not valid YAML: ${reason}`);
  }
  if (
    parsed !== undefined &&
    parsed !== null &&
    (typeof parsed !== 'object' || Array.isArray(parsed))
  )
    throw operatorError('MCPOP_KUBE_CONFIG', `${path} is not a kubeconfig (a YAML mapping)`);
  return parsed ?? {};
}

async function merge(paths: readonly string[], namedBy: string): Promise<Merged> {
  const merged: Merged = { clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const path of paths) {
    const file = await readKubeconfig(path, namedBy);
    const dir = dirname(path);
    for (const c of file.clusters ?? []) {
      if (!merged.clusters.has(c.name))
        merged.clusters.set(c.name, { entry: c.cluster ?? {}, dir });
    }
    for (const u of file.users ?? []) {
      if (!merged.users.has(u.name)) merged.users.set(u.name, { entry: u.user ?? {}, dir });
    }
    for (const x of file.contexts ?? []) {
      if (!merged.contexts.has(x.name)) merged.contexts.set(x.name, x.context ?? {});
    }
    merged.current ??= file['current-context'] || undefined;
  }
  return merged;
}

/** `<name>-data` (base64) or `<name>` (a file, relative to its kubeconfig). */
async function material(entry: Entry, name: string, dir: string): Promise<Buffer | undefined> {
  const data = str(entry[`${name}-data`]);
  if (data !== undefined) return Buffer.from(data, 'base64');
  const file = str(entry[name]);
  return file === undefined ? undefined : readFile(isAbsolute(file) ? file : join(dir, file));
}

/** A bearer token read from a file at most once per `ttlMs`: projected tokens rotate. */
function tokenFile(path: string, ttlMs = 60_000): () => Promise<Record<string, string>> {
  let cached: { token: string; at: number } | undefined;
  return async () => {
    if (cached === undefined || Date.now() - cached.at > ttlMs) {
      cached = { token: (await readFile(path, 'utf8')).trim(), at: Date.now() };
    }
    return { Authorization: `Bearer ${cached.token}` };
  };
}

/** Users whose credentials come from a program or provider: client-node knows them all. */
async function delegated(
  paths: readonly string[],
  context: string,
): Promise<ClientConfig['authHeaders']> {
  const { KubeConfig } = await importOptional(
    () => import('@kubernetes/client-node'),
    'a kubeconfig user with an exec plugin or auth-provider',
  );
  const kc = new KubeConfig();
  kc.loadFromFile(paths[0]!);
  for (const extra of paths.slice(1)) {
    const more = new KubeConfig();
    more.loadFromFile(extra);
    kc.mergeConfig(more, true);
  }
  kc.setCurrentContext(context);
  return async () => {
    const opts: { headers?: Record<string, unknown> } = {};
    await kc.applyToHTTPSOptions(opts);
    return Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k, String(v)]));
  };
}

async function fromKubeconfig(
  paths: readonly string[],
  wanted: string | undefined,
  namedBy: string,
): Promise<ClientConfig> {
  const merged = await merge(paths, namedBy);
  const source = paths.join(delimiter);
  if (wanted !== undefined) merged.current = wanted;
  const context = merged.current === undefined ? undefined : merged.contexts.get(merged.current);
  if (context === undefined) {
    const missing = wanted === undefined ? 'no current context' : `no context ${wanted}`;
    throw operatorError('MCPOP_KUBE_CONFIG', `${source}: ${missing}`);
  }
  const cluster = merged.clusters.get(str(context['cluster']) ?? '');
  const user = merged.users.get(str(context['user']) ?? '') ?? { entry: {}, dir: '' };
  const server = str(cluster?.entry['server']);
  if (cluster === undefined || server === undefined) {
    throw operatorError(
      'MCPOP_KUBE_CONFIG',
      `${source}: context ${merged.current} has no cluster server`,
    );
  }
  if (cluster.entry['proxy-url'] !== undefined) {
    throw operatorError('MCPOP_KUBE_CONFIG', `${source}: proxy-url is not supported`);
  }
  const u = user.entry;
  const tls: TlsOptions = {
    ca: await material(cluster.entry, 'certificate-authority', cluster.dir),
    cert: await material(u, 'client-certificate', user.dir),
    key: await material(u, 'client-key', user.dir),
    servername: str(cluster.entry['tls-server-name']),
    ...(cluster.entry['insecure-skip-tls-verify'] === true ? { rejectUnauthorized: false } : {}),
  };
  const token = str(u['token']);
  const file = str(u['tokenFile']);
  let authHeaders: ClientConfig['authHeaders'] = () => Promise.resolve({});
  if (token !== undefined)
    authHeaders = () => Promise.resolve({ Authorization: `Bearer ${token}` });
  else if (file !== undefined)
    authHeaders = tokenFile(isAbsolute(file) ? file : join(user.dir, file));
  else if (u['exec'] !== undefined || u['auth-provider'] !== undefined) {
    authHeaders = withContext(
      await delegated(paths, merged.current!),
      `the credential plugin of user ${str(context['user'])} (context ${merged.current}, ${source}) failed while connecting to ${server}`,
    );
  } else if (u['username'] !== undefined) {
    throw operatorError(
      'MCPOP_KUBE_CONFIG',
      `${source}: basic authentication (removed in Kubernetes 1.19) is not supported`,
    );
  }
  const namespace = str(context['namespace']);
  return {
    server: server.replace(/\/$/, ''),
    tls,
    authHeaders,
    source,
    context: merged.current,
    ...(namespace === undefined ? {} : { namespace }),
  };
}

async function inCluster(env: NodeJS.ProcessEnv, dir: string): Promise<ClientConfig | undefined> {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || port === undefined || !existsSync(join(dir, 'token'))) return undefined;
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    tls: { ca: await readFile(join(dir, 'ca.crt')) },
    authHeaders: tokenFile(join(dir, 'token')),
    source: 'in-cluster ServiceAccount',
    namespace: (await readFile(join(dir, 'namespace'), 'utf8').catch(() => '')).trim() || undefined,
  };
}

/**
 * A credential plugin's failure with what we were doing: its own message (its stderr, as
 * client-node reports it) says why, not for which cluster and user.
 */
function withContext(
  authHeaders: ClientConfig['authHeaders'],
  doing: string,
): ClientConfig['authHeaders'] {
  return async () => {
    try {
      return await authHeaders();
    } catch (error) {
      throw operatorError('MCPOP_KUBE_CREDENTIALS', doing, (error as Error).message);
    }
  };
}

export interface LoadOptions {
  /** The --kubeconfig flag. */
  kubeconfig?: string;
  /** The --context flag: a context of the kubeconfig other than its current one. */
  context?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** For tests: where the in-cluster ServiceAccount is mounted. */
  serviceAccountDir?: string;
}

export async function loadClientConfig(o: LoadOptions): Promise<ClientConfig> {
  if (o.kubeconfig !== undefined) return fromKubeconfig([o.kubeconfig], o.context, '--kubeconfig');
  const named = (o.env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  // As client-go: files of the list that do not exist are skipped; but a list of none is a
  // mistake to name, not a reason to fall back to another cluster's credentials.
  const listed = named.filter((p) => existsSync(p));
  if (listed.length > 0) return fromKubeconfig(listed, o.context, '$KUBECONFIG');
  if (named.length > 0) {
    throw operatorError(
      'MCPOP_KUBE_CONFIG',
      `$KUBECONFIG is ${named.join(delimiter)}, and no such file exists; point it at a kubeconfig file, or unset it for ~/.kube/config`,
    );
  }
  const home = join(o.env['HOME'] ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromKubeconfig([home], o.context, 'the default kubeconfig');
  const cluster = await inCluster(o.env, o.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  if (cluster !== undefined) return cluster;
  throw operatorError(
    'MCPOP_KUBE_CONFIG',
    'no --kubeconfig, $KUBECONFIG, ~/.kube/config or in-cluster ServiceAccount',
  );
}
