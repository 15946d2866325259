/**
 * What the bridge tells discovery about changes (src/mcp/change-feed.ts has the wire format).
 * The bridge sees every message between its sessions and the children, so it notices a change
 * of tools long before the next discovery interval:
 *
 * - a child's `notifications/tools/list_changed` (2025-11-25 server/tools, "List Changed");
 * - a `tools/list` page whose tools differ from the same page as last listed, as when a new
 *   PerSession child resolved a newer package and never announced anything;
 * - an `initialize` answer whose serverInfo differs from the last one (a child of other code);
 * - a child whose launcher resolved another version of a package than the child before it
 *   (`npx -y pkg` or `uvx pkg` found a new release), as the supervisor read it (supervisor.sh).
 *
 * Each bumps a counter that discovery long-polls with the discovery token. The counter says
 * only "look again": discovery re-lists the tools itself, so a bridge that bumps for nothing
 * costs a discovery run, never a wrong status, and one that stays quiet costs no API write.
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DiscoveryToken } from '../auth/bearer.ts';
import { header } from './guards.ts';
import { replyEmpty, replyText } from '../replies.ts';
import type { UpstreamHooks } from '../upstream.ts';
import { digestOf } from '../../tools/digest.ts';
import {
  CHANGES_MAX_WAIT_SECONDS,
  parseSeen,
  sortedPackages,
  type ChangeMark,
  type ResolvedPackage,
} from '../../mcp/change-feed.ts';
import type { JsonRpcNotification } from '../../mcp/jsonrpc.ts';
import { PACKAGES_MAX } from '../../resolved-package.ts';
import { DISCOVERY_TOKEN_HEADER } from '../../mcp/metadata.ts';

/** tools/list pages remembered by cursor; a server with more pages is compared on these. */
export const MAX_PAGES = 100;

/** Long-polls held at once; the operator holds one per bridge, replicas each their own. */
const MAX_WAITERS = 8;

const DEFAULT_WAIT_SECONDS = 30;

export class ChangeFeed {
  readonly epoch = randomUUID();
  #generation = 0;
  readonly #waiters = new Set<() => void>();
  /** Per tools/list cursor ('' for the first page), the digest of the tools listed there. */
  readonly #pages = new Map<string, string>();
  #serverInfo: string | undefined;
  /** Per launcher and package name, the package its latest child resolved. */
  readonly #packages = new Map<string, ResolvedPackage>();

  get mark(): ChangeMark {
    return { epoch: this.epoch, generation: this.#generation };
  }

  /** What a new child would run: per package, the version last resolved. */
  get packages(): ResolvedPackage[] {
    return sortedPackages([...this.#packages.values()]);
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  bump(): void {
    this.#generation++;
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /**
   * A child's package as the supervisor read it. Another version of a package seen before is a
   * change; a package seen for the first time is no change, but those waiting hear of it.
   */
  observePackage(resolved: ResolvedPackage): void {
    const key = `${resolved.launcher} ${resolved.name}`;
    const before = this.#packages.get(key);
    if (before?.version === resolved.version) return;
    if (before === undefined && this.#packages.size >= PACKAGES_MAX) return;
    this.#packages.set(key, resolved);
    if (before === undefined) this.#wake();
    else this.bump();
  }

  observeNotification(notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/tools/list_changed') this.bump();
  }

  observeResult(
    method: string,
    result: Record<string, unknown>,
    params: Record<string, unknown> | undefined,
  ): void {
    if (method === 'tools/list') {
      const cursor = typeof params?.cursor === 'string' ? params.cursor : '';
      if (cursor !== '' && !this.#pages.has(cursor) && this.#pages.size >= MAX_PAGES) return;
      this.#remember(this.#pages.get(cursor), fingerprint(result.tools), (seen) =>
        this.#pages.set(cursor, seen),
      );
    } else if (method === 'initialize') {
      this.#remember(this.#serverInfo, fingerprint(result.serverInfo), (seen) => {
        this.#serverInfo = seen;
      });
    }
  }

  /** Bumps when `now` differs from what was seen before (the first sighting is no change). */
  #remember(before: string | undefined, now: string, keep: (seen: string) => void): void {
    keep(now);
    if (before !== undefined && before !== now) this.bump();
  }

  /**
   * Resolves once the mark is not among `seen`, after `ms`, when `signal` fires, or when a new
   * package is seen.
   */
  async until(seen: readonly ChangeMark[], ms: number, signal: AbortSignal): Promise<void> {
    const known = () =>
      seen.some((m) => m.epoch === this.epoch && m.generation === this.#generation);
    if (!known() || signal.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#waiters.add(done);
    });
  }

  /** The hooks with this feed watching what passes, before they act on it. */
  observing(hooks: UpstreamHooks): UpstreamHooks {
    return {
      ...hooks,
      transformResult: (method, result, params, caller) => {
        this.observeResult(method, result, params);
        return hooks.transformResult
          ? hooks.transformResult(method, result, params, caller)
          : result;
      },
      observeNotification: (notification) => {
        this.observeNotification(notification);
        hooks.observeNotification?.(notification);
      },
    };
  }
}

/** A digest of what a server sent, or a fixed mark for what cannot be digested. */
function fingerprint(value: unknown): string {
  try {
    return digestOf(value ?? null);
  } catch {
    return 'not-canonical';
  }
}

/**
 * The CHANGES_PATH route. Without a discovery token the bridge has no feed (404); a request
 * without the right token gets 401 and learns nothing else.
 */
export function changesRoute(feed: ChangeFeed, token: DiscoveryToken | undefined) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (token === undefined) return replyText(res, 404, 'not found\n');
    if (req.method !== 'GET') return replyEmpty(res, 405, { allow: 'GET' });
    if (!token.matches(header(req, DISCOVERY_TOKEN_HEADER.toLowerCase())))
      return replyText(res, 401, 'the discovery token is missing or wrong\n');
    const query = new URL(req.url ?? '/', 'http://bridge').searchParams;
    const seen = parseSeen(query.get('seen'));
    const asked = Number(query.get('wait') ?? DEFAULT_WAIT_SECONDS);
    const seconds = Number.isFinite(asked)
      ? Math.min(Math.max(asked, 0), CHANGES_MAX_WAIT_SECONDS)
      : 0;
    if (feed.waiting >= MAX_WAITERS && seconds > 0)
      return replyText(res, 429, 'too many waiting for changes\n');
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    await feed.until(seen, seconds * 1000, gone.signal);
    replyJsonBody(res, { ...feed.mark, packages: feed.packages });
  };
}

function replyJsonBody(
  res: ServerResponse,
  body: ChangeMark & { packages: ResolvedPackage[] },
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}
