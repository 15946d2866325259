/**
 * What the registry commands (import, outdated, export) share: kubectl's way of choosing a
 * cluster and namespace, `-o yaml|json`, the registry flags, and one way to report an error
 * (a visible one-line message and exit code 2, as kubectl does).
 */

import type { Command } from '../command.ts';
import { durationFlag } from '../flags.ts';
import { connect, type KubeClient } from '../kube/client.ts';
import { loadClientConfig } from '../kube/config.ts';
import { DEFAULT_LIMITS, OFFICIAL_REGISTRY, type ReadLimits } from '../registry/client.ts';
import { visible } from '../tools/text.ts';
import { COMMON_OPTIONS, OUTPUT_OPTION, PROGRAM, type Output, clusterFailure } from './target.ts';

export { PROGRAM, printed, type Output } from './target.ts';

export const KUBE_OPTIONS = { ...COMMON_OPTIONS, ...OUTPUT_OPTION } as const;

export const REGISTRY_OPTIONS = {
  registry: { type: 'string' },
  timeout: { type: 'string' },
} as const;

export interface KubeValues {
  namespace?: string | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/**
 * A client for the current context (or --context, --kubeconfig), the namespace to use, and
 * `failure`, which puts a failed request in words that say what to do (clusterFailure).
 */
export async function kubeTarget(values: KubeValues): Promise<{
  client: KubeClient;
  namespace: string;
  failure: (error: unknown, server?: { name: string; namespace: string }) => unknown;
}> {
  const config = await loadClientConfig({
    kubeconfig: values.kubeconfig,
    context: values.context,
    env: process.env,
  });
  return {
    client: connect(config),
    namespace: values.namespace ?? config.namespace ?? 'default',
    failure: (error, server) => clusterFailure(error, config, server),
  };
}

/** The registry root (--registry, else the official one) and the read limits (--timeout). */
export function registryChoice(values: {
  registry?: string | undefined;
  timeout?: string | undefined;
}): {
  root: string;
  limits: ReadLimits;
} {
  return {
    root: values.registry ?? OFFICIAL_REGISTRY,
    limits:
      values.timeout === undefined
        ? DEFAULT_LIMITS
        : { ...DEFAULT_LIMITS, timeoutMs: durationFlag('--timeout', values.timeout) },
  };
}

/** `-o` among `allowed`, or a usage error. */
export function outputOf(
  value: string | undefined,
  allowed: readonly Output[] = ['yaml', 'json'],
): Output | undefined {
  if (value === undefined || (allowed as readonly string[]).includes(value))
    return value as Output | undefined;
  throw new UsageError(`-o must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
}

/** A problem with the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/**
 * A command body wrapped: usage problems print the usage, other errors one visible line (the
 * registry and servers write some of its text); exit code 2 for both.
 */
export function registryCommand(
  name: string,
  usage: string,
  body: (argv: string[]) => Promise<number>,
): Command {
  return async (argv) => {
    try {
      return await body(argv);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const lines = message.split('\n').map((line) => visible(line));
      const usageError =
        error instanceof UsageError ||
        (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      process.stderr.write(
        `${PROGRAM} ${name}: ${lines.join('\n')}\n${usageError ? `\n${usage}` : ''}`,
      );
      return 2;
    }
  };
}
