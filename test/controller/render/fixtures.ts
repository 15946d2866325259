import type { V1Container, V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import type { MCPServerSpec } from '../../../src/api/v1alpha1/mcpserver.ts';
import type { StoredMCPServer } from '../../../src/api/v1alpha1/stored.ts';
import type { RenderOptions, Resolved } from '../../../src/controller/render/options.ts';
import { render, type DesiredObject } from '../../../src/controller/render/render.ts';

export const OPTIONS: RenderOptions = { image: 'ghcr.io/example/mcp-operator:1.2.3' };

export function mcpServer(spec: MCPServerSpec, name = 'everything'): StoredMCPServer {
  return {
    apiVersion: 'mcp-operator.dev/v1alpha1',
    kind: 'MCPServer',
    metadata: {
      name,
      namespace: 'team-a',
      uid: '0b7c9a52-1f0e-4d6a-9a43-5a8f2f1d3c11',
      generation: 1,
    },
    spec,
  };
}

export const stdio = (extra: Partial<MCPServerSpec> = {}) =>
  mcpServer({
    image: 'node:24-slim',
    transport: 'stdio',
    command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
    ...extra,
  });

export const streamableHttp = (extra: Partial<MCPServerSpec> = {}) =>
  mcpServer({
    image: 'ghcr.io/example/weather:2',
    transport: 'streamable-http',
    port: 3000,
    ...extra,
  });

export function kinds(objects: DesiredObject[]): string[] {
  return objects.map((object) => `${object.kind}/${object.metadata?.name}`);
}

export function deploymentOf(
  server: StoredMCPServer,
  options = OPTIONS,
  resolved: Resolved = {},
): V1Deployment {
  const found = render(server, options, resolved).find((object) => object.kind === 'Deployment');
  if (found === undefined) throw new Error('no Deployment rendered');
  return found as V1Deployment;
}

export function podSpecOf(server: StoredMCPServer, options = OPTIONS): V1PodSpec {
  const spec = deploymentOf(server, options).spec?.template.spec;
  if (spec === undefined) throw new Error('no pod spec');
  return spec;
}

export function containerOf(spec: V1PodSpec, name: string): V1Container {
  const found = [...(spec.initContainers ?? []), ...spec.containers].find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container ${name}`);
  return found;
}

/** The value after `flag` in an argv, as the bridge's parser reads it. */
export function flag(argv: readonly string[] | undefined, name: string): string | undefined {
  const at = (argv ?? []).indexOf(name);
  return at < 0 ? undefined : argv?.[at + 1];
}
