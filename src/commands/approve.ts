/**
 * `mcp-operator approve <name> [-n ns] [--digests] [--apply] [--tool NAME]… [--yes] [--dry-run]`:
 * prints the current snapshot as the `spec.tools.approved` block (YAML, for GitOps), or with
 * --apply writes it into the MCPServer. Definitions by default: they can be reviewed in a pull
 * request and let drift say how severe a change is; --digests writes digests with field
 * digests, compact, with which drift still names the changed fields.
 *
 * Before it writes, it prints what changes (src/approval plans it): each entry added, changed
 * or removed, its severity, the text the model reads and the findings. An entry approved
 * before is replaced only with --yes or a `y` at the prompt; new entries need neither.
 * What is approved is exactly what discovery last saw, onto the object that was read.
 */

import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import {
  type ApprovalPlan,
  approvedProvenance,
  approverName,
  planApproval,
  writeApproval,
} from '../approval/index.ts';
import { formatPlan } from '../approval/format.ts';
import { readBaseline } from '../discovery/baseline.ts';
import { operatorError } from '../errors.ts';
import { type ApproveForm, approvedBlock, approvedYaml } from '../tools/approve.ts';
import { type Snapshot, isToolName } from '../tools/snapshot.ts';
import {
  COMMON_OPTIONS,
  OUTPUT_OPTION,
  PROGRAM,
  TARGET,
  open,
  outputOf,
  parsed,
  printed,
  reviewCommand,
} from './target.ts';

const USAGE = {
  name: 'approve',
  text: `Usage: ${PROGRAM} approve <name> ${TARGET} [--digests] [-o yaml|json]
       ${PROGRAM} approve <name> ${TARGET} --apply|--dry-run [--tool NAME]... [--yes] [--note TEXT] [--digests]

Prints the MCPServer's current snapshot as its spec.tools.approved block (YAML, or JSON with
-o json), with full definitions, or with --digests as digests and field digests, and what ran
(provenance).

  --apply       write it into the MCPServer; first prints each entry added, changed or
                removed, with its severity, the text the model reads and the findings
  --yes, -y     approve entries that change or remove what was approved before (without it,
                a terminal asks; anything else refuses and writes nothing)
  --tool NAME   approve only this tool (repeatable); the rest of the baseline stays
  --dry-run     print what --apply would change and write, and write nothing
  --note TEXT   why, kept in the approval record (spec.tools.approved.history)
`,
};

export const approveCommand = reviewCommand(USAGE, async (argv) => {
  const args = parsed(USAGE, () =>
    parseArgs({
      args: argv,
      options: {
        ...COMMON_OPTIONS,
        ...OUTPUT_OPTION,
        digests: { type: 'boolean' },
        apply: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        yes: { type: 'boolean', short: 'y' },
        tool: { type: 'string', multiple: true },
        note: { type: 'string' },
      },
      allowPositionals: true,
    }),
  );
  if (typeof args === 'number') return args;
  const { values } = args;
  const output = parsed(USAGE, () => outputOf(values.output));
  if (typeof output === 'number') return output;
  const writes = values.apply === true || values['dry-run'] === true;
  const stray = (['tool', 'yes', 'note'] as const).find((flag) => values[flag] !== undefined);
  if (!writes && stray !== undefined) {
    process.stderr.write(
      `${PROGRAM} approve: --${stray} goes with --apply or --dry-run\n\n${USAGE.text}`,
    );
    return 2;
  }
  const target = await open(USAGE, values, args.positionals);
  if (typeof target === 'number') return target;
  const { client, server, snapshot } = target;
  const form: ApproveForm = values.digests === true ? 'digests' : 'definitions';
  try {
    if (!writes) {
      const extras = { catalog: snapshot.catalog, provenance: approvedProvenance(server) };
      process.stdout.write(
        output === 'json'
          ? printed(approvedBlock(snapshot.tools, form, extras), output)
          : approvedYaml(snapshot.tools, form, heading(server, snapshot), extras),
      );
      return 0;
    }
    const plan = planApproval(
      { server, snapshot, baseline: await readBaseline(client, server) },
      {
        form,
        tools: values.tool,
        note: values.note,
        approvedBy: await approverName(client),
        at: new Date(),
      },
    );
    process.stdout.write(formatPlan(plan));
    if (!plan.changesSpec) {
      process.stdout.write('Nothing to write: spec.tools.approved is already this.\n');
      return 0;
    }
    if (values['dry-run'] === true) {
      // Sent with dryRun=All as well: the API server validates it as it would the write.
      await writeApproval(client, plan, { dryRun: true });
      process.stdout.write(
        `Would write spec.tools.approved (nothing was written):\n${printed(plan.approved, output)}`,
      );
      return 0;
    }
    if (plan.needsConfirmation && values.yes !== true && !(await confirmed())) {
      const replaced = plan.entries.filter((entry) => entry.change !== 'added').length;
      throw operatorError(
        'MCPOP_APPROVAL_UNCONFIRMED',
        `${replaced} of these ${replaced === 1 ? 'entry changes' : 'entries change'} or ${replaced === 1 ? 'removes' : 'remove'} what was approved before`,
      );
    }
    await writeApproval(client, plan);
    process.stdout.write(`${approvedLine(plan, snapshot)}\n`);
    return 0;
  } finally {
    client.close();
  }
});

/** Asks at a terminal; anywhere else (a script, CI) there is no one to ask. */
async function confirmed(): Promise<boolean> {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) return false;
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question('Approve the changed and removed entries above? [y/N] ');
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}

function approvedLine(plan: ApprovalPlan, snapshot: Snapshot): string {
  const what =
    plan.entries.length === 0
      ? 'the baseline'
      : `${plan.entries.length} ${plan.entries.length === 1 ? 'entry' : 'entries'}`;
  const tools = snapshot.tools.length - invalidNames(snapshot);
  return `Approved ${what} of ${plan.namespace}/${plan.name} (snapshot ${plan.snapshotDigest}; ${tools} tools listed)${leftOut(snapshot, '; ')}.`;
}

function heading(server: StoredMCPServer, snapshot: Snapshot): string {
  const { namespace, name } = server.metadata;
  const info = snapshot.serverInfo;
  const found = server.status?.discovery?.lastSuccessTime;
  return [
    `${PROGRAM} approve ${name} -n ${namespace}: ${snapshot.tools.length} tools${leftOut(snapshot, ', ')}`,
    `snapshot ${snapshot.digest}${found === undefined ? '' : `, discovered by ${found}`}`,
    ...(info === undefined ? [] : [`server ${info.name} ${info.version}`]),
  ].join('\n');
}

function invalidNames(snapshot: Snapshot): number {
  return snapshot.tools.filter((tool) => !isToolName(tool.name)).length;
}

/** What approving leaves out (approvedTools), with `separator` before it, or nothing. */
function leftOut(snapshot: Snapshot, separator: string): string {
  const count = invalidNames(snapshot);
  return count === 0
    ? ''
    : `${separator}left out ${count} whose names break MCP's tool-name rules (see ${PROGRAM} diff)`;
}
