/**
 * Writes the generated API artifacts (the CRD and docs/api.md) from src/api, or with `--check`
 * fails when the committed ones differ from a fresh generation (CI: `npm run crds:check`).
 */

import { readFile, writeFile } from 'node:fs/promises';
import { GENERATED_FILES } from '../src/api/artifacts.ts';

async function readOrEmpty(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => '');
}

async function main(check: boolean): Promise<number> {
  let stale = 0;
  for (const [file, generate] of Object.entries(GENERATED_FILES)) {
    const fresh = generate();
    if ((await readOrEmpty(file)) === fresh) continue;
    if (check) {
      console.error(`${file} is stale: run \`npm run crds\` and commit the result`);
      stale++;
    } else {
      await writeFile(file, fresh);
      console.log(`wrote ${file}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.includes('--check'));
