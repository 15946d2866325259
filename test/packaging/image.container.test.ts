/**
 * The project's image, built from the real Dockerfile by testcontainers, run in Docker: its
 * entrypoint and commands, its user and read-only root, and stdio server pods rendered by the
 * operator (init container `bridge-install`, the server under the supervisor, the bridge) in
 * which an MCP client lists and calls tools through the bridge. The pods have no route out: the
 * servers must start from what their images hold, as on a node with no route to npm or PyPI.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Deployment } from '@kubernetes/client-node';
import { GenericContainer, type StartedTestContainer } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { DISCOVERY_TOKEN_KEY, objectNames } from '../../src/api/v1alpha1/stored.ts';
import { DEFAULT_POD_ID } from '../../src/controller/render/pod.ts';
import { render } from '../../src/controller/render/render.ts';
import { CHANGES_PATH, parsePackages } from '../../src/mcp/change-feed.ts';
import { DISCOVERY_TOKEN_HEADER } from '../../src/mcp/metadata.ts';
import type { ResolvedPackage } from '../../src/resolved-package.ts';
import { connect, textOf } from '../bridge/harness.ts';
import { loadExamples } from '../examples/examples.ts';
import { docker } from '../images/docker.ts';
import { TIME_SERVER_VERSION } from '../images/images.ts';
import { PodContainer, runOnce, startPod } from '../images/pod.ts';
import { waitFor } from '../support/wait.ts';

const REPO = join(import.meta.dirname, '..', '..');
const images = inject('images');
const BUSYBOX = '/usr/lib/mcp-operator/busybox';

/** Built from the real Dockerfile by testcontainers (test/images/images.ts). */
const image = images.operator;

describe('the image', () => {
  let shell: StartedTestContainer;

  beforeAll(async () => {
    // The image's own user (no override), with what the rendered pods add.
    shell = await new PodContainer(image)
      .withEntrypoint([BUSYBOX, 'sleep', '600'])
      .withReadOnlyRootFilesystem()
      .withDroppedCapabilities('ALL')
      .withSecurityOpt('no-new-privileges')
      .start();
  });

  afterAll(async () => {
    await shell?.stop({ timeout: 1_000 });
  });

  const exec = (command: string[]) => shell.exec(command);

  it('starts `mcp-operator` as its entrypoint: --help lists every command', async () => {
    const output = await runOnce(new GenericContainer(image).withCommand(['--help']));
    for (const command of ['controller', 'bridge', 'bridge-install', 'dev', 'approve', 'diff'])
      expect(output).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it.each([['controller'], ['bridge'], ['bridge-install'], ['approve'], ['diff']])(
    '`mcp-operator %s --help` loads the command with the dependencies the image keeps',
    async (command) => {
      const { exitCode, output } = await exec(['mcp-operator', command, '--help']);
      expect(output).toMatch(new RegExp(`^Usage: mcp-operator ${command}`));
      expect(exitCode).toBe(0);
    },
  );

  it.each([['approve'], ['diff'], ['status']])(
    'the kubectl plugin on PATH (`kubectl-mcp %s --help`) runs the built plugin with what the image keeps',
    async (command) => {
      const { exitCode, output } = await exec(['kubectl-mcp', command, '--help']);
      expect(output).toMatch(/^Usage: kubectl mcp /);
      expect(output).toContain(command);
      expect(exitCode).toBe(0);
    },
  );

  it.each([['mcp-operator'], ['kubectl-mcp']])('`%s --version` names the version', async (bin) => {
    const { exitCode, output } = await exec([bin, '--version']);
    expect([exitCode, output]).toEqual([
      0,
      expect.stringMatching(new RegExp(`^${bin} \\d+\\.\\d+`)),
    ]);
  });

  it('says how to get @kubernetes/client-node for the one command that needs it', async () => {
    const { exitCode, output } = await exec(['mcp-operator', 'dev']);
    expect(output).toContain(
      'mcp-operator dev needs the optional package @kubernetes/client-node, which this installation leaves out',
    );
    expect(exitCode).toBe(1);
  });

  it('runs Node.js 24', async () => {
    expect((await exec(['node', '--version'])).output).toMatch(/^v24\./);
  });

  it('runs as the non-root user the chart and the rendered pods run as', async () => {
    const user = (await docker(['image', 'inspect', '--format', '{{.Config.User}}', image])).trim();
    expect(user).toBe(`${DEFAULT_POD_ID}:${DEFAULT_POD_ID}`);
    expect((await exec([BUSYBOX, 'id'])).output).toMatch(
      new RegExp(`^uid=${DEFAULT_POD_ID}\\(nonroot\\) gid=${DEFAULT_POD_ID}\\(nonroot\\)`),
    );
    const chart = await readFile(
      join(REPO, 'charts/mcp-operator/templates/deployment.yaml'),
      'utf8',
    );
    expect(chart).toContain(`runAsUser: ${DEFAULT_POD_ID}`);
  });

  it('needs no writable root: the entrypoint runs and nothing can write to the image', async () => {
    const write = await exec([BUSYBOX, 'touch', '/app/dist/written']);
    expect(write.output).toContain('Read-only file system');
    expect(write.exitCode).not.toBe(0);
  });
});

/** The rendered pod of a stdio MCPServer, with `image` as the operator's image. */
const DISCOVERY_TOKEN = 'discovery-token-of-this-test';

/** The pod the operator renders for `server`, and the Secret with its discovery token. */
function podOf(server: MCPServer) {
  const stored = {
    ...server,
    metadata: { ...server.metadata, namespace: 'default', uid: randomUUID() },
  } as Parameters<typeof render>[0];
  const deployment = render(stored, { image }).find((o) => o.kind === 'Deployment') as
    V1Deployment | undefined;
  if (deployment === undefined) throw new Error(`${server.metadata?.name}: no Deployment`);
  const secrets = {
    [objectNames(stored).discoverySecret]: { [DISCOVERY_TOKEN_KEY]: DISCOVERY_TOKEN },
  };
  return { spec: deployment.spec!.template.spec!, secrets };
}

/** The packages the bridge's change feed reports, once it reports any. */
const reportedPackages = (endpoint: string) =>
  waitFor('the package in the change feed', async () => {
    const response = await fetch(new URL(`${CHANGES_PATH}?wait=0`, endpoint), {
      headers: { [DISCOVERY_TOKEN_HEADER]: DISCOVERY_TOKEN },
    });
    const packages = parsePackages(await response.json());
    return packages.length > 0 ? packages : undefined;
  });

const stdio = (name: string, serverImage: string, command: string[]): MCPServer => ({
  apiVersion: 'mcp-operator.dev/v1alpha1',
  kind: 'MCPServer',
  metadata: { name },
  spec: { image: serverImage, transport: 'stdio', command },
});

interface Case {
  name: string;
  server: () => MCPServer | Promise<MCPServer>;
  call: { tool: string; arguments: Record<string, unknown>; text: RegExp };
  /**
   * The package the supervisor reads in the server container, when the launcher resolved one:
   * a uvx tool's environment in its cache. Offline, npx runs these images' packages from the
   * tree they are installed in, not from its cache: it resolves none, and none is asked for.
   */
  packages?: ResolvedPackage[];
}

const timePackage: ResolvedPackage = {
  launcher: 'uvx',
  name: 'mcp-server-time',
  version: TIME_SERVER_VERSION,
};

const example = async (file: string) => {
  const found = (await loadExamples()).find((e) => e.file === file);
  if (found === undefined) throw new Error(`examples/${file} is missing`);
  return found.server;
};

const echo = { tool: 'echo', arguments: { message: 'hello pod' }, text: /hello pod/ };
const time = {
  tool: 'get_current_time',
  arguments: { timezone: 'UTC' },
  text: /"timezone": "UTC"/,
};
const allowed = { tool: 'list_allowed_directories', arguments: {}, text: /\/tmp/ };

const CASES: Case[] = [
  {
    name: 'examples/everything-npx.yaml',
    server: () => example('everything-npx.yaml'),
    call: echo,
  },
  {
    name: 'examples/time-uvx.yaml',
    server: () => example('time-uvx.yaml'),
    call: time,
    packages: [timePackage],
  },
  {
    name: 'the server-everything image',
    server: () => stdio('everything', images.servers.everything, ['mcp-server-everything']),
    call: echo,
  },
  ...Object.entries(images.servers.filesystem).map(([version, serverImage]) => ({
    name: `the server-filesystem ${version} image, by npx`,
    server: () =>
      stdio('filesystem', serverImage, [
        'npx',
        '-y',
        `@modelcontextprotocol/server-filesystem@${version}`,
        '/tmp',
      ]),
    call: allowed,
  })),
  {
    name: 'the server-time image',
    server: () =>
      stdio('time', images.servers.time, ['uvx', `mcp-server-time@${TIME_SERVER_VERSION}`]),
    call: time,
    packages: [timePackage],
  },
];

describe('a stdio server pod, as the operator renders it, in containers', () => {
  it.each(CASES)(
    '$name: the bridge serves the server, offline, to an MCP client, and reports the package a launcher resolved',
    async ({ server, call, packages }) => {
      const { spec, secrets } = podOf(await server());
      const pod = await startPod(spec, { image, command: [BUSYBOX, 'sleep', '3600'] }, secrets);
      try {
        const endpoint = `http://${pod.ip}:8080/mcp`;
        const client = await connect(endpoint);
        try {
          const { tools } = await client.listTools();
          expect(tools.map((t) => t.name)).toContain(call.tool);
          const result = await client.callTool({ name: call.tool, arguments: call.arguments });
          expect(result.isError ?? false).toBe(false);
          expect(textOf(result)).toMatch(call.text);
          if (packages !== undefined) expect(await reportedPackages(endpoint)).toEqual(packages);
        } finally {
          await client.close();
        }
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${await pod.logs()}`, { cause: error });
      } finally {
        await pod.stop();
      }
    },
  );
});
