/**
 * Discovery against what real, published MCP servers list (test/discovery/corpus, recorded
 * from npm releases by capture.ts): every release is discovered in full, conformant or not;
 * a release that breaks the schema is recorded with findings; and a rollback to it is seen as
 * the breaking drift it is.
 */

import { describe, expect, it } from 'vitest';
import { approvedTools } from '../../src/tools/approve.ts';
import { computeDrift } from '../../src/tools/drift.ts';
import { formatDrift } from '../../src/tools/format.ts';
import { type Snapshot, takeSnapshot } from '../../src/tools/snapshot.ts';
import { discover } from '../../src/discovery/client.ts';
import { CORPUS } from './corpus/packages.ts';
import { recorded, recording, replay } from './corpus/replay.ts';

const file = (spec: string) => spec.split('/')[1]!;

async function snapshotOf(name: string): Promise<Snapshot> {
  const server = await replay(recording(name));
  return takeSnapshot(await discover({ url: server.url }));
}

describe('every release of the corpus', () => {
  it.each(CORPUS.map((server) => file(server.spec)))(
    '%s is discovered with every tool it lists, as listed',
    async (name) => {
      const listed = recorded(recording(name), 'tools/list', 'tools');
      const snapshot = await snapshotOf(name);
      expect(snapshot.tools.map((tool) => tool.definition)).toEqual(
        [...listed].sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : 1)),
      );
    },
  );
});

describe('prompts, resources and resource templates of the corpus', () => {
  it.each(CORPUS.map((server) => file(server.spec)))(
    '%s: each declared list is recorded in full, every page',
    async (name) => {
      const from = recording(name);
      const snapshot = await snapshotOf(name);
      const lists = [
        ['prompts', 'prompts/list', 'name'],
        ['resources', 'resources/list', 'uri'],
        ['resourceTemplates', 'resources/templates/list', 'uriTemplate'],
      ] as const;
      for (const [kind, method, key] of lists) {
        const listed = from.lists[method] === undefined ? undefined : recorded(from, method, kind);
        const keys = snapshot.catalog[kind]?.map((item) => item.key);
        expect(keys, `${name} ${kind}`).toEqual(listed?.map((item) => item[key] as string).sort());
      }
    },
  );
});

describe('server-filesystem 2025.8.21, whose fresh install resolves zod 4', () => {
  it('is discovered, each tool without type: object a finding', async () => {
    const snapshot = await snapshotOf('server-filesystem@2025.8.21');
    expect(snapshot.tools).toHaveLength(14);
    const untyped = snapshot.tools
      .filter((tool) => (tool.definition.inputSchema as { type?: string }).type !== 'object')
      .map((tool) => tool.name);
    expect(untyped).toHaveLength(13);
    expect(snapshot.findings).toEqual(
      untyped
        .map((item) => ({ item, problem: 'inputSchema lacks type: object' }))
        .sort(
          (a, b) =>
            // findings come in list order; the recording lists in this order too
            untypedOrder(a.item) - untypedOrder(b.item),
        ),
    );
  });

  it('rolled back to from an approved 2025.11.25, is breaking drift in every emptied schema', async () => {
    const approved = approvedTools(
      (await snapshotOf('server-filesystem@2025.11.25')).tools,
      'definitions',
    );
    const rolledBack = await snapshotOf('server-filesystem@2025.8.21');
    const drift = computeDrift(rolledBack.tools, approved);
    expect(drift.added).toEqual([]);
    expect(drift.removed).toEqual([]);
    expect(drift.changed.map((c) => c.severity)).toEqual(Array(14).fill('breaking'));
    const readFile = drift.changed.find((c) => c.name === 'read_text_file');
    // A schema without `type` accepts anything (JSON Schema 2020-12 §6.1.1): the type widened,
    // and what breaks callers is the lost properties.
    expect(readFile?.details).toEqual(
      expect.arrayContaining([
        'inputSchema /type: type "object" → any',
        'inputSchema /properties/path: property path removed',
      ]),
    );
    expect(formatDrift(drift)).toMatch(/^Drift: 14 tools changed/);
  });
});

describe('the other releases', () => {
  it.each(
    CORPUS.map((server) => file(server.spec)).filter(
      (name) => name !== 'server-filesystem@2025.8.21',
    ),
  )('%s has no findings', async (name) => {
    expect((await snapshotOf(name)).findings).toEqual([]);
  });
});

const ORDER = recorded(recording('server-filesystem@2025.8.21'), 'tools/list', 'tools').map(
  (tool) => tool.name as string,
);
function untypedOrder(name: string): number {
  return ORDER.indexOf(name);
}
