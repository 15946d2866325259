#!/usr/bin/env node
/** Entry point: `mcp-operator <command>`. The one place that wires the program together. */
const USAGE = `Usage: mcp-operator <command> [options]

Commands:
  controller   run the operator against the current kube context
  bridge       serve a stdio MCP server as Streamable HTTP
  dev          run the operator, starting a local control plane when no cluster is reachable
`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`mcp-operator: unknown command '${command}'\n${USAGE}`);
      return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
