/**
 * The in-memory cache a reflector fills: objects by `namespace/name`, plus secondary indices
 * (as client-go's Indexer) so the controller can find, say, every Pod of one MCPServer
 * without scanning. Reads are synchronous and never touch the API server.
 */
import { keyOf, type KubeObject } from './resources.ts';

/** Maps an object to the index values it is filed under (none, one or several). */
export type IndexFunc<T> = (obj: T) => readonly string[];

const NAMESPACE_INDEX = '__namespace';

export class Store<T extends KubeObject> {
  readonly #items = new Map<string, T>();
  readonly #indexers: Record<string, IndexFunc<T>>;
  readonly #indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.#indexers = { ...indexers, [NAMESPACE_INDEX]: (obj) => [obj.metadata.namespace ?? ''] };
    for (const name of Object.keys(this.#indexers)) this.#indices.set(name, new Map());
  }

  get size(): number {
    return this.#items.size;
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): T[] {
    return namespace === undefined
      ? [...this.#items.values()]
      : this.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): T[] {
    const keys = this.#indices.get(index)?.get(value);
    if (keys === undefined) return [];
    return [...keys].map((key) => this.#items.get(key)).filter((obj) => obj !== undefined);
  }

  /** Stores `obj`, returning the object it replaced. */
  upsert(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.#items.get(key);
    if (old !== undefined) this.#unindex(key, old);
    this.#items.set(key, obj);
    this.#index(key, obj);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.#items.get(key);
    if (old === undefined) return undefined;
    this.#items.delete(key);
    this.#unindex(key, old);
    return old;
  }

  #index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const index = this.#indices.get(name)!;
      for (const value of fn(obj)) {
        let keys = index.get(value);
        if (keys === undefined) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const index = this.#indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}
