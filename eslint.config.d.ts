// Types of eslint.config.js for the test that imports its layers (test/layers.test.ts).
import type { Linter } from 'eslint';

export const layerRules: Linter.Config[];
/** The layers of src/, each with the layers it may import. */
export const LAYERS: Record<string, { may: string[]; pure?: boolean }>;
declare const config: Linter.Config[];
export default config;
