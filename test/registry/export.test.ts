/**
 * The export document: each item's approval state from the drift against the baseline, and
 * the document valid against the schema docs/export.schema.json publishes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { exportDocument, exportServer, type ServerFacts } from '../../src/registry/export.ts';
import { computeDrift } from '../../src/tools/drift.ts';
import { takeSnapshot } from '../../src/tools/snapshot.ts';

const schema = JSON.parse(
  await readFile(join(import.meta.dirname, '../../docs/export.schema.json'), 'utf8'),
) as object;
const validate = new Ajv2020({ strict: false }).compile(schema);

const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: 'object' as const },
});

const snapshot = takeSnapshot({
  protocolVersion: '2025-11-25',
  serverInfo: { name: 'files', version: '2026.8.31' },
  capabilities: { tools: {}, prompts: {} },
  instructions: undefined,
  tools: [
    tool('read', 'Reads a file'),
    tool('write', 'Writes a file, now also deletes'),
    tool('new', 'New'),
  ],
  catalog: { prompts: [{ name: 'summarize', description: 'Summarize' }] },
});

function facts(over: Partial<ServerFacts>): ServerFacts {
  return {
    namespace: 'apps',
    name: 'files',
    provenance: {
      registry: 'http://127.0.0.1:1',
      name: 'io.example/files',
      version: '2026.8.31',
      package: 'npm:files@2026.8.31',
    },
    driftPolicy: 'Warn',
    baseline: 'approved',
    discoveredAt: '2026-12-03T10:00:00Z',
    snapshot,
    drift: undefined,
    approvedKinds: [],
    ...over,
  };
}

describe('exportServer', () => {
  it('says of each tool whether it is approved, changed or new, and what was approved and is gone', () => {
    const before = takeSnapshot({
      protocolVersion: '2025-11-25',
      serverInfo: undefined,
      capabilities: { tools: {} },
      instructions: undefined,
      tools: [tool('read', 'Reads a file'), tool('write', 'Writes a file'), tool('gone', 'Gone')],
    });
    const baseline = before.tools.map((t) => ({
      name: t.name,
      digest: t.digest,
      fields: t.fields,
    }));
    const drift = computeDrift(snapshot.tools, baseline, [], {
      listed: snapshot.catalog,
      approved: undefined,
    });
    const server = exportServer(facts({ drift }));
    expect(server.tools.map((t) => [t.name, t.approval])).toEqual([
      ['new', 'unapproved'],
      ['read', 'approved'],
      ['write', 'changed'],
    ]);
    expect(server.tools.find((t) => t.name === 'write')?.change).toEqual({
      fields: ['description'],
      severity: 'description-only',
    });
    expect(server.removed.tools).toEqual(['gone']);
    expect(server.prompts).toEqual([
      expect.objectContaining({ name: 'summarize', approval: 'no-baseline' }),
    ]);
    expect(server.registry).toEqual({
      url: 'http://127.0.0.1:1',
      name: 'io.example/files',
      version: '2026.8.31',
      package: 'npm:files@2026.8.31',
    });
    const document = exportDocument([server]);
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
  });

  it('marks every item no-baseline when nothing is approved, and an undiscovered server as such', () => {
    const drift = computeDrift(snapshot.tools, [], []);
    const server = exportServer(facts({ baseline: 'none', drift }));
    expect(new Set(server.tools.map((t) => t.approval))).toEqual(new Set(['no-baseline']));
    const undiscovered = exportServer(
      facts({ snapshot: undefined, drift: undefined, provenance: undefined }),
    );
    expect(undiscovered).toMatchObject({ discovered: false, tools: [], prompts: [] });
    expect(undiscovered.registry).toBeUndefined();
    expect(validate(exportDocument([undiscovered, server]))).toBe(true);
  });

  it('the schema refuses a document that breaks it', () => {
    const document = exportDocument([
      exportServer(facts({ drift: computeDrift(snapshot.tools, [], []) })),
    ]);
    (document.servers[0]!.tools[0] as { approval: string }).approval = 'maybe';
    expect(validate(document)).toBe(false);
  });
});
