import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { MCPServerStatus } from '../../src/api/v1alpha1/mcpserver.ts';
import { provenanceOf } from '../../src/controller/provenance.ts';

const IMAGE = 'registry.example/mcp/files:1';
const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const NOW = new Date('2026-12-01T12:00:00Z');

/** A pod of `image` whose server container the kubelet reports as running `imageID`. */
const pod = (imageID: string, image = IMAGE): V1Pod => ({
  spec: {
    containers: [
      { name: 'server', image },
      { name: 'bridge', image: 'op:1' },
    ],
  },
  status: {
    containerStatuses: [
      {
        name: 'server',
        image,
        imageID: `docker.io/mcp/files@${imageID}`,
        ready: true,
        restartCount: 0,
      },
      { name: 'bridge', image: 'op:1', imageID: `op@${B}`, ready: true, restartCount: 0 },
    ],
  },
});

const status = (over: Partial<MCPServerStatus> = {}): MCPServerStatus => ({
  observedGeneration: 3,
  provenance: { image: IMAGE, imageDigests: [A] },
  discovery: { serverInfo: { name: 'files', version: '1.0.0' } },
  ...over,
});

const run = (previous: MCPServerStatus | undefined, pods: V1Pod[], over = {}) =>
  provenanceOf({
    image: IMAGE,
    generation: 3,
    previous,
    pods,
    container: 'server',
    serverInfo: { name: 'files', version: '1.0.0' },
    now: NOW,
    ...over,
  });

describe('provenance', () => {
  it("records the digest the node resolved the server's tag to, not the bridge's", () => {
    expect(run(undefined, [pod(A), pod(A)])).toEqual({
      status: { image: IMAGE, imageDigests: [A] },
      news: undefined,
    });
  });

  it('flags a tag that moved to another digest under the same spec', () => {
    const moved = run(status(), [pod(B)]);
    expect(moved.news).toMatch(
      /The image registry.example\/mcp\/files:1 now runs as sha256:b+ \(was sha256:a+\): the tag moved/,
    );
    expect(moved.status).toEqual({
      image: IMAGE,
      imageDigests: [B],
      codeChanged: { since: '2026-12-01T12:00:00Z', message: moved.news },
    });
    // The next pass keeps the flag and tells nothing new.
    const kept = run(status({ provenance: moved.status }), [pod(B)]);
    expect(kept).toEqual({ status: moved.status, news: undefined });
  });

  it('flags a server that reports another serverInfo under the same spec (npx resolved anew)', () => {
    const moved = run(status(), [pod(A)], { serverInfo: { name: 'files', version: '1.1.0' } });
    expect(moved.news).toMatch(/now reports files 1.1.0 \(was files 1.0.0\)/);
  });

  it('says nothing when the user changed the spec, and clears an old flag', () => {
    const flagged = status({
      provenance: { image: IMAGE, imageDigests: [A], codeChanged: { since: 'x', message: 'm' } },
    });
    const changed = run(flagged, [pod(B)], { generation: 4 });
    expect(changed).toEqual({ status: { image: IMAGE, imageDigests: [B] }, news: undefined });
  });

  it('leaves out pods of an earlier image during a rollout, and keeps the digests while none runs', () => {
    const rollout = run(
      status({ observedGeneration: 4 }),
      [pod(B, 'registry.example/mcp/files:0')],
      {
        generation: 4,
      },
    );
    expect(rollout).toEqual({ status: { image: IMAGE, imageDigests: [A] }, news: undefined });
    expect(run(status(), [])).toEqual({
      status: { image: IMAGE, imageDigests: [A] },
      news: undefined,
    });
  });
});
