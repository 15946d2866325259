/**
 * The server.json schema here against the one the registry publishes: the schema of
 * 2025-12-11 as the registry v1.8.9 module embeds it (fixtures/server.schema.2025-12-11.json,
 * a verbatim copy of the published file). Both judge the same entries, valid and broken, and
 * must agree; a refused entry is reported at the field that is wrong. Formats (`uri`) are
 * checked by neither.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { OperatorError } from '../../src/errors.ts';
import { checkEntry, fieldName, type ServerJson } from '../../src/registry/server-json.ts';
import { everythingEntry, filesystemEntry, timeEntry } from './entries.ts';

const published = JSON.parse(
  await readFile(join(import.meta.dirname, 'fixtures/server.schema.2025-12-11.json'), 'utf8'),
) as object;
const validatePublished = new Ajv({ strict: false, validateFormats: false }).compile(published);

/** An entry to break: any field may be set to anything. */
type Doc = Record<string, unknown> & { packages: Record<string, unknown>[] };
type Mutation = [string, (entry: Doc) => void, string];

const remoteEntry = (): ServerJson => ({
  name: 'io.example/remote',
  description: 'A remote server',
  version: '1.0.0',
  remotes: [
    {
      type: 'streamable-http',
      url: 'https://mcp.example.com/{tenant}/mcp',
      variables: { tenant: { isRequired: true } },
      headers: [{ name: 'Authorization', isSecret: true }],
    },
  ],
});

const VALID: [string, ServerJson][] = [
  ['filesystem', filesystemEntry('2026.1.14')],
  ['everything', everythingEntry('2026.8.31')],
  ['time', timeEntry('2026.10.19')],
  ['remote', remoteEntry()],
  ['unknown fields kept', { ...everythingEntry('1.0.0'), extra: { x: 1 } } as ServerJson],
  ['no packages at all', { name: 'a.b/c', description: 'd', version: '1' }],
];

/** Each breaks one rule of the published schema; the field our check names is the third. */
const BROKEN: Mutation[] = [
  ['no name', (e) => delete e.name, 'name'],
  ['a name without a slash', (e) => (e.name = 'example-server'), 'name'],
  ['a name with two slashes', (e) => (e.name = 'io.example/a/b'), 'name'],
  ['a name with a space', (e) => (e.name = 'io.example/a b'), 'name'],
  ['a name too long', (e) => (e.name = `io.example/${'a'.repeat(200)}`), 'name'],
  ['no description', (e) => delete e.description, 'description'],
  ['a description over 100 characters', (e) => (e.description = 'x'.repeat(101)), 'description'],
  ['no version', (e) => delete e.version, 'version'],
  ['a version over 255 characters', (e) => (e.version = '1'.repeat(256)), 'version'],
  ['a number for a version', (e) => (e.version = 1), 'version'],
  ['an empty title', (e) => (e.title = ''), 'title'],
  ['a package without transport', (e) => delete e.packages[0]!.transport, 'packages[0].transport'],
  [
    'a package without identifier',
    (e) => delete e.packages[0]!.identifier,
    'packages[0].identifier',
  ],
  [
    'a package without registryType',
    (e) => delete e.packages[0]!.registryType,
    'packages[0].registryType',
  ],
  ['a package version latest', (e) => (e.packages[0]!.version = 'latest'), 'packages[0].version'],
  ['an empty package version', (e) => (e.packages[0]!.version = ''), 'packages[0].version'],
  [
    'an unknown transport',
    (e) => (e.packages[0]!.transport = { type: 'websocket' }),
    'packages[0].transport.type',
  ],
  [
    'an http transport without url',
    (e) => (e.packages[0]!.transport = { type: 'streamable-http' }),
    'packages[0].transport.url',
  ],
  [
    'a transport url that is not http',
    (e) => (e.packages[0]!.transport = { type: 'sse', url: 'ftp://x/y' }),
    'packages[0].transport.url',
  ],
  [
    'an argument of no known type',
    (e) => (e.packages[0]!.packageArguments = [{ type: 'flag', name: '-x' }]),
    'packages[0].packageArguments[0].type',
  ],
  [
    'a named argument without its name',
    (e) => (e.packages[0]!.packageArguments = [{ type: 'named', value: 'x' }]),
    'packages[0].packageArguments[0].name',
  ],
  [
    'a positional argument with neither value nor hint',
    (e) => (e.packages[0]!.packageArguments = [{ type: 'positional' }]),
    'packages[0].packageArguments[0]',
  ],
  [
    'an environment variable without name',
    (e) => (e.packages[0]!.environmentVariables = [{ value: 'x' }]),
    'packages[0].environmentVariables[0].name',
  ],
  [
    'a boolean given as text',
    (e) => (e.packages[0]!.environmentVariables = [{ name: 'A', isSecret: 'yes' }]),
    'packages[0].environmentVariables[0].isSecret',
  ],
  [
    'an unknown input format',
    (e) => (e.packages[0]!.environmentVariables = [{ name: 'A', format: 'date' }]),
    'packages[0].environmentVariables[0].format',
  ],
  ['a bad fileSha256', (e) => (e.packages[0]!.fileSha256 = 'abc'), 'packages[0].fileSha256'],
  ['a remote of transport stdio', (e) => (e.remotes = [{ type: 'stdio' }]), 'remotes[0].type'],
  ['a remote without url', (e) => (e.remotes = [{ type: 'sse' }]), 'remotes[0].url'],
  [
    'an icon of an unknown type',
    (e) => (e.icons = [{ src: 'https://x/i.gif', mimeType: 'image/gif' }]),
    'icons[0].mimeType',
  ],
  [
    'a repository without source',
    (e) => (e.repository = { url: 'https://x' }),
    'repository.source',
  ],
  [
    'packages that are not a list',
    (e) => ((e as Record<string, unknown>).packages = {}),
    'packages',
  ],
];

function refusal(entry: unknown): OperatorError {
  try {
    checkEntry(entry, 'test');
  } catch (error) {
    expect(error).toBeInstanceOf(OperatorError);
    return error as OperatorError;
  }
  throw new Error('the entry was accepted');
}

describe('server.json', () => {
  it.each(VALID)('accepts %s, as the published schema does', (_, entry) => {
    expect(validatePublished(entry)).toBe(true);
    expect(checkEntry(structuredClone(entry), 'test')).toEqual(entry);
  });

  it.each(BROKEN)(
    'refuses %s, as the published schema does, naming the field',
    (_, mutate, field) => {
      const entry = structuredClone(everythingEntry('1.0.0')) as unknown as Doc;
      mutate(entry);
      expect(validatePublished(entry)).toBe(false);
      const error = refusal(entry);
      expect(error.code).toBe('MCPOP_REGISTRY_ENTRY_INVALID');
      expect(error.message).toContain(`invalid at ${field}:`);
    },
  );

  it('refuses what is not an object at all', () => {
    for (const value of [null, [], 'server', 42]) {
      expect(validatePublished(value)).toBe(false);
      expect(refusal(value).message).toContain('invalid at its root');
    }
  });
});

describe('fieldName', () => {
  it.each([
    ['', ''],
    ['/name', 'name'],
    ['/packages/0/transport/type', 'packages[0].transport.type'],
    [
      '/_meta/io.modelcontextprotocol.registry~1publisher-provided',
      '_meta.io.modelcontextprotocol.registry/publisher-provided',
    ],
  ])('%s → %s', (pointer, name) => {
    expect(fieldName(pointer)).toBe(name);
  });
});
