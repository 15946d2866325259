import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approvedTools } from '../../src/tools/approve.ts';
import {
  computeDrift,
  driftStatus,
  isDrifted,
  serverDriftSeverity,
} from '../../src/tools/drift.ts';
import { formatDrift } from '../../src/tools/format.ts';
import {
  FEATURES_MAX,
  RENAME_CANDIDATES_MAX,
  RENAME_SIMILARITY_MIN,
  compareFeatures,
  fieldSimilarity,
  jaccard,
  pairRenames,
  similarity,
  toolFeatures,
} from '../../src/tools/renames.ts';
import type { Tool } from '../../src/mcp/schemas.ts';
import { benignCases } from './findings-corpus/benign.ts';
import { snapshotOf } from './fixtures.ts';

const search: Tool = {
  name: 'search_issues',
  description:
    'Search the issues of a repository by free text, label and state, newest first, and return their numbers, titles and authors.',
  inputSchema: {
    type: 'object',
    properties: {
      repo: { type: 'string', description: 'owner/name' },
      query: { type: 'string', description: 'Words to look for.' },
      state: { type: 'string', enum: ['open', 'closed', 'all'] },
      label: { type: 'string' },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
    },
    required: ['repo', 'query'],
  },
  annotations: { readOnlyHint: true },
};

/** The same tool under a new name, a word of its description edited and one argument added. */
const renamedWithEdits: Tool = {
  ...search,
  name: 'find_issues',
  description:
    'Search the issues of a repository by free text, label and state, oldest first, and return their numbers, titles and authors.',
  inputSchema: {
    ...search.inputSchema,
    properties: {
      ...(search.inputSchema.properties as Record<string, object>),
      author: { type: 'string' },
    },
  },
};

const unrelated: Tool = {
  name: 'create_branch',
  description: 'Create a branch from another branch or a commit.',
  inputSchema: {
    type: 'object',
    properties: { repo: { type: 'string' }, name: { type: 'string' }, from: { type: 'string' } },
    required: ['repo', 'name'],
  },
};

const features = (tool: Tool) => toolFeatures(tool);

// Arbitrary JSON-ish tool definitions: words from a small vocabulary, so that overlaps happen.
const word = fc.constantFrom('read', 'write', 'file', 'path', 'the', 'a', 'list', 'query', 'user');
const text = fc.array(word, { maxLength: 12 }).map((w) => w.join(' '));
const property = fc.record({
  type: fc.constantFrom('string', 'integer', 'boolean'),
  description: text,
});
const tool = fc.record({
  name: fc.constantFrom('alpha', 'beta', 'gamma'),
  description: text,
  inputSchema: fc.record({
    type: fc.constant('object'),
    properties: fc.dictionary(word, property, { maxKeys: 5 }),
  }),
}) as fc.Arbitrary<Tool>;

describe('similarity', () => {
  it('is symmetric, in [0, 1], and 1 for a tool and itself', () => {
    fc.assert(
      fc.property(tool, tool, (a, b) => {
        const x = similarity(features(a), features(b));
        expect(x).toBe(similarity(features(b), features(a)));
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(1);
        expect(similarity(features(a), features(a))).toBe(1);
      }),
    );
  });

  it('ignores the name, key order and the order of plain arrays', () => {
    const reordered: Tool = {
      name: 'other',
      annotations: { readOnlyHint: true },
      inputSchema: {
        required: ['query', 'repo'],
        properties: Object.fromEntries(Object.entries(search.inputSchema.properties!).reverse()),
        type: 'object',
      },
      description: search.description!,
    };
    expect(similarity(features(search), features(reordered))).toBe(1);
  });

  it('jaccard is 1 for identical sets and 0 for disjoint ones', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string()), fc.uniqueArray(fc.string()), (a, b) => {
        expect(jaccard(new Set(a), new Set(a))).toBe(1);
        const disjoint = b.filter((x) => !a.includes(x));
        if (a.length + disjoint.length > 0) {
          expect(jaccard(new Set(a), new Set(disjoint))).toBe(0);
        }
      }),
    );
  });

  it('compareFeatures skips only pairs that cannot reach the threshold', () => {
    fc.assert(
      fc.property(tool, tool, (a, b) => {
        const x = similarity(features(a), features(b));
        const compared = compareFeatures(features(a), features(b));
        if (compared === undefined) expect(x).toBeLessThan(RENAME_SIMILARITY_MIN);
        else expect(compared).toBe(x);
      }),
    );
  });

  it('field digests: the share of fields that agree, a prefix agreeing with the full digest', () => {
    const full = { description: 'sha256:aaaa1111', inputSchema: 'sha256:bbbb2222' };
    expect(fieldSimilarity({ description: 'sha256:aaaa', inputSchema: 'sha256:bbbb' }, full)).toBe(
      1,
    );
    expect(fieldSimilarity({ description: 'sha256:aaaa', inputSchema: 'sha256:cccc' }, full)).toBe(
      0.5,
    );
    expect(fieldSimilarity({ description: 'sha256:aaaa' }, full)).toBe(0.5);
  });

  it('reads a bounded part of a 1 MB description and a schema 1,000 levels deep', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 1000; i++) deep = { type: 'object', properties: { x: deep } };
    const huge = {
      name: 'huge',
      description: Array.from({ length: 200_000 }, (_, i) => `w${i}`).join(' '),
      inputSchema: deep,
    };
    const f = [...toolFeatures(huge)];
    for (const kind of ['w:', 'p:', 'l:']) {
      expect(f.filter((x) => x.startsWith(kind)).length).toBeLessThanOrEqual(FEATURES_MAX);
    }
  });
});

describe('pairRenames', () => {
  it('pairs one to one, each pair at or above the threshold, and never more than the candidates allow', () => {
    const named = fc.uniqueArray(tool, {
      selector: (t) => t.description,
      maxLength: 8,
    });
    fc.assert(
      fc.property(named, named, (removed, added) => {
        const r = removed.map((t, i) => ({ name: `old${i}`, f: features(t) }));
        const a = added.map((t, i) => ({ name: `new${i}`, f: features(t) }));
        const pairs = pairRenames(r, a, (x, y) => compareFeatures(x.f, y.f));
        expect(new Set(pairs.map((p) => p.from)).size).toBe(pairs.length);
        expect(new Set(pairs.map((p) => p.to)).size).toBe(pairs.length);
        expect(pairs.length).toBeLessThanOrEqual(Math.min(r.length, a.length));
        for (const p of pairs) expect(p.similarity).toBeGreaterThanOrEqual(RENAME_SIMILARITY_MIN);
        // The answer does not depend on the order the lists come in.
        const again = pairRenames([...r].reverse(), [...a].reverse(), (x, y) =>
          compareFeatures(x.f, y.f),
        );
        expect(again).toEqual(pairs);
      }),
    );
  });

  it('compares at most RENAME_CANDIDATES_MAX × RENAME_CANDIDATES_MAX pairs, however many tools changed', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({
      name: `t${String(i).padStart(4, '0')}`,
    }));
    let compared = 0;
    pairRenames(many, many, () => {
      compared++;
      return 0;
    });
    expect(compared).toBe(RENAME_CANDIDATES_MAX * RENAME_CANDIDATES_MAX);
  });
});

describe('renames in drift', () => {
  const approved = approvedTools(snapshotOf(search, unrelated), 'definitions');

  it('a renamed tool with edits is one breaking rename, with its similarity and what else changed', () => {
    const drift = computeDrift(snapshotOf(renamedWithEdits, unrelated), approved);
    expect(drift.renamed).toEqual([
      expect.objectContaining({
        from: 'search_issues',
        to: 'find_issues',
        severity: 'breaking',
        fields: ['description', 'inputSchema'],
      }),
    ]);
    const [rename] = drift.renamed;
    expect(rename!.similarity).toBeGreaterThanOrEqual(RENAME_SIMILARITY_MIN);
    expect(rename!.similarity).toBeLessThan(1);
    expect(rename!.texts.map((t) => t.field)).toEqual(['description']);
    expect(rename!.details).toEqual([
      'renamed from search_issues (89% similar): calls to search_issues fail, and find_issues is not approved',
      'description changed',
      'inputSchema /properties/author: free-text property author added',
    ]);
  });

  it('never carries approval over: both names stay unapproved and removed, and the drift is breaking', () => {
    const drift = computeDrift(snapshotOf(renamedWithEdits, unrelated), approved);
    expect(drift.added).toEqual(['find_issues']);
    expect(drift.removed).toEqual(['search_issues']);
    expect(isDrifted(drift)).toBe(true);
    expect(serverDriftSeverity(drift)).toBe('breaking');
  });

  it('status shows one renamed entry, in whole percent, its names in neither added nor removed', () => {
    const drift = computeDrift(snapshotOf({ ...search, name: 'search' }, unrelated), approved);
    expect(driftStatus(drift)).toMatchObject({
      added: [],
      removed: [],
      renamed: [{ from: 'search_issues', to: 'search', similarity: 100, fields: [] }],
    });
  });

  it('diff prints the rename on one line with the similarity, then the text that changed', () => {
    const out = formatDrift(computeDrift(snapshotOf(renamedWithEdits, unrelated), approved));
    expect(out).toMatch(/^Drift: 1 tool renamed\./);
    expect(out).toMatch(
      /RENAMED {2}search_issues → find_issues {2}\d\d% similar, breaking \(description, inputSchema\)/,
    );
    expect(out).not.toMatch(/^ADDED|^REMOVED/m);
    expect(out).toContain(
      '+ Search the issues of a repository by free text, label and state, oldest first',
    );
  });

  it('an unrelated tool replacing a removed one is not a rename', () => {
    const drift = computeDrift(
      snapshotOf(search, {
        ...unrelated,
        name: 'merge_branch',
        description: 'Merge two branches.',
      }),
      approved,
    );
    expect(drift.renamed).toEqual([]);
    expect(drift.added).toEqual(['merge_branch']);
    expect(drift.removed).toEqual(['create_branch']);
  });

  it('with field digests, a tool renamed with every field the same is a rename at 100%', () => {
    const digests = approvedTools(snapshotOf(search, unrelated), 'digests');
    const drift = computeDrift(snapshotOf({ ...search, name: 'lookup' }, unrelated), digests);
    expect(drift.renamed).toEqual([
      expect.objectContaining({
        from: 'search_issues',
        to: 'lookup',
        similarity: 1,
        basis: 'field-digests',
      }),
    ]);
    // A changed description makes it one field in three: not a rename.
    const edited = computeDrift(
      snapshotOf({ ...search, name: 'lookup', description: 'Something else.' }, unrelated),
      digests,
    );
    expect(edited.renamed).toEqual([]);
  });
});

describe('the threshold on real releases', () => {
  it('pairs no two distinct tools of any recorded release', () => {
    const pairs: { release: string; a: string; b: string; similarity: number }[] = [];
    for (const { id, listing } of benignCases()) {
      const tools = listing.tools.map((t) => ({ name: String(t.name), f: toolFeatures(t) }));
      for (const [i, a] of tools.entries()) {
        for (const b of tools.slice(i + 1)) {
          pairs.push({ release: id, a: a.name, b: b.name, similarity: similarity(a.f, b.f) });
        }
      }
    }
    expect(pairs.length).toBeGreaterThan(1000);
    const paired = pairs.filter((p) => p.similarity >= RENAME_SIMILARITY_MIN);
    expect(paired).toEqual([]);
  });
});
