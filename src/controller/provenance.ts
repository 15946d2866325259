/**
 * Which code produced the tools, and whether the same spec now runs different code: a pure
 * function of the spec, the status as it is, the server container's status in the pods, and
 * the serverInfo discovery found.
 *
 * The image digest comes from the pod status `imageID` (what the node resolved the tag to),
 * never from the tag: a tag that moves to another digest is exactly what this catches. A
 * serverInfo that changes while the spec does not is the other case: an unpinned `npx -y pkg`
 * or `uvx pkg` that resolved a newer release when its pod restarted, reported by the child in
 * its `initialize` answer. Either is news only while the spec stays the same (a user who
 * changes the image expects other code).
 */

import { isDeepStrictEqual } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import {
  IMAGE_DIGESTS_MAX,
  type MCPServerStatus,
  type ProvenanceStatus,
} from '../api/v1alpha1/mcpserver.ts';
import { metaTime } from '../api/core-v1.ts';
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
  now: Date;
}

type ServerInfo = NonNullable<NonNullable<MCPServerStatus['discovery']>['serverInfo']>;

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
  // No pod reports an image yet (a restart in progress): the last ones seen still hold.
  const digests = seen.length > 0 ? seen : sameSpec ? (before?.imageDigests ?? []) : [];
  const news = sameSpec ? codeNews(input, before?.imageDigests ?? [], digests) : undefined;
  const codeChanged = news
    ? { since: metaTime(input.now), message: clip(news, MESSAGE_MAX) }
    : sameSpec
      ? before?.codeChanged
      : undefined;
  const status: ProvenanceStatus = {
    ...(input.image === undefined ? {} : { image: input.image }),
    ...(digests.length === 0 ? {} : { imageDigests: digests }),
    ...(codeChanged === undefined ? {} : { codeChanged }),
  };
  return { status: Object.keys(status).length === 0 ? undefined : status, news };
}

function codeNews(
  input: ProvenanceInput,
  before: readonly string[],
  now: readonly string[],
): string | undefined {
  const added = now.filter((digest) => !before.includes(digest));
  if (before.length > 0 && added.length > 0) {
    return `The image ${input.image} now runs as ${added.join(', ')} (was ${before.join(', ')}): the tag moved to other code while the spec stayed the same.`;
  }
  const was = input.previous?.discovery?.serverInfo;
  const is = input.serverInfo;
  if (was !== undefined && is !== undefined && !isDeepStrictEqual(was, is)) {
    return `The server now reports ${describe(is)} (was ${describe(was)}) while the spec stayed the same: a command that resolves its package at start (npx, uvx) may have found a new release.`;
  }
  return undefined;
}

const describe = (info: ServerInfo): string => `${info.name ?? '?'} ${info.version ?? '?'}`;
