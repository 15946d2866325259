/**
 * The bridge's change feed on the wire: what discovery long-polls to learn, within seconds, that
 * a bridged server's tools (or the code behind them) may have changed. Both sides take the names
 * from here. The answer is a hint only: discovery lists the tools itself before anything is
 * recorded (docs/bridge.md, "Change feed").
 *
 * `GET <CHANGES_PATH>?seen=<epoch>.<generation>,…&wait=<seconds>` with DISCOVERY_TOKEN_HEADER.
 * The bridge answers `{epoch, generation, packages}` at once when its own pair is not among
 * `seen`, and otherwise when its generation moves, when it learns of a package it had not seen,
 * or when `wait` runs out. `seen` lists every bridge the caller knows, so that replicas behind
 * one Service, each with its own counter, do not look like changes to each other. `packages`
 * are the packages its children's launchers (`npx`, `uvx`) last resolved, as the supervisor read them
 * in the server container (supervisor.sh).
 */

import { PACKAGES_MAX, toPackage, type ResolvedPackage } from '../resolved-package.ts';

export type { ResolvedPackage };

/** Served beside the MCP endpoint (the Service's port), like /healthz. */
export const CHANGES_PATH = '/changes';

/** Longest wait a caller may ask for; past it an idle connection risks a proxy's timeout. */
export const CHANGES_MAX_WAIT_SECONDS = 60;

/** Most `seen` entries read: more replicas than this are not told apart. */
export const CHANGES_MAX_SEEN = 16;

export interface ChangeMark {
  /** Random per bridge process: a new one means a new bridge, whose children start afresh. */
  epoch: string;
  /** Counts what the bridge saw change since it started. */
  generation: number;
}

const EPOCH = /^[0-9a-f-]{1,64}$/;

export function formatSeen(marks: readonly ChangeMark[]): string {
  return marks.map((m) => `${m.epoch}.${m.generation}`).join(',');
}

/** The marks of a `seen` parameter; entries that are not `<epoch>.<generation>` are skipped. */
export function parseSeen(text: string | null): ChangeMark[] {
  if (!text) return [];
  return text
    .split(',')
    .slice(0, CHANGES_MAX_SEEN)
    .flatMap((entry) => {
      const dot = entry.lastIndexOf('.');
      const mark = toMark(entry.slice(0, dot), Number(entry.slice(dot + 1)));
      return dot > 0 && mark !== undefined ? [mark] : [];
    });
}

/** A bridge's answer, checked: anything else is no mark. */
export function parseMark(body: unknown): ChangeMark | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { epoch, generation } = body as Record<string, unknown>;
  return toMark(epoch, generation);
}

function toMark(epoch: unknown, generation: unknown): ChangeMark | undefined {
  if (typeof epoch !== 'string' || !EPOCH.test(epoch)) return undefined;
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0)
    return undefined;
  return { epoch, generation };
}

/** The packages of a bridge's answer, checked; entries that are not packages are skipped. */
export function parsePackages(body: unknown): ResolvedPackage[] {
  const list = (body as { packages?: unknown } | null)?.packages;
  if (!Array.isArray(list)) return [];
  return list.slice(0, PACKAGES_MAX).flatMap((entry: unknown) => {
    const { launcher, name, version } = (entry ?? {}) as Record<string, unknown>;
    return toPackage(launcher, name, version) ?? [];
  });
}

/** Packages in one order, each once: equal lists of packages compare equal. */
export function sortedPackages(packages: readonly ResolvedPackage[]): ResolvedPackage[] {
  const key = (p: ResolvedPackage) => `${p.launcher} ${p.name} ${p.version}`;
  const unique = new Map(packages.map((p) => [key(p), p]));
  return [...unique.keys()].sort().map((k) => unique.get(k)!);
}
