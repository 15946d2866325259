/**
 * What the review commands (approve, diff, status) share: how the user runs them, their common
 * flags, connecting like kubectl (the current kube context, or --kubeconfig and --context),
 * reading the MCPServer and the snapshot its status points to, and printing an object.
 */

import { basename } from 'node:path';
import { dump } from 'js-yaml';
import type { Command } from '../command.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { currentSnapshot } from '../approval/index.ts';
import { connect, type KubeClient } from '../kube/client.ts';
import { loadClientConfig } from '../kube/config.ts';
import { objectPath } from '../kube/resources.ts';
import type { Snapshot } from '../tools/snapshot.ts';

/**
 * How the user runs these commands, for usage and error lines: kubectl runs the plugin as an
 * executable named kubectl-mcp, and the user typed `kubectl mcp`.
 */
export const PROGRAM = basename(process.argv[1] ?? '').startsWith('kubectl-mcp')
  ? 'kubectl mcp'
  : 'mcp-operator';

export const TARGET = '[-n namespace] [--context name] [--kubeconfig file]';

export const COMMON_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `-o yaml|json`, as kubectl spells it, for the commands that print an object. */
export const OUTPUT_OPTION = { output: { type: 'string', short: 'o' } } as const;
const OUTPUTS = ['yaml', 'json'] as const;
export type Output = (typeof OUTPUTS)[number];

export function outputOf(value: string | undefined): Output | undefined {
  if (value === undefined || (OUTPUTS as readonly string[]).includes(value))
    return value as Output | undefined;
  throw new Error(`-o must be one of ${OUTPUTS.join(', ')}, not ${JSON.stringify(value)}`);
}

/** `value` as YAML (the default) or JSON, as `kubectl get -o` prints it. */
export function printed(value: unknown, output: Output | undefined): string {
  return output === 'json'
    ? `${JSON.stringify(value, null, 2)}\n`
    : dump(value, { lineWidth: -1, noRefs: true });
}

/** A review command: its name and its usage text. */
export interface Usage {
  name: string;
  text: string;
}

export interface Target {
  client: KubeClient;
  server: StoredMCPServer;
  snapshot: Snapshot;
}

export interface CommonValues {
  namespace?: string | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
  help?: boolean | undefined;
}

/** Parses with `parse`, or prints the problem and the usage and returns exit code 2. */
export function parsed<T>(usage: Usage, parse: () => T): T | number {
  try {
    return parse();
  } catch (error) {
    process.stderr.write(`${PROGRAM} ${usage.name}: ${(error as Error).message}\n\n${usage.text}`);
    return 2;
  }
}

/** Connects and reads the server and its snapshot; or an exit code for help and usage. */
export async function open(
  usage: Usage,
  values: CommonValues,
  positionals: string[],
): Promise<Target | number> {
  const found = await openServer(usage, values, positionals);
  if (typeof found === 'number') return found;
  try {
    return { ...found, snapshot: await currentSnapshot(found.client, found.server) };
  } catch (error) {
    found.client.close();
    throw error;
  }
}

/** Connects and reads the server; or an exit code for help and usage. */
export async function openServer(
  usage: Usage,
  values: CommonValues,
  positionals: string[],
): Promise<Omit<Target, 'snapshot'> | number> {
  if (values.help === true) {
    process.stdout.write(usage.text);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`${PROGRAM} ${usage.name}: give one MCPServer name\n\n${usage.text}`);
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

/**
 * Runs a command body; an error (an API error, no cluster, an invalid snapshot) is a one-line
 * message and exit code 2, as kubectl reports them: a stack trace would not help the user.
 */
export function reviewCommand(usage: Usage, body: (argv: string[]) => Promise<number>): Command {
  return async (argv) => {
    try {
      return await body(argv);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`${PROGRAM} ${usage.name}: ${message}\n`);
      return 2;
    }
  };
}
