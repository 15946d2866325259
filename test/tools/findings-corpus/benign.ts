/**
 * The benign half of the findings corpus: what real MCP server releases list, as the discovery
 * corpus (test/discovery/corpus) and capture-releases.ts (./releases) recorded them. No finding at or above the default level may
 * come from any of them.
 */

import { readFileSync, readdirSync } from 'node:fs';
import type { Listing } from '../../../src/tools/text-findings.ts';

export interface BenignCase {
  id: string;
  listing: Listing;
}

/** The releases discovery runs, and more recorded for this corpus alone (capture-releases.ts). */
const DIRS = [
  new URL('../../discovery/corpus/', import.meta.url),
  new URL('./releases/', import.meta.url),
];

interface Recording {
  initialize: { instructions?: string };
  lists: Record<string, Record<string, unknown>[] | undefined>;
}

/** Every item of every page of a list. */
function items(recording: Recording, method: string, key: string): Record<string, unknown>[] {
  return (recording.lists[method] ?? []).flatMap((page) =>
    Array.isArray(page[key]) ? (page[key] as Record<string, unknown>[]) : [],
  );
}

export function benignCases(): BenignCase[] {
  return DIRS.flatMap((dir) =>
    readdirSync(dir)
      .filter((file) => file.endsWith('.json'))
      .sort()
      .map((file) => {
        const recording = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as Recording;
        return {
          id: file.replace(/\.json$/, ''),
          listing: {
            instructions: recording.initialize.instructions,
            tools: items(recording, 'tools/list', 'tools'),
            catalog: {
              prompts: items(recording, 'prompts/list', 'prompts'),
              resources: items(recording, 'resources/list', 'resources'),
              resourceTemplates: items(recording, 'resources/templates/list', 'resourceTemplates'),
            },
          },
        };
      }),
  );
}
