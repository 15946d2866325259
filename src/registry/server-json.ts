/**
 * `server.json`, the entry the MCP Registry serves for one version of one server, as TypeBox
 * schemas (the types are derived from them). They hold what the registry's published schema
 * (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json, draft-07)
 * requires, field by field, and let everything else through, as that schema does: publishers
 * and later revisions add fields. test/registry/server-json.test.ts runs the published schema
 * and this one over the same documents and expects the same answer.
 *
 * Two of the published schema's unions are written here as one object with a discriminant
 * (`type` of a transport, of an argument), so that a refused entry is reported at the field
 * that is wrong, not as "matches no alternative" at its parent.
 */

import { Type, type Static } from '@sinclair/typebox';
import { checker } from '../mcp/schemas.ts';
import { operatorError } from '../errors.ts';

const Open = { additionalProperties: true } as const;

/** The URL of the schema revision these schemas follow, as entries name it in `$schema`. */
export const SERVER_SCHEMA_URL =
  'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** `^https?://` and no whitespace: the published pattern of a transport's URL. */
const HTTP_URL_PATTERN = '^https?://[^\\s]+$';
/** A server's name: reverse-DNS namespace, one slash, the server. */
export const SERVER_NAME_PATTERN = '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$';
export const SERVER_NAME_MIN = 3;
export const SERVER_NAME_MAX = 200;

const INPUT_FORMATS = ['string', 'number', 'boolean', 'filepath'] as const;

const inputFields = {
  description: Type.Optional(Type.String()),
  isRequired: Type.Optional(Type.Boolean()),
  isSecret: Type.Optional(Type.Boolean()),
  format: Type.Optional(Type.Union(INPUT_FORMATS.map((f) => Type.Literal(f)))),
  value: Type.Optional(Type.String()),
  default: Type.Optional(Type.String()),
  placeholder: Type.Optional(Type.String()),
  choices: Type.Optional(Type.Array(Type.String())),
};

/** `Input`: a value the user may have to give (a variable of a value, a remote URL's part). */
export const InputSchema = Type.Object(inputFields, Open);
export type Input = Static<typeof InputSchema>;

const withVariables = {
  ...inputFields,
  variables: Type.Optional(Type.Record(Type.String(), InputSchema)),
};

/** `KeyValueInput`: an environment variable or an HTTP header. */
export const KeyValueInputSchema = Type.Object({ ...withVariables, name: Type.String() }, Open);
export type KeyValueInput = Static<typeof KeyValueInputSchema>;

/**
 * `PositionalArgument` | `NamedArgument`. A positional one needs `value` or `valueHint`
 * (checked in `checkEntry`: a schema union would blame the parent); a named one needs `name`.
 */
export const ArgumentSchema = Type.Object(
  {
    ...withVariables,
    type: Type.Union([Type.Literal('positional'), Type.Literal('named')]),
    name: Type.Optional(Type.String()),
    valueHint: Type.Optional(Type.String()),
    isRepeated: Type.Optional(Type.Boolean()),
  },
  Open,
);
export type Argument = Static<typeof ArgumentSchema>;

const transportFields = {
  url: Type.Optional(Type.String({ pattern: HTTP_URL_PATTERN })),
  headers: Type.Optional(Type.Array(KeyValueInputSchema)),
};

/** `LocalTransport`: how a package speaks MCP once started. */
export const LocalTransportSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('stdio'), Type.Literal('streamable-http'), Type.Literal('sse')]),
    ...transportFields,
  },
  Open,
);
export type LocalTransport = Static<typeof LocalTransportSchema>;

/** `RemoteTransport`: a server that already runs somewhere. */
export const RemoteTransportSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('streamable-http'), Type.Literal('sse')]),
    ...transportFields,
    variables: Type.Optional(Type.Record(Type.String(), InputSchema)),
  },
  Open,
);
export type RemoteTransport = Static<typeof RemoteTransportSchema>;

export const PackageSchema = Type.Object(
  {
    registryType: Type.String(),
    registryBaseUrl: Type.Optional(Type.String()),
    identifier: Type.String(),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    fileSha256: Type.Optional(Type.String({ pattern: '^[a-f0-9]{64}$' })),
    runtimeHint: Type.Optional(Type.String()),
    transport: LocalTransportSchema,
    runtimeArguments: Type.Optional(Type.Array(ArgumentSchema)),
    packageArguments: Type.Optional(Type.Array(ArgumentSchema)),
    environmentVariables: Type.Optional(Type.Array(KeyValueInputSchema)),
  },
  Open,
);
export type Package = Static<typeof PackageSchema>;

export const ServerJsonSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    name: Type.String({
      pattern: SERVER_NAME_PATTERN,
      minLength: SERVER_NAME_MIN,
      maxLength: SERVER_NAME_MAX,
    }),
    description: Type.String({ minLength: 1, maxLength: 100 }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    version: Type.String({ maxLength: 255 }),
    websiteUrl: Type.Optional(Type.String()),
    repository: Type.Optional(
      Type.Object(
        {
          url: Type.String(),
          source: Type.String(),
          id: Type.Optional(Type.String()),
          subfolder: Type.Optional(Type.String()),
        },
        Open,
      ),
    ),
    icons: Type.Optional(
      Type.Array(
        Type.Object(
          {
            src: Type.String({ maxLength: 255 }),
            mimeType: Type.Optional(
              Type.Union(
                ['image/png', 'image/jpeg', 'image/jpg', 'image/svg+xml', 'image/webp'].map((m) =>
                  Type.Literal(m),
                ),
              ),
            ),
            sizes: Type.Optional(Type.Array(Type.String({ pattern: '^(\\d+x\\d+|any)$' }))),
            theme: Type.Optional(Type.Union([Type.Literal('light'), Type.Literal('dark')])),
          },
          Open,
        ),
      ),
    ),
    packages: Type.Optional(Type.Array(PackageSchema)),
    remotes: Type.Optional(Type.Array(RemoteTransportSchema)),
    _meta: Type.Optional(
      Type.Object(
        {
          'io.modelcontextprotocol.registry/publisher-provided': Type.Optional(
            Type.Record(Type.String(), Type.Unknown()),
          ),
        },
        Open,
      ),
    ),
  },
  Open,
);
export type ServerJson = Static<typeof ServerJsonSchema>;

/**
 * A registry's answer for one version (`GET /v0.1/servers/{name}/versions/{version}`): the
 * entry and what the registry adds about it (status, whether it is the latest).
 */
export const ServerResponseSchema = Type.Object(
  {
    server: Type.Unknown(),
    _meta: Type.Optional(
      Type.Object(
        {
          'io.modelcontextprotocol.registry/official': Type.Optional(
            Type.Object(
              {
                status: Type.Optional(Type.String()),
                isLatest: Type.Optional(Type.Boolean()),
                publishedAt: Type.Optional(Type.String()),
              },
              Open,
            ),
          ),
        },
        Open,
      ),
    ),
  },
  Open,
);
export type ServerResponse = Static<typeof ServerResponseSchema>;

/** A list of entries (`GET /v0.1/servers/{name}/versions`). */
export const ServerListSchema = Type.Object({ servers: Type.Array(ServerResponseSchema) }, Open);

const entryChecker = checker(ServerJsonSchema);

/** `/packages/0/transport/type` as `packages[0].transport.type`, the way a reader names it. */
export function fieldName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part),
      '',
    );
}

/**
 * `value` as a server.json entry, or MCPOP_REGISTRY_ENTRY_INVALID naming the first field that is
 * wrong. `source` says where it came from (a file, a URL, a registry and name).
 */
export function checkEntry(value: unknown, source: string): ServerJson {
  if (!entryChecker.check(value)) {
    const { path, message } = entryChecker.firstError(value);
    throw operatorError('MCPOP_REGISTRY_ENTRY_INVALID', source, fieldName(path), message);
  }
  const problem = packageProblem(value) ?? transportProblem(value);
  if (problem !== undefined)
    throw operatorError('MCPOP_REGISTRY_ENTRY_INVALID', source, problem.field, problem.message);
  return value;
}

interface Problem {
  field: string;
  message: string;
}

/** What the published schema's argument union requires of each alternative, and no `latest`. */
function packageProblem(entry: ServerJson): Problem | undefined {
  for (const [p, pkg] of (entry.packages ?? []).entries()) {
    // The published schema says `"not": {"const": "latest"}`: a tag, not a version.
    if (pkg.version === 'latest')
      return { field: `packages[${p}].version`, message: "must be a version, not 'latest'" };
    for (const list of ['runtimeArguments', 'packageArguments'] as const) {
      for (const [i, arg] of (pkg[list] ?? []).entries()) {
        const field = `packages[${p}].${list}[${i}]`;
        if (arg.type === 'named' && arg.name === undefined)
          return { field: `${field}.name`, message: 'a named argument needs its flag name' };
        if (arg.type === 'positional' && arg.value === undefined && arg.valueHint === undefined)
          return { field, message: 'a positional argument needs a value or a valueHint' };
      }
    }
  }
  return undefined;
}

/** A streamable-http or SSE transport has a URL (a stdio one needs none). */
function transportProblem(entry: ServerJson): Problem | undefined {
  const transports: [string, LocalTransport | RemoteTransport][] = [
    ...(entry.packages ?? []).map((pkg, p): [string, LocalTransport] => [
      `packages[${p}].transport`,
      pkg.transport,
    ]),
    ...(entry.remotes ?? []).map((remote, r): [string, RemoteTransport] => [
      `remotes[${r}]`,
      remote,
    ]),
  ];
  for (const [field, transport] of transports) {
    if (transport.type !== 'stdio' && transport.url === undefined)
      return { field: `${field}.url`, message: `a ${transport.type} transport needs a url` };
  }
  return undefined;
}
