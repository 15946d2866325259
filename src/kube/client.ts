/**
 * The narrow Kubernetes client seam: one `request` for ordinary calls and one `watch` for
 * streams. Everything above it (reflector, leader election, reconcile) speaks REST paths and
 * plain JSON objects, so a counting wrapper or a scripted fake can stand in for it.
 *
 * The real implementation sends requests over keep-alive agents (one pool for requests, one for
 * watches) with the TLS material and auth headers of a ClientConfig (config.ts). See
 * docs/adr/0005-kubernetes-requests-of-our-own.md for why not @kubernetes/client-node's API
 * clients.
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { OperatorError, operatorError } from '../errors.ts';
import type { ClientConfig } from './config.ts';
import { resourceOfPath, type KubeObject } from './resources.ts';

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
  /**
   * Cuts off the requests in flight (they reject), refuses new ones, and closes the
   * connections; call after every watch has been aborted.
   */
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

/** What went wrong, for a human: the API server's own message, else the error's. */
export const errorText = (err: unknown): string =>
  err instanceof KubeApiError ? err.detail : err instanceof Error ? err.message : String(err);

/** The API server sent nothing for a request's idle timeout (a loaded server, a lost packet). */
export class NoAnswerError extends Error {}

const TRANSIENT_STATUSES = new Set([429, 503, 504]);
const TRANSIENT_REASONS = new Set(['ServerTimeout', 'Timeout', 'TooManyRequests']);
const TRANSIENT_SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/**
 * What a loaded or restarting API server answers, which a retry soon clears: timeouts,
 * throttling, a dropped connection. Not an invalid object, a refusal, or a webhook's error.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof KubeApiError) {
    return TRANSIENT_STATUSES.has(err.status) || TRANSIENT_REASONS.has(err.reason);
  }
  if (err instanceof NoAnswerError) return true;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && TRANSIENT_SOCKET_CODES.has(code);
}

const hasStatus = (err: unknown, status: number): boolean =>
  err instanceof KubeApiError && err.status === status;
export const isNotFound = (err: unknown): boolean => hasStatus(err, 404);
export const isConflict = (err: unknown): boolean => hasStatus(err, 409);
/** 410 Gone: a resourceVersion (or continue token) older than the server keeps. */
export const isGone = (err: unknown): boolean => hasStatus(err, 410);

export interface ClientOptions {
  /**
   * Called once per finished request, for metrics and request counting: `resource` is what
   * the path addresses (`resourceOfPath`).
   */
  onResponse?: (method: Verb | 'WATCH', status: number, resource: string) => void;
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

/**
 * Splits a stream of bytes into lines (newline-delimited JSON: one watch event a line) and hands
 * each to `onLine` without its newline. The bytes are split before they are decoded, so each
 * line is decoded once, whole; node:readline decodes every chunk and slices and joins strings,
 * and a watch event often spans chunks (a Deployment's is several KiB, a TLS record at most
 * 16). A newline byte is never part of a multi-byte UTF-8 character (RFC 3629), and JSON.parse
 * takes the carriage return of a CRLF as whitespace.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  /** The start of a line whose newline has not come yet, in the chunks it came in. */
  #partial: Buffer[] = [];

  constructor(onLine: (line: string) => void) {
    this.#onLine = onLine;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const tail = chunk.subarray(start, end);
      start = end + 1;
      if (this.#partial.length === 0) {
        this.#onLine(tail.toString('utf8'));
        continue;
      }
      this.#partial.push(tail);
      this.#emitPartial();
    }
    if (start < chunk.length) this.#partial.push(chunk.subarray(start));
  }

  /** The stream ended: a last line without its newline is a line too. */
  end(): void {
    if (this.#partial.length > 0) this.#emitPartial();
  }

  #emitPartial(): void {
    const line = Buffer.concat(this.#partial).toString('utf8');
    this.#partial = [];
    this.#onLine(line);
  }
}

const NEWLINE = 0x0a;

interface Transport {
  module: typeof http | typeof https;
  agent: http.Agent;
  watchAgent: http.Agent;
  server: URL;
}

/**
 * A pool of connections to the one API server, with one TLS identity. Node names a pool by
 * the request's TLS options, PEM texts included (CA, certificate, key: kilobytes), and builds
 * and hashes that name for every request: 75 µs a request with a kubeconfig's certificates
 * (measured), all to say what is the same for each of them.
 */
class ApiServerAgent extends https.Agent {
  override getName(): string {
    return 'kube-apiserver';
  }
}

function transportFor(config: ClientConfig, options: ClientOptions): Transport {
  const server = new URL(config.server);
  const isHttps = server.protocol === 'https:';
  const make = (extra: http.AgentOptions) =>
    isHttps
      ? new ApiServerAgent({ keepAlive: true, ...config.tls, ...extra })
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
  readonly #config: ClientConfig;
  readonly #transport: Transport;
  readonly #options: ClientOptions;
  /** Aborted by close(). Destroying the agents alone would spare requests queued for a socket. */
  readonly #closing = new AbortController();

  constructor(config: ClientConfig, options: ClientOptions) {
    this.#config = config;
    this.#transport = transportFor(config, options);
    this.#options = options;
    // One listener per request in flight, hundreds at a time: not a leak.
    setMaxListeners(Infinity, this.#closing.signal);
  }

  /** Sends a request; resolves with the response head. Idle longer than `idleMs` fails it. */
  async #open(o: {
    method: Verb;
    path: string;
    headers: http.OutgoingHttpHeaders;
    agent: http.Agent;
    signal: AbortSignal | undefined;
    idleMs: number;
    body?: string;
  }): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
    // Fresh per request: token files and exec credentials rotate.
    const auth = await this.#config.authHeaders();
    const url = new URL(o.path, this.#transport.server);
    return new Promise((resolve, reject) => {
      const req = this.#transport.module.request(url, {
        method: o.method,
        agent: o.agent,
        signal: o.signal,
        headers: { Accept: 'application/json', ...auth, ...o.headers },
      });
      req.setTimeout(o.idleMs, () =>
        req.destroy(new NoAnswerError(`${o.method} ${url.pathname}: no answer for ${o.idleMs} ms`)),
      );
      req.once('response', (res) => resolve({ req, res }));
      // `on`, not `once`: a socket can fail again after the response arrived.
      req.on('error', reject);
      req.end(o.body);
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
    const { res } = await this.#open({
      method: r.method,
      path,
      headers,
      agent: this.#transport.agent,
      signal:
        r.signal === undefined
          ? this.#closing.signal
          : AbortSignal.any([r.signal, this.#closing.signal]),
      idleMs: this.#options.requestTimeoutMs ?? 30_000,
      body,
    });
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    this.#options.onResponse?.(r.method, status, resourceOfPath(r.path));
    if (status >= 400)
      throw new KubeApiError(`${r.method} ${r.path}`, status, parseStatus(text, status));
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  async watch(w: WatchRequest, onEvent: (event: WatchEvent) => void): Promise<void> {
    const { path, query, signal } = w;
    const url = path + queryString({ ...query, watch: true });
    const headers = w.accept === undefined ? {} : { Accept: w.accept };
    // The server ends a watch after timeoutSeconds; silence well past that is a dead connection.
    const idleMs = (Number(query['timeoutSeconds'] ?? 300) + 30) * 1000;
    let opened;
    try {
      opened = await this.#open({
        method: 'GET',
        path: url,
        headers,
        agent: this.#transport.watchAgent,
        signal,
        idleMs,
      });
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    const { req, res } = opened;
    const status = res.statusCode ?? 0;
    this.#options.onResponse?.('WATCH', status, resourceOfPath(path));
    if (status !== 200) {
      throw new KubeApiError(`WATCH ${path}`, status, parseStatus(await readBody(res), status));
    }
    const lines = new LineSplitter((line) => {
      if (line.length > 0) onEvent(JSON.parse(line) as WatchEvent);
    });
    try {
      for await (const chunk of res) lines.push(chunk as Buffer);
    } catch (err) {
      // A failed stream, or an ERROR event the handler threw on: the connection is not reusable.
      req.destroy();
      if (!signal.aborted) throw err;
      return;
    }
    if (signal.aborted) return;
    if (!res.complete) throw new Error(`WATCH ${path}: connection dropped`);
    lines.end();
  }

  close(): void {
    this.#closing.abort(new Error('the API client was closed'));
    this.#transport.agent.destroy();
    this.#transport.watchAgent.destroy();
  }
}

export function connect(config: ClientConfig, options: ClientOptions = {}): KubeClient {
  return new HttpKubeClient(config, options);
}
