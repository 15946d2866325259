/**
 * Which operator images the image set-up removes: every edit of the sources tags a new one, and
 * another checkout on the same engine may be testing its own for a while.
 */
import { describe, expect, it } from 'vitest';
import { staleOperatorImages } from './images.ts';

const NOW = Date.parse('2026-12-02T15:00:00Z');
const CURRENT = 'mcp-operator:0.1.0-5cb445e3a8ce';

const listing = (rows: [string, string][]) => rows.map((row) => row.join('|')).join('\n');

describe('staleOperatorImages', () => {
  it('removes other sources of the same version built more than a day ago, and nothing else', () => {
    const listed = listing([
      [CURRENT, '2026-11-20 09:00:00 +0000 UTC'],
      ['mcp-operator:0.1.0-48766eca4c09', '2026-12-01 14:11:04 +0000 UTC'],
      ['mcp-operator:0.1.0-d57bd7537f55', '2026-12-02 14:00:00 +0000 UTC'],
      ['mcp-operator:0.1.0', '2026-11-01 10:00:00 +0000 UTC'],
      ['mcp-operator:0.2.0-aaaaaaaaaaaa', '2026-11-01 10:00:00 +0000 UTC'],
    ]);
    expect(staleOperatorImages(`${listed}\n`, CURRENT, NOW)).toEqual([
      'mcp-operator:0.1.0-48766eca4c09',
    ]);
  });

  it('keeps the image in use however old it is', () => {
    expect(
      staleOperatorImages(listing([[CURRENT, '2020-01-01 00:00:00 +0000 UTC']]), CURRENT, NOW),
    ).toEqual([]);
  });
});
