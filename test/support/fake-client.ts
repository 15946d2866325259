/**
 * An in-memory implementation of the KubeClient seam for unit tests of the reflector, leader
 * election and the reconciler: collections of objects with resourceVersions, optimistic
 * concurrency on PUT, server-side apply (PATCH, also of the status subresource), paginated
 * lists, and watches that can be replayed from a resourceVersion, dropped, ended by the server,
 * or expired (410 Gone) — the behaviours of the real API server those components must survive.
 * The cluster tests run the same components against the real kube-apiserver.
 *
 * Server-side apply is modelled for one field manager: the applied fields are merged into the
 * object (maps merged, lists and scalars replaced); an apply that changes nothing leaves the
 * object and its resourceVersion alone, as the real server does; a changed spec moves
 * metadata.generation.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  KubeApiError,
  type ApiRequest,
  type KubeClient,
  type Query,
  type Status,
  type WatchEvent,
  type WatchRequest,
} from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/resources.ts';

interface Watcher {
  collection: string;
  onEvent: (event: WatchEvent) => void;
  end: (err?: Error) => void;
}

interface Recorded {
  rv: number;
  collection: string;
  event: WatchEvent;
}

const fail = (request: string, code: number, reason: string): never => {
  throw new KubeApiError(request, code, { kind: 'Status', code, reason, message: reason });
};

const clone = <T>(value: T): T => structuredClone(value);

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `applied` merged into `live`: maps key by key, anything else replaced. */
function merge(live: unknown, applied: unknown): unknown {
  if (!isMap(live) || !isMap(applied)) return clone(applied);
  const merged: Record<string, unknown> = { ...clone(live) };
  for (const [key, value] of Object.entries(applied)) merged[key] = merge(live[key], value);
  return merged;
}

type Stored = KubeObject & { spec?: unknown; status?: unknown };
type JsonPatch = { op: 'test' | 'add'; path: string; value: unknown }[];

export class FakeClient implements KubeClient {
  readonly objects = new Map<string, Map<string, KubeObject>>();
  readonly requests: string[] = [];
  #rv = 0;
  #history: Recorded[] = [];
  /** Watches from a resourceVersion older than this answer 410 Gone. */
  #compactedRv = 0;
  #watchers = new Set<Watcher>();
  #uid = 0;
  /** Requests (method + path) that fail the next N times, and with what. */
  readonly #failures = new Map<string, { times: number; status: number; reason: string }>();

  constructor(...collections: string[]) {
    for (const c of collections) this.objects.set(c, new Map());
  }
  /** `request` (method + path) fails the next `times` times with this status and reason. */
  failNext(request: string, times: number, status = 500, reason = 'InternalError'): void {
    this.#failures.set(request, { times, status, reason });
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  close(): void {}

  // --- test controls -------------------------------------------------------------------------

  create(collection: string, obj: KubeObject): KubeObject {
    const items = this.#collection(collection);
    const name = obj.metadata.name!;
    if (items.has(name)) fail(`POST ${collection}`, 409, 'AlreadyExists');
    const stored = clone(obj);
    stored.metadata.uid = `uid-${++this.#uid}`;
    return this.#write(collection, stored, 'ADDED');
  }

  update(collection: string, obj: KubeObject): KubeObject {
    const items = this.#collection(collection);
    const name = obj.metadata.name!;
    const current = items.get(name) ?? fail(`PUT ${collection}/${name}`, 404, 'NotFound');
    const expected = obj.metadata.resourceVersion;
    if (expected !== undefined && expected !== current.metadata.resourceVersion) {
      fail(`PUT ${collection}/${name}`, 409, 'Conflict');
    }
    return this.#write(
      collection,
      { ...clone(obj), metadata: { ...clone(obj.metadata), uid: current.metadata.uid } },
      'MODIFIED',
    );
  }

  remove(collection: string, name: string): void {
    const items = this.#collection(collection);
    const current = items.get(name) ?? fail(`DELETE ${collection}/${name}`, 404, 'NotFound');
    items.delete(name);
    const gone = {
      ...clone(current),
      metadata: { ...current.metadata, resourceVersion: String(++this.#rv) },
    };
    this.#record(collection, { type: 'DELETED', object: gone });
  }

  /** Forgets history: watches from before now get 410 Gone, as after an etcd compaction. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#history = [];
  }

  /** Breaks every open watch connection. */
  dropWatches(): void {
    for (const w of this.#watchers) w.end(new Error('connection reset'));
  }

  /** Ends every open watch cleanly, as the server does when timeoutSeconds passes. */
  endWatches(): void {
    for (const w of this.#watchers) w.end();
  }

  /** Sends an ERROR event, as the server does when a watch's window expires. */
  expireWatches(): void {
    const status: Status = { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' };
    for (const w of this.#watchers) this.#send(w, { type: 'ERROR', object: status });
  }

  bookmark(): void {
    const object = { metadata: { resourceVersion: String(this.#rv) } };
    for (const w of this.#watchers) this.#send(w, { type: 'BOOKMARK', object });
  }

  get openWatches(): number {
    return this.#watchers.size;
  }

  // --- KubeClient ----------------------------------------------------------------------------

  request<T>(req: ApiRequest): Promise<T> {
    return Promise.resolve().then(() => this.#handle(req) as T);
  }

  watch(
    { path, query, signal }: WatchRequest,
    onEvent: (event: WatchEvent) => void,
  ): Promise<void> {
    this.requests.push(`WATCH ${path}`);
    this.#collection(path);
    const from = Number(query['resourceVersion'] ?? this.#rv);
    if (from < this.#compactedRv) {
      return Promise.reject(
        new KubeApiError(`WATCH ${path}`, 410, { code: 410, reason: 'Expired' }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const watcher: Watcher = {
        collection: path,
        onEvent,
        end: (err) => {
          this.#watchers.delete(watcher);
          if (err) reject(err);
          else resolve();
        },
      };
      signal.addEventListener('abort', () => watcher.end(), { once: true });
      try {
        for (const r of this.#history) {
          if (r.collection === path && r.rv > from) onEvent(clone(r.event));
        }
        this.#watchers.add(watcher);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  #handle(req: ApiRequest): unknown {
    const request = `${req.method} ${req.path}`;
    this.requests.push(request);
    const failure = this.#failures.get(request);
    if (failure !== undefined && failure.times > 0) {
      failure.times -= 1;
      fail(request, failure.status, failure.reason);
    }
    if (this.objects.has(req.path)) {
      if (req.method === 'GET') return this.#list(req.path, req.query ?? {});
      if (req.method === 'POST') return clone(this.create(req.path, req.body as KubeObject));
    }
    if (req.method === 'PATCH' && req.patchType === 'apply') {
      return clone(this.#apply(request, req.path, req.body as Stored));
    }
    if (req.method === 'PATCH' && req.patchType === 'json') {
      return clone(this.#statusJsonPatch(request, req.path, req.body as JsonPatch));
    }
    const slash = req.path.lastIndexOf('/');
    const collection = req.path.slice(0, slash);
    const name = req.path.slice(slash + 1);
    const items = this.#collection(collection);
    if (req.method === 'GET') return clone(items.get(name) ?? fail(request, 404, 'NotFound'));
    if (req.method === 'PUT') return clone(this.update(collection, req.body as KubeObject));
    if (req.method === 'DELETE') return this.remove(collection, name);
    return fail(request, 405, 'MethodNotAllowed');
  }

  /** Server-side apply of `applied` to the object at `path`, or to its status subresource. */
  #apply(request: string, path: string, applied: Stored): KubeObject {
    const subresource = path.endsWith('/status') && !this.objects.has(path.slice(0, -7));
    const objectPath = subresource ? path.slice(0, -'/status'.length) : path;
    const slash = objectPath.lastIndexOf('/');
    const collection = objectPath.slice(0, slash);
    const current: Stored | undefined = this.#collection(collection).get(
      objectPath.slice(slash + 1),
    );
    if (current === undefined) {
      if (subresource) return fail(request, 404, 'NotFound');
      return this.create(collection, {
        ...applied,
        metadata: { ...applied.metadata, generation: 1 },
      });
    }
    const merged = (
      subresource
        ? { ...clone(current), status: merge(current.status, applied.status) }
        : merge(current, applied)
    ) as Stored;
    // The main resource ignores status, and the subresource everything but status.
    if (!subresource) {
      delete merged.status;
      if (current.status !== undefined) merged.status = clone(current.status);
    }
    merged.metadata = { ...merged.metadata, uid: current.metadata.uid };
    if (isDeepStrictEqual(merged, current)) return current;
    if (!isDeepStrictEqual(merged.spec, current.spec)) {
      merged.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    return this.#write(collection, merged, 'MODIFIED');
  }

  /** A JSON Patch (RFC 6902) of `test` and `add` on a status subresource, as status writes are. */
  #statusJsonPatch(request: string, path: string, ops: JsonPatch): KubeObject {
    if (!path.endsWith('/status')) return fail(request, 415, 'UnsupportedMediaType');
    const objectPath = path.slice(0, -'/status'.length);
    const slash = objectPath.lastIndexOf('/');
    const collection = objectPath.slice(0, slash);
    const current: Stored =
      this.#collection(collection).get(objectPath.slice(slash + 1)) ??
      fail(request, 404, 'NotFound');
    const patched = clone(current) as unknown as Record<string, unknown>;
    for (const { op, path: pointer, value } of ops) {
      const keys = pointer.split('/').slice(1);
      const last = keys.pop() ?? '';
      const parent = keys.reduce((obj, key) => obj[key] as Record<string, unknown>, patched);
      if (op === 'test' && !isDeepStrictEqual(parent[last], value)) fail(request, 422, 'Invalid');
      else if (op === 'add') parent[last] = clone(value);
    }
    // The subresource takes status alone.
    const merged = { ...clone(current), status: patched['status'] } as Stored;
    if (isDeepStrictEqual(merged, current)) return current;
    return this.#write(collection, merged, 'MODIFIED');
  }

  #list(collection: string, query: Query): unknown {
    const all = [...this.#collection(collection).values()];
    const offset = Number(query['continue'] ?? 0);
    const limit = Number(query['limit'] ?? all.length);
    const end = Math.min(all.length, offset + limit);
    return {
      metadata: {
        resourceVersion: String(this.#rv),
        continue: end < all.length ? String(end) : undefined,
      },
      // Lists omit apiVersion/kind on items, as the real server's typed lists do.
      items: all.slice(offset, end).map(({ apiVersion: _a, kind: _k, ...rest }) => clone(rest)),
    };
  }

  #collection(path: string): Map<string, KubeObject> {
    const items = this.objects.get(path);
    if (items === undefined) return fail(`GET ${path}`, 404, 'NotFound');
    return items;
  }

  #write(collection: string, obj: KubeObject, type: 'ADDED' | 'MODIFIED'): KubeObject {
    obj.metadata.resourceVersion = String(++this.#rv);
    this.#collection(collection).set(obj.metadata.name!, obj);
    this.#record(collection, { type, object: clone(obj) });
    return clone(obj);
  }

  #record(collection: string, event: WatchEvent): void {
    this.#history.push({ rv: this.#rv, collection, event });
    for (const w of this.#watchers) if (w.collection === collection) this.#send(w, event);
  }

  /** A handler that throws ends its watch with that error, as the real client does. */
  #send(w: Watcher, event: WatchEvent): void {
    try {
      w.onEvent(clone(event));
    } catch (err) {
      w.end(err as Error);
    }
  }
}
