/**
 * Drift within seconds: per bridged server, one long-poll of its bridge's change feed
 * (src/mcp/change-feed.ts). When the bridge reports a change, the server's discovery runs at
 * once (the scheduler's trigger), and discovery, not the bridge, says what the tools are.
 *
 * - Nothing is written or read from the API server per poll: the discovery token is read when
 *   a watch starts and again only after the bridge refused it.
 * - A server that changes all the time is discovered at most once per `minGapMs`.
 * - A bridge without the feed (an older image: 404) is asked again after `absentMs`.
 * - Failures back off from `retryMs` up to `maxRetryMs`; the interval schedule still runs, so
 *   a broken watch costs speed, never a check.
 *
 * Each answer also says which packages the bridge's children's launchers resolved (`npx`, `uvx`); the
 * watch keeps them per bridge, for status.provenance. A bridge not heard from for `packagesTtlMs`
 * (a replica that is gone) no longer counts.
 */

import type { Logger } from 'pino';
import { type Dispatcher, fetch } from 'undici';
import { backoffDelay, sleep } from '../kube/backoff.ts';
import {
  CHANGES_MAX_SEEN,
  CHANGES_PATH,
  formatSeen,
  parseMark,
  parsePackages,
  sortedPackages,
  type ChangeMark,
  type ResolvedPackage,
} from '../mcp/change-feed.ts';
import { DISCOVERY_TOKEN_HEADER } from '../mcp/metadata.ts';

export interface WatchTarget {
  /** The server's MCP endpoint; the feed is CHANGES_PATH on the same origin. */
  endpoint: string;
  /** The discovery token, read now. */
  token: (signal: AbortSignal) => Promise<string | undefined>;
}

export interface ChangeWatchOptions {
  dispatcher: Dispatcher;
  /** The bridge saw a change: discover the server. */
  onChange: (key: string) => void;
  /** The packages the bridges report changed (`packages(key)`); nothing else may have. */
  onPackages?: (key: string) => void;
  log: Logger;
  waitSeconds?: number;
  minGapMs?: number;
  retryMs?: number;
  maxRetryMs?: number;
  absentMs?: number;
  packagesTtlMs?: number;
}

export const CHANGE_WATCH_DEFAULTS = {
  waitSeconds: 30,
  minGapMs: 5_000,
  retryMs: 1_000,
  maxRetryMs: 30_000,
  absentMs: 300_000,
  packagesTtlMs: 600_000,
  onPackages: (): void => undefined,
};

/** Slack over the asked wait before a poll counts as hung. */
const ANSWER_SLACK_MS = 10_000;

/** Largest answer read: a mark is a few dozen bytes. */
const MAX_ANSWER_BYTES = 4096;

interface Watch {
  endpoint: string;
  stop: AbortController;
  /** Per bridge (epoch), the packages of its last answer and when it came. */
  reported: Map<string, { packages: ResolvedPackage[]; at: number }>;
}

export class ChangeWatch {
  readonly #o: Required<ChangeWatchOptions>;
  readonly #watches = new Map<string, Watch>();

  constructor(options: ChangeWatchOptions) {
    this.#o = { ...CHANGE_WATCH_DEFAULTS, ...options };
  }

  get size(): number {
    return this.#watches.size;
  }

  /** Watches `key`'s bridge; a watch of the same endpoint goes on as it is. */
  watch(key: string, target: WatchTarget): void {
    if (this.#watches.get(key)?.endpoint === target.endpoint) return;
    this.unwatch(key);
    const watch = { endpoint: target.endpoint, stop: new AbortController(), reported: new Map() };
    this.#watches.set(key, watch);
    void this.#poll(key, target, watch);
  }

  /**
   * The packages `key`'s bridges heard from lately report, each once; undefined before the
   * first answer.
   */
  packages(key: string): ResolvedPackage[] | undefined {
    const watch = this.#watches.get(key);
    return watch === undefined || watch.reported.size === 0 ? undefined : this.#current(watch);
  }

  #current(watch: Watch): ResolvedPackage[] {
    const since = Date.now() - this.#o.packagesTtlMs;
    for (const [epoch, { at }] of watch.reported) if (at < since) watch.reported.delete(epoch);
    return sortedPackages([...watch.reported.values()].flatMap((r) => r.packages));
  }

  /** Keeps what a bridge reported; tells when that changes what `packages` says. */
  #reported(key: string, watch: Watch, epoch: string, packages: ResolvedPackage[]): void {
    const before = JSON.stringify(this.#current(watch));
    watch.reported.set(epoch, { packages, at: Date.now() });
    if (JSON.stringify(this.#current(watch)) !== before) this.#o.onPackages(key);
  }

  unwatch(key: string): void {
    this.#watches.get(key)?.stop.abort();
    this.#watches.delete(key);
  }

  stop(): void {
    for (const key of [...this.#watches.keys()]) this.unwatch(key);
  }

  async #poll(key: string, target: WatchTarget, watch: Watch): Promise<void> {
    const signal = watch.stop.signal;
    const url = new URL(CHANGES_PATH, target.endpoint);
    const seen: ChangeMark[] = [];
    let token: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      const pause = await this.#once(key, watch, url, seen, async () => {
        token ??= await target.token(signal);
        return token;
      }).catch((error: unknown) => {
        if (signal.aborted) return 0;
        failures++;
        this.#o.log.debug({ key, err: error }, 'change feed unavailable; retrying');
        if (error instanceof TokenRefused) token = undefined;
        return error instanceof FeedAbsent
          ? this.#o.absentMs
          : backoffDelay(failures, { baseMs: this.#o.retryMs, maxMs: this.#o.maxRetryMs });
      });
      if (pause === 0) failures = 0;
      if (pause > 0) await sleep(pause, signal);
    }
  }

  /** One poll; returns how long to pause before the next one. */
  async #once(
    key: string,
    watch: Watch,
    url: URL,
    seen: ChangeMark[],
    token: () => Promise<string | undefined>,
  ): Promise<number> {
    const signal = watch.stop.signal;
    const presented = await token();
    if (presented === undefined) throw new TokenRefused('no discovery token');
    url.search = new URLSearchParams({
      seen: formatSeen(seen),
      wait: String(this.#o.waitSeconds),
    }).toString();
    const response = await fetch(url, {
      headers: { [DISCOVERY_TOKEN_HEADER.toLowerCase()]: presented },
      redirect: 'manual',
      dispatcher: this.#o.dispatcher,
      signal: AbortSignal.any([
        signal,
        AbortSignal.timeout(this.#o.waitSeconds * 1000 + ANSWER_SLACK_MS),
      ]),
    });
    const text = await response.text();
    if (response.status === 404) throw new FeedAbsent();
    if (response.status === 401) throw new TokenRefused('the bridge refused the token');
    if (!response.ok || text.length > MAX_ANSWER_BYTES)
      throw new Error(`HTTP ${response.status} from the change feed`);
    const body: unknown = JSON.parse(text);
    const mark = parseMark(body);
    if (mark === undefined) throw new Error('the change feed answered something else');
    this.#reported(key, watch, mark.epoch, parsePackages(body));
    return this.#saw(key, seen, mark) ? this.#o.minGapMs : 0;
  }

  /** Records `mark`; true (and discovery asked for) when it is news about a known server. */
  #saw(key: string, seen: ChangeMark[], mark: ChangeMark): boolean {
    const first = seen.length === 0;
    const known = seen.findIndex((m) => m.epoch === mark.epoch);
    if (known >= 0 && seen[known]!.generation === mark.generation) return false;
    if (known >= 0) seen.splice(known, 1);
    seen.unshift(mark);
    seen.length = Math.min(seen.length, CHANGES_MAX_SEEN);
    // The first answer is where watching starts, and the run that Ready started covers a
    // bridge that saw nothing yet; one that did may have changed after that run.
    if (first && mark.generation === 0) return false;
    this.#o.onChange(key);
    return true;
  }
}

class FeedAbsent extends Error {}
class TokenRefused extends Error {}
