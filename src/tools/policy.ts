/**
 * The enforcement policy of a stdio server under `driftPolicy: Enforce`, as a file: the tools
 * approved by digest, the allowlist, the OAuth scopes each tool needs, and the approved
 * prompts, resources and resource templates by digest (src/tools/catalog.ts digests). Render
 * writes it (src/controller/render/policy.ts), the bridge reads it and screens tools/list and
 * tools/call, prompts/list and prompts/get, resources/list, resources/templates/list and
 * resources/read by it (src/bridge/policy.ts, src/bridge/catalog-policy.ts).
 */

import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DIGEST_PATTERN } from '../tool-record.ts';
import { operatorError } from '../errors.ts';
import { CATALOG, CATALOG_KINDS, type CatalogKind } from './catalog.ts';

/** The approved items of one catalog kind: key (as the kind names it) and digest. */
function approvedItems(kind: CatalogKind) {
  const { key, noun } = CATALOG[kind];
  return Type.Optional(
    Type.Array(
      Type.Object(
        {
          [key]: Type.String({ minLength: 1 }),
          digest: Type.String({ pattern: DIGEST_PATTERN }),
        },
        { additionalProperties: false },
      ),
      {
        description: `Approved ${noun}s: ${key} and digest. Absent: ${noun}s are not screened.`,
      },
    ),
  );
}

export const PolicySchema = Type.Object(
  {
    approved: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1 }),
            digest: Type.String({ pattern: DIGEST_PATTERN }),
          },
          { additionalProperties: false },
        ),
        {
          description:
            'Approved tools: name and digest of the approved definition. Absent: no digest check.',
        },
      ),
    ),
    allow: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Tool names agents may see and call. Absent: every (approved) tool.',
      }),
    ),
    toolScopes: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 })), {
        description:
          'OAuth scopes a caller needs to see and call a tool, by tool name. Absent: no tool needs one.',
      }),
    ),
    prompts: approvedItems('prompts'),
    resources: approvedItems('resources'),
    resourceTemplates: approvedItems('resourceTemplates'),
  },
  { additionalProperties: false },
);

export type BridgePolicy = Static<typeof PolicySchema>;

const checkPolicy = TypeCompiler.Compile(PolicySchema);

/** Parses and validates a policy file; throws MCPOP_POLICY_INVALID naming the first problem. */
export function parsePolicy(text: string, file = 'policy'): BridgePolicy {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw operatorError('MCPOP_POLICY_INVALID', file, `not JSON: ${(error as Error).message}`);
  }
  const problem = checkPolicy.Errors(value).First();
  if (problem)
    throw operatorError('MCPOP_POLICY_INVALID', file, `${problem.path || '/'}: ${problem.message}`);
  const policy = value as BridgePolicy;
  const twice = (noun: string, keys: readonly string[] = []) => {
    const duplicate = keys.find((key, index) => keys.indexOf(key) !== index);
    if (duplicate !== undefined)
      throw operatorError('MCPOP_POLICY_INVALID', file, `${noun} ${duplicate} is approved twice`);
  };
  twice(
    'tool',
    policy.approved?.map((tool) => tool.name),
  );
  for (const kind of CATALOG_KINDS) {
    const { key, noun } = CATALOG[kind];
    twice(
      noun,
      policy[kind]?.map((item) => item[key]!),
    );
  }
  return policy;
}
