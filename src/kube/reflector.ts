/**
 * A reflector keeps a Store in step with the API server: list (paginated), then watch from the
 * list's resourceVersion with bookmarks, resuming from the last seen resourceVersion when the
 * stream ends or drops, and relisting when the server answers 410 Gone. This is client-go's
 * ListAndWatch, per the API concepts page:
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 *
 * After a relist the store is diffed against the fresh list, so a deletion missed while the
 * watch was down still reaches `onChange` as a deletion. Handlers run synchronously and must
 * only enqueue work.
 */
import type { Logger } from 'pino';
import { backoffDelay, jittered, sleep, type Backoff } from './backoff.ts';
import {
  KubeApiError,
  METADATA_ONLY,
  isGone,
  type KubeClient,
  type Status,
  type WatchEvent,
} from './client.ts';
import {
  apiVersionOf,
  collectionPath,
  keyOf,
  type KubeObject,
  type ResourceType,
} from './resources.ts';
import type { Store } from './store.ts';

export interface Change<T> {
  type: 'added' | 'updated' | 'deleted';
  object: T;
  /** The cached object before an update. */
  old?: T;
}

export interface ReflectorOptions<T extends KubeObject> {
  client: KubeClient;
  resource: ResourceType;
  store: Store<T>;
  log: Logger;
  /** Undefined watches every namespace. */
  namespace?: string;
  labelSelector?: string;
  /** e.g. `involvedObject.kind=MCPServer` for Events: the server filters, the cache holds less. */
  fieldSelector?: string;
  /** Cache only metadata (PartialObjectMetadata): for kinds whose content we never read. */
  metadataOnly?: boolean;
  /**
   * Keeps only what the cache's readers use (client-go's TransformFunc): applied to every
   * object before it is stored, so the fields it drops cost no memory.
   */
  transform?: (obj: T) => T;
  onChange?: (change: Change<T>) => void;
  backoff?: Backoff;
  pageSize?: number;
  /** Seconds the server keeps one watch open; client-go picks 5–10 min at random. */
  watchTimeoutSeconds?: () => number;
}

interface ObjectList<T> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[] | null;
}

const DEFAULT_BACKOFF: Backoff = { baseMs: 500, maxMs: 30_000 };

/**
 * Cached objects drop `managedFields`: the controller never reads them and they are often half
 * of an object's size.
 */
function slim<T extends KubeObject>(obj: T, type: ResourceType): T {
  const metadata = { ...obj.metadata };
  delete metadata.managedFields;
  return { ...obj, apiVersion: apiVersionOf(type), kind: type.kind, metadata };
}

export class Reflector<T extends KubeObject> {
  readonly #o: ReflectorOptions<T>;
  readonly #abort = new AbortController();
  #resourceVersion: string | undefined;
  #running: Promise<void> | undefined;
  #synced = false;
  readonly #syncWaiters: (() => void)[] = [];

  constructor(options: ReflectorOptions<T>) {
    this.#o = options;
  }

  get synced(): boolean {
    return this.#synced;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** Resolves once the first list has filled the store (or the reflector stopped). */
  waitForSync(): Promise<void> {
    if (this.#synced || this.#abort.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#syncWaiters.splice(0).forEach((resolve) => resolve());
    await this.#running;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.#resourceVersion === undefined) await this.#relist();
        await this.#watch();
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          // Our resourceVersion fell out of the server's window: start over from a fresh list.
          this.#o.log.info({ resource: this.#o.resource.plural }, 'watch expired; relisting');
          this.#resourceVersion = undefined;
          continue;
        }
        failures += 1;
        const delayMs = jittered(backoffDelay(failures, this.#o.backoff ?? DEFAULT_BACKOFF), 0.2);
        this.#o.log.warn(
          { err, resource: this.#o.resource.plural, delayMs: Math.round(delayMs) },
          'list/watch failed; retrying',
        );
        await sleep(delayMs, signal);
      }
    }
  }

  get #path(): string {
    return collectionPath(this.#o.resource, this.#o.namespace);
  }

  async #list(): Promise<{ items: Map<string, T>; resourceVersion: string }> {
    const items = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion: string;
    do {
      const page = await this.#o.client.request<ObjectList<T>>({
        method: 'GET',
        path: this.#path,
        query: {
          limit: this.#o.pageSize ?? 500,
          continue: continueToken,
          labelSelector: this.#o.labelSelector,
          fieldSelector: this.#o.fieldSelector,
        },
        signal: this.#abort.signal,
        accept: this.#o.metadataOnly ? METADATA_ONLY.list : undefined,
      });
      // Go encodes an empty slice of a metadata-only list as null.
      for (const item of page.items ?? []) {
        const obj = this.#slim(item);
        items.set(keyOf(obj), obj);
      }
      continueToken = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion ?? '';
    } while (continueToken !== undefined);
    return { items, resourceVersion };
  }

  async #relist(): Promise<void> {
    const { items, resourceVersion } = await this.#list();
    const store = this.#o.store;
    for (const old of store.list(this.#o.namespace)) {
      if (!items.has(keyOf(old))) this.#delete(old);
    }
    for (const obj of items.values()) this.#upsert(obj);
    this.#resourceVersion = resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      this.#syncWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  async #watch(): Promise<void> {
    const timeoutSeconds = this.#o.watchTimeoutSeconds?.() ?? Math.round(jittered(300, 1));
    await this.#o.client.watch(
      {
        path: this.#path,
        query: {
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: this.#o.labelSelector,
          fieldSelector: this.#o.fieldSelector,
        },
        accept: this.#o.metadataOnly ? METADATA_ONLY.watch : undefined,
        signal: this.#abort.signal,
      },
      (event) => this.#onEvent(event),
    );
  }

  #onEvent(event: WatchEvent): void {
    if (event.type === 'ERROR') {
      const status = event.object as Status;
      throw new KubeApiError(`WATCH ${this.#path}`, status.code ?? 500, status);
    }
    const obj = this.#slim(event.object as T);
    if (event.type === 'DELETED') this.#delete(obj);
    else if (event.type !== 'BOOKMARK') this.#upsert(obj);
    this.#resourceVersion = obj.metadata.resourceVersion;
  }

  #slim(obj: T): T {
    const slimmed = slim(obj, this.#o.resource);
    return this.#o.transform === undefined ? slimmed : this.#o.transform(slimmed);
  }

  #upsert(obj: T): void {
    const old = this.#o.store.upsert(obj);
    if (old === undefined) this.#emit({ type: 'added', object: obj });
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
      this.#emit({ type: 'updated', object: obj, old });
    }
  }

  #delete(obj: T): void {
    const old = this.#o.store.delete(keyOf(obj));
    if (old !== undefined) this.#emit({ type: 'deleted', object: obj });
  }

  #emit(change: Change<T>): void {
    try {
      this.#o.onChange?.(change);
    } catch (err) {
      this.#o.log.error({ err, resource: this.#o.resource.plural }, 'change handler failed');
    }
  }
}
