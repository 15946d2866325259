/**
 * `mcp-operator approve <name> [-n ns] [--digests] [--apply]`: prints the current snapshot as
 * the `spec.tools.approved` block (YAML, for GitOps), or with --apply patches it into the
 * MCPServer. Definitions by default: they can be reviewed in a pull request and let drift say
 * how severe a change is; --digests writes digests with field digests, compact, with which
 * drift still names the changed fields.
 *
 * It reads the snapshot from its ConfigMap and checks it against status.discovery: what is
 * approved is exactly what discovery last saw.
 */

import { parseArgs } from 'node:util';
import { KIND } from '../api/names.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { MCP_SERVER } from '../api/v1alpha1/stored.ts';
import { approvedProvenance } from '../approval/index.ts';
import { operatorError } from '../errors.ts';
import { isConflict } from '../kube/client.ts';
import { objectPath } from '../kube/resources.ts';
import {
  type ApproveForm,
  approvedBlock,
  approvedMergePatch,
  approvedYaml,
} from '../tools/approve.ts';
import { type Snapshot, isToolName } from '../tools/snapshot.ts';
import {
  COMMON_OPTIONS,
  OUTPUT_OPTION,
  PROGRAM,
  TARGET,
  type Target,
  open,
  outputOf,
  parsed,
  printed,
  reviewCommand,
} from './target.ts';

/** The field manager of approvals: a person's change to the spec, not the controller's. */
const APPROVE_FIELD_MANAGER = 'mcp-operator-approve';

const USAGE = {
  name: 'approve',
  text: `Usage: ${PROGRAM} approve <name> ${TARGET} [--digests] [--apply] [-o yaml|json]

Prints the MCPServer's current snapshot as its spec.tools.approved block (YAML, or JSON with
-o json), with full definitions, or with --digests as digests and field digests, and what ran
(provenance). --apply patches it in instead.
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
      },
      allowPositionals: true,
    }),
  );
  if (typeof args === 'number') return args;
  const { values } = args;
  const output = parsed(USAGE, () => outputOf(values.output));
  if (typeof output === 'number') return output;
  const target = await open(USAGE, values, args.positionals);
  if (typeof target === 'number') return target;
  const { client, server, snapshot } = target;
  const form: ApproveForm = values.digests === true ? 'digests' : 'definitions';
  try {
    if (values.apply === true) {
      await applyApproval(target, form);
      const { namespace, name } = server.metadata;
      const approved = snapshot.tools.length - invalidNames(snapshot);
      process.stdout.write(
        `Approved the ${approved} tools of ${namespace}/${name} (snapshot ${snapshot.digest})${leftOut(snapshot, '; ')}.\n`,
      );
    } else {
      const extras = { catalog: snapshot.catalog, provenance: approvedProvenance(server) };
      process.stdout.write(
        output === 'json'
          ? printed(approvedBlock(snapshot.tools, form, extras), output)
          : approvedYaml(snapshot.tools, form, heading(server, snapshot), extras),
      );
    }
    return 0;
  } finally {
    client.close();
  }
});

/**
 * A merge patch of spec.tools.approved, on the condition that the MCPServer is still the one
 * read (resourceVersion): the approval is of the snapshot that was checked, nothing newer.
 */
async function applyApproval({ client, server, snapshot }: Target, form: ApproveForm) {
  const { namespace, name, resourceVersion } = server.metadata;
  const patch = {
    ...approvedMergePatch(snapshot.tools, form, {
      catalog: snapshot.catalog,
      provenance: approvedProvenance(server),
    }),
    metadata: { resourceVersion },
  };
  try {
    await client.request({
      method: 'PATCH',
      patchType: 'merge',
      path: objectPath(MCP_SERVER, namespace, name),
      query: { fieldManager: APPROVE_FIELD_MANAGER },
      body: patch,
    });
  } catch (error) {
    if (!isConflict(error)) throw error;
    throw operatorError(
      'MCPOP_SNAPSHOT_INVALID',
      `${KIND} ${namespace}/${name}`,
      'it changed while approving (a new discovery, or an edit); run the command again',
    );
  }
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
