/**
 * One cache of one kind over the namespaces the operator watches: a Store filled by one
 * reflector per namespace (or a single cluster-wide one), so RBAC can be granted per namespace
 * with Roles instead of a ClusterRole.
 */
import type { Logger } from 'pino';
import type { KubeClient } from './client.ts';
import { Reflector, type Change } from './reflector.ts';
import type { KubeObject, ResourceType } from './resources.ts';
import { Store, type IndexFunc } from './store.ts';

export interface InformerOptions<T extends KubeObject> {
  client: KubeClient;
  resource: ResourceType;
  /** Empty: every namespace. */
  namespaces: readonly string[];
  labelSelector?: string;
  fieldSelector?: string;
  metadataOnly?: boolean;
  /** See ReflectorOptions.transform. */
  transform?: (obj: T) => T;
  /** See ReflectorOptions.pageSize. */
  pageSize?: number;
  indexers?: Record<string, IndexFunc<T>>;
  onChange: (change: Change<T>) => void;
  log: Logger;
}

export class Informer<T extends KubeObject> {
  readonly store: Store<T>;
  readonly #reflectors: Reflector<T>[];

  constructor(o: InformerOptions<T>) {
    this.store = new Store<T>(o.indexers);
    const scopes = o.namespaces.length === 0 ? [undefined] : o.namespaces;
    this.#reflectors = scopes.map(
      (namespace) =>
        new Reflector<T>({
          client: o.client,
          resource: o.resource,
          namespace,
          labelSelector: o.labelSelector,
          fieldSelector: o.fieldSelector,
          metadataOnly: o.metadataOnly,
          transform: o.transform,
          pageSize: o.pageSize,
          store: this.store,
          onChange: o.onChange,
          log: o.log,
        }),
    );
  }

  get synced(): boolean {
    return this.#reflectors.every((r) => r.synced);
  }

  start(): void {
    for (const r of this.#reflectors) r.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.stop()));
  }
}
