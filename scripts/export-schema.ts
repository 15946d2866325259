/**
 * docs/export.schema.json, the JSON Schema of what `mcp-operator export` writes, generated from
 * its TypeBox definition (src/registry/export.ts). Written by `npm run docs`; `npm run
 * docs:check` fails when it is stale.
 */

import { format, resolveConfig } from 'prettier';
import { ExportDocumentSchema } from '../src/registry/export.ts';

export const EXPORT_SCHEMA = 'docs/export.schema.json';

export async function exportSchema(): Promise<Record<string, string>> {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...(JSON.parse(JSON.stringify(ExportDocumentSchema)) as object),
  };
  const options = await resolveConfig(EXPORT_SCHEMA);
  return { [EXPORT_SCHEMA]: await format(JSON.stringify(schema), { ...options, parser: 'json' }) };
}
