/**
 * The narrow Kubernetes client seam: one `request` for ordinary calls and one `watch` for
 * streams. Everything above it (reflector, leader election, reconcile) speaks REST paths and
 * plain JSON objects, so a counting wrapper or a scripted fake can stand in for it.
 *
 * The real implementation keeps @kubernetes/client-node for what it does well — loading
 * kubeconfig / in-cluster config and producing auth headers (token files, exec plugins) — and
 * sends requests itself over one keep-alive agent, because client-node 2.x builds a new undici
 * agent (so a new TLS connection) for every generated-API call. See
 * docs/adr/0005-controller-runtime.md.
 */
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeConfig } from '@kubernetes/client-node';
import { OperatorError, operatorError } from '../../errors.ts';
import type { KubeObject } from './resources.ts';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * PATCH flavours, by Content-Type. `apply` is server-side apply; JSON is valid YAML, so the body
 * is sent as JSON. https://kubernetes.io/docs/reference/using-api/server-side-apply/
 */
const PATCH_CONTENT_TYPES = {
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
} as const;
export type PatchType = keyof typeof PATCH_CONTENT_TYPES;

export type Query = Record<string, string | number | boolean | undefined>;

export interface ApiRequest {
  method: Verb;
  path: string;
  query?: Query;
  body?: unknown;
  /** Required for PATCH. */
  patchType?: PatchType;
  /** Accept header, e.g. for metadata-only lists (`METADATA_ONLY`); JSON by default. */
  accept?: string;
  signal?: AbortSignal;
}

export interface WatchRequest {
  /** A collection. */
  path: string;
  query: Query;
  accept?: string;
  signal: AbortSignal;
}

/**
 * Asks for PartialObjectMetadata(List) instead of full objects: the server sends only
 * metadata, so a cache of Secrets holds no secret value.
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-tables
 */
export const METADATA_ONLY = {
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
  watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
} as const;

/** metav1.Status, the body of every API error and of watch ERROR events. */
export interface Status {
  kind?: 'Status';
  code?: number;
  reason?: string;
  message?: string;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | Status;
}

export interface KubeClient {
  request<T>(req: ApiRequest): Promise<T>;
  /**
   * Streams watch events to `onEvent` until the server ends the stream (resolves), the signal
   * aborts (resolves) or the connection fails (rejects).
   */
  watch(req: WatchRequest, onEvent: (event: WatchEvent) => void): Promise<void>;
  /** Closes idle keep-alive connections; call after every watch has been aborted. */
  close(): void;
}

/** An error answer from the API server, with the Status `reason` the conventions define. */
export class KubeApiError extends OperatorError {
  readonly status: number;
  readonly reason: string;
  /** The server's own message, fit for a human (status conditions, events). */
  readonly detail: string;

  constructor(request: string, status: number, body: Status) {
    const detail = body.message ?? body.reason ?? 'no message';
    super('MCPOP_KUBE_API', operatorError('MCPOP_KUBE_API', request, status, detail).message);
    this.status = status;
    this.reason = body.reason ?? '';
    this.detail = detail;
  }
}

const hasStatus = (err: unknown, status: number): boolean =>
  err instanceof KubeApiError && err.status === status;
export const isNotFound = (err: unknown): boolean => hasStatus(err, 404);
export const isConflict = (err: unknown): boolean => hasStatus(err, 409);
/** 410 Gone: a resourceVersion (or continue token) older than the server keeps. */
export const isGone = (err: unknown): boolean => hasStatus(err, 410);

export interface ClientOptions {
  /** Called once per finished request, for metrics and request counting. */
  onResponse?: (method: Verb | 'WATCH', status: number) => void;
  /** Upper bound on concurrent non-watch connections. */
  maxSockets?: number;
  requestTimeoutMs?: number;
}

export function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseStatus(text: string, status: number): Status {
  try {
    return JSON.parse(text) as Status;
  } catch {
    return { code: status, message: text.slice(0, 200) };
  }
}

interface Transport {
  module: typeof http | typeof https;
  agent: http.Agent;
  watchAgent: http.Agent;
  server: URL;
}

/** TLS material and transport for the current context, read once; auth headers per request. */
async function transportFor(kc: KubeConfig, options: ClientOptions): Promise<Transport> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw operatorError('MCPOP_KUBE_CONFIG', 'no current cluster');
  if (cluster.proxyUrl) throw operatorError('MCPOP_KUBE_CONFIG', 'proxy-url is not supported');
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const server = new URL(cluster.server);
  const isHttps = server.protocol === 'https:';
  const agentOptions: https.AgentOptions = {
    keepAlive: true,
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    pfx: tls.pfx,
    passphrase: tls.passphrase,
    servername: tls.servername,
    ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
  };
  const make = (extra: http.AgentOptions) =>
    isHttps
      ? new https.Agent({ ...agentOptions, ...extra })
      : new http.Agent({ keepAlive: true, ...extra });
  return {
    module: isHttps ? https : http,
    // Watches hold their connection for minutes; a separate pool keeps them from starving
    // ordinary requests of sockets.
    agent: make({ maxSockets: options.maxSockets ?? 32 }),
    watchAgent: make({}),
    server,
  };
}

class HttpKubeClient implements KubeClient {
  readonly #kc: KubeConfig;
  readonly #transport: Transport;
  readonly #options: ClientOptions;

  constructor(kc: KubeConfig, transport: Transport, options: ClientOptions) {
    this.#kc = kc;
    this.#transport = transport;
    this.#options = options;
  }

  /** Fresh per request: token files and exec credentials rotate. */
  async #auth(): Promise<Pick<http.RequestOptions, 'headers' | 'auth'>> {
    const opts: https.RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(opts);
    return { headers: opts.headers ?? {}, auth: opts.auth };
  }

  async #open(
    method: Verb,
    path: string,
    headers: http.OutgoingHttpHeaders,
    agent: http.Agent,
    signal: AbortSignal | undefined,
    body?: string,
  ): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
    const auth = await this.#auth();
    const url = new URL(path, this.#transport.server);
    return new Promise((resolve, reject) => {
      const req = this.#transport.module.request(url, {
        method,
        agent,
        signal,
        auth: auth.auth,
        headers: { Accept: 'application/json', ...auth.headers, ...headers },
      });
      req.once('response', (res) => resolve({ req, res }));
      req.once('error', reject);
      req.end(body);
    });
  }

  async request<T>(r: ApiRequest): Promise<T> {
    const path = r.path + queryString(r.query);
    const body = r.body === undefined ? undefined : JSON.stringify(r.body);
    const headers: http.OutgoingHttpHeaders = r.accept === undefined ? {} : { Accept: r.accept };
    if (body !== undefined) {
      headers['Content-Type'] =
        r.method === 'PATCH' ? PATCH_CONTENT_TYPES[r.patchType ?? 'merge'] : 'application/json';
      // Node frames a DELETE body neither chunked nor by length unless told: the body would
      // then be read as the next request on this keep-alive connection.
      headers['Content-Length'] = Buffer.byteLength(body);
    }
    const { req, res } = await this.#open(
      r.method,
      path,
      headers,
      this.#transport.agent,
      r.signal,
      body,
    );
    req.setTimeout(this.#options.requestTimeoutMs ?? 30_000, () =>
      req.destroy(new Error(`${r.method} ${r.path}: timed out`)),
    );
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    this.#options.onResponse?.(r.method, status);
    if (status >= 400)
      throw new KubeApiError(`${r.method} ${r.path}`, status, parseStatus(text, status));
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  async watch(w: WatchRequest, onEvent: (event: WatchEvent) => void): Promise<void> {
    const { path, query, signal } = w;
    const url = path + queryString({ ...query, watch: true });
    const headers = w.accept === undefined ? {} : { Accept: w.accept };
    let opened;
    try {
      opened = await this.#open('GET', url, headers, this.#transport.watchAgent, signal);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    const { req, res } = opened;
    const status = res.statusCode ?? 0;
    this.#options.onResponse?.('WATCH', status);
    if (status !== 200) {
      throw new KubeApiError(`WATCH ${path}`, status, parseStatus(await readBody(res), status));
    }
    // The server ends a watch after timeoutSeconds; silence well past that is a dead connection.
    const timeoutSeconds = Number(query['timeoutSeconds'] ?? 300);
    req.setTimeout((timeoutSeconds + 30) * 1000, () =>
      req.destroy(new Error(`WATCH ${path}: connection idle`)),
    );
    try {
      for await (const line of createInterface({ input: res, crlfDelay: Infinity })) {
        if (line !== '') onEvent(JSON.parse(line) as WatchEvent);
      }
    } catch (err) {
      // A failed stream, or an ERROR event the handler threw on: the connection is not reusable.
      req.destroy();
      if (!signal.aborted) throw err;
      return;
    }
    if (!res.complete && !signal.aborted) throw new Error(`WATCH ${path}: connection dropped`);
  }

  close(): void {
    this.#transport.agent.destroy();
    this.#transport.watchAgent.destroy();
  }
}

/** A client for the current context of `kc`. */
export async function connect(kc: KubeConfig, options: ClientOptions = {}): Promise<KubeClient> {
  return new HttpKubeClient(kc, await transportFor(kc, options), options);
}
