/** The operator's entry point, run by tests and benches as `node <CLI> <command> …`. */

import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
