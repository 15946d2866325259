/**
 * How many tools a server lists only to clients that declare they can answer its requests, and
 * so how many discovery sees because it declares roots, sampling and elicitation as agents do
 * (docs/adr/0020). The method: the real server-everything (the version package-lock.json pins,
 * over Streamable HTTP) asked `tools/list` by the official SDK client once per set of declared
 * capabilities — none, each alone, all of discovery's — and once by discovery itself; the tools
 * of each beyond those a client that declares nothing sees are named. A count, not a time: the
 * load does not move it, the server's version does.
 *
 *   node bench/discovery-capabilities.ts
 */

import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DISCOVERY_CLIENT_CAPABILITIES, discover } from '../src/discovery/client.ts';
import { startEverything } from '../test/support/everything.ts';

const require = createRequire(import.meta.url);
const { version } = require('@modelcontextprotocol/server-everything/package.json') as {
  version: string;
};

/** The names of the tools the official SDK client lists, declaring `capabilities`. */
async function listed(url: string, capabilities: Record<string, unknown>): Promise<string[]> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  try {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return names;
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}

const SETS: [string, Record<string, unknown>][] = [
  ['none', {}],
  ['roots', { roots: {} }],
  ['sampling', { sampling: {} }],
  ['elicitation (form, url)', { elicitation: { form: {}, url: {} } }],
  ["all of discovery's", DISCOVERY_CLIENT_CAPABILITIES],
];

const server = await startEverything();
try {
  console.log(
    `server-everything ${version} over Streamable HTTP; tools/list by declared capabilities`,
  );
  const names = (capabilities: Record<string, unknown>) => listed(server.url, capabilities);
  const baseline = await names({});
  for (const [label, capabilities] of SETS) {
    const listed = await names(capabilities);
    const extra = listed.filter((name) => !baseline.includes(name));
    console.log(
      `  ${label.padEnd(24)} ${String(listed.length).padStart(3)} tools; beyond none: ${extra.length}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`,
    );
  }
  const discovered = (await discover({ url: server.url })).tools.map((tool) => tool.name);
  const extra = discovered.filter((name) => !baseline.includes(name));
  console.log(
    `  ${'discovery itself'.padEnd(24)} ${String(discovered.length).padStart(3)} tools; beyond none: ${extra.length} (${extra.join(', ')})`,
  );
} finally {
  await server.close();
}
