/**
 * The examples against the MCPServer schema (src/api, the source of the CRD), and the enforced
 * example's baseline against the tools its pinned server really lists. The API server's own
 * verdict, CEL rules included, is examples.cluster.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { structural, type JsonSchema } from '../../src/api/crd.ts';
import { MCPServerSchema, type MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { bridgePolicy } from '../../src/controller/render/policy.ts';
import { resolveBaseline } from '../../src/tools/baseline.ts';
import { objectNames, type StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import { toolDigest } from '../../src/tools/digest.ts';
import { takeSnapshot } from '../../src/tools/snapshot.ts';
import { SNAPSHOT_KEY, snapshotConfigMap } from '../../src/discovery/snapshot-configmap.ts';
import { loadExamples } from './examples.ts';

const examples = await loadExamples();
const byFile = (file: string): MCPServer => {
  const found = examples.find((e) => e.file === file);
  if (found === undefined) throw new Error(`examples/${file} is missing`);
  return found.server;
};

/**
 * The schema with unknown keys refused, as `kubectl apply` refuses them (strict field
 * validation): every object that lists its properties, unless it keeps unknown fields or is
 * a map, gets additionalProperties: false.
 */
function strict(node: JsonSchema): JsonSchema {
  const out: JsonSchema = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === 'properties'
        ? Object.fromEntries(
            Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, strict(v)]),
          )
        : typeof value === 'object' && value !== null && !Array.isArray(value)
          ? strict(value as JsonSchema)
          : value,
    ]),
  );
  const closed =
    out.properties !== undefined &&
    out.additionalProperties === undefined &&
    out['x-kubernetes-preserve-unknown-fields'] !== true;
  return closed ? { ...out, additionalProperties: false } : out;
}

// The x-kubernetes-* keywords are the API server's; formats appear only in status.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validate = ajv.compile(strict(structural(MCPServerSchema)));

describe('examples/', () => {
  it.each(examples.map((e) => [e.file, e.server] as const))(
    '%s is an MCPServer the schema accepts',
    (_, server) => {
      expect(server).toMatchObject({ apiVersion: 'mcp-operator.dev/v1alpha1', kind: 'MCPServer' });
      validate(server);
      expect(validate.errors ?? []).toEqual([]);
    },
  );

  it('the strict schema check catches a misspelt field', () => {
    const typo = structuredClone(byFile('everything-npx.yaml')) as {
      spec: Record<string, unknown>;
    };
    typo.spec.comand = typo.spec.command;
    expect(validate(typo)).toBe(false);
  });

  it('cover npx, uvx, streamable-http, a url with a token, and an enforced baseline', () => {
    const specs = examples.map((e) => e.server.spec);
    expect(specs.some((s) => s.transport === 'stdio' && s.command?.[0] === 'npx')).toBe(true);
    expect(specs.some((s) => s.transport === 'stdio' && s.command?.[0] === 'uvx')).toBe(true);
    expect(specs.some((s) => s.transport === 'streamable-http' && s.image)).toBe(true);
    expect(specs.some((s) => s.url && s.auth?.secretRef.name)).toBe(true);
    expect(
      specs.some((s) => s.tools?.driftPolicy === 'Enforce' && s.tools.approved?.tools?.length),
    ).toBe(true);
  });
});

const PACKAGE = '@modelcontextprotocol/server-everything';
const installed = JSON.parse(
  await readFile(join('node_modules', PACKAGE, 'package.json'), 'utf8'),
) as { version: string; bin: Record<string, string> };

/** The tools the installed server-everything lists, as an MCP client gets them over stdio. */
async function listedTools(): Promise<Tool[]> {
  const client = new Client({ name: 'examples-test', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join('node_modules', PACKAGE, Object.values(installed.bin)[0]!), 'stdio'],
      stderr: 'ignore',
    }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

describe('the enforced example', () => {
  const server = byFile('everything-enforced.yaml');

  it('approves exactly what the pinned server version lists', async () => {
    // Every example pins the version the tests install, so they cannot drift apart.
    for (const { server: s } of examples) {
      const pinned = s.spec.command?.find((arg) => arg.startsWith(`${PACKAGE}@`));
      if (pinned !== undefined) expect(pinned).toBe(`${PACKAGE}@${installed.version}`);
    }
    const listed = new Map((await listedTools()).map((tool) => [tool.name, toolDigest(tool)]));
    // The digests the bridge will enforce: definitions are digested as the bridge does.
    const stored = server as StoredMCPServer;
    const { approved } = bridgePolicy(stored, resolveBaseline(stored.spec.tools?.approved));
    expect(approved.length).toBeGreaterThan(0);
    for (const { name, digest } of approved)
      expect([name, digest]).toEqual([name, listed.get(name)]);
    // What the comment promises is hidden really is listed by the server.
    expect(listed.has('get-env')).toBe(true);
    expect(approved.some((tool) => tool.name === 'get-env')).toBe(false);
  });
});

describe("the README's approval by hand", () => {
  it('turns a snapshot ConfigMap into a baseline that approves every listed tool', async () => {
    const readme = await readFile('README.md', 'utf8');
    // The two commands of the README, read here as what they select.
    expect(readme).toContain(`-o jsonpath='{.data.${SNAPSHOT_KEY.replace('.', '\\.')}}'`);
    expect(readme).toContain('[.tools[] | {name, digest}]');
    const server = byFile('everything-npx.yaml') as StoredMCPServer;
    expect(readme).toContain(`kubectl get configmap ${objectNames(server).snapshotConfigMap} `);

    const tools = await listedTools();
    const stored = snapshotConfigMap(
      takeSnapshot({
        protocolVersion: '2025-11-25',
        serverInfo: undefined,
        capabilities: {},
        instructions: undefined,
        tools,
      }),
    );
    if (!stored.fits) throw new Error('the snapshot does not fit a ConfigMap');
    // jq '[.tools[] | {name, digest}]'
    const snapshot = JSON.parse(stored.data[SNAPSHOT_KEY]!) as { tools: Record<string, unknown>[] };
    const approvedTools = snapshot.tools.map(({ name, digest }) => ({ name, digest }));
    const approved = {
      ...server,
      spec: { ...server.spec, tools: { approved: { tools: approvedTools } } },
    };
    validate(approved);
    expect(validate.errors ?? []).toEqual([]);
    const policy = bridgePolicy(
      approved as StoredMCPServer,
      resolveBaseline((approved as StoredMCPServer).spec.tools?.approved),
    );
    expect(policy.approved.map((t) => [t.name, t.digest]).sort()).toEqual(
      tools.map((t) => [t.name, toolDigest(t)]).sort(),
    );
  });
});
