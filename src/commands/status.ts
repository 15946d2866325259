/**
 * `mcp-operator status <name> [-n ns] [-o yaml|json]`: what `kubectl describe` would put
 * first (conditions, tools, the last approval, drift, provenance) with the next command to run; -o prints the
 * status as is.
 */

import { parseArgs } from 'node:util';
import { registryProvenance } from '../api/registry-provenance.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { approvalHistory } from '../approval/index.ts';
import { visible } from '../tools/text.ts';
import {
  COMMON_OPTIONS,
  OUTPUT_OPTION,
  PROGRAM,
  TARGET,
  openServer,
  outputOf,
  parsed,
  printed,
  reviewCommand,
} from './target.ts';

const USAGE = {
  name: 'status',
  text: `Usage: ${PROGRAM} status <name> ${TARGET} [-o yaml|json]

Shows the MCPServer's conditions, tools, drift and provenance; -o prints its status as is.
`,
};

export const statusCommand = reviewCommand(USAGE, async (argv) => {
  const args = parsed(USAGE, () =>
    parseArgs({
      args: argv,
      options: { ...COMMON_OPTIONS, ...OUTPUT_OPTION },
      allowPositionals: true,
    }),
  );
  if (typeof args === 'number') return args;
  const output = parsed(USAGE, () => outputOf(args.values.output));
  if (typeof output === 'number') return output;
  const found = await openServer(USAGE, args.values, args.positionals);
  if (typeof found === 'number') return found;
  found.client.close();
  const { server } = found;
  process.stdout.write(
    output === undefined ? statusText(server) : printed(server.status ?? {}, output),
  );
  return 0;
});

/** The latest approval, as spec.tools.approved.history records it (the console shows them all). */
function lastApproval(server: StoredMCPServer): string[] {
  const [last] = approvalHistory(server);
  if (last === undefined) return [];
  const changes = (last.changes?.length ?? 0) + (last.omitted ?? 0);
  return [
    `  approved by ${last.approvedBy} at ${last.approvedAt}: ${changes} ${changes === 1 ? 'change' : 'changes'}, snapshot ${last.snapshotDigest}${last.note === undefined ? '' : `; note: ${last.note}`}`,
    // The link a rename approval keeps: which approved tool the new name stands in for.
    ...(last.changes ?? [])
      .filter((c) => c.change === 'renamed')
      .map(
        (c) =>
          `    approved as renamed: ${c.from ?? '?'} → ${c.name}${c.similarity === undefined ? '' : ` (${c.similarity}% similar)`}`,
      ),
  ];
}

/** What `kubectl describe` would put first: conditions, tools, drift, provenance, approval. */
function statusText(server: StoredMCPServer): string {
  const { namespace, name } = server.metadata;
  const status = server.status ?? {};
  const rows = (status.conditions ?? []).map(
    (c) => `  ${c.type.padEnd(10)}  ${c.status.padEnd(7)}  ${c.reason}: ${c.message}`,
  );
  const discovery = status.discovery;
  const drift = status.drift;
  const provenance = status.provenance;
  const imported = registryProvenance(server.metadata.annotations);
  const lines = [
    `${namespace}/${name}`,
    ...rows,
    ...(discovery?.toolCount === undefined
      ? []
      : [`  tools: ${discovery.toolCount} (snapshot ${discovery.snapshotDigest ?? 'unknown'})`]),
    ...lastApproval(server),
    ...(drift === undefined
      ? []
      : [
          `  drift: ${drift.added?.length ?? 0} added, ${drift.removed?.length ?? 0} removed, ${drift.changed?.length ?? 0} changed, ${drift.renamed?.length ?? 0} renamed (\`${PROGRAM} diff ${name} -n ${namespace}\` shows them)`,
          // A rename is the rug pull: named here, so that it is not read as one tool gone and one new.
          ...(drift.renamed ?? []).map(
            (r) =>
              `  renamed: ${r.from} → ${r.to} (${r.similarity}% similar, ${r.severity}; not approved: \`${PROGRAM} approve ${name} -n ${namespace} --apply --tool ${r.to}\`)`,
          ),
        ]),
    ...(provenance?.imageDigests === undefined
      ? []
      : [`  image: ${provenance.image ?? ''} = ${provenance.imageDigests.join(', ')}`]),
    ...(provenance?.packages ?? []).map((p) => `  package: ${p.launcher} ${p.name} ${p.version}`),
    ...(provenance?.codeChanged === undefined
      ? []
      : [
          `  code changed since ${provenance.codeChanged.since}: ${provenance.codeChanged.message}`,
        ]),
    ...(imported === undefined
      ? []
      : [
          `  imported: ${imported.name} ${imported.version}${imported.package === undefined ? '' : ` (${imported.package})`} from ${imported.registry ?? 'a server.json file or URL'}`,
        ]),
  ];
  return `${lines.map((line) => visible(line)).join('\n')}\n`;
}
