// Types of eslint.config.js for the test that imports its layer rules (test/layers.test.ts).
import type { Linter } from 'eslint';

export const layerRules: Linter.Config[];
declare const config: Linter.Config[];
export default config;
