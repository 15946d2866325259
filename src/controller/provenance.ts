/**
 * Which code produced the tools, and whether the same spec now runs different code: a pure
 * function of the spec, the status as it is, the server container's status in the pods, the
 * packages the bridges report, and the serverInfo discovery found.
 *
 * The image digest comes from the pod status `imageID` (what the node resolved the tag to),
 * never from the tag: a tag that moves to another digest is exactly what this catches. The
 * package version comes from the npx cache or the uv environment the child ran from (the
 * supervisor reads it, the bridge's change feed reports it, docs/adr/0033): an unpinned
 * `npx -y pkg` or `uvx pkg` that resolved a newer release when its pod restarted is the other
 * case, seen even when the server reports
 * the same serverInfo (many report a fixed one). A serverInfo that changes is the last resort
 * for what neither tells. Each is news only while the spec stays the same (a user who changes
 * the image or the command expects other code).
 */

import { isDeepStrictEqual } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import {
  IMAGE_DIGESTS_MAX,
  type MCPServerStatus,
  type ProvenanceStatus,
} from '../api/v1alpha1/mcpserver.ts';
import { metaTime } from '../api/core-v1.ts';
import type { PackageLauncher } from '../resolved-package.ts';
import { MESSAGE_MAX, clip } from '../tools/text.ts';

export interface ProvenanceInput {
  /** spec.image; undefined for a url server. */
  image: string | undefined;
  generation: number;
  previous: MCPServerStatus | undefined;
  pods: readonly V1Pod[];
  /** The name of the server's container in its pods. */
  container: string;
  /** serverInfo as status.discovery will say it after this pass. */
  serverInfo: ServerInfo | undefined;
  /** The packages the server's bridges report now; undefined when none has answered yet. */
  packages: readonly ResolvedPackage[] | undefined;
  now: Date;
}

type ServerInfo = NonNullable<NonNullable<MCPServerStatus['discovery']>['serverInfo']>;
type ResolvedPackage = NonNullable<ProvenanceStatus['packages']>[number];

export interface ProvenanceOutcome {
  /** status.provenance; undefined when there is nothing to say. */
  status: ProvenanceStatus | undefined;
  /** Set on the pass that first sees different code under the same spec. */
  news: string | undefined;
}

const DIGEST = /sha256:[0-9a-f]{64}/;

/**
 * The distinct image digests the server container runs in the pods made for `image`, sorted.
 * Pods of an earlier spec with another image are left out: during a rollout their digests
 * are not news about this one.
 */
export function imageDigests(
  pods: readonly V1Pod[],
  container: string,
  image: string | undefined,
): string[] {
  const current = pods.filter(
    (pod) => pod.spec?.containers.find((c) => c.name === container)?.image === image,
  );
  const digests = current.flatMap((pod) =>
    (pod.status?.containerStatuses ?? [])
      .filter((status) => status.name === container)
      .flatMap((status) => DIGEST.exec(status.imageID ?? '')?.[0] ?? []),
  );
  return [...new Set(digests)].sort().slice(0, IMAGE_DIGESTS_MAX);
}

export function provenanceOf(input: ProvenanceInput): ProvenanceOutcome {
  const before = input.previous?.provenance;
  const sameSpec =
    input.previous?.observedGeneration === input.generation &&
    (before?.image ?? input.image) === input.image;
  const seen = imageDigests(input.pods, input.container, input.image);
  // No pod reports an image yet (a restart in progress): the last ones seen still hold. So do
  // the last packages while no bridge has told any (the operator just started, a child is
  // still resolving).
  const digests = seen.length > 0 ? seen : sameSpec ? (before?.imageDigests ?? []) : [];
  const reported = input.packages ?? [];
  const packages = reported.length > 0 ? reported : sameSpec ? (before?.packages ?? []) : [];
  const news = sameSpec
    ? codeNews(
        input,
        { digests: before?.imageDigests ?? [], packages: before?.packages ?? [] },
        { digests, packages },
      )
    : undefined;
  const codeChanged = news
    ? { since: metaTime(input.now), message: clip(news, MESSAGE_MAX) }
    : sameSpec
      ? before?.codeChanged
      : undefined;
  const status: ProvenanceStatus = {
    ...(input.image === undefined ? {} : { image: input.image }),
    ...(digests.length === 0 ? {} : { imageDigests: digests }),
    ...(packages.length === 0 ? {} : { packages: [...packages] }),
    ...(codeChanged === undefined ? {} : { codeChanged }),
  };
  return { status: Object.keys(status).length === 0 ? undefined : status, news };
}

interface Code {
  digests: readonly string[];
  packages: readonly ResolvedPackage[];
}

function codeNews(input: ProvenanceInput, before: Code, now: Code): string | undefined {
  const added = now.digests.filter((digest) => !before.digests.includes(digest));
  if (before.digests.length > 0 && added.length > 0) {
    return `The image ${input.image} now runs as ${added.join(', ')} (was ${before.digests.join(', ')}): the tag moved to other code while the spec stayed the same.`;
  }
  const resolved = packageNews(before.packages, now.packages);
  if (resolved !== undefined) return resolved;
  const was = input.previous?.discovery?.serverInfo;
  const is = input.serverInfo;
  if (was !== undefined && is !== undefined && !isDeepStrictEqual(was, is)) {
    return `The server now reports ${describe(is)} (was ${describe(was)}) while the spec stayed the same: a command that resolves its package at start (npx, uvx) may have found a new release.`;
  }
  return undefined;
}

/** A package that now runs in a version not seen before, where another version ran. */
function packageNews(
  before: readonly ResolvedPackage[],
  now: readonly ResolvedPackage[],
): string | undefined {
  const same = (a: ResolvedPackage, b: ResolvedPackage) =>
    a.launcher === b.launcher && a.name === b.name;
  for (const pkg of now) {
    const earlier = before.filter((b) => same(b, pkg));
    if (earlier.length === 0 || earlier.some((b) => b.version === pkg.version)) continue;
    const was = earlier.map((b) => b.version).join(', ');
    return `${pkg.launcher} now resolves ${pkg.name} to ${pkg.version} (was ${was}) while the spec stayed the same: ${PUBLISHER[pkg.launcher]} has a new release, and the command does not pin one.`;
  }
  return undefined;
}

/** Where each launcher finds its releases, as its users call it. */
const PUBLISHER: Record<PackageLauncher, string> = {
  npx: 'the registry',
  uvx: 'the package index',
};

const describe = (info: ServerInfo): string => `${info.name ?? '?'} ${info.version ?? '?'}`;
