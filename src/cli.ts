#!/usr/bin/env node
/**
 * Entry point: `mcp-operator <command> [options]`. The one place that wires the program
 * together. Each command lives in its own module and is imported only when it runs, so the
 * bridge sidecar does not load the controller and vice versa.
 */

import { totalmem } from 'node:os';
import type { Command } from './command.ts';
import { OperatorError } from './errors.ts';
import { heapRelaunch } from './heap-limit.ts';
import { importOptional } from './optional.ts';
import { packageVersion } from './version.ts';

interface CommandEntry {
  summary: string;
  load: () => Promise<Command>;
  /** Runs in a container of its own: its heap is sized to the container's memory limit. */
  contained?: true;
}

const COMMANDS: Record<string, CommandEntry> = {
  bridge: {
    summary: 'serve an MCP server, stdio or HTTP, as Streamable HTTP behind policy and auth',
    load: async () => (await import('./bridge/command.ts')).default,
    contained: true,
  },
  'bridge-install': {
    summary: 'copy busybox and the supervisor into a pod volume (init container)',
    load: async () => (await import('./bridge/install.ts')).default,
  },
  controller: {
    summary: 'run the controller: reconcile MCPServers into Deployments and Services',
    load: async () => (await import('./controller/command.ts')).controllerCommand,
    contained: true,
  },
  dev: {
    summary: 'run the controller against the current kube context or a local control plane',
    load: async () =>
      (await importOptional(() => import('./commands/dev.ts'), 'mcp-operator dev')).devCommand,
  },
  approve: {
    summary: "print a server's current tools as its approved baseline, or --apply it",
    load: async () => (await import('./commands/approve.ts')).approveCommand,
  },
  diff: {
    summary: "show how a server's tools differ from its approved baseline",
    load: async () => (await import('./commands/diff.ts')).diffCommand,
  },
  status: {
    summary: "show a server's conditions, tools, drift and provenance",
    load: async () => (await import('./commands/status.ts')).statusCommand,
  },
  import: {
    summary: 'make an MCPServer from an MCP Registry entry (server.json), pinned; or --apply it',
    load: async () => (await import('./commands/import.ts')).importCommand,
  },
  outdated: {
    summary: 'list imported MCPServers whose registry has a newer version',
    load: async () => (await import('./commands/outdated.ts')).outdatedCommand,
  },
  export: {
    summary: 'write what servers publish, with digests and approval state, as catalog JSON',
    load: async () => (await import('./commands/export.ts')).exportCommand,
  },
  console: {
    summary: 'serve the review console on 127.0.0.1: the fleet, drift side by side, approval',
    load: async () => (await import('./commands/console.ts')).consoleCommand,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length), 8);
  const lines = Object.entries(COMMANDS).map(
    ([name, entry]) => `  ${name.padEnd(width)}  ${entry.summary}`,
  );
  return `Usage: mcp-operator <command> [options]

Commands:
${lines.join('\n')}

\`mcp-operator help <command>\` (or \`<command> --help\`) tells more; --version prints the version.
`;
}

export async function main(argv: readonly string[]): Promise<number> {
  let [name, ...rest] = argv;
  if (name === '--version' || name === 'version') {
    process.stdout.write(`mcp-operator ${packageVersion()}\n`);
    return 0;
  }
  // `help <command>` is `<command> --help`.
  if (name === 'help' && rest[0] !== undefined) [name, rest] = [rest[0], ['--help']];
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const entry = COMMANDS[name];
  if (entry === undefined) {
    process.stderr.write(`mcp-operator: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  if (entry.contained) fitHeapToContainer();
  let command: Command;
  try {
    command = await entry.load();
  } catch (error) {
    if (!(error instanceof OperatorError)) throw error;
    process.stderr.write(`mcp-operator: ${error.message}\n`);
    return 1;
  }
  return command(rest);
}

/**
 * Starts this process again, in place (same pid, arguments and environment), with a heap limit
 * that fits the container's memory limit (heap-limit.ts), when it has one and no heap flag was
 * given. Before anything else runs: nothing is lost but Node's start.
 */
function fitHeapToContainer(): void {
  const flag = heapRelaunch({
    constrainedMemory: process.constrainedMemory(),
    totalMemory: totalmem(),
    execArgv: process.execArgv,
    nodeOptions: process.env.NODE_OPTIONS,
  });
  // process.execve is missing on Windows, where no cgroup limits memory anyway.
  if (flag === undefined || typeof process.execve !== 'function') return;
  process.execve(process.execPath, [
    process.execPath,
    ...process.execArgv,
    flag,
    ...process.argv.slice(1),
  ]);
}

process.exitCode = await main(process.argv.slice(2));
