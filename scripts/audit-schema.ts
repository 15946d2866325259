/**
 * docs/audit.schema.json, the JSON Schema of the bridge's audit events, generated from its
 * TypeBox definition (src/bridge/audit/event.ts). Written by `npm run docs`; `npm run
 * docs:check` fails when it is stale.
 */

import { format, resolveConfig } from 'prettier';
import { AuditEventSchema } from '../src/bridge/audit/event.ts';

export const AUDIT_SCHEMA = 'docs/audit.schema.json';

export async function auditSchema(): Promise<Record<string, string>> {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://mcp-operator.dev/schemas/audit-event-v1.json',
    title: 'mcp-operator audit event, v1',
    ...(JSON.parse(JSON.stringify(AuditEventSchema)) as object),
  };
  const options = await resolveConfig(AUDIT_SCHEMA);
  return { [AUDIT_SCHEMA]: await format(JSON.stringify(schema), { ...options, parser: 'json' }) };
}
