/**
 * Writes the generated configuration reference (scripts/chart-docs.ts), the error reference
 * (scripts/error-docs.ts), the schema of `mcp-operator export` (scripts/export-schema.ts) and
 * that of the bridge's audit events (scripts/audit-schema.ts), or
 * with `--check` fails when the committed files differ from a fresh generation
 * (`npm run docs:check`). Either way it fails on a link that leads nowhere and on prose that
 * reads "undefined" (scripts/doc-links.ts).
 */

import { auditSchema } from './audit-schema.ts';
import { generatedDocs } from './chart-docs.ts';
import { deadLinks } from './doc-links.ts';
import { errorDocs } from './error-docs.ts';
import { exportSchema } from './export-schema.ts';
import { writeOrCheck } from './generated-files.ts';

const stale = await writeOrCheck(
  {
    ...(await generatedDocs()),
    ...(await errorDocs()),
    ...(await exportSchema()),
    ...(await auditSchema()),
  },
  'npm run docs',
  process.argv.includes('--check'),
);
const dead = deadLinks();
for (const line of dead) console.error(`docs:check: ${line}`);
process.exitCode = stale !== 0 || dead.length > 0 ? 1 : 0;
