/**
 * Writes the generated configuration reference (scripts/chart-docs.ts), or with `--check` fails
 * when the committed files differ from a fresh generation (`npm run docs:check`).
 */

import { readFile, writeFile } from 'node:fs/promises';
import { generatedDocs } from './chart-docs.ts';

async function main(check: boolean): Promise<number> {
  let stale = 0;
  for (const [file, fresh] of Object.entries(await generatedDocs())) {
    if ((await readFile(file, 'utf8').catch(() => '')) === fresh) continue;
    if (check) {
      console.error(`${file} is stale: run \`npm run docs\` and commit the result`);
      stale++;
    } else {
      await writeFile(file, fresh);
      console.log(`wrote ${file}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.includes('--check'));
