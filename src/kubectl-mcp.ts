#!/usr/bin/env node
/**
 * `kubectl mcp approve|diff|status|import|outdated|export|console …`: the review commands as a kubectl plugin. kubectl runs
 * an executable named `kubectl-<name>` found on PATH for `kubectl <name>` and hands it the
 * remaining arguments untouched (https://kubernetes.io/docs/tasks/extend-kubectl/kubectl-plugins/),
 * so the commands read kubectl's flags themselves: `-n`, `--context`, `--kubeconfig`,
 * `-o yaml|json`.
 */

import type { Command } from './command.ts';
import { packageVersion } from './version.ts';

const COMMANDS: Record<string, () => Promise<Command>> = {
  approve: async () => (await import('./commands/approve.ts')).approveCommand,
  diff: async () => (await import('./commands/diff.ts')).diffCommand,
  status: async () => (await import('./commands/status.ts')).statusCommand,
  import: async () => (await import('./commands/import.ts')).importCommand,
  outdated: async () => (await import('./commands/outdated.ts')).outdatedCommand,
  export: async () => (await import('./commands/export.ts')).exportCommand,
  console: async () => (await import('./commands/console.ts')).consoleCommand,
};

const USAGE = `Usage: kubectl mcp <command> <name> [-n namespace] [--context name] [flags]

Commands:
  approve   print a server's current tools as its approved baseline, or --apply it
  diff      show how a server's tools differ from its approved baseline
  status    show a server's conditions, tools, drift and provenance
  import    make an MCPServer from an MCP Registry entry (server.json), pinned; or --apply it
  outdated  list imported MCPServers whose registry has a newer version
  export    write what servers publish, with digests and approval state, as catalog JSON
  console   serve the review console on 127.0.0.1: the fleet, drift side by side, approval

\`kubectl mcp help <command>\` (or \`<command> --help\`) tells more; --version prints the version.
`;

async function plugin(argv: readonly string[]): Promise<number> {
  let [name, ...rest] = argv;
  if (name === '--version' || name === 'version') {
    process.stdout.write(`kubectl-mcp ${packageVersion()}\n`);
    return 0;
  }
  // `help <command>` is `<command> --help`.
  if (name === 'help' && rest[0] !== undefined) [name, rest] = [rest[0], ['--help']];
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (load === undefined) {
    process.stderr.write(`kubectl mcp: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  return (await load())(rest);
}

process.exitCode = await plugin(process.argv.slice(2));
