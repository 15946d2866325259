/**
 * `mcp-operator console` (and `kubectl mcp console`): the review console as a local web
 * server on 127.0.0.1, like `kubectl proxy`, acting with the caller's kubeconfig and context,
 * so every read and write runs under the user's own RBAC. It prints its URL, with a random
 * token in it, and serves until interrupted. docs/console.md tells more.
 */

import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { Command } from '../command.ts';
import { startConsole } from '../console/start.ts';
import { integerFlag } from '../flags.ts';
import { loadClientConfig } from '../kube/config.ts';

const PROGRAM = basename(process.argv[1] ?? '').startsWith('kubectl-mcp')
  ? 'kubectl mcp'
  : 'mcp-operator';

const USAGE = `Usage: ${PROGRAM} console [--port N] [--open] [-n namespace]... [--context name] [--kubeconfig file]

Serves the review console on 127.0.0.1: the fleet of MCPServers, each server's drift side by
side with what was approved, and approval. It acts as you (your kubeconfig, your RBAC) and
prints a URL with a one-time random token; anyone with the URL can act as you while it runs.

  --port N        listen on port N (default: a free port)
  --open          open the URL in the default browser
  -n namespace    show this namespace (repeatable); default: every namespace you may list,
                  else the context's
`;

/**
 * V8 flags the console runs with. It serves one person: a small young generation (V8's default
 * lets it grow to 16 MiB per semi-space, resident once touched) and heuristics that favour
 * memory over speed keep it under 100 MiB at a thousand servers, for a little more time in
 * collections it can spare (bench/console.ts measures both).
 */
export const CONSOLE_NODE_FLAGS = ['--max-semi-space-size=1', '--optimize-for-size'];

/**
 * Starts this process again, in place (same pid, arguments and environment), with
 * CONSOLE_NODE_FLAGS, unless it already runs with them: V8 reads them only at its start.
 */
function relaunchWithFlags(): void {
  if (CONSOLE_NODE_FLAGS.every((flag) => process.execArgv.includes(flag))) return;
  // process.execve is missing on Windows: the console runs there with V8's defaults.
  if (typeof process.execve !== 'function') return;
  process.execve(process.execPath, [
    process.execPath,
    ...process.execArgv.filter((flag) => !CONSOLE_NODE_FLAGS.includes(flag)),
    ...CONSOLE_NODE_FLAGS,
    ...process.argv.slice(1),
  ]);
}

export const consoleCommand: Command = async (argv) => {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        open: { type: 'boolean' },
        namespace: { type: 'string', short: 'n', multiple: true },
        context: { type: 'string' },
        kubeconfig: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${PROGRAM} console: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  relaunchWithFlags();
  const log = pino({ level: process.env.MCP_OPERATOR_LOG_LEVEL ?? 'warn' }, pino.destination(2));
  try {
    const port = values.port === undefined ? 0 : integerFlag('--port', values.port, 0);
    const clientConfig = await loadClientConfig({
      kubeconfig: values.kubeconfig,
      context: values.context,
      env: process.env,
    });
    const running = await startConsole({
      clientConfig,
      namespaces: values.namespace ?? [],
      port,
      log,
    });
    process.stdout.write(
      `Console for context ${clientConfig.context ?? '(in-cluster)'}: ${running.url}\n`,
    );
    if (values.open === true) openBrowser(running.url);
    await interrupted();
    await running.close();
    return 0;
  } catch (error) {
    process.stderr.write(`${PROGRAM} console: ${(error as Error).message}\n`);
    return 1;
  }
};

function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/** The platform's opener, with the URL as an argument (no shell). */
function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const child = spawn(command, [url], { stdio: 'ignore', detached: true });
  child.on('error', () =>
    process.stderr.write(`Could not start ${command}; open the URL above yourself.\n`),
  );
  child.unref();
}
