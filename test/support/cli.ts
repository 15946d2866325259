/**
 * The operator's entry point from source, run by tests and benches as `node <CLI> <command> …`.
 * Tests of what users type run the build instead (./build.ts).
 */

import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
