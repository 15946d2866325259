/**
 * Writes the generated configuration reference (scripts/chart-docs.ts), the error reference
 * (scripts/error-docs.ts) and the schema of `mcp-operator export` (scripts/export-schema.ts), or with `--check` fails when the committed files differ from a fresh
 * generation (`npm run docs:check`).
 */

import { generatedDocs } from './chart-docs.ts';
import { errorDocs } from './error-docs.ts';
import { exportSchema } from './export-schema.ts';
import { writeOrCheck } from './generated-files.ts';

process.exitCode = await writeOrCheck(
  { ...(await generatedDocs()), ...(await errorDocs()), ...(await exportSchema()) },
  'npm run docs',
  process.argv.includes('--check'),
);
