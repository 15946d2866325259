/**
 * Real MCP servers from npm behind the bridge, driven by the SDK client and by the MCP
 * Inspector CLI (a second, independent client).
 */

import { execFile } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connect, NODE, SERVERS, startTestBridge, textOf, tempDir } from './harness.ts';

const INSPECTOR = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/inspector-cli/build/index.js', import.meta.url),
);

async function inspector(url: string, ...args: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    NODE,
    [INSPECTOR, url, '--transport', 'http', ...args],
    {
      timeout: 20_000,
      // It finds its own package.json relative to the working directory.
      cwd: dirname(INSPECTOR),
    },
  );
  return JSON.parse(stdout);
}

describe('real servers from npm', () => {
  it('server-filesystem: reads and writes files, and asks the client for its roots', async () => {
    const root = await realpath(await tempDir('fs'));
    const bridge = await startTestBridge({ command: SERVERS.filesystem(root) });
    let rootsAsked = 0;
    const client = await connect(bridge.url, {
      capabilities: { capabilities: { roots: { listChanged: true } } },
    });
    client.setRequestHandler(ListRootsRequestSchema, () => {
      rootsAsked++;
      return { roots: [{ uri: `file://${root}`, name: 'test root' }] };
    });
    await client.sendRootsListChanged();

    await client.callTool({
      name: 'write_file',
      arguments: { path: join(root, 'note.txt'), content: 'written through the bridge' },
    });
    expect(await readFile(join(root, 'note.txt'), 'utf8')).toBe('written through the bridge');
    const read = await client.callTool({
      name: 'read_text_file',
      arguments: { path: join(root, 'note.txt') },
    });
    expect(textOf(read)).toBe('written through the bridge');
    expect(
      textOf(await client.callTool({ name: 'list_allowed_directories', arguments: {} })),
    ).toContain(root);
    expect(rootsAsked).toBeGreaterThan(0);
    await client.close();
  });

  it('server-memory: builds and reads a knowledge graph', async () => {
    const bridge = await startTestBridge({ command: SERVERS.memory });
    const client = await connect(bridge.url);
    await client.callTool({
      name: 'create_entities',
      arguments: {
        entities: [
          { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
        ],
      },
    });
    const found = await client.callTool({ name: 'search_nodes', arguments: { query: 'Ada' } });
    expect(textOf(found)).toContain('wrote the first program');
    await client.close();
  });

  it('server-everything through the MCP Inspector CLI', async () => {
    const bridge = await startTestBridge({ command: SERVERS.everything });
    const listed = (await inspector(bridge.url, '--method', 'tools/list')) as {
      tools: { name: string }[];
    };
    expect(listed.tools.map((tool) => tool.name)).toContain('get-sum');
    const sum = await inspector(
      bridge.url,
      '--method',
      'tools/call',
      '--tool-name',
      'get-sum',
      '--tool-arg',
      'a=2',
      'b=40',
    );
    expect(textOf(sum)).toContain('42');
    const prompts = (await inspector(bridge.url, '--method', 'prompts/list')) as {
      prompts: unknown[];
    };
    expect(prompts.prompts.length).toBeGreaterThan(0);
  });
});
