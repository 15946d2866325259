/**
 * `mcp-operator diff <name> [-n ns]`: how the server's tools differ from the approved
 * baseline; exit code 0 for none, 1 for drift (as diff(1)), 2 for trouble.
 */

import { parseArgs } from 'node:util';
import { readBaseline } from '../discovery/baseline.ts';
import { driftFrom, driftInputs } from '../discovery/drift-basis.ts';
import { isDrifted } from '../tools/drift.ts';
import { formatFindings } from '../tools/findings.ts';
import { formatTextFindings } from '../tools/text-findings.ts';
import { formatDrift } from '../tools/format.ts';
import { COMMON_OPTIONS, PROGRAM, TARGET, open, parsed, reviewCommand } from './target.ts';

const USAGE = {
  name: 'diff',
  text: `Usage: ${PROGRAM} diff <name> ${TARGET}

Shows how the MCPServer's tools differ from spec.tools.approved. Exit code 0: no drift,
1: drift, 2: an error.
`,
};

export const diffCommand = reviewCommand(USAGE, async (argv) => {
  const args = parsed(USAGE, () =>
    parseArgs({ args: argv, options: COMMON_OPTIONS, allowPositionals: true }),
  );
  if (typeof args === 'number') return args;
  const target = await open(USAGE, args.values, args.positionals);
  if (typeof target === 'number') return target;
  const { client, server, snapshot } = target;
  try {
    const baseline = await readBaseline(client, server);
    if (baseline.kind === 'invalid') {
      process.stderr.write(`${PROGRAM} diff: ${baseline.message}\n`);
      return 2;
    }
    const { namespace, name } = server.metadata;
    const inputs = driftInputs(baseline, server);
    // Without a baseline, diff shows every listed tool as new (status reports no drift then).
    const drift = driftFrom(snapshot, { ...inputs, approved: inputs.approved ?? [] });
    const note =
      baseline.kind === 'none'
        ? `${namespace}/${name} has no spec.tools.approved: every listed tool is new.\n`
        : '';
    process.stdout.write(
      `${namespace}/${name}: ${snapshot.tools.length} tools listed (snapshot ${snapshot.digest}).\n${note}${formatDrift(drift)}${formatFindings(snapshot.findings)}${formatTextFindings(snapshot.textFindings)}`,
    );
    return isDrifted(drift) ? 1 : 0;
  } finally {
    client.close();
  }
});
