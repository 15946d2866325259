/**
 * Precision and recall of the model-facing text checks (src/tools/text-findings.ts) on the
 * labelled corpus of test/tools/findings-corpus: real releases as the benign half, written
 * attacks and their evasions as the poisoned half. The goal (issue 30): recall ≥ 0.95, and no
 * finding at or above the default level on any benign list.
 *
 *   npm run bench:findings
 */

import { score } from '../test/tools/findings-corpus/score.ts';

const result = score();
console.log(
  `poisoned listings: ${result.poisoned}, caught at or above the default level: ${result.caught}`,
);
console.log(
  `benign listings (real releases): ${result.benign}, false alarms: ${result.falseAlarms.length}`,
);
console.log(
  `benign findings below the default level (shown, not alarming): ${result.benignBelowLevel}`,
);
console.log(`recall ${result.recall.toFixed(3)}  precision ${result.precision.toFixed(3)}`);
for (const id of result.missed) console.log(`MISSED  ${id}`);
for (const { id, findings } of result.falseAlarms) {
  for (const f of findings)
    console.log(`FALSE ALARM  ${id}  ${f.level} ${f.code}  ${f.item} ${f.field}: ${f.reason}`);
}
process.exitCode = result.recall >= 0.95 && result.falseAlarms.length === 0 ? 0 : 1;
