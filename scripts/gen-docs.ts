/**
 * Writes the generated configuration reference (scripts/chart-docs.ts) and the error reference
 * (scripts/error-docs.ts), or with `--check` fails when the committed files differ from a fresh
 * generation (`npm run docs:check`).
 */

import { generatedDocs } from './chart-docs.ts';
import { errorDocs } from './error-docs.ts';
import { writeOrCheck } from './generated-files.ts';

process.exitCode = await writeOrCheck(
  { ...(await generatedDocs()), ...(await errorDocs()) },
  'npm run docs',
  process.argv.includes('--check'),
);
