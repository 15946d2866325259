/**
 * Reading the audit events a test bridge wrote: each line checked against the published schema
 * (docs/audit.schema.json), as a log pipeline would receive it.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { AuditEvent } from '../../src/bridge/audit/event.ts';
import { waitFor } from '../support/wait.ts';

const schema = JSON.parse(
  await readFile(join(import.meta.dirname, '../../docs/audit.schema.json'), 'utf8'),
) as object;
const ajv = new Ajv2020({ strict: true, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
const validate = ajv.compile(schema);

/** The events written to `file`, each checked against the published schema. */
export async function eventsIn(file: string): Promise<AuditEvent[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const event: unknown = JSON.parse(line);
      if (!validate(event))
        throw new Error(`invalid event ${line}: ${ajv.errorsText(validate.errors)}`);
      return event as AuditEvent;
    });
}

/** At least `count` events, once written (the sink writes from libuv's thread pool). */
export async function waitForEvents(file: string, count: number): Promise<AuditEvent[]> {
  let events: AuditEvent[] = [];
  await waitFor(`${count} audit events`, async () => {
    events = await eventsIn(file);
    return events.length >= count;
  });
  return events;
}
