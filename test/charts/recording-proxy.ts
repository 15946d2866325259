/**
 * A plain-HTTP proxy on 127.0.0.1 in front of the API server that records every request as the
 * RBAC authorizer sees it: (API group, resource[/subresource], verb). The operator is pointed at
 * it with a kubeconfig; its bearer token passes through untouched, so the API server still
 * authenticates and authorizes the operator's own ServiceAccount.
 * Verbs follow the apiserver's request-info rules:
 * https://kubernetes.io/docs/reference/access-authn-authz/authorization/#determine-the-request-verb
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  /** `group/resource[/subresource]:verb`; undefined for non-resource paths such as /version. */
  permissions: string[];
}

/** The RBAC verb(s) of a request; a server-side apply that creates needs create as well. */
export function requestPermissions(method: string, url: URL, status: number): string[] {
  const parts = url.pathname.split('/').filter((p) => p !== '');
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length > 2) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length > 3) {
    group = parts[1]!;
    rest = parts.slice(3);
  } else {
    return [];
  }
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [resource, name, subresource] = rest;
  const target = `${group}/${resource}${subresource === undefined ? '' : `/${subresource}`}`;
  const collection = name === undefined;
  const verbs: Record<string, string[]> = {
    GET: [url.searchParams.get('watch') === 'true' ? 'watch' : collection ? 'list' : 'get'],
    POST: ['create'],
    PUT: ['update'],
    PATCH: status === 201 ? ['patch', 'create'] : ['patch'],
    DELETE: [collection ? 'deletecollection' : 'delete'],
  };
  return (verbs[method] ?? [method.toLowerCase()]).map((verb) => `${target}:${verb}`);
}

export class RecordingProxy {
  readonly requests: RecordedRequest[] = [];
  readonly #server: http.Server;
  readonly #upstream: URL;
  readonly #ca: Buffer;

  private constructor(upstream: string, ca: Buffer) {
    this.#upstream = new URL(upstream);
    this.#ca = ca;
    this.#server = http.createServer((req, res) => this.#forward(req, res));
  }

  static async start(upstream: string, ca: Buffer): Promise<RecordingProxy> {
    const proxy = new RecordingProxy(upstream, ca);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Every permission a request needed, as `group/resource:verb`, once each. */
  permissions(): Set<string> {
    return new Set(this.requests.flatMap((r) => r.permissions));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.#upstream);
    const upstream = https.request(
      url,
      {
        method: req.method,
        headers: { ...req.headers, host: this.#upstream.host },
        ca: this.#ca,
      },
      (answer) => {
        const status = answer.statusCode ?? 0;
        this.requests.push({
          method: req.method ?? '',
          path: url.pathname + url.search,
          status,
          permissions: requestPermissions(req.method ?? '', url, status),
        });
        res.writeHead(status, answer.headers);
        // Watches stream for minutes: pass bytes on as they come.
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }
}
