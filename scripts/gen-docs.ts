/**
 * Writes the generated configuration reference (scripts/chart-docs.ts), or with `--check` fails
 * when the committed files differ from a fresh generation (`npm run docs:check`).
 */

import { generatedDocs } from './chart-docs.ts';
import { writeOrCheck } from './generated-files.ts';

process.exitCode = await writeOrCheck(
  await generatedDocs(),
  'npm run docs',
  process.argv.includes('--check'),
);
