/**
 * Writes the generated API artifacts (the CRD and docs/api.md) from src/api, or with `--check`
 * fails when the committed ones differ from a fresh generation (CI: `npm run crds:check`).
 */

import { GENERATED_FILES } from '../src/api/artifacts.ts';
import { writeOrCheck } from './generated-files.ts';

const files = Object.fromEntries(
  Object.entries(GENERATED_FILES).map(([file, generate]) => [file, generate()]),
);
process.exitCode = await writeOrCheck(files, 'npm run crds', process.argv.includes('--check'));
