/**
 * The parts of MCP answers that discovery reads, as TypeBox schemas (types derived from them).
 * They check what discovery relies on and let everything else through (`additionalProperties`
 * stays open: servers may add fields, and later revisions add more), so that an invalid answer
 * is reported with the path of the field that was wrong.
 *
 * Sources: /work/shared/mcp-spec/2025-11-25/schema/schema.ts and 2026-07-28/schema/schema.ts
 * (`JSONRPCResponse`, `InitializeResult`, `DiscoverResult`, `ListToolsResult`, `Tool`).
 */

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { JsonRpcErrorObjectSchema } from './jsonrpc.ts';

const Open = { additionalProperties: true } as const;
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const ImplementationSchema = Type.Object(
  { name: Type.String(), version: Type.String(), title: Type.Optional(Type.String()) },
  Open,
);
export type Implementation = Static<typeof ImplementationSchema>;

/** An error body without a response around it, as servers send with a 4xx status. */
export const ErrorEnvelopeSchema = Type.Object({ error: JsonRpcErrorObjectSchema }, Open);

/** MCP `ToolAnnotations`: hints only, but their types are fixed. */
const ToolAnnotationsSchema = Type.Object(
  {
    title: Type.Optional(Type.String()),
    readOnlyHint: Type.Optional(Type.Boolean()),
    destructiveHint: Type.Optional(Type.Boolean()),
    idempotentHint: Type.Optional(Type.Boolean()),
    openWorldHint: Type.Optional(Type.Boolean()),
  },
  Open,
);

/** MCP `Tool`. `inputSchema` must be an object schema at the root in both revisions. */
export const ToolSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    inputSchema: Type.Unsafe<{ type: 'object'; [key: string]: unknown }>(
      Type.Object({ type: Type.Literal('object') }, Open),
    ),
    outputSchema: Type.Optional(JsonObject),
    annotations: Type.Optional(ToolAnnotationsSchema),
    execution: Type.Optional(JsonObject),
    icons: Type.Optional(Type.Array(JsonObject)),
    _meta: Type.Optional(JsonObject),
  },
  Open,
);
export type Tool = Static<typeof ToolSchema>;

/**
 * A tools/list page. Each entry is checked against ToolSchema on its own (src/tools/findings.ts):
 * a tool that breaks it is still recorded, with the violation as a finding. Only an answer that
 * is not a list of tools at all fails discovery.
 */
export const ListToolsResultSchema = Type.Object(
  {
    tools: Type.Array(Type.Unknown()),
    // Some servers write `null` for "no more pages"; that means the same as leaving it out.
    nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    resultType: Type.Optional(Type.String()),
  },
  Open,
);

/** A page of prompts/list, resources/list or resources/templates/list; items are checked by kind. */
export const ListResultSchema = Type.Object(
  { nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])) },
  Open,
);

export const InitializeResultSchema = Type.Object(
  {
    protocolVersion: Type.String(),
    capabilities: JsonObject,
    serverInfo: ImplementationSchema,
    instructions: Type.Optional(Type.String()),
  },
  Open,
);

export const DiscoverResultSchema = Type.Object(
  {
    supportedVersions: Type.Array(Type.String(), { minItems: 1 }),
    capabilities: JsonObject,
    instructions: Type.Optional(Type.String()),
    _meta: Type.Optional(JsonObject),
  },
  Open,
);

/** A compiled checker with the first problem as `{path, message}` when the value fails. */
export interface Checker<T extends TSchema> {
  check(value: unknown): value is Static<T>;
  firstError(value: unknown): { path: string; message: string };
}

export function checker<T extends TSchema>(schema: T): Checker<T> {
  const compiled: TypeCheck<T> = TypeCompiler.Compile(schema);
  return {
    check: (value): value is Static<T> => compiled.Check(value),
    firstError(value) {
      const error = compiled.Errors(value).First();
      return error === undefined
        ? { path: '', message: 'does not match the schema' }
        : { path: error.path, message: error.message };
    },
  };
}
