/**
 * What the child lists of one kind (tools, prompts, resources or resource templates), as the
 * policy screens it: each entry's key and current digest. The policy checks a call against the
 * child's current list, not against what a client claims, so the bridge lists the kind itself
 * when it has no fresh list: at first, and after the child announced that the list changed.
 */

import type { Digest } from '../../tools/digest.ts';
import { isErrorResponse, WIRE } from '../../mcp/jsonrpc.ts';
import type { Upstream } from '../upstream.ts';

/** Most pages the bridge reads when it lists a kind itself. */
export const MAX_PAGES = 100;

export interface ListingKind {
  method: string;
  /** The result's array of entries: `tools`, `prompts`, `resources`, `resourceTemplates`. */
  field: string;
  /** The entry's key; undefined for an entry the policy cannot name (never shown). */
  keyOf(entry: unknown): string | undefined;
  /** The entry's digest; undefined when it has none (it can never match an approval). */
  digestOf(entry: unknown): Digest | undefined;
  /** A child that does not implement the method (-32601) lists nothing of the kind. */
  optional?: boolean;
}

export class Listing {
  readonly kind: ListingKind;
  readonly #upstream: Upstream;
  /** Key → current digest, as last listed by the child. */
  readonly #digests = new Map<string, Digest | undefined>();
  #fresh = false;
  /** Why the bridge's own last listing failed (code and message of the child's error). */
  #error: string | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(upstream: Upstream, kind: ListingKind) {
    this.#upstream = upstream;
    this.kind = kind;
  }

  /** Why the list could not be read, if the bridge's last listing failed. */
  get error(): string | undefined {
    return this.#error;
  }

  /** Every listed key with its current digest. */
  entries(): IterableIterator<[string, Digest | undefined]> {
    return this.#digests.entries();
  }

  has(key: string): boolean {
    return this.#digests.has(key);
  }

  digest(key: string): Digest | undefined {
    return this.#digests.get(key);
  }

  /** The child announced a change: the next check lists again. */
  stale(): void {
    this.#fresh = false;
  }

  /** Records an entry a client's list passed on; its key, or undefined if it has none. */
  record(entry: unknown): { key: string; digest: Digest | undefined } | undefined {
    const key = this.kind.keyOf(entry);
    if (key === undefined) return undefined;
    const digest = this.kind.digestOf(entry);
    this.#digests.set(key, digest);
    return { key, digest };
  }

  /** Lists again unless the list is fresh and holds `key`. */
  async current(key?: string): Promise<void> {
    if (this.#fresh && (key === undefined || this.#digests.has(key))) return;
    this.#refreshing ??= this.#listAll().finally(() => {
      this.#refreshing = undefined;
    });
    await this.#refreshing;
  }

  /**
   * Lists every entry of the child (all pages) and records their digests. When the child answers
   * with an error, the old digests are dropped: they may describe entries that changed since.
   */
  async #listAll(): Promise<void> {
    const digests = new Map<string, Digest | undefined>();
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const response = await this.#upstream.request(
        this.kind.method,
        cursor === undefined ? {} : { cursor },
      );
      if (isErrorResponse(response)) {
        if (this.kind.optional === true && response.error.code === WIRE.METHOD_NOT_FOUND) break;
        this.#digests.clear();
        this.#error = `${response.error.code} ${response.error.message}`;
        return;
      }
      const listed = response.result[this.kind.field];
      for (const entry of Array.isArray(listed) ? (listed as unknown[]) : []) {
        const key = this.kind.keyOf(entry);
        if (key !== undefined) digests.set(key, this.kind.digestOf(entry));
      }
      cursor = response.result.nextCursor;
      if (typeof cursor !== 'string') break;
    }
    this.#digests.clear();
    for (const [key, digest] of digests) this.#digests.set(key, digest);
    this.#error = undefined;
    this.#fresh = true;
  }
}

/**
 * A list result with the entries `shown` refuses (and entries the policy cannot name) left out,
 * unless `filter` is false; every entry the policy can name is recorded in `listing`.
 */
export function filterList(
  listing: Listing,
  result: Record<string, unknown>,
  filter: boolean,
  shown: (key: string, digest: Digest | undefined) => boolean,
): Record<string, unknown> {
  const { field } = listing.kind;
  const listed = result[field];
  if (!Array.isArray(listed)) return filter ? { ...result, [field]: [] } : result;
  const entries = (listed as unknown[]).filter((entry) => {
    const recorded = listing.record(entry);
    if (recorded === undefined) return !filter;
    return !filter || shown(recorded.key, recorded.digest);
  });
  return { ...result, [field]: entries };
}
