/**
 * How the findings checks do on the labelled corpus: a poisoned listing counts as caught when
 * a finding of its code is at or above the default level, a benign one as a false alarm when
 * any finding is. Precision over listings: caught / (caught + false alarms).
 */

import {
  DEFAULT_FINDING_LEVEL,
  type TextFinding,
  judgeListing,
  levelAtLeast,
} from '../../../src/tools/text-findings.ts';
import { benignCases } from './benign.ts';
import { POISONED } from './poisoned.ts';

export interface Score {
  poisoned: number;
  caught: number;
  missed: string[];
  benign: number;
  falseAlarms: { id: string; findings: TextFinding[] }[];
  /** Findings below the default level on benign lists: shown, never alarming. */
  benignBelowLevel: number;
  recall: number;
  precision: number;
}

const alarming = (findings: readonly TextFinding[]) =>
  findings.filter((f) => levelAtLeast(f.level, DEFAULT_FINDING_LEVEL));

export function score(): Score {
  const missed: string[] = [];
  for (const poisoned of POISONED) {
    const findings = judgeListing(poisoned.listing, new Map(Object.entries(poisoned.others ?? {})));
    if (!alarming(findings).some((f) => f.code === poisoned.code)) missed.push(poisoned.id);
  }
  const falseAlarms: Score['falseAlarms'] = [];
  let benignBelowLevel = 0;
  const benign = benignCases();
  for (const { id, listing } of benign) {
    const findings = judgeListing(listing);
    const loud = alarming(findings);
    benignBelowLevel += findings.length - loud.length;
    if (loud.length > 0) falseAlarms.push({ id, findings: loud });
  }
  const caught = POISONED.length - missed.length;
  return {
    poisoned: POISONED.length,
    caught,
    missed,
    benign: benign.length,
    falseAlarms,
    benignBelowLevel,
    recall: caught / POISONED.length,
    precision: caught / Math.max(1, caught + falseAlarms.length),
  };
}
