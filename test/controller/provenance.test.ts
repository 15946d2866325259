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
    packages: undefined,
    now: NOW,
    ...over,
  });

const MEMORY = '@modelcontextprotocol/server-memory';
const npx = (version: string) => ({ launcher: 'npx' as const, name: MEMORY, version });

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

  describe('of an npx package', () => {
    const resolved = (version: string, over: Partial<MCPServerStatus> = {}) =>
      status({
        provenance: { image: IMAGE, imageDigests: [A], packages: [npx(version)] },
        ...over,
      });

    it('records the version the bridges report', () => {
      expect(run(status(), [pod(A)], { packages: [npx('2025.8.4')] })).toEqual({
        status: { image: IMAGE, imageDigests: [A], packages: [npx('2025.8.4')] },
        news: undefined,
      });
    });

    it('flags a new version under the same spec, though serverInfo stayed the same', () => {
      const moved = run(resolved('2025.8.4'), [pod(A)], { packages: [npx('2026.8.31')] });
      expect(moved.news).toBe(
        `npx now resolves ${MEMORY} to 2026.8.31 (was 2025.8.4) while the spec stayed the same: the registry has a new release, and the command does not pin one.`,
      );
      expect(moved.status).toEqual({
        image: IMAGE,
        imageDigests: [A],
        packages: [npx('2026.8.31')],
        codeChanged: { since: '2026-12-01T12:00:00Z', message: moved.news },
      });
      // Said once: the next pass keeps the flag.
      const kept = run(status({ provenance: moved.status }), [pod(A)], {
        packages: [npx('2026.8.31')],
      });
      expect(kept).toEqual({ status: moved.status, news: undefined });
    });

    it('tells the package before serverInfo when both moved', () => {
      const both = run(resolved('2025.8.4'), [pod(A)], {
        packages: [npx('2026.8.31')],
        serverInfo: { name: 'files', version: '1.1.0' },
      });
      expect(both.news).toMatch(/^npx now resolves .* to 2026\.8\.31/);
    });

    it('flags a new version running beside the old one (a replica restarted), not the old one leaving', () => {
      const beside = run(resolved('2025.8.4'), [pod(A)], {
        packages: [npx('2025.8.4'), npx('2026.8.31')],
      });
      expect(beside.news).toMatch(/to 2026\.8\.31 \(was 2025\.8\.4\)/);
      const left = run(status({ provenance: beside.status }), [pod(A)], {
        packages: [npx('2026.8.31')],
      });
      expect(left.news).toBeUndefined();
      expect(left.status?.packages).toEqual([npx('2026.8.31')]);
    });

    it('keeps the last versions while no bridge reports any, and forgets them with the spec', () => {
      expect(run(resolved('2025.8.4'), [pod(A)], { packages: [] }).status?.packages).toEqual([
        npx('2025.8.4'),
      ]);
      expect(run(resolved('2025.8.4'), [pod(A)]).status?.packages).toEqual([npx('2025.8.4')]);
      // A new spec (the user pinned a release): other code is expected, nothing is flagged.
      const pinned = run(resolved('2025.8.4'), [pod(A)], {
        generation: 4,
        packages: [npx('2026.8.31')],
      });
      expect(pinned).toEqual({
        status: { image: IMAGE, imageDigests: [A], packages: [npx('2026.8.31')] },
        news: undefined,
      });
      expect(
        run(resolved('2025.8.4'), [pod(A)], { generation: 4 }).status?.packages,
      ).toBeUndefined();
    });

    it('says nothing of a package seen for the first time', () => {
      const first = run(status(), [pod(A)], { packages: [npx('2026.8.31')] });
      expect(first.news).toBeUndefined();
    });
  });

  it('flags a uvx package that resolved a new release as it does an npx one', () => {
    const uvx = (version: string) => ({
      launcher: 'uvx' as const,
      name: 'mcp-server-time',
      version,
    });
    const before = status({
      provenance: { image: IMAGE, imageDigests: [A], packages: [uvx('2026.8.18')] },
    });
    const moved = run(before, [pod(A)], { packages: [uvx('2026.10.19')] });
    expect(moved.news).toBe(
      'uvx now resolves mcp-server-time to 2026.10.19 (was 2026.8.18) while the spec stayed the same: the package index has a new release, and the command does not pin one.',
    );
    expect(moved.status?.packages).toEqual([uvx('2026.10.19')]);
    // Another launcher's package of the same name is another package.
    const npmTwin = { launcher: 'npx' as const, name: 'mcp-server-time', version: '9.9.9' };
    expect(run(before, [pod(A)], { packages: [uvx('2026.8.18'), npmTwin] }).news).toBeUndefined();
  });
});
