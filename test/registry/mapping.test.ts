import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { structural } from '../../src/api/crd.ts';
import { MCPServerSchema } from '../../src/api/v1alpha1/mcpserver.ts';
import { registryProvenance } from '../../src/api/registry-provenance.ts';
import { OperatorError } from '../../src/errors.ts';
import type { GivenInputs } from '../../src/registry/inputs.ts';
import { type ImportChoices, planImport, serverName } from '../../src/registry/mapping.ts';
import type { ServerJson } from '../../src/registry/server-json.ts';
import { everythingEntry, filesystemEntry, timeEntry } from './entries.ts';

const REGISTRY = 'http://127.0.0.1:9/registry';
const origin = { registry: REGISTRY, source: 'test' };

function given(
  parts: Partial<Record<keyof GivenInputs, Record<string, string[]>>> = {},
): GivenInputs {
  const map = (record: Record<string, string[]> = {}) => new Map(Object.entries(record));
  return { env: map(parts.env), args: map(parts.args), headers: map(parts.headers) };
}

function plan(entry: ServerJson, choices: Partial<ImportChoices> = {}) {
  return planImport(entry, origin, { inputs: given(), ...choices });
}

/** The error `run` throws, as an OperatorError. */
function failure(run: () => unknown): OperatorError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OperatorError);
    return error as OperatorError;
  }
  throw new Error('expected an error');
}

// The MCPServer schema as the CRD carries it; the API server's own verdict (CEL rules too) is
// in registry.cluster.test.ts.
const validSpec = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(
  structural(MCPServerSchema),
);

describe('planImport', () => {
  it('runs an npm package with npx at its exact version, positional arguments after it', () => {
    const { server, chosen } = plan(filesystemEntry('2026.1.14'), {
      inputs: given({ args: { allowed_directory: ['/data', '/tmp'] } }),
    });
    expect(server.spec).toEqual({
      image: 'node:24-bookworm-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-filesystem@2026.1.14'],
      args: ['/data', '/tmp'],
    });
    expect(server.metadata.name).toBe('server-filesystem');
    expect(chosen).toBe('npm:@modelcontextprotocol/server-filesystem@2026.1.14');
    expect(validSpec(server)).toBe(true);
  });

  it('records the registry, name, version and package as annotations', () => {
    const { server } = plan(everythingEntry('2026.8.31'), {
      name: 'everything',
      namespace: 'apps',
    });
    expect(server.metadata).toMatchObject({ name: 'everything', namespace: 'apps' });
    expect(registryProvenance(server.metadata.annotations as Record<string, string>)).toEqual({
      registry: REGISTRY,
      name: 'io.modelcontextprotocol.anonymous/server-everything',
      version: '2026.8.31',
      package: 'npm:@modelcontextprotocol/server-everything@2026.8.31',
    });
  });

  it('runs a PyPI package with uvx name@version; a named argument is its flag and value', () => {
    const { server } = plan(timeEntry('2026.10.19'), {
      inputs: given({ args: { 'local-timezone': ['Europe/Paris'] } }),
    });
    expect(server.spec).toMatchObject({
      image: 'ghcr.io/astral-sh/uv:python3.11-bookworm-slim',
      command: ['uvx', 'mcp-server-time@2026.10.19'],
      args: ['--local-timezone', 'Europe/Paris'],
    });
    expect(plan(timeEntry('2026.10.19')).server.spec.args).toEqual(['--local-timezone', 'UTC']);
  });

  it('stops on missing required inputs and lists all of them', () => {
    const entry = filesystemEntry('1.0.0');
    entry.packages![0]!.environmentVariables = [
      { name: 'API_KEY', isRequired: true, isSecret: true, description: 'the key' },
      { name: 'MODE', isRequired: true, choices: ['a', 'b'] },
    ];
    const error = failure(() => plan(entry));
    expect(error.code).toBe('MCPOP_IMPORT_MISSING_INPUTS');
    expect(error.message).toContain('package argument allowed_directory');
    expect(error.message).toContain('--arg allowed_directory=VALUE');
    expect(error.message).toContain(
      'environment variable API_KEY (the key) is a secret: give --secret SECRET',
    );
    expect(error.message).toContain('environment variable MODE');
  });

  it('maps a secret variable to a secretKeyRef into the named Secret, a plain one to a value', () => {
    const entry = everythingEntry('1.2.3');
    entry.packages![0]!.environmentVariables = [
      { name: 'API_KEY', isRequired: true, isSecret: true },
      { name: 'OPTIONAL_TOKEN', isSecret: true },
      { name: 'LOG_LEVEL', default: 'info' },
      { name: 'REGION', isRequired: true },
    ];
    const result = plan(entry, { secret: 'keys', inputs: given({ env: { REGION: ['eu'] } }) });
    expect(result.server.spec.env).toEqual([
      { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'keys', key: 'API_KEY' } } },
      {
        name: 'OPTIONAL_TOKEN',
        valueFrom: { secretKeyRef: { name: 'keys', key: 'OPTIONAL_TOKEN', optional: true } },
      },
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'REGION', value: 'eu' },
    ]);
    expect(result.secret).toEqual({ name: 'keys', keys: ['API_KEY'] });
    expect(result.notes).toContain(
      'environment variable OPTIONAL_TOKEN (optional) comes from key OPTIONAL_TOKEN of Secret keys when it holds one',
    );
  });

  it('refuses a secret given on the command line, and inputs the entry does not declare', () => {
    const entry = everythingEntry('1.2.3');
    entry.packages![0]!.environmentVariables = [{ name: 'API_KEY', isSecret: true }];
    const error = failure(() =>
      plan(entry, { inputs: given({ env: { API_KEY: ['s3cret'], TYPO: ['x'] } }) }),
    );
    expect(error.message).toContain('API_KEY is a secret: put it in a Secret');
    expect(error.message).toContain('--env TYPO: the entry declares no such input');
    expect(error.message).not.toContain('s3cret');
  });

  it('keeps arguments in the entry order: runtime ones before the package, fixed values filled in', () => {
    const entry = everythingEntry('1.2.3');
    entry.packages![0]!.runtimeArguments = [{ type: 'named', name: '--prefer-offline' }];
    entry.packages![0]!.packageArguments = [
      { type: 'positional', value: 'serve' },
      {
        type: 'named',
        name: '--root',
        value: '/srv/{site}',
        variables: { site: { isRequired: true } },
      },
      { type: 'positional', valueHint: 'extra', isRepeated: true },
    ];
    const { server } = plan(entry, {
      inputs: given({ args: { site: ['blog'], extra: ['a', 'b'], 'prefer-offline': [''] } }),
    });
    expect(server.spec.command).toEqual([
      'npx',
      '-y',
      '--prefer-offline',
      '@modelcontextprotocol/server-everything@1.2.3',
    ]);
    expect(server.spec.args).toEqual(['serve', '--root', '/srv/blog', 'a', 'b']);
  });

  it.each([
    ['^1.2.3', 'caret range'],
    ['~1.2.3', 'tilde range'],
    ['>=1.2.0', 'comparison'],
    ['1.x', 'wildcard'],
    ['*', 'wildcard'],
    ['next', 'tag, which moves'],
    ['1.2', 'full semantic version'],
    ['1.2.3 || 2.0.0', 'set of ranges'],
  ])('refuses the npm version %s and says why (%s)', (version, why) => {
    const error = failure(() => plan(everythingEntry(version)));
    expect(error.code).toBe('MCPOP_IMPORT_UNPINNED');
    expect(error.message).toContain(why);
    expect(error.message).toContain(JSON.stringify(version));
  });

  it('refuses a PyPI range and a package without a version', () => {
    expect(failure(() => plan(timeEntry('~=2026.10'))).message).toContain('comparison');
    const entry = timeEntry('1.0.0');
    delete entry.packages![0]!.version;
    const error = failure(() => plan(entry));
    expect(error.code).toBe('MCPOP_IMPORT_UNPINNED');
    expect(error.message).toContain('gives no version');
  });

  it('runs an OCI image by digest, and refuses one without a tag or digest', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const entry: ServerJson = {
      name: 'io.example/oci',
      description: 'x',
      version: '1.0.0',
      packages: [
        {
          registryType: 'oci',
          identifier: `ghcr.io/example/mcp:1.0.0@${digest}`,
          transport: { type: 'streamable-http', url: 'http://localhost:3000/mcp' },
        },
      ],
    };
    const { server } = plan(entry);
    expect(server.spec).toEqual({
      image: `ghcr.io/example/mcp:1.0.0@${digest}`,
      transport: 'streamable-http',
      port: 3000,
    });
    entry.packages![0]!.identifier = 'ghcr.io/example/mcp';
    expect(failure(() => plan(entry)).message).toContain('without a tag or digest');
    entry.packages![0]!.identifier = 'registry.example:5000/mcp:latest';
    expect(failure(() => plan(entry)).message).toContain('latest moves');
  });

  it('asks for the command of a stdio OCI image, and leaves docker run flags out', () => {
    const entry: ServerJson = {
      name: 'io.example/oci',
      description: 'x',
      version: '1.0.0',
      packages: [
        {
          registryType: 'oci',
          identifier: 'docker.io/mcp/filesystem:1.0.2',
          transport: { type: 'stdio' },
          runtimeArguments: [{ type: 'named', name: '--network', value: 'host' }],
          packageArguments: [{ type: 'positional', value: '/project' }],
        },
      ],
    };
    expect(failure(() => plan(entry)).message).toContain('give --command');
    const result = plan(entry, { command: ['node', '/app/dist/index.js'] });
    expect(result.server.spec).toMatchObject({
      command: ['node', '/app/dist/index.js'],
      args: ['/project'],
    });
    expect(result.notes.join('\n')).toMatch(/--network \(a docker run flag\) is left out/);
    expect(result.notes.join('\n')).toMatch(/pinned by its tag 1.0.2 only/);
  });

  it('prefers npm to an OCI image, and --package chooses another', () => {
    const entry = filesystemEntry('1.0.0');
    entry.packages!.unshift({
      registryType: 'oci',
      identifier: 'docker.io/mcp/fs:1.0.0',
      transport: { type: 'stdio' },
    });
    const inputs = given({ args: { allowed_directory: ['/tmp'] } });
    expect(plan(entry, { inputs }).chosen).toMatch(/^npm:/);
    expect(plan(entry, { package: 'oci', command: ['fs'] }).chosen).toBe(
      'oci:docker.io/mcp/fs:1.0.0',
    );
    expect(failure(() => plan(entry, { inputs, package: 'pypi' })).message).toContain(
      '--package pypi matches none',
    );
  });

  it('refuses unknown and unrunnable package types, naming each', () => {
    const entry: ServerJson = {
      name: 'io.example/odd',
      description: 'x',
      version: '1.0.0',
      packages: [
        {
          registryType: 'nuget',
          identifier: 'Odd',
          version: '1.0.0',
          transport: { type: 'stdio' },
        },
        { registryType: 'gem', identifier: 'odd', version: '1.0.0', transport: { type: 'stdio' } },
        {
          registryType: 'npm',
          identifier: 'odd',
          version: '1.0.0',
          transport: { type: 'sse', url: 'http://localhost:1/sse' },
        },
      ],
    };
    const error = failure(() => plan(entry));
    expect(error.code).toBe('MCPOP_IMPORT_NO_PACKAGE');
    expect(error.message).toContain('needs the .NET SDK');
    expect(error.message).toContain('registry type "gem" is not one mcp-operator knows');
    expect(error.message).toContain('HTTP+SSE transport');
  });

  it('makes a remote a url server with its bearer token from the Secret, URL variables filled in', () => {
    const entry: ServerJson = {
      name: 'io.example/remote',
      description: 'x',
      version: '2.0.0',
      remotes: [
        {
          type: 'streamable-http',
          url: 'https://mcp.example.com/{tenant}/mcp',
          variables: { tenant: { isRequired: true } },
          headers: [
            { name: 'Authorization', isRequired: true, isSecret: true, value: 'Bearer {token}' },
          ],
        },
      ],
    };
    const missing = failure(() => plan(entry));
    expect(missing.message).toContain('variable {tenant}');
    expect(missing.message).toContain('header Authorization');
    const { server, secret } = plan(entry, {
      secret: 'remote-token',
      inputs: given({ args: { tenant: ['acme'] } }),
    });
    expect(server.spec).toEqual({
      url: 'https://mcp.example.com/acme/mcp',
      auth: { secretRef: { name: 'remote-token' } },
    });
    expect(secret).toEqual({ name: 'remote-token', keys: ['token'] });
    expect(validSpec(server)).toBe(true);
  });

  it('refuses a remote that needs a header other than a bearer token', () => {
    const entry: ServerJson = {
      name: 'io.example/remote',
      description: 'x',
      version: '2.0.0',
      remotes: [
        {
          type: 'streamable-http',
          url: 'https://mcp.example.com/mcp',
          headers: [{ name: 'X-API-Key', isRequired: true, isSecret: true }],
        },
      ],
    };
    expect(failure(() => plan(entry, { secret: 's' })).message).toContain(
      'sends only a bearer token',
    );
  });
});

describe('serverName', () => {
  it.each([
    ['io.github.modelcontextprotocol/server-filesystem', 'server-filesystem'],
    ['com.example/My_Server.v2', 'my-server-v2'],
    ['com.example/2fa-tool', 'fa-tool'],
  ])('%s → %s', (name, expected) => {
    expect(serverName(name)).toBe(expected);
  });

  it('asks for --name when nothing is left', () => {
    expect(() => serverName('com.example/123')).toThrow(/give --name/);
  });
});
