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
import { operatorError } from '../errors.ts';
import { argumentError } from '../flags.ts';
import {
  type KubeApiError,
  type KubeClient,
  NoAnswerError,
  connect,
  isNotFound,
} from '../kube/client.ts';
import { type ClientConfig, loadClientConfig } from '../kube/config.ts';
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

/**
 * Parses with `parse`, or prints the problem in one line, with where to read more, and returns
 * exit code 2. An unknown flag is matched against the flags the usage text lists: those are the
 * ones the user can see.
 */
export function parsed<T>(usage: Usage, parse: () => T): T | number {
  try {
    return parse();
  } catch (error) {
    const known = [...new Set(usage.text.match(/--[a-z][a-z-]*/g) ?? []), '--help'];
    const message = (argumentError(error, known) ?? (error as Error)).message;
    process.stderr.write(
      `${PROGRAM} ${usage.name}: ${message}\nRun \`${PROGRAM} ${usage.name} --help\` for its flags.\n`,
    );
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
  const name = positionals[0]!;
  try {
    const server = await client.request<StoredMCPServer>({
      method: 'GET',
      path: objectPath(MCP_SERVER, namespace, name),
    });
    return { client, server };
  } catch (error) {
    client.close();
    throw clusterFailure(error, config, { name, namespace });
  }
}

/** Socket errors that mean nothing answers at the API server's address. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
]);

/**
 * A failed request to the cluster in words that say what to do: no cluster at the address, no
 * CRD, and, when the request named one MCPServer, no such server in the namespace searched.
 * Anything else as it came.
 */
export function clusterFailure(
  error: unknown,
  config: ClientConfig,
  server?: { name: string; namespace: string },
): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof NoAnswerError || (typeof code === 'string' && UNREACHABLE.has(code))) {
    const where =
      config.context === undefined
        ? config.source
        : `context ${config.context} of ${config.source}`;
    return operatorError('MCPOP_KUBE_UNREACHABLE', config.server, where, (error as Error).message);
  }
  if (!isNotFound(error)) return error;
  // A missing object is a NotFound Status naming it. A missing resource type is a bare 404: a
  // Status that could not find the resource, or (a named GET in an unknown API group) the plain
  // text "404 page not found", which carries no reason.
  const answer = error as KubeApiError;
  if (
    answer.reason !== 'NotFound' ||
    answer.detail.includes('could not find the requested resource')
  )
    return operatorError('MCPOP_CRD_MISSING', config.server);
  return server === undefined
    ? error
    : operatorError('MCPOP_SERVER_NOT_FOUND', server.name, server.namespace);
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
