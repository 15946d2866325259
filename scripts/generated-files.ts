/**
 * What every generator script does with its output: write the files that differ from a fresh
 * generation, or with `--check` only report them, so CI fails on a committed file that is
 * stale. A file that does not exist yet counts as empty.
 */

import { readFile, writeFile } from 'node:fs/promises';

/**
 * Writes (or, with `check`, reports) each file whose content differs from `files[path]`;
 * `command` is what the stale message tells the reader to run. Returns the exit code.
 */
export async function writeOrCheck(
  files: Record<string, string>,
  command: string,
  check: boolean,
): Promise<number> {
  let stale = 0;
  for (const [file, fresh] of Object.entries(files)) {
    if ((await readFile(file, 'utf8').catch(() => '')) === fresh) continue;
    if (check) {
      console.error(`${file} is stale: run \`${command}\` and commit the result`);
      stale++;
    } else {
      await writeFile(file, fresh);
      console.log(`wrote ${file}`);
    }
  }
  return stale === 0 ? 0 : 1;
}
