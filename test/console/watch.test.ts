/**
 * What the console's watch keeps of each MCPServer (rowSource): enough for its fleet row to be
 * the row of the whole object, and little else, so that a thousand servers with full approved
 * definitions cost the console a thousand rows' worth of memory.
 */
import { describe, expect, it } from 'vitest';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import { fleetRow } from '../../src/console/fleet-row.ts';
import { rowSource } from '../../src/console/watch.ts';

const at = '2026-12-04T10:00:00Z';
const condition = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: `${type} is ${status}: ${'a long message. '.repeat(20)}`,
  lastTransitionTime: at,
  observedGeneration: 3,
});

/** A server as the API server sends it, with every part the fleet does not show filled in. */
const full = {
  apiVersion: 'mcp-operator.dev/v1alpha1',
  kind: 'MCPServer',
  metadata: {
    name: 'weather',
    namespace: 'team',
    uid: 'u1',
    resourceVersion: '42',
    generation: 3,
    labels: { team: 'a' },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{}}'.repeat(50) },
  },
  spec: {
    image: 'example.com/weather:1',
    transport: 'streamable-http',
    port: 8080,
    tools: {
      approved: {
        tools: Array.from({ length: 50 }, (_, i) => ({
          name: `tool_${i}`,
          definition: { name: `tool_${i}`, description: 'Does a thing. '.repeat(100) },
        })),
      },
    },
  },
  status: {
    observedGeneration: 3,
    endpoint: 'http://weather.team.svc:8080/mcp',
    conditions: [
      condition('Ready', 'True', 'Available'),
      condition('Discovered', 'True', 'Succeeded'),
      condition('Drifted', 'True', 'ToolsChanged'),
      condition('Conformant', 'False', 'SchemaProblems'),
    ],
    discovery: {
      lastAttemptTime: at,
      lastSuccessTime: at,
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'weather', version: '1.0.0' },
      toolCount: 50,
      findingCount: 2,
      snapshotDigest: `sha256:${'a'.repeat(64)}`,
      tools: Array.from({ length: 50 }, (_, i) => ({
        name: `tool_${i}`,
        digest: `sha256:${i.toString(16).padStart(64, '0')}`,
      })),
      prompts: { count: 2, digest: `sha256:${'b'.repeat(64)}` },
      resources: { count: 1, digest: `sha256:${'c'.repeat(64)}` },
      resourceTemplates: { count: 3, digest: `sha256:${'d'.repeat(64)}` },
    },
    drift: {
      since: at,
      changed: [{ name: 'tool_1', fields: ['inputSchema'], severity: 'widening' }],
      added: ['tool_50'],
      prompts: { removed: ['greet'] },
    },
    provenance: {
      image: 'example.com/weather:1',
      imageDigests: [`sha256:${'e'.repeat(64)}`],
      codeChanged: { since: at, message: 'The image digest changed under the same spec.' },
    },
  },
} as unknown as StoredMCPServer;

describe('rowSource', () => {
  it('keeps what the fleet row reads: the row is the whole object’s row', () => {
    expect(fleetRow(rowSource(full))).toEqual(fleetRow(full));
    const bare = { ...full, status: undefined } as StoredMCPServer;
    expect(fleetRow(rowSource(bare))).toEqual(fleetRow(bare));
    const url = { ...full, spec: { url: 'http://x.example/mcp' } } as StoredMCPServer;
    expect(fleetRow(rowSource(url)).transport).toBe('url');
  });

  it('drops the approved definitions, the tool digests, annotations and other conditions', () => {
    const kept = rowSource(full);
    expect(kept.spec.tools).toBeUndefined();
    expect(kept.status?.discovery?.tools).toBeUndefined();
    expect(kept.metadata.annotations).toBeUndefined();
    expect(kept.status?.conditions?.map((c) => c.type)).toEqual(['Ready', 'Drifted']);
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(full).length / 20);
  });
});
