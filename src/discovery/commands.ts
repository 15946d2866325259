/**
 * The approval workflow on the command line, against the current kube context (or
 * --kubeconfig), like kubectl:
 *
 *   mcp-operator approve <name> [-n ns] [--digests] [--apply]
 *       prints the current snapshot as the `spec.tools.approved` block (YAML, for GitOps), or
 *       with --apply patches it into the MCPServer. Definitions by default: they can be
 *       reviewed in a pull request and let drift say how severe a change is; --digests writes
 *       digests with field digests, compact, with which drift still names the changed fields.
 *   mcp-operator diff <name> [-n ns]
 *       shows how the server's tools differ from the approved baseline; exit code 0 for none,
 *       1 for drift (as diff(1)), 2 for trouble.
 *
 * Both read the snapshot from its ConfigMap and check it against status.discovery: what is
 * approved is exactly what discovery last saw.
 */

import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { dump } from 'js-yaml';
import { KIND } from '../api/names.ts';
import type { Command } from '../command.ts';
import { connect, isConflict, type KubeClient } from '../kube/client.ts';
import { loadClientConfig } from '../kube/config.ts';
import { CONFIG_MAP, objectPath } from '../kube/resources.ts';
import { MCP_SERVER } from '../api/v1alpha1/stored.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { ApprovedProvenance } from '../api/v1alpha1/mcpserver.ts';
import { operatorError } from '../errors.ts';
import {
  type ApproveForm,
  approvedBlock,
  approvedMergePatch,
  approvedYaml,
} from '../tools/approve.ts';
import { readBaseline } from './baseline.ts';
import { isDrifted } from '../tools/drift.ts';
import { driftFrom, driftInputs } from './drift-basis.ts';
import { formatFindings } from '../tools/findings.ts';
import { formatDrift } from '../tools/format.ts';
import { type Snapshot, isToolName } from '../tools/snapshot.ts';
import { SNAPSHOT_KEY, readSnapshot } from './snapshot-configmap.ts';
import { visible } from '../tools/text.ts';

/** The field manager of approvals: a person's change to the spec, not the controller's. */
const APPROVE_FIELD_MANAGER = 'mcp-operator-approve';

const COMMON_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `-o yaml|json`, as kubectl spells it, for the commands that print an object. */
const OUTPUT_OPTION = { output: { type: 'string', short: 'o' } } as const;
const OUTPUTS = ['yaml', 'json'] as const;
type Output = (typeof OUTPUTS)[number];

function outputOf(value: string | undefined): Output | undefined {
  if (value === undefined || (OUTPUTS as readonly string[]).includes(value))
    return value as Output | undefined;
  throw new Error(`-o must be one of ${OUTPUTS.join(', ')}, not ${JSON.stringify(value)}`);
}

/** `value` as YAML (the default) or JSON, as `kubectl get -o` prints it. */
function printed(value: unknown, output: Output | undefined): string {
  return output === 'json'
    ? `${JSON.stringify(value, null, 2)}\n`
    : dump(value, { lineWidth: -1, noRefs: true });
}

/**
 * How the user runs these commands, for usage and error lines: kubectl runs the plugin as an
 * executable named kubectl-mcp, and the user typed `kubectl mcp`.
 */
const PROGRAM = basename(process.argv[1] ?? '').startsWith('kubectl-mcp')
  ? 'kubectl mcp'
  : 'mcp-operator';

const TARGET = '[-n namespace] [--context name] [--kubeconfig file]';

const USAGE = {
  approve: `Usage: ${PROGRAM} approve <name> ${TARGET} [--digests] [--apply] [-o yaml|json]

Prints the MCPServer's current snapshot as its spec.tools.approved block (YAML, or JSON with
-o json), with full definitions, or with --digests as digests and field digests, and what ran
(provenance). --apply patches it in instead.
`,
  diff: `Usage: ${PROGRAM} diff <name> ${TARGET}

Shows how the MCPServer's tools differ from spec.tools.approved. Exit code 0: no drift,
1: drift, 2: an error.
`,
  status: `Usage: ${PROGRAM} status <name> ${TARGET} [-o yaml|json]

Shows the MCPServer's conditions, tools, drift and provenance; -o prints its status as is.
`,
};

interface Target {
  client: KubeClient;
  server: StoredMCPServer;
  snapshot: Snapshot;
}

/** Parses with `parse`, or prints the problem and the usage and returns exit code 2. */
function parsed<T>(command: keyof typeof USAGE, parse: () => T): T | number {
  try {
    return parse();
  } catch (error) {
    process.stderr.write(`${PROGRAM} ${command}: ${(error as Error).message}\n\n${USAGE[command]}`);
    return 2;
  }
}

interface CommonValues {
  namespace?: string | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
  help?: boolean | undefined;
}

/** Connects and reads the server and its snapshot; or an exit code for help and usage. */
async function open(
  command: keyof typeof USAGE,
  values: CommonValues,
  positionals: string[],
): Promise<Target | number> {
  const found = await openServer(command, values, positionals);
  if (typeof found === 'number') return found;
  try {
    return { ...found, snapshot: await currentSnapshot(found.client, found.server) };
  } catch (error) {
    found.client.close();
    throw error;
  }
}

/** Connects and reads the server; or an exit code for help and usage. */
async function openServer(
  command: keyof typeof USAGE,
  values: CommonValues,
  positionals: string[],
): Promise<Omit<Target, 'snapshot'> | number> {
  if (values.help === true) {
    process.stdout.write(USAGE[command]);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`${PROGRAM} ${command}: give one MCPServer name\n\n${USAGE[command]}`);
    return 2;
  }
  const config = await loadClientConfig({
    kubeconfig: values.kubeconfig,
    context: values.context,
    env: process.env,
  });
  const client = connect(config);
  const namespace = values.namespace ?? config.namespace ?? 'default';
  try {
    const server = await client.request<StoredMCPServer>({
      method: 'GET',
      path: objectPath(MCP_SERVER, namespace, positionals[0]!),
    });
    return { client, server };
  } catch (error) {
    client.close();
    throw error;
  }
}

/** The snapshot status.discovery points to, refused unless it is the one status describes. */
export async function currentSnapshot(
  client: KubeClient,
  server: StoredMCPServer,
): Promise<Snapshot> {
  const { namespace, name } = server.metadata;
  const discovery = server.status?.discovery;
  const who = `${KIND} ${namespace}/${name}`;
  if (discovery?.snapshotDigest === undefined) {
    throw operatorError('MCPOP_NOT_DISCOVERED', who, 'no discovery has succeeded yet');
  }
  if (discovery.snapshotConfigMap === undefined) {
    throw operatorError(
      'MCPOP_NOT_DISCOVERED',
      who,
      'its last snapshot did not fit in a ConfigMap',
    );
  }
  const configMap = await client.request<{ data?: Record<string, string> }>({
    method: 'GET',
    path: objectPath(CONFIG_MAP, namespace, discovery.snapshotConfigMap),
  });
  const source = `ConfigMap ${namespace}/${discovery.snapshotConfigMap}`;
  const snapshot = readSnapshot(configMap.data?.[SNAPSHOT_KEY] ?? '', source);
  if (snapshot.digest !== discovery.snapshotDigest) {
    const problem = `it holds snapshot ${snapshot.digest} but status.discovery describes ${discovery.snapshotDigest}; discovery may be storing a newer one: run the command again`;
    throw operatorError('MCPOP_SNAPSHOT_INVALID', source, problem);
  }
  return snapshot;
}

/**
 * Runs a command body; an error (an API error, no cluster, an invalid snapshot) is a one-line
 * message and exit code 2, as kubectl reports them: a stack trace would not help the user.
 */
function command(name: keyof typeof USAGE, body: (argv: string[]) => Promise<number>): Command {
  return async (argv) => {
    try {
      return await body(argv);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`${PROGRAM} ${name}: ${message}\n`);
      return 2;
    }
  };
}

export const approveCommand = command('approve', async (argv) => {
  const args = parsed('approve', () =>
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
  const output = parsed('approve', () => outputOf(values.output));
  if (typeof output === 'number') return output;
  const target = await open('approve', values, args.positionals);
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

/** What ran when the snapshot was taken, as status says: recorded with the approval. */
function approvedProvenance(server: StoredMCPServer): ApprovedProvenance | undefined {
  const digests = server.status?.provenance?.imageDigests;
  const packages = server.status?.provenance?.packages;
  const info = server.status?.discovery?.serverInfo;
  const provenance: ApprovedProvenance = {
    ...(digests?.length ? { imageDigests: digests } : {}),
    ...(packages?.length ? { packages } : {}),
    ...(info === undefined ? {} : { serverInfo: info }),
  };
  return Object.keys(provenance).length === 0 ? undefined : provenance;
}

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

export const diffCommand = command('diff', async (argv) => {
  const args = parsed('diff', () =>
    parseArgs({ args: argv, options: COMMON_OPTIONS, allowPositionals: true }),
  );
  if (typeof args === 'number') return args;
  const target = await open('diff', args.values, args.positionals);
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
      `${namespace}/${name}: ${snapshot.tools.length} tools listed (snapshot ${snapshot.digest}).\n${note}${formatDrift(drift)}${formatFindings(snapshot.findings)}`,
    );
    return isDrifted(drift) ? 1 : 0;
  } finally {
    client.close();
  }
});

export const statusCommand = command('status', async (argv) => {
  const args = parsed('status', () =>
    parseArgs({
      args: argv,
      options: { ...COMMON_OPTIONS, ...OUTPUT_OPTION },
      allowPositionals: true,
    }),
  );
  if (typeof args === 'number') return args;
  const output = parsed('status', () => outputOf(args.values.output));
  if (typeof output === 'number') return output;
  const found = await openServer('status', args.values, args.positionals);
  if (typeof found === 'number') return found;
  found.client.close();
  const { server } = found;
  process.stdout.write(
    output === undefined ? statusText(server) : printed(server.status ?? {}, output),
  );
  return 0;
});

/** What `kubectl describe` would put first: conditions, tools, drift, provenance. */
function statusText(server: StoredMCPServer): string {
  const { namespace, name } = server.metadata;
  const status = server.status ?? {};
  const rows = (status.conditions ?? []).map(
    (c) => `  ${c.type.padEnd(10)}  ${c.status.padEnd(7)}  ${c.reason}: ${c.message}`,
  );
  const discovery = status.discovery;
  const drift = status.drift;
  const provenance = status.provenance;
  const lines = [
    `${namespace}/${name}`,
    ...rows,
    ...(discovery?.toolCount === undefined
      ? []
      : [`  tools: ${discovery.toolCount} (snapshot ${discovery.snapshotDigest ?? 'unknown'})`]),
    ...(drift === undefined
      ? []
      : [
          `  drift: ${drift.added?.length ?? 0} added, ${drift.removed?.length ?? 0} removed, ${drift.changed?.length ?? 0} changed (\`${PROGRAM} diff ${name} -n ${namespace}\` shows them)`,
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
  ];
  return `${lines.map((line) => visible(line)).join('\n')}\n`;
}
