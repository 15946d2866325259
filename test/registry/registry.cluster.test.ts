/**
 * `mcp-operator import`, `outdated` and `export` against the real MCP Registry (its server from
 * its Go module, on a real PostgreSQL; test/registry/registry-server.ts), publishing through its
 * own API, and the real API server, which takes the imported MCPServer through its schema and
 * CEL rules. No operator runs here: what runs the servers and shows drift on the real node is
 * test/e2e/user-story.cluster.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  REGISTRY_NAME_ANNOTATION,
  REGISTRY_URL_ANNOTATION,
  REGISTRY_VERSION_ANNOTATION,
} from '../../src/api/registry-provenance.ts';
import type { MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';
import { kubectl } from '../examples/examples.ts';
import { CLI } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { NAMESPACE, everythingEntry, filesystemEntry, timeEntry } from './entries.ts';
import { RegistryServer } from './registry-server.ts';

const execFileAsync = promisify(execFile);
const kc = kubeConfig();
const kubeconfig = inject('kubeconfig');
const ns = useNamespace('registry', kc);
const FILESYSTEM = `${NAMESPACE}/server-filesystem`;
let registry: RegistryServer;
let dir: string;

/** `mcp-operator <args>` as a user runs it: exit code, stdout, stderr. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** `import <reference> --apply` from the test's registry as MCPServer `name`. */
const applyImport = (name: string, reference: string, ...flags: string[]) =>
  cli(
    'import',
    reference,
    '--registry',
    registry.url,
    '-n',
    ns.name,
    '--name',
    name,
    ...flags,
    '--apply',
  );

/** The filesystem server imported at `version` as MCPServer `files`. */
const importFiles = (version: string) =>
  applyImport('files', `${FILESYSTEM}@${version}`, '--arg', 'allowed_directory=/tmp');

async function getServer(name: string): Promise<MCPServer | undefined> {
  const result = await kubectl(kubeconfig, ['-n', ns.name, 'get', 'mcps', name, '-o', 'json']);
  return result.code === 0 ? (JSON.parse(result.stdout) as MCPServer) : undefined;
}

async function publish(entry: object): Promise<void> {
  const { status, body } = await registry.publish(entry);
  if (status !== 200) throw new Error(`publish: HTTP ${status}: ${JSON.stringify(body)}`);
}

beforeAll(async () => {
  await installCrd(kc);
  dir = await mkdtemp(join(tmpdir(), 'registry-test-'));
  registry = await RegistryServer.start();
  await publish(filesystemEntry('2026.1.14'));
  await publish(everythingEntry('2026.8.31'));
  await publish(timeEntry('2026.10.19'));
}, 180_000);

afterAll(async () => {
  await registry?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('import from the real registry', () => {
  it('prints a pinned MCPServer for NAME@VERSION that the API server accepts', async () => {
    const printed = await cli(
      'import',
      `${NAMESPACE}/mcp-server-time@2026.10.19`,
      '--registry',
      registry.url,
      '-o',
      'json',
    );
    expect(printed.stderr).toContain('# mcp-operator import: from');
    expect(printed.stderr).toContain('pypi:mcp-server-time@2026.10.19');
    expect(printed.code).toBe(0);
    const server = JSON.parse(printed.stdout) as MCPServer;
    expect(server.spec).toMatchObject({
      command: ['uvx', 'mcp-server-time@2026.10.19'],
      args: ['--local-timezone', 'UTC'],
    });
    expect(server.metadata.annotations).toMatchObject({
      [REGISTRY_URL_ANNOTATION]: registry.url,
      [REGISTRY_NAME_ANNOTATION]: `${NAMESPACE}/mcp-server-time`,
      [REGISTRY_VERSION_ANNOTATION]: '2026.10.19',
    });
    const dryRun = await kubectl(
      kubeconfig,
      ['-n', ns.name, 'apply', '--dry-run=server', '-f', '-'],
      JSON.stringify(server),
    );
    expect(dryRun.stderr).toBe('');
    expect(dryRun.code).toBe(0);
  });

  it('stops on a missing required input, listing what is missing, and prints nothing', async () => {
    const missing = await cli('import', FILESYSTEM, '--registry', registry.url);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('needs inputs that were not given');
    expect(missing.stderr).toContain('--arg allowed_directory=VALUE');
    expect(missing.stdout).toBe('');
  });

  it('applies it, shows where it came from in status, and moves the pin when a newer version is imported', async () => {
    const applied = await importFiles('2026.1.14');
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain(`MCPServer ${ns.name}/files: ${FILESYSTEM} 2026.1.14`);
    // A person's approval, by its own field manager: the import must not take it away.
    const approval = {
      spec: {
        tools: { approved: { tools: [{ name: 'read_file', digest: `sha256:${'0'.repeat(64)}` }] } },
      },
    };
    const patched = await kubectl(kubeconfig, [
      '-n',
      ns.name,
      'patch',
      'mcps',
      'files',
      '--type=merge',
      '-p',
      JSON.stringify(approval),
    ]);
    expect(patched.stderr).toBe('');

    const status = await cli('status', 'files', '-n', ns.name);
    expect(status.stdout).toContain(
      `imported: ${FILESYSTEM} 2026.1.14 (npm:@modelcontextprotocol/server-filesystem@2026.1.14) from ${registry.url}`,
    );

    const current = await cli('outdated', '-n', ns.name);
    expect(current.stderr).toBe('');
    expect(current.code).toBe(0);
    expect(current.stdout).toMatch(
      new RegExp(`files\\s+${FILESYSTEM}\\s+2026\\.1\\.14\\s+2026\\.1\\.14`),
    );

    await publish(filesystemEntry('2026.8.31'));
    const outdated = await cli('outdated', '-n', ns.name, '-o', 'json');
    expect(outdated.code).toBe(1);
    expect(JSON.parse(outdated.stdout)).toEqual([
      expect.objectContaining({
        name: 'files',
        server: FILESYSTEM,
        current: '2026.1.14',
        latest: '2026.8.31',
      }),
    ]);
    expect((await cli('outdated', '-n', ns.name)).stdout).toContain(
      `import ${FILESYSTEM}@2026.8.31 --name files -n ${ns.name}`,
    );

    const moved = await importFiles('2026.8.31');
    expect(moved.stdout).toContain('(was 2026.1.14');
    const server = (await getServer('files'))!;
    expect(server.spec.command).toEqual([
      'npx',
      '-y',
      '@modelcontextprotocol/server-filesystem@2026.8.31',
    ]);
    expect(server.metadata.annotations?.[REGISTRY_VERSION_ANNOTATION]).toBe('2026.8.31');
    expect(server.spec.tools?.approved?.tools).toEqual(approval.spec.tools.approved.tools);
    expect((await cli('outdated', '-n', ns.name)).code).toBe(0);
  });

  it('will not overwrite an MCPServer that was not imported from the same entry', async () => {
    const other = await applyImport('files', `${NAMESPACE}/server-everything@2026.8.31`);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('exists and was not imported from it');
    expect((await getServer('files'))!.metadata.annotations?.[REGISTRY_NAME_ANNOTATION]).toBe(
      FILESYSTEM,
    );
  });

  it('exports what is recorded, with the registry provenance', async () => {
    const exported = await cli('export', 'files', '-n', ns.name);
    expect(exported.stderr).toBe('');
    const document = JSON.parse(exported.stdout) as {
      kind: string;
      servers: { registry?: unknown; discovered: boolean }[];
    };
    expect(document.kind).toBe('MCPServerCatalog');
    expect(document.servers).toEqual([
      expect.objectContaining({
        discovered: false,
        baseline: 'approved',
        registry: expect.objectContaining({ name: FILESYSTEM, version: '2026.8.31' }) as unknown,
      }),
    ]);
  });
});

describe('bad input against the real registry: a clear error, nothing applied', () => {
  /** Runs an import with --apply that must fail, and checks that nothing was created. */
  async function refused(name: string, ...args: string[]): Promise<string> {
    const result = await cli('import', ...args, '-n', ns.name, '--name', name, '--apply');
    expect(result.code).toBe(2);
    expect(await getServer(name)).toBeUndefined();
    return result.stderr;
  }

  it.each([
    ['name', 'body.name', { name: 'io.example/a/b' }],
    ['description', 'body.description', { description: 'x'.repeat(101) }],
    [
      'packages[0].transport',
      'body.packages[0]',
      { packages: [{ registryType: 'npm', identifier: 'x', version: '1.0.0' }] },
    ],
  ])(
    'an entry the registry itself refuses is refused here, at %s (the registry: %s)',
    async (field, location, change) => {
      const broken = { ...everythingEntry('1.0.0'), ...change };
      const verdict = await registry.validate(broken);
      expect(verdict.status).toBe(422);
      expect(JSON.stringify(verdict.body)).toContain(`"location":"${location}"`);
      const file = join(dir, 'server.json');
      await writeFile(file, JSON.stringify(broken));
      expect(await refused('broken', file)).toContain(`invalid at ${field}:`);
    },
  );

  it('a package the registry accepts without a version is refused: it would not be pinned', async () => {
    await publish({
      ...everythingEntry('1.0.0'),
      name: `${NAMESPACE}/unversioned`,
      packages: [
        {
          registryType: 'npm',
          identifier: '@modelcontextprotocol/server-everything',
          transport: { type: 'stdio' },
        },
      ],
    });
    expect(
      await refused('unversioned', `${NAMESPACE}/unversioned`, '--registry', registry.url),
    ).toContain('gives no version');
  });

  it('a package type it cannot run is refused, naming why', async () => {
    await publish({
      ...everythingEntry('1.0.0'),
      name: `${NAMESPACE}/dotnet-only`,
      packages: [
        {
          registryType: 'nuget',
          identifier: 'Knapcode.SampleMcpServer',
          version: '0.5.0',
          transport: { type: 'stdio' },
        },
      ],
    });
    expect(
      await refused('dotnet', `${NAMESPACE}/dotnet-only`, '--registry', registry.url),
    ).toContain('needs the .NET SDK');
  });

  it('a version range is refused with its reason, before the registry is asked', async () => {
    expect(await refused('range', `${FILESYSTEM}@^2026.1.0`, '--registry', registry.url)).toContain(
      'caret range accepts later releases',
    );
  });

  it('a name with path tricks is refused before the registry is asked', async () => {
    expect(
      await refused('tricks', 'io.x/../../v0.1/publish', '--registry', registry.url),
    ).toContain('namespace/server');
    expect(
      await refused('tricks', `${FILESYSTEM}@../../../v0.1/auth/none`, '--registry', registry.url),
    ).toContain('without spaces, slashes');
  });

  it('a server or version the registry does not have is its 404', async () => {
    expect(
      await refused('absent', `${NAMESPACE}/nothing-here@1.0.0`, '--registry', registry.url),
    ).toContain('HTTP 404');
    expect(await refused('absent', `${FILESYSTEM}@1.0.0`, '--registry', registry.url)).toContain(
      'HTTP 404',
    );
  });

  it('a registry that stops answering is a timeout', async () => {
    process.kill(registry.registry.pid, 'SIGSTOP');
    try {
      expect(
        await refused(
          'slow',
          `${FILESYSTEM}@2026.1.14`,
          '--registry',
          registry.url,
          '--timeout',
          '2s',
        ),
      ).toContain('did not answer within 2000 ms');
    } finally {
      process.kill(registry.registry.pid, 'SIGCONT');
    }
  });

  it('a registry that is down is unreachable', async () => {
    const port = await freePort();
    expect(
      await refused('down', `${FILESYSTEM}@2026.1.14`, '--registry', `http://127.0.0.1:${port}`),
    ).toContain('ECONNREFUSED');
  });
});
