/**
 * The version of this installation, from the package.json beside `src/` or `dist/` (one level
 * up from either, and always in the npm package), for `--version`.
 */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
