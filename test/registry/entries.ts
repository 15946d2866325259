/**
 * server.json entries of servers the tests run, written for the schema of 2025-12-11 as their
 * publishers would: the npm filesystem server at the two releases the images hold (one whose
 * tools drift from the other), the npm everything server and the PyPI time server. Names are in
 * the registry's anonymous namespace, the one its local mode (`ENABLE_ANONYMOUS_AUTH`) lets a
 * test publish to.
 */
import { SERVER_SCHEMA_URL, type ServerJson } from '../../src/registry/server-json.ts';

export const NAMESPACE = 'io.modelcontextprotocol.anonymous';
const REPOSITORY = { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' };

export function filesystemEntry(version: string): ServerJson {
  return {
    $schema: SERVER_SCHEMA_URL,
    name: `${NAMESPACE}/server-filesystem`,
    title: 'Filesystem',
    description: 'Secure file operations with configurable access controls',
    repository: { ...REPOSITORY, subfolder: 'src/filesystem' },
    version,
    packages: [
      {
        registryType: 'npm',
        registryBaseUrl: 'https://registry.npmjs.org',
        identifier: '@modelcontextprotocol/server-filesystem',
        version,
        transport: { type: 'stdio' },
        packageArguments: [
          {
            type: 'positional',
            valueHint: 'allowed_directory',
            description: 'A directory the server may read and write',
            isRequired: true,
            isRepeated: true,
          },
        ],
      },
    ],
  };
}

export function everythingEntry(version: string): ServerJson {
  return {
    $schema: SERVER_SCHEMA_URL,
    name: `${NAMESPACE}/server-everything`,
    title: 'Everything',
    description: 'MCP server that exercises all the features of the MCP protocol',
    repository: { ...REPOSITORY, subfolder: 'src/everything' },
    version,
    packages: [
      {
        registryType: 'npm',
        registryBaseUrl: 'https://registry.npmjs.org',
        identifier: '@modelcontextprotocol/server-everything',
        version,
        transport: { type: 'stdio' },
      },
    ],
  };
}

export function timeEntry(version: string): ServerJson {
  return {
    $schema: SERVER_SCHEMA_URL,
    name: `${NAMESPACE}/mcp-server-time`,
    title: 'Time',
    description: 'Time and timezone conversion capabilities',
    repository: { ...REPOSITORY, subfolder: 'src/time' },
    version,
    packages: [
      {
        registryType: 'pypi',
        registryBaseUrl: 'https://pypi.org',
        identifier: 'mcp-server-time',
        version,
        runtimeHint: 'uvx',
        transport: { type: 'stdio' },
        packageArguments: [
          {
            type: 'named',
            name: '--local-timezone',
            description: 'IANA timezone name used as the local one',
            default: 'UTC',
          },
        ],
      },
    ],
  };
}
